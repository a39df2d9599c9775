// The defaults the scheduler's Go client library fills into a job before sending it (the parse
// endpoint's `Canonicalize` flag applies exactly these, not the server's own admission changes).
// Numbers and rules are paraphrased from hashicorp/nomad api/jobs.go (Job, UpdateStrategy,
// PeriodicConfig, Multiregion), api/tasks.go (TaskGroup, Task, restart/reschedule/migrate policies,
// EphemeralDisk, LogConfig, TaskArtifact, Template, Vault, Affinity, Spread), api/resources.go
// (Resources, RequestedDevice), api/services.go (Service, ServiceCheck, CheckRestart) and
// api/consul.go (Consul). Durations are nanoseconds; null counts as unset, like a nil Go pointer.

type Obj = Record<string, unknown>;

const S = 1_000_000_000;
const MIN = 60 * S;
const HOUR = 60 * MIN;

const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const unset = (v: unknown): boolean => v === undefined || v === null;
const objects = (v: unknown): Obj[] => (Array.isArray(v) ? v.filter(isObj) : []);

/** Sets each default whose field is unset (absent or null). */
function fill(o: Obj, defaults: Obj): Obj {
  for (const [k, v] of Object.entries(defaults)) if (unset(o[k])) o[k] = v;
  return o;
}

/** Copies the fields set in `over` onto a copy of `base` (the Go Merge methods). */
function merge(base: Obj, over: Obj): Obj {
  const out = { ...base };
  for (const [k, v] of Object.entries(over)) if (!unset(v)) out[k] = v;
  return out;
}

const DEFAULT_UPDATE: Obj = {
  Stagger: 30 * S,
  MaxParallel: 1,
  HealthCheck: "checks",
  MinHealthyTime: 10 * S,
  HealthyDeadline: 5 * MIN,
  ProgressDeadline: 10 * MIN,
  AutoRevert: false,
  Canary: 0,
  AutoPromote: false,
};

/** Mirrors UpdateStrategy.Empty: no field holds a non-zero value. */
function updateEmpty(u: Obj): boolean {
  return !Object.keys(DEFAULT_UPDATE).some((k) => !unset(u[k]) && u[k] !== 0 && u[k] !== false && u[k] !== "");
}

function reschedulePolicy(jobType: string): Obj {
  if (jobType === "service")
    return { Attempts: 0, Interval: 0, Delay: 30 * S, DelayFunction: "exponential", MaxDelay: HOUR, Unlimited: true };
  if (jobType === "batch")
    return { Attempts: 1, Interval: 24 * HOUR, Delay: 5 * S, DelayFunction: "constant", MaxDelay: 0, Unlimited: false };
  return { Attempts: 0, Interval: 0, Delay: 0, DelayFunction: "", MaxDelay: 0, Unlimited: false };
}

function restartPolicy(jobType: string): Obj {
  const service = jobType === "service" || jobType === "system";
  return {
    Delay: 15 * S,
    Attempts: service ? 2 : 3,
    Interval: service ? 30 * MIN : 24 * HOUR,
    Mode: "fail",
    RenderTemplates: false,
  };
}

const weighted = (list: unknown): void => objects(list).forEach((a) => fill(a, { Weight: 50 }));

function canonicalizeResources(r: Obj): void {
  if (unset(r["Cores"])) {
    r["Cores"] = 0;
    if (unset(r["CPU"])) r["CPU"] = 100;
  }
  // With cores set and no cpu, cpu is 0 rather than the default.
  fill(r, { CPU: 0, MemoryMB: 300 });
  for (const d of objects(r["Devices"])) {
    fill(d, { Count: 1 });
    weighted(d["Affinities"]);
  }
}

function mergeCheckRestart(service: unknown, check: unknown): Obj | undefined {
  if (!isObj(service)) return isObj(check) ? { ...check } : undefined;
  const out = { ...service };
  if (!isObj(check)) return out;
  if (typeof check["Limit"] === "number" && check["Limit"] > 0) out["Limit"] = check["Limit"];
  if (!unset(check["Grace"])) out["Grace"] = check["Grace"];
  if (check["IgnoreWarnings"] === true) out["IgnoreWarnings"] = true;
  return out;
}

