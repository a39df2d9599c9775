/**
 * The job definition and task group, the job list and summary, submissions and actions, as the scheduler
 * sends and accepts them. Durations are integers in nanoseconds and timestamps are unix nanoseconds on the real
 * scheduler (the spec leaves the unit open).
 */
import { z } from "zod";
import { bool, list, map, num, str, stringMap } from "./fields";
import { AffinitySchema, ConstraintSchema, SpreadSchema } from "./placement";
import {
  NetworkSchema,
  ReschedulePolicySchema,
  RestartPolicySchema,
  ServiceSchema,
  MigratePolicySchema,
  TaskSchema,
} from "./task";

/** Rolling-update policy of a job or task group; durations in nanoseconds. */
const UpdatePolicySchema = z.looseObject({
  Stagger: num(),
  MaxParallel: num(),
  MinHealthyTime: num(),
  HealthyDeadline: num(),
  ProgressDeadline: num(),
  Canary: num(),
  AutoRevert: bool(),
  AutoPromote: bool(),
  /** `checks`, `task_states` or `manual`. */
  HealthCheck: str(),
});

/** Periodic (cron) configuration. */
const PeriodicSchema = z.looseObject({
  Enabled: bool(),
  Spec: str(),
  SpecType: str(),
  ProhibitOverlap: bool(),
  TimeZone: str(),
});

/** Parameterized-job configuration: what a dispatch must and may carry. */
const ParameterizedJobSchema = z.looseObject({
  /** `optional`, `required` or `forbidden`. */
  Payload: str(),
  MetaRequired: list(z.string()),
  MetaOptional: list(z.string()),
});

/** A task group: tasks placed together, `Count` times. */
const TaskGroupSchema = z.looseObject({
  Name: str(),
  Count: num(),
  Constraints: list(ConstraintSchema),
  Affinities: list(AffinitySchema),
  Spreads: list(SpreadSchema),
  Meta: stringMap(),
  Networks: list(NetworkSchema),
  Services: list(ServiceSchema),
  Tasks: list(TaskSchema),
  Update: UpdatePolicySchema.nullish(),
  EphemeralDisk: z.looseObject({ Sticky: bool(), SizeMB: num(), Migrate: bool() }).nullish(),
  RestartPolicy: RestartPolicySchema.nullish(),
  ReschedulePolicy: ReschedulePolicySchema.nullish(),
  Migrate: MigratePolicySchema.nullish(),
  Scaling: z.looseObject({ Min: num(), Max: num(), Enabled: bool(), Policy: map(z.unknown()) }).nullish(),
  Volumes: map(z.looseObject({})),
  /** Nanoseconds. */
  MaxClientDisconnect: num(),
  /** Nanoseconds. */
  ShutdownDelay: num(),
  /** Nanoseconds. */
  StopAfterClientDisconnect: num(),
});

/** The tag a version carries (real scheduler ≥ 1.9); TaggedTime in unix nanoseconds. */
export const JobVersionTagInfoSchema = z.looseObject({ Name: str(), Description: str(), TaggedTime: num() });

/** A full job definition: what register and plan accept, and what read, parse and versions return. */
export const JobSchema = z.looseObject({
  Region: str(),
  Namespace: str(),
  ID: str(),
  ParentID: str(),
  Name: str(),
  /** `service`, `batch`, `system` or `sysbatch`. */
  Type: str(),
  /** Server-managed: `pending`, `running` or `dead`. */
  Status: str(),
  StatusDescription: str(),
  NodePool: str(),
  Priority: num(),
  AllAtOnce: bool(),
  Stop: bool(),
  Stable: bool(),
  Dispatched: bool(),
  Datacenters: list(z.string()),
  Constraints: list(ConstraintSchema),
  Affinities: list(AffinitySchema),
  Spreads: list(SpreadSchema),
  Multiregion: z.looseObject({}).nullish(),
  TaskGroups: list(TaskGroupSchema),
  Update: UpdatePolicySchema.nullish(),
  Periodic: PeriodicSchema.nullish(),
  ParameterizedJob: ParameterizedJobSchema.nullish(),
  /** Base64 payload of a dispatched child job. */
  Payload: str(),
  Meta: stringMap(),
  SecretsToken: str(),
  SecretsNamespace: str(),
  DiscoveryToken: str(),
  SvcTokenID: str(),
  /** Server-managed: unix nanoseconds of the submission. */
  SubmitTime: num(),
  /** Server-managed: the job version number. */
  Version: num(),
  /** Server-managed: the tag of this version, if any. */
  VersionTag: JobVersionTagInfoSchema.nullish(),
  CreateIndex: num(),
  /** Changes on any state change (status, stable, tags, stop). */
  ModifyIndex: num(),
  /** Changes only when the spec changes: the index for check-and-set. */
  JobModifyIndex: num(),
});
/** A full job definition. */
export type Job = z.infer<typeof JobSchema>;

/** Counts of one task group's allocations by state. */
const TaskGroupSummarySchema = z.looseObject({
  Queued: num(),
  Complete: num(),
  Failed: num(),
  Running: num(),
  Starting: num(),
  Lost: num(),
  Unknown: num(),
});

/** Allocation counts per task group and child-job counts. */
export const JobSummarySchema = z.looseObject({
  JobID: str(),
  /** Absent in the standalone summary endpoint. */
  Namespace: str(),
  Summary: map(TaskGroupSummarySchema),
  Children: z.looseObject({ Pending: num(), Running: num(), Dead: num() }).nullish(),
  CreateIndex: num(),
  ModifyIndex: num(),
});
/** Allocation counts per task group and child-job counts. */
export type JobSummary = z.infer<typeof JobSummarySchema>;

/** One element of the job list. */
export const JobStubSchema = z.looseObject({
  ID: str(),
  ParentID: str(),
  Name: str(),
  Namespace: str(),
  Type: str(),
  Status: str(),
  StatusDescription: str(),
  Priority: num(),
  Periodic: bool(),
  ParameterizedJob: bool(),
  Stop: bool(),
  JobSummary: JobSummarySchema.nullish(),
  CreateIndex: num(),
  ModifyIndex: num(),
  JobModifyIndex: num(),
  SubmitTime: num(),
  /** Present only when the list was asked for with `meta`. */
  Meta: stringMap(),
});
/** One element of the job list. */
export type JobStub = z.infer<typeof JobStubSchema>;

/** The original job file a version was registered from. */
export const JobSubmissionSchema = z.looseObject({
  /** Literal content of the original job file. */
  Source: str(),
  /** `hcl2` or `json`. */
  Format: str(),
  /** Variables given as `-var` flags at submit time. */
  VariableFlags: stringMap(),
  /** Variables in var-file form. */
  Variables: str(),
  JobID: str(),
  Namespace: str(),
  Version: num(),
  JobIndex: num(),
});
/** The original job file a version was registered from. */
export type JobSubmission = z.infer<typeof JobSubmissionSchema>;

/** A predefined action of a job, as the actions endpoint lists it. */
export const JobActionSchema = z.looseObject({
  Name: str(),
  Command: str(),
  Args: list(z.string()),
  TaskGroupName: str(),
  TaskName: str(),
});
/** A predefined action of a job. */
export type JobAction = z.infer<typeof JobActionSchema>;
