/**
 * Records that report what the scheduler did with a job: allocations, evaluations, deployments, scale
 * status and service registrations. All server-written; integers as the server sends them.
 */
import { z } from "zod";
import { bool, list, map, num, str, stringMap } from "./fields";

/** One event of a task's life (`Received`, `Task Setup`, `Driver`, `Started`, ...). */
const TaskEventSchema = z.looseObject({
  Type: str(),
  /** Unix nanoseconds. */
  Time: num(),
  FailsTask: bool(),
  RestartReason: str(),
  SetupError: str(),
  DriverError: str(),
  Message: str(),
  DisplayMessage: str(),
  KillError: str(),
  KillReason: str(),
  DownloadError: str(),
  ValidationError: str(),
  FailedSibling: str(),
  SecretsError: str(),
  TaskSignalReason: str(),
  TaskSignal: str(),
  DriverMessage: str(),
  ExitCode: num(),
  Signal: num(),
  KillTimeout: num(),
  StartDelay: num(),
  DiskLimit: num(),
  Details: stringMap(),
});

/** State of one task in an allocation; StartedAt/FinishedAt are ISO 8601 text. */
const TaskStateSchema = z.looseObject({
  State: str(),
  Failed: bool(),
  Restarts: num(),
  StartedAt: str(),
  FinishedAt: str(),
  Events: list(TaskEventSchema),
});

/** One placement of a task group on a node. */
export const AllocationSchema = z.looseObject({
  ID: str(),
  EvalID: str(),
  Name: str(),
  Namespace: str(),
  NodeID: str(),
  NodeName: str(),
  JobID: str(),
  JobVersion: num(),
  TaskGroup: str(),
  DeploymentID: str(),
  PreviousAllocation: str(),
  NextAllocation: str(),
  RescheduleTracker: z
    .looseObject({
      Events: list(z.looseObject({ PrevAllocID: str(), PrevNodeID: str(), RescheduleTime: num(), Delay: num() })),
    })
    .nullish(),
  /** `run`, `stop` or `evict`. */
  DesiredStatus: str(),
  DesiredDescription: str(),
  /** `pending`, `running`, `complete`, `failed`, `lost` or `unknown`. */
  ClientStatus: str(),
  ClientDescription: str(),
  TaskStates: map(TaskStateSchema),
  DeploymentStatus: z.looseObject({ Healthy: bool(), Canary: bool(), Timestamp: str(), ModifyIndex: num() }).nullish(),
  CreateIndex: num(),
  ModifyIndex: num(),
  /** Unix nanoseconds. */
  CreateTime: num(),
  /** Unix nanoseconds. */
  ModifyTime: num(),
});
/** One placement of a task group on a node. */
export type Allocation = z.infer<typeof AllocationSchema>;

/** Why a task group could not be placed: the scheduler's node metrics. */
export const AllocMetricSchema = z.looseObject({
  NodesEvaluated: num(),
  NodesFiltered: num(),
  NodesInPool: num(),
  NodesAvailable: map(z.number()),
  ClassFiltered: map(z.number()),
  ConstraintFiltered: map(z.number()),
  NodesExhausted: num(),
  ClassExhausted: map(z.number()),
  DimensionExhausted: map(z.number()),
  QuotaExhausted: list(z.string()),
  Scores: map(z.number()),
  /** Nanoseconds. */
  AllocationTime: num(),
  CoalescedFailures: num(),
});
/** Why a task group could not be placed. */
export type AllocMetric = z.infer<typeof AllocMetricSchema>;

/** One scheduling pass over a job. Status: `pending`, `complete`, `failed`, `canceled` or `blocked`. */
export const EvaluationSchema = z.looseObject({
  ID: str(),
  Namespace: str(),
  Priority: num(),
  Type: str(),
  TriggeredBy: str(),
  JobID: str(),
  JobModifyIndex: num(),
  NodeID: str(),
  NodeModifyIndex: num(),
  DeploymentID: str(),
  Status: str(),
  StatusDescription: str(),
  /** Nanoseconds. */
  Wait: num(),
  NextEval: str(),
  PreviousEval: str(),
  BlockedEval: str(),
  FailedTGAllocs: map(AllocMetricSchema),
  ClassEligibility: map(z.boolean()),
  EscapedComputedClass: bool(),
  AnnotatePlan: bool(),
  QueuedAllocations: map(z.number()),
  SnapshotIndex: num(),
  CreateIndex: num(),
  ModifyIndex: num(),
  CreateTime: num(),
  ModifyTime: num(),
});
/** One scheduling pass over a job. */
export type Evaluation = z.infer<typeof EvaluationSchema>;

/** Progress of one task group in a deployment. */
const DeploymentGroupStateSchema = z.looseObject({
  AutoRevert: bool(),
  AutoPromote: bool(),
  Promoted: bool(),
  PlacedCanaries: list(z.string()),
  DesiredCanaries: num(),
  DesiredTotal: num(),
  PlacedAllocs: num(),
  HealthyAllocs: num(),
  UnhealthyAllocs: num(),
  ProgressDeadline: num(),
  RequireProgressBy: str(),
});
/** Progress of one task group in a deployment. */
export type DeploymentGroupState = z.infer<typeof DeploymentGroupStateSchema>;

/**
 * A rollout of one job version. Status: `running`, `paused`, `failed`, `successful`, `cancelled`,
 * `initializing`, `pending`, `blocked` or `unblocking`.
 */
export const DeploymentSchema = z.looseObject({
  ID: str(),
  Namespace: str(),
  JobID: str(),
  JobVersion: num(),
  JobModifyIndex: num(),
  JobSpecModifyIndex: num(),
  JobCreateIndex: num(),
  Status: str(),
  StatusDescription: str(),
  TaskGroups: map(DeploymentGroupStateSchema),
  IsMultiregion: bool(),
  CreateIndex: num(),
  ModifyIndex: num(),
});
/** A rollout of one job version. */
export type Deployment = z.infer<typeof DeploymentSchema>;

/** Scaling state of a job's task groups. */
export const ScaleStatusSchema = z.looseObject({
  JobID: str(),
  Namespace: str(),
  JobCreateIndex: num(),
  JobModifyIndex: num(),
  JobStopped: bool(),
  TaskGroups: map(
    z.looseObject({
      Desired: num(),
      Healthy: num(),
      Placed: num(),
      Running: num(),
      Unhealthy: num(),
      Events: list(
        z.looseObject({
          Message: str(),
          Error: z.union([z.boolean(), z.string()]).nullish(),
          Count: num(),
          PreviousCount: num(),
          Time: num(),
          Meta: map(z.unknown()),
        }),
      ),
    }),
  ),
});
/** Scaling state of a job's task groups. */
export type ScaleStatus = z.infer<typeof ScaleStatusSchema>;

/** A service instance registered for a running allocation. */
export const ServiceRegistrationSchema = z.looseObject({
  ID: str(),
  ServiceName: str(),
  Namespace: str(),
  NodeID: str(),
  Datacenter: str(),
  JobID: str(),
  AllocID: str(),
  Tags: list(z.string()),
  Address: str(),
  Port: num(),
  CreateIndex: num(),
  ModifyIndex: num(),
});
/** A service instance registered for a running allocation. */
export type ServiceRegistration = z.infer<typeof ServiceRegistrationSchema>;