function canonicalizeService(s: Obj, job: Obj, group: Obj, task?: Obj): void {
  if (unset(s["Name"]) || s["Name"] === "") {
    s["Name"] = task
      ? `${String(job["Name"])}-${String(group["Name"])}-${String(task["Name"])}`
      : `${String(job["Name"])}-${String(group["Name"])}`;
  }
  for (const [k, v] of Object.entries({
    AddressMode: "auto",
    OnUpdate: "require_healthy",
    Provider: "consul",
    Cluster: "default",
  })) {
    if (unset(s[k]) || s[k] === "") s[k] = v;
  }
  for (const k of ["Meta", "CanaryMeta", "TaggedAddresses"])
    if (isObj(s[k]) && Object.keys(s[k] as Obj).length === 0) delete s[k];
  if (isObj(s["Weights"])) {
    const w = s["Weights"];
    for (const k of ["Passing", "Warning"]) if (!(typeof w[k] === "number" && (w[k] as number) > 0)) w[k] = 1;
  }
  for (const c of objects(s["Checks"])) {
    const cr = mergeCheckRestart(s["CheckRestart"], c["CheckRestart"]);
    if (cr) c["CheckRestart"] = fill(cr, { Grace: S });
    for (const k of ["SuccessBeforePassing", "FailuresBeforeCritical", "FailuresBeforeWarning"]) {
      if (typeof c[k] === "number" && (c[k] as number) < 0) c[k] = 0;
    }
    if (unset(c["OnUpdate"]) || c["OnUpdate"] === "") c["OnUpdate"] = s["OnUpdate"];
  }
}

function canonicalizeTemplate(t: Obj): void {
  fill(t, { SourcePath: "", DestPath: "", EmbeddedTmpl: "", ChangeMode: "restart" });
  if (unset(t["ChangeSignal"])) t["ChangeSignal"] = t["ChangeMode"] === "signal" ? "SIGHUP" : "";
  else t["ChangeSignal"] = String(t["ChangeSignal"]).toUpperCase();
  if (isObj(t["ChangeScript"])) fill(t["ChangeScript"], { Command: "", Args: [], Timeout: 5 * S, FailOnError: false });
  fill(t, {
    Splay: 5 * S,
    Perms: "0644",
    LeftDelim: "{{",
    RightDelim: "}}",
    Envvars: false,
    ErrMissingKey: false,
    VaultGrace: 0,
  });
}

function canonicalizeArtifact(a: Obj): void {
  fill(a, { GetterMode: "any", GetterInsecure: false, GetterSource: "" });
  for (const k of ["GetterOptions", "GetterHeaders"])
    if (!isObj(a[k]) || Object.keys(a[k] as Obj).length === 0) delete a[k];
  if (unset(a["RelativeDest"])) {
    const base = String(a["GetterSource"]).split("/").filter(Boolean).pop() ?? ".";
    a["RelativeDest"] = a["GetterMode"] === "file" ? `local/${base}` : "local/";
  }
}

function canonicalizeTask(t: Obj, group: Obj, job: Obj): void {
  const resources = isObj(t["Resources"]) ? t["Resources"] : {};
  canonicalizeResources(resources);
  t["Resources"] = resources;
  fill(t, { KillTimeout: 5 * S });
  t["LogConfig"] = fill(isObj(t["LogConfig"]) ? t["LogConfig"] : {}, {
    MaxFiles: 10,
    MaxFileSizeMB: 10,
    Disabled: false,
  });
  objects(t["Artifacts"]).forEach(canonicalizeArtifact);
  if (isObj(t["Secrets"])) {
    const v = t["Secrets"];
    fill(v, {
      Env: true,
      DisableFile: false,
      Namespace: "",
      ChangeMode: "restart",
      ChangeSignal: "SIGHUP",
      AllowTokenExpiration: false,
    });
    if (unset(v["Cluster"]) || v["Cluster"] === "") v["Cluster"] = "default";
  }
  if (isObj(t["Discovery"]) && (unset(t["Discovery"]["Cluster"]) || t["Discovery"]["Cluster"] === ""))
    t["Discovery"]["Cluster"] = "default";
  objects(t["Templates"]).forEach(canonicalizeTemplate);
  objects(t["Services"]).forEach((s) => canonicalizeService(s, job, group, t));
  weighted(t["Affinities"]);
  objects(t["VolumeMounts"]).forEach((m) => fill(m, { PropagationMode: "private", ReadOnly: false, SELinuxLabel: "" }));
  if (!isObj(t["Lifecycle"]) || unset(t["Lifecycle"]["Hook"]) || t["Lifecycle"]["Hook"] === "") delete t["Lifecycle"];
  if (isObj(t["CSIPluginConfig"])) {
    const c = t["CSIPluginConfig"];
    if (!c["MountDir"]) c["MountDir"] = "/csi";
    if (!c["StagePublishBaseDir"]) c["StagePublishBaseDir"] = "/local/csi";
    if (!c["HealthTimeout"]) c["HealthTimeout"] = 30 * S;
  }
  const groupRestart = group["RestartPolicy"] as Obj;
  t["RestartPolicy"] = isObj(t["RestartPolicy"]) ? merge(groupRestart, t["RestartPolicy"]) : { ...groupRestart };
}

