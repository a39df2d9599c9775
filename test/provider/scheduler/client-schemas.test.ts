/**
 * The scheduler schemas against realistic responses shaped like the real server's (Go nil → null,
 * nanosecond durations, fields this library does not model): they parse, and nothing is dropped.
 */
import { describe, expect, it } from "vitest";
import {
  AllocationSchema,
  DeploymentSchema,
  EvaluationSchema,
  JobSchema,
  JobStubSchema,
  JobSubmissionSchema,
  JobVersionsResponseSchema,
  PlanResponseSchema,
  ScaleStatusSchema,
  ServiceRegistrationSchema,
  VersionTagSchema,
  WriteResultSchema,
  DispatchResultSchema,
  JobActionSchema,
} from "../../../provider/schemas/scheduler";

const job = {
  Affinities: null,
  AllAtOnce: false,
  Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
  ConsulNamespace: "",
  CreateIndex: 11,
  Datacenters: ["dc1"],
  DiscoveryToken: "",
  Dispatched: false,
  ID: "web",
  JobModifyIndex: 17,
  Meta: { owner: "team-a" },
  ModifyIndex: 19,
  Multiregion: null,
  Name: "web",
  Namespace: "default",
  NodePool: "default",
  ParameterizedJob: null,
  ParentID: "",
  Payload: null,
  Periodic: null,
  Priority: 50,
  Region: "global",
  Spreads: null,
  Stable: true,
  Status: "running",
  StatusDescription: "",
  Stop: false,
  SubmitTime: 1732200000123456768,
  SvcTokenID: "",
  TaskGroups: [
    {
      Affinities: null,
      Constraints: null,
      Consul: { Cluster: "default", Namespace: "", Partition: "" },
      Count: 2,
      EphemeralDisk: { Migrate: false, SizeMB: 300, Sticky: false },
      MaxClientDisconnect: null,
      Meta: null,
      Migrate: { HealthCheck: "checks", HealthyDeadline: 300000000000, MaxParallel: 1, MinHealthyTime: 10000000000 },
      Name: "frontend",
      Networks: [
        {
          CIDR: "",
          DNS: null,
          Device: "",
          DynamicPorts: [{ HostNetwork: "default", Label: "http", To: 8080, Value: 0 }],
          IP: "",
          MBits: 0,
          Mode: "host",
          ReservedPorts: null,
        },
      ],
      ReschedulePolicy: { Attempts: 0, Delay: 30000000000, DelayFunction: "exponential", Interval: 0, MaxDelay: 3600000000000, Unlimited: true },
      RestartPolicy: { Attempts: 2, Delay: 15000000000, Interval: 1800000000000, Mode: "fail", RenderTemplates: false },
      Scaling: null,
      Services: [
        {
          Name: "web",
          PortLabel: "http",
          Provider: "nomad",
          Tags: ["urlprefix-/"],
          Checks: [{ Name: "alive", Type: "http", Path: "/", Protocol: "", PortLabel: "", InitialStatus: "", Interval: 10000000000, Timeout: 2000000000, Args: null, Command: "", SuccessBeforePassing: 0 }],
          Identity: null,
        },
      ],
      ShutdownDelay: null,
      Spreads: null,
      StopAfterClientDisconnect: null,
      Tasks: [
        {
          Actions: [{ Name: "hello", Command: "/bin/echo", Args: ["hi"] }],
          Affinities: null,
          Artifacts: null,
          CSIPluginConfig: null,
          Config: { image: "nginx:1.27", ports: ["http"] },
          Constraints: null,
          DispatchPayload: null,
          Driver: "docker",
          Env: { LOG_LEVEL: "info" },
          Identities: null,
          KillSignal: "",
          KillTimeout: 5000000000,
          Kind: "",
          Leader: false,
          Lifecycle: null,
          LogConfig: { Disabled: false, MaxFileSizeMB: 10, MaxFiles: 10 },
          Meta: null,
          Name: "app",
          Resources: { CPU: 100, Cores: 0, Devices: null, DiskMB: 0, IOPS: 0, MemoryMB: 128, MemoryMaxMB: 0, Networks: null, NUMA: null },
          RestartPolicy: { Attempts: 2, Delay: 15000000000, Interval: 1800000000000, Mode: "fail", RenderTemplates: false },
          ScalingPolicies: null,
          Secrets: null,
          Services: null,
          ShutdownDelay: 0,
          Templates: [{ ChangeMode: "restart", ChangeSignal: "", DestPath: "local/app.conf", EmbeddedTmpl: "x={{ env \"NOMAD_PORT_http\" }}", Perms: "0644", SourcePath: "", Splay: 5000000000, Wait: null }],
          User: "",
          VolumeMounts: null,
        },
      ],
      Update: { AutoPromote: false, AutoRevert: true, Canary: 0, HealthCheck: "checks", HealthyDeadline: 300000000000, MaxParallel: 1, MinHealthyTime: 10000000000, ProgressDeadline: 600000000000, Stagger: 30000000000 },
      Volumes: null,
    },
  ],
  UI: null,
  Update: { AutoPromote: false, AutoRevert: false, Canary: 0, HealthCheck: "", HealthyDeadline: 0, MaxParallel: 1, MinHealthyTime: 0, ProgressDeadline: 0, Stagger: 30000000000 },
  Version: 3,
  VersionTag: { Name: "golden", Description: "known good", TaggedTime: 1732200001000000000 },
  SecretsNamespace: "",
  SecretsToken: "",
};

