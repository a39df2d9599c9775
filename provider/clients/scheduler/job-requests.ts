/** Bodies and options of the job operations in jobs.ts. */
import type { Job, JobSubmission } from "../../schemas/scheduler";
import type { ReadOptions, WriteOptions } from "./base";

/** Largest dispatch payload in decoded bytes. */
export const MAX_DISPATCH_PAYLOAD_BYTES = 16384;

/** Filters and paging of the job list. */
export interface ListJobsOptions extends ReadOptions {
  /** Only jobs whose ID starts with this. */
  prefix?: string;
  /** Filter expression evaluated by the server. */
  filter?: string;
  /** Include each job's Meta in the stubs. */
  meta?: boolean;
  /** Jobs per page; 0 or unset = one page with everything. */
  perPage?: number;
  /** Start from this page token (from `meta.nextToken`). */
  nextToken?: string;
}

/** Body of register and update. */
export interface RegisterJobRequest {
  Job: Job;
  /** The original job file; informational, shown by the UI and returned by `submission`. */
  Submission?: Partial<JobSubmission>;
  /** Register only if the job's JobModifyIndex equals `JobModifyIndex` (0 = the job must be new). */
  EnforceIndex?: boolean;
  JobModifyIndex?: number;
  /** Evaluation priority (1–100); default the job's priority. */
  EvalPriority?: number;
  PolicyOverride?: boolean;
  /** Keep the running task group counts over the new spec's. */
  PreserveCounts?: boolean;
  PreserveResources?: boolean;
}

/** Body of plan. */
export interface PlanJobRequest {
  Job: Job;
  /** Include the diff against the server-side job. */
  Diff?: boolean;
  PolicyOverride?: boolean;
}

/** Body of parse. */
export interface ParseJobRequest {
  /** The HCL2 jobspec text. */
  JobHCL: string;
  /** Fill unset fields with the client-library defaults. */
  Canonicalize?: boolean;
  /** Variables in var-file format. */
  Variables?: string;
}

/** Options of stop. */
export interface StopJobOptions extends WriteOptions {
  /** Delete the job and its versions at once instead of leaving it to garbage collection. */
  purge?: boolean;
  /** Stop a multi-region job in every region. */
  global?: boolean;
  evalPriority?: number;
  /** Skip group and task shutdown delays. */
  noShutdownDelay?: boolean;
}

/** Body of dispatch. `Payload` is raw bytes (or UTF-8 text); the client base64-encodes it. */
export interface DispatchJobRequest {
  Payload?: Uint8Array | string;
  Meta?: Record<string, string>;
  /** Prefix of the dispatched job IDs. */
  IdPrefixTemplate?: string;
}

/** Body of scale: `Target.Group` and exactly one of `Message` / `Error` are required. */
export interface ScaleJobRequest {
  Target: { Group: string; [key: string]: string };
  Count?: number;
  Message?: string;
  /** An error state that prevents scaling. */
  Error?: string;
  Meta?: Record<string, unknown>;
  EnforceIndex?: boolean;
  JobModifyIndex?: number;
  PolicyOverride?: boolean;
}
