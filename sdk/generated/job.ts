// Generated from provider/resources/definitions/job.ts by `npm run generate`: do not edit.
import * as pulumi from "@pulumi/pulumi";
import type { SchedulerConnection } from "../connection";
// A default import of the shim's `export =` object: the same object as `require("../shim/job")` once compiled.
import shim from "../shim/job";
import { pauseStackTraces, resumeStackTraces } from "../stacks";
import type { Job as JobDefinition } from "../../provider/schemas/scheduler";
import { secretInputsOf } from "../job-secrets";

export type { JobDefinition };

/** Arguments of a {@link Job}. Set exactly one of `jobspec` and `job`. */
export interface JobArgs {
  /**
   * The job as HCL2 jobspec text; the scheduler parses (and canonicalizes) it, so formatting never shows as a change.
   */
  jobspec?: pulumi.Input<string>;
  /** The job as an object in the API's JSON shape (`ID`, `TaskGroups`, ...); unknown fields are kept and sent. */
  job?: pulumi.Input<JobDefinition>;
  /** Variables of a jobspec: var-file text, or a map rendered to var-file text. */
  variables?: pulumi.Input<string | Record<string, pulumi.Input<string | number | boolean>>>;
  /** Namespace of the job; default: the job's own, else the connection's, else `default`. A change replaces the job. */
  namespace?: pulumi.Input<string>;
  /** Region of the job; default: the job's own, else the connection's, else `global`. A change replaces the job. */
  region?: pulumi.Input<string>;
  /** Override soft-mandatory policies on register and plan. */
  policyOverride?: pulumi.Input<boolean>;
  /** Keep the running task group counts over the spec's (for autoscaled groups). */
  preserveCounts?: pulumi.Input<boolean>;
  /**
   * Keep the running task resources (CPU, cores, memory, memory max) over the spec's, for vertically scaled tasks. With
   * this or `preserveCounts`, a job that was only scaled since the last `up` is updated on its current index instead of
   * failing as "changed outside Pulumi".
   */
  preserveResources?: pulumi.Input<boolean>;
  /**
   * Batch and sysbatch jobs: `up` waits until the job's allocations finished (at most `deploymentTimeout`), and fails
   * naming failed ones.
   */
  waitForCompletion?: pulumi.Input<boolean>;
  /**
   * Batch and sysbatch jobs: once finished and garbage-collected by the scheduler, the job stays in the stack as done
   * (refresh keeps it, the next `up` does not register it again) until it or `triggers` changes.
   */
  runOnce?: pulumi.Input<boolean>;
  /**
   * Any change of this map runs the job again: its hash goes into the job's meta, so a new version is registered. When
   * a value is a secret, the hash is keyed (with a key state keeps as a secret).
   */
  triggers?: pulumi.Input<Record<string, pulumi.Input<string>>>;
  /** Priority (1-100) of the evaluations this resource's registrations create; 0 or unset: the job's priority. */
  evalPriority?: pulumi.Input<number>;
  /** Wait for the deployment of a service job to finish (default true). */
  waitForDeployment?: pulumi.Input<boolean>;
  /**
   * How long to wait: seconds (a number) or a Go duration such as `"10m"`; default `"5m"`; 0: no limit of our own (the
   * scheduler's progress deadline still ends a stuck deployment).
   */
  deploymentTimeout?: pulumi.Input<number | string>;
  /**
   * What to do when the deployment fails and the scheduler's auto_revert did not roll back: `"revert"` (default)
   * registers the version that ran before again; `"fail"` leaves the failed version; `{ revertTo: "<tag>" }` registers
   * the version carrying that version tag (see `JobVersionTag`) again, only while the failed version is still the job's
   * current one. The update fails either way.
   */
  onDeploymentFailure?: pulumi.Input<"revert" | "fail" | { revertTo: pulumi.Input<string> }>;
  /**
   * Canary promotion when the deployment places canaries: `"manual"` (default; `up` ends while the deployment waits for
   * a person to promote it, and says so), `"auto"` (promote once every canary is healthy, then follow the deployment to
   * its end), or `{ soak: "10m", groups?: ["web"] }` (promote once the canaries, of the named groups only when given,
   * stayed healthy and running for the soak). A failing canary fails the update, which then goes through
   * `onDeploymentFailure`.
   */
  promotion?: pulumi.Input<
    "manual" | "auto" | { soak: pulumi.Input<number | string>; groups?: pulumi.Input<pulumi.Input<string>[]> }
  >;
  /**
   * Register even when the scheduler's plan, taken again right before the register, shows destructive updates or failed
   * placements that the plan shown by this `up` did not (default false: refuse).
   */
  allowPlanDrift?: pulumi.Input<boolean>;
  /** Purge the job on destroy instead of only stopping it. */
  purgeOnDestroy?: pulumi.Input<boolean>;
  /** Take over a running job with the same ID instead of failing (it is registered over, with check-and-set). */
  adopt?: pulumi.Input<boolean>;
  /**
   * The scheduler this lives on, made with `schedulerConnection({...})`; default: stack config, then the environment.
   * Kept in state, so refresh and destroy reach it even after the program or stack config changed. Another address
   * replaces the resource: created there, then deleted here. A new token, TLS setting, header style or timeout is an
   * update that reads the object back with it and writes nothing.
   */
  connection?: pulumi.Input<SchedulerConnection>;
}

