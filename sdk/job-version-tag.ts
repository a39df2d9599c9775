/**
 * The JobVersionTag resource class: a named tag on one version of a scheduler job, which also keeps that
 * version from garbage collection. Its arguments and output properties are generated from the provider's
 * definition (provider/resources/definitions/job-version-tag.ts) into ./generated/job-version-tag.ts.
 */
import type * as pulumi from "@pulumi/pulumi";
import shim from "./shim/job-version-tag";
import { JobVersionTagResource, jobVersionTagProps, type JobVersionTagArgs } from "./generated/job-version-tag";
import { pauseStackTraces, resumeStackTraces } from "./stacks";

export type { JobVersionTagArgs };

/** A tag on one version of a scheduler job. */
export class JobVersionTag extends JobVersionTagResource {
  /** Declares a version tag; `up` tags the version (the job's current one unless `version` is set). */
  constructor(name: string, args: JobVersionTagArgs, opts?: pulumi.CustomResourceOptions) {
    // Keys the definition does not know (a typo in JavaScript) still reach `check`, which refuses them by name.
    const props = { ...args, ...jobVersionTagProps(args) };
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
