/**
 * The JobVersionTag resource class: a named tag on one version of a scheduler job, which also keeps that
 * version from garbage collection.
 */
import * as pulumi from "@pulumi/pulumi";
import shim from "./shim/job-version-tag";
import type { SchedulerConnection } from "./connection";
import { pauseStackTraces, resumeStackTraces } from "./stacks";

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
   * Take over a tag of this name that the job already carries instead of failing (its description is then
   * overwritten). Destroying the resource removes the tag, adopted or not.
   */
  adopt?: pulumi.Input<boolean>;
  /**
   * The scheduler this lives on, made with \`schedulerConnection({...})\`; default: stack config, then the
   * environment. Kept in state, so refresh and destroy reach it even after the program or stack config
   * changed. Another address replaces the resource: created there, then deleted here. A new token or TLS
   * setting updates state only.
   */
  connection?: pulumi.Input<SchedulerConnection>;
}

/** A tag on one version of a scheduler job. */
export class JobVersionTag extends pulumi.dynamic.Resource {
  declare readonly jobId: pulumi.Output<string>;
  /** Namespace of the job. */
  declare readonly namespace: pulumi.Output<string>;
  declare readonly name: pulumi.Output<string>;
  /** The tagged version. */
  declare readonly version: pulumi.Output<number>;
  declare readonly description: pulumi.Output<string>;
  /** When the tag was set, in unix nanoseconds. */
  declare readonly taggedTime: pulumi.Output<number>;
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  declare readonly schemaVersion: pulumi.Output<number>;

  /** Declares a version tag; `up` tags the version (the job's current one unless `version` is set). */
  constructor(name: string, args: JobVersionTagArgs, opts?: pulumi.CustomResourceOptions) {
    const props: Record<string, unknown> = {
      ...args,
      namespace: args.namespace,
      version: args.version,
      description: args.description,
      adopt: args.adopt,
      taggedTime: undefined,
      schemaVersion: undefined,
    };
    // Registered with stack capture off: see ./stacks.
    const limit = pauseStackTraces();
    try {
      super(shim, name, props, opts, "pulumi-secrets-scheduler", "JobVersionTag");
    } catch (e) {
      throw resumeStackTraces(limit, e, JobVersionTag);
    } finally {
      resumeStackTraces(limit);
    }
  }
}