/** A scheduler job. */
export class Job extends pulumi.dynamic.Resource {
  /** Namespace the job lives in. */
  declare readonly namespace: pulumi.Output<string>;
  /** Region the job lives in. */
  declare readonly region: pulumi.Output<string>;
  /** ID of the job. */
  declare readonly jobId: pulumi.Output<string>;
  /** `service`, `batch`, `system` or `sysbatch`. */
  declare readonly type: pulumi.Output<string>;
  /** Version the job is on. */
  declare readonly version: pulumi.Output<number>;
  /** Index of the last spec change (the check-and-set index of the next update). */
  declare readonly jobModifyIndex: pulumi.Output<number>;
  /** Index of the last change of any kind. */
  declare readonly modifyIndex: pulumi.Output<number>;
  /** `pending`, `running` or `dead`. */
  declare readonly status: pulumi.Output<string>;
  /** What the scheduler says of the status. */
  declare readonly statusDescription: pulumi.Output<string>;
  /** True when the job was stopped outside Pulumi (the next update starts it again). */
  declare readonly stopped: pulumi.Output<boolean>;
  /** Evaluation of the last registration made by this resource. */
  declare readonly evalId: pulumi.Output<string>;
  /**
   * ID of the deployment the last `up` followed ("" when none was, e.g. with `waitForDeployment: false`). A refresh
   * reads it again when the job changed since or the deployment had not finished. Allocations are not outputs (they
   * change with every reschedule): read them live with the `clients` export.
   */
  declare readonly deploymentId: pulumi.Output<string>;
  /** Status of that deployment (`successful`, `failed`, `running`, ...). */
  declare readonly deploymentStatus: pulumi.Output<string>;
  /** What the scheduler says of that deployment's status. */
  declare readonly deploymentStatusDescription: pulumi.Output<string>;
  /** runOnce: true once the finished batch job was garbage-collected by the scheduler (kept in the stack as done). */
  declare readonly collected: pulumi.Output<boolean | undefined>;
  /** The job spec state compares the next desired job with (canonical JSON). */
  declare readonly normalizedJob: pulumi.Output<string>;
  /** The version of the state's shape. */
  declare readonly schemaVersion: pulumi.Output<number>;

  /**
   * Declares the Job `name` of the stack; `pulumi up` makes the service match `args`. A key of `args` the Job does not
   * have (a typo in JavaScript) is refused by the provider's `check`, which names it.
   */
  constructor(name: string, args: JobArgs, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ../stacks.
    const limit = pauseStackTraces();
    try {
      super(shim, name, jobProps(args), opts, "pulumi-secrets-scheduler", "Job");
    } catch (e) {
      throw resumeStackTraces(limit, e, Job);
    } finally {
      resumeStackTraces(limit);
    }
  }
}

/**
 * The props an {@link Job} registers: every output property seeded (only keys present in props become outputs), every
 * key of `args` (one the resource does not have reaches `check`, which refuses it by name), then every input as the
 * provider takes it (a secret one wrapped with `pulumi.secret`) and the inputs the SDK computes itself.
 */
function jobProps(args: JobArgs): Record<string, unknown> {
  return {
    jobId: undefined,
    type: undefined,
    version: undefined,
    jobModifyIndex: undefined,
    modifyIndex: undefined,
    status: undefined,
    statusDescription: undefined,
    stopped: undefined,
    evalId: undefined,
    deploymentId: undefined,
    deploymentStatus: undefined,
    deploymentStatusDescription: undefined,
    collected: undefined,
    normalizedJob: undefined,
    schemaVersion: undefined,
    ...args,
    jobspec: args.jobspec,
    job: args.job,
    variables: args.variables,
    namespace: args.namespace,
    region: args.region,
    policyOverride: args.policyOverride,
    preserveCounts: args.preserveCounts,
    preserveResources: args.preserveResources,
    waitForCompletion: args.waitForCompletion,
    runOnce: args.runOnce,
    triggers: args.triggers,
    evalPriority: args.evalPriority,
    waitForDeployment: args.waitForDeployment,
    deploymentTimeout: args.deploymentTimeout,
    onDeploymentFailure: args.onDeploymentFailure,
    promotion: args.promotion,
    allowPlanDrift: args.allowPlanDrift,
    purgeOnDestroy: args.purgeOnDestroy,
    adopt: args.adopt,
    connection: args.connection,
    __secretInputs: secretInputsOf(args),
  };
}
