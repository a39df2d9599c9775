// What the job write operations in other files than jobs.ts need of `JobOps`: the store, the simulation
// engine, storing a version and pruning old ones; and the common write result.
import type { Engine } from "../sim/engine";
import type { JsonObject } from "../state/json";
import type { JobEntry, Store } from "../state/store";

/** Common write result (scheduler-jobs-api.md, "Common write result"). */
export interface WriteResult {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
}

/** The job store and engine with the version bookkeeping of `JobOps` (see ./jobs.ts). */
export interface JobWriter {
  readonly store: Store;
  readonly engine: Engine;
  /** Stores a new version of a job at `index` (creating the job entry when needed); returns the stored job. */
  storeVersion(ns: string, id: string, job: JsonObject, index: number, submission: JsonObject | undefined): JsonObject;
  /** Drops the oldest untagged versions (and their submissions) beyond the tracked limit. */
  prune(entry: JobEntry): void;
}
