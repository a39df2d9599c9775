/**
 * The job definition and its parts (task group, task, network, service), as the scheduler sends and
 * accepts them. Durations are integers in nanoseconds and timestamps are unix nanoseconds on the real
 * scheduler (the spec leaves the unit open).
 */
import { z } from "zod";
import { bool, list, map, num, str, stringMap } from "./fields";

/** A placement constraint. */
export const ConstraintSchema = z.looseObject({ LTarget: str(), RTarget: str(), Operand: str() });
/** A placement constraint. */
export type Constraint = z.infer<typeof ConstraintSchema>;

/** A placement preference: a constraint with a weight (-100..100). */
export const AffinitySchema = z.looseObject({ LTarget: str(), RTarget: str(), Operand: str(), Weight: num() });
/** A placement preference. */
export type Affinity = z.infer<typeof AffinitySchema>;

/** A spread target of a spread block. */
export const SpreadTargetSchema = z.looseObject({ Value: str(), Percent: num() });
/** A spread block: distribute allocations over an attribute. */
export const SpreadSchema = z.looseObject({ Attribute: str(), Weight: num(), SpreadTarget: list(SpreadTargetSchema) });
/** A spread block. */
export type Spread = z.infer<typeof SpreadSchema>;

/** Rolling-update policy of a job or task group; durations in nanoseconds. */
export const UpdatePolicySchema = z.looseObject({
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
/** Rolling-update policy. */
export type UpdatePolicy = z.infer<typeof UpdatePolicySchema>;

/** Periodic (cron) configuration. */
export const PeriodicSchema = z.looseObject({ Enabled: bool(), Spec: str(), SpecType: str(), ProhibitOverlap: bool(), TimeZone: str() });
/** Periodic configuration. */
export type Periodic = z.infer<typeof PeriodicSchema>;

/** Parameterized-job configuration: what a dispatch must and may carry. */
export const ParameterizedJobSchema = z.looseObject({
  /** `optional`, `required` or `forbidden`. */
  Payload: str(),
  MetaRequired: list(z.string()),
  MetaOptional: list(z.string()),
});
/** Parameterized-job configuration. */
export type ParameterizedJob = z.infer<typeof ParameterizedJobSchema>;

/** A reserved or dynamic port. */
export const PortSchema = z.looseObject({ Label: str(), Value: num(), To: num(), HostNetwork: str() });
/** A reserved or dynamic port. */
export type Port = z.infer<typeof PortSchema>;

/** A network block of a group or task. */
export const NetworkSchema = z.looseObject({
  Device: str(),
  CIDR: str(),
  IP: str(),
  Mode: str(),
  MBits: num(),
  DNS: z.looseObject({ Servers: list(z.string()), Searches: list(z.string()), Options: list(z.string()) }).nullish(),
  ReservedPorts: list(PortSchema),
  DynamicPorts: list(PortSchema),
});
/** A network block. */
export type Network = z.infer<typeof NetworkSchema>;

/** A health check of a service; Interval and Timeout in nanoseconds. */
export const ServiceCheckSchema = z.looseObject({
  Name: str(),
  Type: str(),
  Command: str(),
  Args: list(z.string()),
  Path: str(),
  Protocol: str(),
  PortLabel: str(),
  InitialStatus: str(),
  Interval: num(),
  Timeout: num(),
});
/** A health check of a service. */
export type ServiceCheck = z.infer<typeof ServiceCheckSchema>;

/** A service block of a group or task. */
export const ServiceSchema = z.looseObject({
  Name: str(),
  PortLabel: str(),
  /** `nomad` or `consul` on the real scheduler. */
  Provider: str(),
  Tags: list(z.string()),
  Checks: list(ServiceCheckSchema),
});
/** A service block. */
export type Service = z.infer<typeof ServiceSchema>;

/** Restart policy; Interval and Delay in nanoseconds. */
export const RestartPolicySchema = z.looseObject({ Attempts: num(), Interval: num(), Delay: num(), Mode: str(), RenderTemplates: bool() });
/** Restart policy. */
export type RestartPolicy = z.infer<typeof RestartPolicySchema>;

/** Reschedule policy; durations in nanoseconds. */
export const ReschedulePolicySchema = z.looseObject({
  Attempts: num(),
  Interval: num(),
  Delay: num(),
  DelayFunction: str(),
  MaxDelay: num(),
  Unlimited: bool(),
});
/** Reschedule policy. */
export type ReschedulePolicy = z.infer<typeof ReschedulePolicySchema>;

/** Migrate policy; durations in nanoseconds. */
export const MigratePolicySchema = z.looseObject({ HealthCheck: str(), HealthyDeadline: num(), MaxParallel: num(), MinHealthyTime: num() });
/** Migrate policy. */
export type MigratePolicy = z.infer<typeof MigratePolicySchema>;

/** Resources a task asks for. */
export const ResourcesSchema = z.looseObject({
  CPU: num(),
  Cores: num(),
  MemoryMB: num(),
  MemoryMaxMB: num(),
  DiskMB: num(),
  IOPS: num(),
  Devices: z.array(z.looseObject({ Name: str(), Count: num() })).nullish(),
  Networks: list(NetworkSchema),
});
/** Resources a task asks for. */
export type Resources = z.infer<typeof ResourcesSchema>;

/** A predefined action of a task (`action` block). */
export const TaskActionSchema = z.looseObject({ Name: str(), Command: str(), Args: list(z.string()) });

/** One task of a task group. */
export const TaskSchema = z.looseObject({
  Name: str(),
  Driver: str(),
  User: str(),
  Kind: str(),
  KillSignal: str(),
  /** Driver-specific configuration. */
  Config: map(z.unknown()),
  Env: stringMap(),
  Meta: stringMap(),
  /** Nanoseconds. */
  KillTimeout: num(),
  Leader: bool(),
  Lifecycle: z.looseObject({ Hook: str(), Sidecar: bool() }).nullish(),
  Resources: ResourcesSchema.nullish(),
  LogConfig: z.looseObject({ Disabled: bool(), MaxFiles: num(), MaxFileSizeMB: num() }).nullish(),
  Artifacts: list(z.looseObject({ GetterSource: str(), GetterOptions: stringMap(), RelativeDest: str() })),
  Templates: list(
    z.looseObject({
      SourcePath: str(),
      DestPath: str(),
      EmbeddedTmpl: str(),
      ChangeMode: str(),
      ChangeSignal: str(),
      Perms: str(),
      Splay: num(),
    }),
  ),
  Services: list(ServiceSchema),
  /** Secrets-service integration of the task (spec name; `Vault` on the real scheduler). */
  Secrets: z.looseObject({}).nullish(),
  DispatchPayload: z.looseObject({ File: str() }).nullish(),
  Constraints: list(ConstraintSchema),
  Affinities: list(AffinitySchema),
  RestartPolicy: RestartPolicySchema.nullish(),
  ShutdownDelay: num(),
  CSIPluginConfig: z.looseObject({}).nullish(),
  ScalingPolicies: list(z.looseObject({})),
  VolumeMounts: list(z.looseObject({ Volume: str(), Destination: str(), ReadOnly: bool() })),
  Actions: list(TaskActionSchema),
});
/** One task of a task group. */
export type Task = z.infer<typeof TaskSchema>;

/** A task group: tasks placed together, `Count` times. */
export const TaskGroupSchema = z.looseObject({
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
/** A task group. */
export type TaskGroup = z.infer<typeof TaskGroupSchema>;

/** The tag a version carries (real scheduler ≥ 1.9); TaggedTime in unix nanoseconds. */
export const JobVersionTagInfoSchema = z.looseObject({ Name: str(), Description: str(), TaggedTime: num() });
/** The tag a version carries. */
export type JobVersionTagInfo = z.infer<typeof JobVersionTagInfoSchema>;

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
export const TaskGroupSummarySchema = z.looseObject({
  Queued: num(),
  Complete: num(),
  Failed: num(),
  Running: num(),
  Starting: num(),
  Lost: num(),
  Unknown: num(),
});
/** Counts of one task group's allocations by state. */
export type TaskGroupSummary = z.infer<typeof TaskGroupSummarySchema>;

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
