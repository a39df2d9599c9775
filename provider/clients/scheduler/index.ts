/**
 * The scheduler's job API client: one HTTP core shared by every area.
 *
 * ```ts
 * const client = new SchedulerClient({ address, token });
 * const { value } = await client.jobs.register({ Job: job, EnforceIndex: true, JobModifyIndex: 0 });
 * for await (const { value: job } of watch((o) => client.jobs.info("web", o))) { ... }
 * ```
 */
import { UsageError } from "../../errors";
import { HttpCore } from "../../http/core";
import type { ConnectionOptions } from "../../http/settings";
import { JobActions } from "./actions";
import { SchedulerRequester } from "./base";
import { Deployments } from "./deployments";
import { Jobs } from "./jobs";
import { JobRecords } from "./records";
import { JobVersions } from "./versions";

export { ActionSession, type ActionEvent, type ActionOutput, type RunActionOptions, type TtySize } from "./action-ws";
export { JobActions } from "./actions";
export {
  Deployments,
  DeploymentUpdateResultSchema,
  type DeploymentUpdateResult,
  type PromoteRequest,
} from "./deployments";
export { goDuration, type QueryMeta, type ReadOptions, type Result, type WriteOptions } from "./base";
export {
  Jobs,
  REGISTER_REFUSED_JOB_FIELDS,
  SERVER_MANAGED_JOB_FIELDS,
  stripServerManagedFields,
  type ServerManagedJobField,
} from "./jobs";
export {
  MAX_DISPATCH_PAYLOAD_BYTES,
  type DispatchJobRequest,
  type ListJobsOptions,
  type ParseJobRequest,
  type PlanJobRequest,
  type RegisterJobRequest,
  type ScaleJobRequest,
  type StopJobOptions,
} from "./job-requests";
export { JobRecords, type AllReadOptions } from "./records";
export { FEATURE_RELEASES } from "./releases";
export { JobVersions, type RevertJobRequest, type TagVersionRequest, type VersionsOptions } from "./versions";
export { watch, type WatchOptions } from "./watch";

/** A client of the scheduler's job API: `jobs`, `versions`, `records`, `actions` over one HTTP core. */
export class SchedulerClient {
  /** The HTTP core (connection settings, pool). */
  readonly core: HttpCore;
  /** List, register, update, parse, read, plan, evaluate, periodic force, dispatch, stop, scale. */
  readonly jobs: Jobs;
  /** Versions, submissions, revert, stable, version tags. */
  readonly versions: JobVersions;
  /** Allocations, evaluations, deployments, summary, services, scale status. */
  readonly records: JobRecords;
  /** Job actions and the action WebSocket. */
  readonly actions: JobActions;
  /** Deployment promotion and failure. */
  readonly deployments: Deployments;

  /**
   * Creates a client; options unset here fall back to the environment (SCHEDULER_ADDR, SCHEDULER_TOKEN, ...).
   * Given an HTTP core of the scheduler instead, the client sends through it (its connection and pool).
   */
  constructor(options: ConnectionOptions | HttpCore = {}) {
    if (options instanceof HttpCore && options.connection.service !== "scheduler")
      throw new UsageError("a SchedulerClient needs an HTTP core of the scheduler, not of the secrets service.");
    this.core = options instanceof HttpCore ? options : new HttpCore("scheduler", options);
    const http = new SchedulerRequester(this.core);
    this.jobs = new Jobs(http);
    this.versions = new JobVersions(http);
    this.records = new JobRecords(http);
    this.actions = new JobActions(http);
    this.deployments = new Deployments(http);
  }
}
