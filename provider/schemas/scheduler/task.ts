/**
 * A task and the blocks it shares with task groups (network, service, restart policy, resources).
 * Durations are integers in nanoseconds on the real scheduler.
 */
import { z } from "zod";
import { bool, list, map, num, str, stringMap } from "./fields";
import { AffinitySchema, ConstraintSchema } from "./placement";

/** A reserved or dynamic port. */
const PortSchema = z.looseObject({ Label: str(), Value: num(), To: num(), HostNetwork: str() });

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

/** A health check of a service; Interval and Timeout in nanoseconds. */
const ServiceCheckSchema = z.looseObject({
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

/** A service block of a group or task. */
export const ServiceSchema = z.looseObject({
  Name: str(),
  PortLabel: str(),
  /** `nomad` or `consul` on the real scheduler. */
  Provider: str(),
  Tags: list(z.string()),
  Checks: list(ServiceCheckSchema),
});

/** Restart policy; Interval and Delay in nanoseconds. */
export const RestartPolicySchema = z.looseObject({
  Attempts: num(),
  Interval: num(),
  Delay: num(),
  Mode: str(),
  RenderTemplates: bool(),
});

/** Reschedule policy; durations in nanoseconds. */
export const ReschedulePolicySchema = z.looseObject({
  Attempts: num(),
  Interval: num(),
  Delay: num(),
  DelayFunction: str(),
  MaxDelay: num(),
  Unlimited: bool(),
});

/** Migrate policy; durations in nanoseconds. */
export const MigratePolicySchema = z.looseObject({
  HealthCheck: str(),
  HealthyDeadline: num(),
  MaxParallel: num(),
  MinHealthyTime: num(),
});

/** Resources a task asks for. */
const ResourcesSchema = z.looseObject({
  CPU: num(),
  Cores: num(),
  MemoryMB: num(),
  MemoryMaxMB: num(),
  DiskMB: num(),
  IOPS: num(),
  Devices: z.array(z.looseObject({ Name: str(), Count: num() })).nullish(),
  Networks: list(NetworkSchema),
});

/** A predefined action of a task (`action` block). */
const TaskActionSchema = z.looseObject({ Name: str(), Command: str(), Args: list(z.string()) });

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
