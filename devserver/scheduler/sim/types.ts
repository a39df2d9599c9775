// Types shared by the simulation's parts (cluster, reconcile, deployments, engine), kept apart so that
// those modules depend on these shapes rather than on each other.
import type { JsonObject } from "../state/json";
import type { AllocRecord, JobEntry } from "../state/store";
import type { DesiredUpdates } from "../state/types";

/** A node of the fake node pool. */
export interface Node {
  readonly ID: string;
  readonly Name: string;
  readonly Datacenter: string;
  readonly NodePool: string;
  readonly Address: string;
  readonly CPU: number;
  readonly MemoryMB: number;
}

/** The scheduler's decision for one task group. */
export interface GroupPlan {
  readonly name: string;
  readonly count: number;
  /** Fresh allocations to place (missing ones). */
  place: number;
  /** Canaries to place before the old allocations are replaced. */
  canary: number;
  destructive: AllocRecord[];
  inplace: AllocRecord[];
  ignore: AllocRecord[];
  stop: AllocRecord[];
  desired: DesiredUpdates;
}

/** Fields a caller sets on a new evaluation. */
export interface EvalSpec {
  readonly namespace: string;
  readonly jobId: string;
  readonly type: string;
  readonly priority: number;
  readonly triggeredBy: string;
  readonly jobModifyIndex: number;
  readonly previousEval?: string;
  readonly deploymentId?: string;
}

/** Called to roll a job back to one of its versions (auto-revert); returns nothing, registers through the normal path. */
export type RollbackFn = (entry: JobEntry, version: JsonObject) => void;