/** `/v1/jobs/parse` without Canonicalize: the client-library job, every unset scalar `null`. */
const parsed = {
  Region: null,
  Namespace: null,
  ID: "batch-report",
  Name: "batch-report",
  Type: "batch",
  Priority: null,
  AllAtOnce: null,
  Datacenters: null,
  NodePool: null,
  Constraints: null,
  Affinities: null,
  TaskGroups: [{ Name: "g", Count: null, Constraints: null, Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/date" }, Resources: null, KillTimeout: null }] }],
  Update: null,
  Multiregion: null,
  Spreads: null,
  Periodic: { Enabled: null, Spec: "*/5 * * * *", SpecType: "cron", ProhibitOverlap: true, TimeZone: null },
  ParameterizedJob: null,
  Reschedule: null,
  Migrate: null,
  Meta: null,
  Stop: null,
  ParentID: null,
  Dispatched: false,
  Payload: null,
  ConsulNamespace: null,
  Status: null,
  StatusDescription: null,
  Stable: null,
  Version: null,
  SubmitTime: null,
  CreateIndex: null,
  ModifyIndex: null,
  JobModifyIndex: null,
};

const diff = {
  Type: "Edited",
  ID: "web",
  Fields: null,
  Objects: null,
  TaskGroups: [
    {
      Type: "Edited",
      Name: "frontend",
      Fields: [{ Type: "Edited", Name: "Count", Old: "1", New: "2", Annotations: null }],
      Objects: [{ Type: "Added", Name: "Update", Fields: [{ Type: "Added", Name: "MaxParallel", Old: "", New: "1", Annotations: null }], Objects: [{ Type: "None", Name: "Deep", Fields: null, Objects: null }] }],
      Tasks: [
        {
          Type: "Edited",
          Name: "app",
          Fields: [{ Type: "Edited", Name: "Env[LOG_LEVEL]", Old: "info", New: "debug", Annotations: ["forces in-place update"] }],
          Objects: null,
          Annotations: ["forces in-place update"],
        },
        { Type: "Deleted", Name: "sidecar", Fields: null, Objects: null, Annotations: ["forces create/destroy update"] },
      ],
      Updates: { "in-place update": 2, "create/destroy update": 0 },
    },
  ],
};

const plan = {
  Annotations: {
    DesiredTGUpdates: {
      frontend: { Canary: 0, DestructiveUpdate: 0, Ignore: 0, InPlaceUpdate: 2, Migrate: 0, Place: 0, Preemptions: 0, Stop: 0, Disconnect: 0, Reconnect: 0, RescheduleLater: 0, RescheduleNow: 0 },
    },
    PreemptedAllocs: null,
  },
  CreatedEvals: null,
  Diff: diff,
  FailedTGAllocs: {
    frontend: {
      AllocationTime: 12345,
      ClassExhausted: null,
      ClassFiltered: null,
      CoalescedFailures: 1,
      ConstraintFiltered: { "${attr.kernel.name} = linux": 1 },
      DimensionExhausted: { memory: 2 },
      NodesAvailable: { dc1: 2 },
      NodesEvaluated: 2,
      NodesExhausted: 2,
      NodesFiltered: 0,
      NodesInPool: 2,
      QuotaExhausted: null,
      ResourcesExhausted: { app: { CPU: 0, MemoryMB: 128 } },
      ScoreMetaData: null,
      Scores: null,
    },
  },
  Index: 0,
  JobModifyIndex: 17,
  NextPeriodicLaunch: "0001-01-01T00:00:00Z",
  Warnings: "",
};

const allocation = {
  ID: "8f0a7c3e-1e7e-6b8b-5b2a-1a2b3c4d5e6f",
  EvalID: "2d7f3f1a-0000-4000-8000-000000000001",
  Name: "web.frontend[0]",
  Namespace: "default",
  NodeID: "f1e2d3c4-0000-4000-8000-000000000009",
  NodeName: "node-1",
  JobID: "web",
  JobVersion: 3,
  TaskGroup: "frontend",
  DesiredStatus: "run",
  DesiredDescription: "",
  ClientStatus: "running",
  ClientDescription: "Tasks are running",
  DeploymentID: "d0d0d0d0-0000-4000-8000-000000000003",
  DeploymentStatus: { Healthy: true, Canary: false, Timestamp: "2026-11-22T10:00:05.1Z", ModifyIndex: 40 },
  FollowupEvalID: "",
  PreviousAllocation: "",
  NextAllocation: "",
  RescheduleTracker: null,
  AllocatedResources: { Shared: { DiskMB: 300 }, Tasks: {} },
  TaskStates: {
    app: {
      State: "running",
      Failed: false,
      Restarts: 0,
      LastRestart: null,
      StartedAt: "2026-11-22T10:00:01.123456789Z",
      FinishedAt: null,
      TaskHandle: null,
      Events: [
        { Type: "Received", Time: 1732200001000000000, DisplayMessage: "Task received by client", Details: {}, FailsTask: false, ExitCode: 0, Signal: 0, Message: "", KillTimeout: 0, KillError: "", KillReason: "", StartDelay: 0, DownloadError: "", ValidationError: "", DiskLimit: 0, FailedSibling: "", SetupError: "", DriverError: "", DriverMessage: "", TaskSignalReason: "", TaskSignal: "", RestartReason: "", GenericSource: "" },
        { Type: "Started", Time: 1732200001123456768, DisplayMessage: "Task started by client", Details: {} },
      ],
    },
  },
  CreateIndex: 20,
  ModifyIndex: 40,
  AllocModifyIndex: 20,
  CreateTime: 1732200000500000000,
  ModifyTime: 1732200005100000000,
};

const evaluation = {
  ID: "2d7f3f1a-0000-4000-8000-000000000001",
  Namespace: "default",
  Priority: 50,
  Type: "service",
  TriggeredBy: "job-register",
  JobID: "web",
  JobModifyIndex: 17,
  NodeID: "",
  NodeModifyIndex: 0,
  DeploymentID: "d0d0d0d0-0000-4000-8000-000000000003",
  Status: "complete",
  StatusDescription: "",
  Wait: 0,
  WaitUntil: "0001-01-01T00:00:00Z",
  NextEval: "",
  PreviousEval: "",
  BlockedEval: "",
  RelatedEvals: null,
  FailedTGAllocs: null,
  ClassEligibility: null,
  QuotaLimitReached: "",
  EscapedComputedClass: false,
  AnnotatePlan: false,
  QueuedAllocations: { frontend: 0 },
  LeaderACL: "",
  SnapshotIndex: 18,
  CreateIndex: 18,
  ModifyIndex: 21,
  CreateTime: 1732200000400000000,
  ModifyTime: 1732200000600000000,
};

const deployment = {
  ID: "d0d0d0d0-0000-4000-8000-000000000003",
  Namespace: "default",
  JobID: "web",
  JobVersion: 3,
  JobModifyIndex: 17,
  JobSpecModifyIndex: 17,
  JobCreateIndex: 11,
  IsMultiregion: false,
  TaskGroups: {
    frontend: {
      AutoRevert: true,
      AutoPromote: false,
      ProgressDeadline: 600000000000,
      RequireProgressBy: "2026-11-22T10:10:00Z",
      Promoted: false,
      PlacedCanaries: null,
      DesiredCanaries: 0,
      DesiredTotal: 2,
      PlacedAllocs: 2,
      HealthyAllocs: 2,
      UnhealthyAllocs: 0,
    },
  },
  Status: "successful",
  StatusDescription: "Deployment completed successfully",
  EvalPriority: 50,
  CreateIndex: 19,
  ModifyIndex: 41,
  CreateTime: 1732200000449999872,
  ModifyTime: 1732200015000000000,
};

const cases: Array<[string, { safeParse(v: unknown): { success: boolean; data?: unknown; error?: unknown } }, unknown]> = [
  ["Job (read)", JobSchema, job],
  ["Job (parse, nulls)", JobSchema, parsed],
  ["job stub", JobStubSchema, { ID: "web", ParentID: "", Name: "web", Namespace: "default", Datacenters: ["dc1"], NodePool: "default", Multiregion: null, Type: "service", Priority: 50, Periodic: false, ParameterizedJob: false, Stop: false, Status: "running", StatusDescription: "", JobSummary: { JobID: "web", Namespace: "default", Summary: { frontend: { Queued: 0, Complete: 0, Failed: 0, Running: 2, Starting: 0, Lost: 0, Unknown: 0 } }, Children: { Pending: 0, Running: 0, Dead: 0 }, CreateIndex: 11, ModifyIndex: 30 }, CreateIndex: 11, ModifyIndex: 19, JobModifyIndex: 17, SubmitTime: 1732200000123456768, Meta: null }],
  ["versions with diffs", JobVersionsResponseSchema, { Versions: [job, { ...job, Version: 2, VersionTag: null }], Diffs: [diff], Index: 19, LastContact: 0, KnownLeader: false }],
  ["versions without diffs", JobVersionsResponseSchema, { Versions: [job], Diffs: null, Index: 19, LastContact: 0, KnownLeader: false }],
  ["plan response", PlanResponseSchema, plan],
  ["allocation", AllocationSchema, allocation],
  ["evaluation", EvaluationSchema, evaluation],
  ["blocked evaluation with failures", EvaluationSchema, { ...evaluation, Status: "blocked", FailedTGAllocs: plan.FailedTGAllocs, ClassEligibility: { "v1:123": true } }],
  ["deployment", DeploymentSchema, deployment],
  ["scale status", ScaleStatusSchema, { JobID: "web", Namespace: "default", JobCreateIndex: 11, JobModifyIndex: 17, JobStopped: false, TaskGroups: { frontend: { Desired: 2, Placed: 2, Running: 2, Healthy: 2, Unhealthy: 0, Events: [{ Count: 2, PreviousCount: 1, Error: false, Message: "scaled up", Meta: { by: "ops" }, EvalID: "e", Time: 1732200000000000000 }] } } }],
  ["service registration", ServiceRegistrationSchema, { ID: "_nomad-task-8f0a-app-web-http", ServiceName: "web", Namespace: "default", NodeID: "n", Datacenter: "dc1", JobID: "web", AllocID: allocation.ID, Tags: ["urlprefix-/"], Address: "127.0.0.1", Port: 23456, CreateIndex: 22, ModifyIndex: 22 }],
  ["submission", JobSubmissionSchema, { JobID: "web", Namespace: "default", Version: 3, JobIndex: 17, Source: 'job "web" {}', Format: "hcl2", VariableFlags: { image: "nginx" }, Variables: "" }],
  ["version tag", VersionTagSchema, { Name: "golden", Description: "known good", TaggedTime: 1732200001000000000, Index: 44, LastContact: 0, KnownLeader: false, NextToken: "" }],
  ["register result", WriteResultSchema, { EvalID: evaluation.ID, EvalCreateIndex: 18, JobModifyIndex: 17, Warnings: "", Index: 18, LastContact: 0, KnownLeader: false }],
  ["stop result", WriteResultSchema, { EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, VolumeEvalID: "", VolumeEvalIndex: 0, Index: 0, LastContact: 0, KnownLeader: false, NextToken: "" }],
  ["dispatch result", DispatchResultSchema, { Index: 50, JobCreateIndex: 50, EvalCreateIndex: 50, EvalID: "e", DispatchedJobID: "report/dispatch-1732200000-3f2a1b4c" }],
  ["job action", JobActionSchema, { Name: "hello", Command: "/bin/echo", Args: ["hi"], TaskGroupName: "frontend", TaskName: "app" }],
];

describe("scheduler schemas", () => {
  it.each(cases)("parses a realistic %s and keeps every field (round trip)", (_name, schema, input) => {
    const res = schema.safeParse(structuredClone(input));
    expect(res.error).toBeUndefined();
    expect(res.success).toBe(true);
    expect(JSON.parse(JSON.stringify(res.data))).toEqual(JSON.parse(JSON.stringify(input)));
  });

  it("keeps unknown fields at every depth of a job so a read-modify-write drops nothing", () => {
    const out = JobSchema.parse(structuredClone(job)) as Record<string, unknown>;
    expect(out.UI).toBeNull();
    const tg = (out.TaskGroups as Array<Record<string, unknown>>)[0]!;
    expect(tg.Consul).toEqual({ Cluster: "default", Namespace: "", Partition: "" });
    const task = (tg.Tasks as Array<Record<string, unknown>>)[0]!;
    expect((task.Resources as Record<string, unknown>).NUMA).toBeNull();
    expect(((task.Templates as Array<Record<string, unknown>>)[0]!).Wait).toBeNull();
  });

  it("accepts the four diff types and passes a newer server's type through", () => {
    const d = PlanResponseSchema.parse({ Diff: { ...diff, Type: "Renamed" } });
    expect(d.Diff?.Type).toBe("Renamed");
    const nested = PlanResponseSchema.parse(plan).Diff?.TaskGroups?.[0]?.Objects?.[0]?.Objects?.[0];
    expect(nested?.Type).toBe("None");
  });

  it("rejects a job whose fields have the wrong types", () => {
    expect(JobSchema.safeParse({ ID: 7 }).success).toBe(false);
    expect(JobSchema.safeParse({ TaskGroups: [{ Count: "two" }] }).success).toBe(false);
    expect(DeploymentSchema.safeParse({ TaskGroups: { g: { HealthyAllocs: "1" } } }).success).toBe(false);
  });
});