function canonicalizeGroup(g: Obj, job: Obj): void {
  const type = String(job["Type"]);
  fill(g, { Name: "" });
  if (unset(g["Count"])) g["Count"] = isObj(g["Scaling"]) && !unset(g["Scaling"]["Min"]) ? g["Scaling"]["Min"] : 1;
  if (isObj(g["Scaling"])) fill(g["Scaling"], { Enabled: true, Min: g["Count"], Type: "horizontal" });
  g["EphemeralDisk"] = fill(isObj(g["EphemeralDisk"]) ? g["EphemeralDisk"] : {}, {
    Sticky: false,
    Migrate: false,
    SizeMB: 300,
  });

  const discovery = isObj(g["Discovery"]) ? g["Discovery"] : {};
  if (unset(discovery["Namespace"]) || discovery["Namespace"] === "")
    discovery["Namespace"] = job["DiscoveryNamespace"] ?? "";
  if (unset(discovery["Cluster"]) || discovery["Cluster"] === "") discovery["Cluster"] = "default";
  fill(discovery, { Partition: "" });
  g["Discovery"] = discovery;

  const jobUpdate = isObj(job["Update"]) ? job["Update"] : undefined;
  if (jobUpdate && isObj(g["Update"])) g["Update"] = merge(jobUpdate, g["Update"]);
  else if (jobUpdate && !updateEmpty(jobUpdate)) g["Update"] = { ...jobUpdate };
  if (isObj(g["Update"])) fill(g["Update"], DEFAULT_UPDATE);

  const jobReschedule = isObj(job["Reschedule"]) ? job["Reschedule"] : undefined;
  if (jobReschedule)
    g["ReschedulePolicy"] = isObj(g["ReschedulePolicy"])
      ? merge(jobReschedule, g["ReschedulePolicy"])
      : { ...jobReschedule };
  if (!isObj(g["ReschedulePolicy"]) && type !== "system") g["ReschedulePolicy"] = {};
  if (isObj(g["ReschedulePolicy"])) fill(g["ReschedulePolicy"], reschedulePolicy(type));

  const jobMigrate = isObj(job["Migrate"]) ? job["Migrate"] : undefined;
  if (jobMigrate) g["Migrate"] = isObj(g["Migrate"]) ? merge(jobMigrate, g["Migrate"]) : { ...jobMigrate };
  if (!isObj(g["Migrate"]) && type === "service") g["Migrate"] = {};
  if (isObj(g["Migrate"]))
    fill(g["Migrate"], { MaxParallel: 1, HealthCheck: "checks", MinHealthyTime: 10 * S, HealthyDeadline: 5 * MIN });

  g["RestartPolicy"] = isObj(g["RestartPolicy"]) ? merge(restartPolicy(type), g["RestartPolicy"]) : restartPolicy(type);

  objects(g["Tasks"]).forEach((t) => canonicalizeTask(t, g, job));
  weighted(g["Spreads"]);
  weighted(g["Affinities"]);
  objects(g["Services"]).forEach((s) => canonicalizeService(s, job, g));
  fill(g, { PreventRescheduleOnLost: false });
  if (isObj(g["Disconnect"])) fill(g["Disconnect"], { Replace: true, Reconcile: "best_score" });
}

/** Returns a deep copy of a job with the client library's defaults filled in (api.Job.Canonicalize). */
export function canonicalizeJob(input: Record<string, unknown>): Record<string, unknown> {
  const job = JSON.parse(JSON.stringify(input)) as Obj;
  fill(job, { ID: "" });
  fill(job, {
    Name: job["ID"],
    ParentID: "",
    Namespace: "default",
    Priority: 50,
    Stop: false,
    Region: "global",
    NodePool: "",
    Type: "service",
    AllAtOnce: false,
    DiscoveryToken: "",
    DiscoveryNamespace: "",
    SecretsToken: "",
    SecretsNamespace: "",
    SvcTokenID: "",
    Status: "",
    StatusDescription: "",
    Stable: false,
    Version: 0,
    CreateIndex: 0,
    ModifyIndex: 0,
    JobModifyIndex: 0,
  });
  if (isObj(job["Periodic"])) {
    const p = job["Periodic"];
    fill(p, { Enabled: true });
    if (unset(p["Spec"]) && !(Array.isArray(p["Specs"]) && p["Specs"].length)) p["Spec"] = "";
    fill(p, { SpecType: "cron", ProhibitOverlap: false });
    if (unset(p["TimeZone"]) || p["TimeZone"] === "") p["TimeZone"] = "UTC";
  }
  if (isObj(job["Update"])) fill(job["Update"], DEFAULT_UPDATE);
  else if (job["Type"] === "service") job["Update"] = { ...DEFAULT_UPDATE };
  if (isObj(job["Multiregion"])) {
    const m = job["Multiregion"];
    m["Strategy"] = fill(isObj(m["Strategy"]) ? m["Strategy"] : {}, { MaxParallel: 0, OnFailure: "" });
    if (!Array.isArray(m["Regions"])) m["Regions"] = [];
    objects(m["Regions"]).forEach((r) => fill(r, { Count: 1, Datacenters: [], Meta: {} }));
  }
  objects(job["TaskGroups"]).forEach((g) => canonicalizeGroup(g, job));
  weighted(job["Spreads"]);
  weighted(job["Affinities"]);
  return job;
}
