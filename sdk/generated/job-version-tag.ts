// Generated from provider/resources/definitions/job-version-tag.ts by `npm run generate`: do not edit.
import * as pulumi from "@pulumi/pulumi";
import type { SchedulerConnection } from "../connection";
// A default import of the shim's `export =` object: the same object as `require("../shim/job-version-tag")` once compiled.
import shim from "../shim/job-version-tag";
import { pauseStackTraces, resumeStackTraces } from "../stacks";

/** Arguments of a {@link JobVersionTag}. */
export interface JobVersionTagArgs {
  /** ID of the job. A change replaces the tag. */
  jobId: pulumi.Input<string>;
  /** Namespace of the job; default the connection's, else `default`. A change replaces the tag. */
  namespace?: pulumi.Input<string>;
  /** Tag name, unique per job; it must not contain "/". A change replaces the tag. */
  name: pulumi.Input<string>;
  /** Version to tag; default the job's version when the tag is created. A change replaces the tag. */
  version?: pulumi.Input<number>;
  /** Description (under 1000 characters); a change updates the tag in place. */
  description?: pulumi.Input<string>;
  /**
   * Take over a tag of this name that the job already carries instead of failing (its description is then overwritten).
   * Destroying the resource removes the tag, adopted or not.
   */
  adopt?: pulumi.Input<boolean>;
  /**
   * The scheduler this lives on, made with `schedulerConnection({...})`; default: stack config, then the environment.
   * Kept in state, so refresh and destroy reach it even after the program or stack config changed. Another address
   * replaces the resource: created there, then deleted here. A new token, TLS setting, header style or timeout is an
   * update that only stores it in state: no request is sent.
   */
  connection?: pulumi.Input<SchedulerConnection>;
}

/** A tag on one version of a scheduler job, which also keeps that version from garbage collection. */
export class JobVersionTag extends pulumi.dynamic.Resource {
  /** ID of the job. A change replaces the tag. */
  declare readonly jobId: pulumi.Output<string>;
  /** Namespace of the job. */
  declare readonly namespace: pulumi.Output<string>;
  /** Tag name, unique per job; it must not contain "/". A change replaces the tag. */
  declare readonly name: pulumi.Output<string>;
  /** The tagged version. */
  declare readonly version: pulumi.Output<number>;
  /** Description (under 1000 characters); a change updates the tag in place. */
  declare readonly description: pulumi.Output<string>;
  /** When the tag was set, in unix nanoseconds. */
  declare readonly taggedTime: pulumi.Output<number>;
  /**
   * Take over a tag of this name that the job already carries instead of failing (its description is then overwritten).
   * Destroying the resource removes the tag, adopted or not.
   */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** The version of the state's shape. */
  declare readonly schemaVersion: pulumi.Output<number>;

  /**
   * Declares the JobVersionTag `name` of the stack; `pulumi up` makes the service match `args`. A key of `args` the
   * JobVersionTag does not have (a typo in JavaScript) is refused by the provider's `check`, which names it.
   */
  constructor(name: string, args: JobVersionTagArgs, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ../stacks.
    const limit = pauseStackTraces();
    try {
      super(shim, name, jobVersionTagProps(args), opts, "pulumi-secrets-scheduler", "JobVersionTag");
    } catch (e) {
      throw resumeStackTraces(limit, e, JobVersionTag);
    } finally {
      resumeStackTraces(limit);
    }
  }
}

/**
 * The props an {@link JobVersionTag} registers: every output property seeded (only keys present in props become
 * outputs), every key of `args` (one the resource does not have reaches `check`, which refuses it by name), then every
 * input as the provider takes it (a secret one wrapped with `pulumi.secret`).
 */
function jobVersionTagProps(args: JobVersionTagArgs): Record<string, unknown> {
  return {
    taggedTime: undefined,
    schemaVersion: undefined,
    ...args,
    jobId: args.jobId,
    namespace: args.namespace,
    name: args.name,
    version: args.version,
    description: args.description,
    adopt: args.adopt,
    connection: args.connection,
  };
}
