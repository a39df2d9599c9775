// Wire records the scheduler keeps besides jobs (kept in sync with scheduler-jobs-api.md, "Resources and their
// fields" and reference/scheduler.md §3.9 for the statuses and fields the spec leaves out).
import type { JsonObject } from "./json";

/** Per task group placement failure details (plan `FailedTGAllocs`, evaluation `FailedTGAllocs`). */
export interface AllocMetric {
  NodesEvaluated: number;
  NodesFiltered: number;
  NodesInPool: number;
  NodesAvailable: Record<string, number>;
  ClassFiltered: Record<string, number> | null;
  ConstraintFiltered: Record<string, number> | null;
  NodesExhausted: number;
  ClassExhausted: Record<string, number> | null;
  DimensionExhausted: Record<string, number> | null;
  QuotaExhausted: string[] | null;
  ResourcesExhausted: Record<string, JsonObject> | null;
  Scores: Record<string, number> | null;
  ScoreMetaData: JsonObject[] | null;
  AllocationTime: number;
  CoalescedFailures: number;
}

/** What the scheduler would do with one task group (plan `Annotations.DesiredTGUpdates`). */
export interface DesiredUpdates {
  Ignore: number;
  Place: number;
  Migrate: number;
  Stop: number;
  InPlaceUpdate: number;
  DestructiveUpdate: number;
  Canary: number;
  Preemptions: number;
  Disconnect: number;
  Reconnect: number;
  RescheduleNow: number;
  RescheduleLater: number;
}

type EvalStatus = "pending" | "complete" | "failed" | "canceled" | "blocked";

export interface Evaluation {
  ID: string;
  Namespace: string;
  Priority: number;
  Type: string;
  TriggeredBy: string;
  JobID: string;
  JobModifyIndex: number;
  NodeID: string;
  NodeModifyIndex: number;
  DeploymentID: string;
  Status: EvalStatus;
  StatusDescription: string;
  Wait: number;
  WaitUntil: string | null;
  NextEval: string;
  PreviousEval: string;
  BlockedEval: string;
  RelatedEvals: JsonObject[] | null;
  FailedTGAllocs: Record<string, AllocMetric> | null;
  ClassEligibility: Record<string, boolean> | null;
  QuotaLimitReached: string;
  EscapedComputedClass: boolean;
  AnnotatePlan: boolean;
  QueuedAllocations: Record<string, number> | null;
  LeaderACL: string;
  SnapshotIndex: number;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

export interface TaskEvent {
  Type: string;
  Time: number;
  DisplayMessage: string;
  Details: Record<string, string>;
  FailsTask: boolean;
  RestartReason: string;
  SetupError: string;
  DriverError: string;
  DriverMessage: string;
  ExitCode: number;
  Signal: number;
  Message: string;
  KillReason: string;
  KillTimeout: number;
  KillError: string;
  StartDelay: number;
  DownloadError: string;
  ValidationError: string;
  DiskLimit: number;
  FailedSibling: string;
  SecretsError: string;
  TaskSignalReason: string;
  TaskSignal: string;
  GenericSource: string;
}

export interface TaskState {
  State: string;
  Failed: boolean;
  Restarts: number;
  LastRestart: string | null;
  StartedAt: string | null;
  FinishedAt: string | null;
  Events: TaskEvent[];
}

interface AllocDeploymentStatus {
  Healthy: boolean | null;
  Timestamp: string;
  Canary: boolean;
  ModifyIndex: number;
}

export interface Allocation {
  ID: string;
  Namespace: string;
  EvalID: string;
  Name: string;
  NodeID: string;
  NodeName: string;
  JobID: string;
  JobType: string;
  JobVersion: number;
  TaskGroup: string;
  AllocatedResources: JsonObject;
  DesiredStatus: string;
  DesiredDescription: string;
  DesiredTransition: JsonObject;
  ClientStatus: string;
  ClientDescription: string;
  TaskStates: Record<string, TaskState>;
  DeploymentID: string;
  DeploymentStatus: AllocDeploymentStatus | null;
  FollowupEvalID: string;
  RescheduleTracker: JsonObject | null;
  PreemptedAllocations: string[] | null;
  PreemptedByAllocation: string;
  PreviousAllocation: string;
  NextAllocation: string;
  CreateIndex: number;
  ModifyIndex: number;
  AllocModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

export interface DeploymentGroupState {
  AutoRevert: boolean;
  AutoPromote: boolean;
  ProgressDeadline: number;
  RequireProgressBy: string | null;
  Promoted: boolean;
  PlacedCanaries: string[] | null;
  DesiredCanaries: number;
  DesiredTotal: number;
  PlacedAllocs: number;
  HealthyAllocs: number;
  UnhealthyAllocs: number;
}

type DeploymentStatus =
  "running" | "paused" | "failed" | "successful" | "cancelled" | "pending" | "blocked" | "unblocking" | "initializing";

export interface Deployment {
  ID: string;
  Namespace: string;
  JobID: string;
  JobVersion: number;
  JobModifyIndex: number;
  JobSpecModifyIndex: number;
  JobCreateIndex: number;
  IsMultiregion: boolean;
  TaskGroups: Record<string, DeploymentGroupState>;
  Status: DeploymentStatus;
  StatusDescription: string;
  EvalPriority: number;
  CreateIndex: number;
  ModifyIndex: number;
  CreateTime: number;
  ModifyTime: number;
}

/** Deployment statuses that still count as in progress (reference/scheduler.md §3.9). */
export const ACTIVE_DEPLOYMENT: ReadonlySet<string> = new Set([
  "running",
  "paused",
  "pending",
  "blocked",
  "unblocking",
  "initializing",
]);

/** Deployment descriptions as the real server spells them (reference/scheduler.md §3.9). */
export const DEPLOYMENT_DESC = {
  running: "Deployment is running",
  needsPromotion: "Deployment is running but requires manual promotion",
  autoPromotion: "Deployment is running pending automatic promotion",
  successful: "Deployment completed successfully",
  unhealthy: "Failed due to unhealthy allocations",
  progressDeadline: "Failed due to progress deadline",
  markedFailed: "Deployment marked as failed",
  newerJob: "Cancelled due to newer version of job",
  stoppedJob: "Cancelled because job is stopped",
} as const;

/** Returns whether an allocation is terminal (desired stop, or finished on the client). */
export function allocTerminal(a: Allocation): boolean {
  return (
    a.DesiredStatus !== "run" ||
    a.ClientStatus === "complete" ||
    a.ClientStatus === "failed" ||
    a.ClientStatus === "lost"
  );
}

/** Returns whether an evaluation is finished. */
export function evalTerminal(e: Evaluation): boolean {
  return e.Status === "complete" || e.Status === "failed" || e.Status === "canceled";
}
