// The simulated cluster: evaluations are processed shortly after they are created (allocations placed,
// updated in place, replaced or stopped), deployments of service jobs report healthy or unhealthy after
// `deploymentMs`, batch allocations complete after `batchMs`. Statuses and descriptions follow the real
// server (reference §3.9). Every state change takes one write index so blocking queries wake up.
import { randomUUID } from "node:crypto";
import {
  ALLOC_NOT_NEEDED,
  ALLOC_UPDATING,
  eligibleNodes,
  findGroup,
  nodeUsage,
  placeAll,
  reconcile,
  type GroupPlan,
  type Node,
  type Placement,
} from "./cluster";
import { bool, deepEqual, num, obj, objs, str, strMap, nowNanos, type JsonObject } from "./json";
import type { AllocRecord, JobEntry, Store } from "./store";
import {
  ACTIVE_DEPLOYMENT,
  DEPLOYMENT_DESC,
  allocTerminal,
  evalTerminal,
  type Allocation,
  type Deployment,
  type Evaluation,
  type TaskEvent,
  type TaskState,
} from "./types";

/** Job meta key that makes the deployment of that job version fail (value "true"). */
export const FAIL_DEPLOYMENT_META = "devserver.fail_deployment";

/** Timing and cluster settings of the simulation. */
export interface EngineSettings {
  /** Delay before a pending evaluation is processed (ms). */
  evalDelayMs: number;
  /** Time from a deployment's start until its allocations report health (ms). */
  deploymentMs: number;
  /** Time a batch allocation runs before it completes (ms). */
  batchMs: number;
  nodes: Node[];
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

function iso(ms = Date.now()): string {
  return new Date(ms).toISOString();
}

function event(type: string, fields: Partial<TaskEvent> = {}): TaskEvent {
  return {
    Type: type, Time: nowNanos(), DisplayMessage: "", Details: {}, FailsTask: false, RestartReason: "", SetupError: "",
    DriverError: "", DriverMessage: "", ExitCode: 0, Signal: 0, Message: "", KillReason: "", KillTimeout: 0, KillError: "",
    StartDelay: 0, DownloadError: "", ValidationError: "", DiskLimit: 0, FailedSibling: "", SecretsError: "",
    TaskSignalReason: "", TaskSignal: "", GenericSource: "", ...fields,
  };
}

function startedTaskStates(group: JsonObject): Record<string, TaskState> {
  const out: Record<string, TaskState> = {};
  for (const t of objs(group, "Tasks")) {
    const driver = str(t, "Driver");
    out[str(t, "Name")] = {
      State: "running", Failed: false, Restarts: 0, LastRestart: null, StartedAt: iso(), FinishedAt: null,
      Events: [
        event("Received", { DisplayMessage: "Task received by client" }),
        event("Task Setup", { Message: "Building Task Directory", DisplayMessage: "Building Task Directory" }),
        event("Driver", { DriverMessage: driver === "docker" ? "Downloading image" : `Starting ${driver} task`, DisplayMessage: driver === "docker" ? "Downloading image" : `Starting ${driver} task` }),
        event("Started", { DisplayMessage: "Task started by client" }),
      ],
    };
  }
  return out;
}

function finishTaskStates(states: Record<string, TaskState>, how: "killed" | "completed" | "failed"): Record<string, TaskState> {
  const out: Record<string, TaskState> = {};
  for (const [name, s] of Object.entries(states)) {
    const events = [...s.Events];
    if (how === "killed") {
      events.push(event("Killing", { DisplayMessage: "Sent interrupt. Waiting 5s before force killing", KillTimeout: 5_000_000_000 }));
      events.push(event("Killed", { DisplayMessage: "Task successfully killed" }));
    } else if (how === "completed") {
      events.push(event("Terminated", { ExitCode: 0, DisplayMessage: "Exit Code: 0" }));
    } else {
      events.push(event("Terminated", { ExitCode: 1, DisplayMessage: "Exit Code: 1" }));
      events.push(event("Not Restarting", { FailsTask: true, RestartReason: "Exceeded allowed attempts 0 in interval 0s and mode is \"fail\"", DisplayMessage: "Exceeded allowed attempts 0 in interval 0s and mode is \"fail\"" }));
    }
    out[name] = { ...s, State: "dead", Failed: how === "failed", FinishedAt: iso(), Events: events };
  }
  return out;
}

/** Returns whether a job (or one of its groups or tasks) asks the devserver to fail its deployment. */
export function wantsFailedDeployment(job: JsonObject): boolean {
  if (strMap(job, "Meta")[FAIL_DEPLOYMENT_META] === "true") return true;
  for (const g of objs(job, "TaskGroups")) {
    if (strMap(g, "Meta")[FAIL_DEPLOYMENT_META] === "true") return true;
    for (const t of objs(g, "Tasks")) if (strMap(t, "Meta")[FAIL_DEPLOYMENT_META] === "true") return true;
  }
  return false;
}

/** Returns whether a job is a periodic or parameterized template (no evaluations of its own). */
export function isTemplateJob(job: JsonObject): boolean {
  return obj(job, "Periodic") !== undefined || (obj(job, "ParameterizedJob") !== undefined && !bool(job, "Dispatched"));
}

/** Runs the simulated scheduler over a store. */
export class Engine {
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private readonly idleWaiters: (() => void)[] = [];
  /** Pending health steps by deployment ID (cancelled when the deployment ends early). */
  private readonly deploymentTimers = new Map<string, () => void>();
  private closed = false;
  /** Jobs (namespace\0id) whose next deployment fails regardless of meta (control API). */
  readonly failNextDeployment = new Set<string>();
  rollback: RollbackFn | undefined;

  constructor(readonly store: Store, readonly settings: EngineSettings) {}

  /** Runs `fn` after `ms`; tracked so `close` can cancel and `idle` can wait. Returns a cancel function. */
  schedule(ms: number, fn: () => void): () => void {
    if (this.closed) return () => undefined;
    const t = setTimeout(() => {
      this.timers.delete(t);
      try {
        fn();
      } finally {
        this.notifyIdle();
      }
    }, ms);
    this.timers.add(t);
    return () => {
      clearTimeout(t);
      this.timers.delete(t);
      this.notifyIdle();
    };
  }

  private notifyIdle(): void {
    if (this.timers.size > 0) return;
    for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves once no simulation step is pending (deployments waiting for manual promotion do not count). */
  idle(): Promise<void> {
    if (this.timers.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Cancels all pending steps. */
  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.notifyIdle();
  }

  /** Inserts a pending evaluation at `index` and schedules its processing; returns it. */
  createEval(index: number, spec: EvalSpec): Evaluation {
    const now = nowNanos();
    const e: Evaluation = {
      ID: randomUUID(), Namespace: spec.namespace, Priority: spec.priority, Type: spec.type, TriggeredBy: spec.triggeredBy,
      JobID: spec.jobId, JobModifyIndex: spec.jobModifyIndex, NodeID: "", NodeModifyIndex: 0, DeploymentID: spec.deploymentId ?? "",
      Status: "pending", StatusDescription: "", Wait: 0, WaitUntil: null, NextEval: "", PreviousEval: spec.previousEval ?? "",
      BlockedEval: "", RelatedEvals: null, FailedTGAllocs: null, ClassEligibility: null, QuotaLimitReached: "",
      EscapedComputedClass: false, AnnotatePlan: false, QueuedAllocations: null, LeaderACL: "", SnapshotIndex: index,
      CreateIndex: index, ModifyIndex: index, CreateTime: now, ModifyTime: now,
    };
    this.store.evals.set(e.ID, e);
    this.store.stamp(index, "evals");
    this.scheduleEval(e.ID);
    return e;
  }

  private scheduleEval(id: string): void {
    this.schedule(this.settings.evalDelayMs, () => this.processEval(id));
  }

  /** Re-arms timers after a restore: pending evaluations and running deployments continue. */
  resume(): void {
    for (const e of this.store.evals.values()) if (e.Status === "pending") this.scheduleEval(e.ID);
    for (const d of this.store.deployments.values()) if (d.Status === "running") this.scheduleDeployment(d.ID);
    for (const r of this.store.allocs.values()) {
      const t = str(r.job, "Type");
      if ((t === "batch" || t === "sysbatch") && r.alloc.ClientStatus === "running" && r.alloc.DesiredStatus === "run") {
        this.scheduleBatchCompletion([r.alloc.ID]);
      }
    }
  }

  /** Returns the allocations the reconciler works with: non-terminal ones plus completed batch work. */
  liveAllocs(ns: string, id: string, job: JsonObject | undefined): AllocRecord[] {
    const batch = str(job, "Type") === "batch" || str(job, "Type") === "sysbatch";
    return this.store
      .jobAllocs(ns, id, job === undefined)
      .filter((r) => !allocTerminal(r.alloc) || (batch && r.alloc.DesiredStatus === "run" && r.alloc.ClientStatus === "complete"));
  }

  /** Returns whether the canaries of the job's current version were promoted. */
  promoted(ns: string, id: string, job: JsonObject | undefined): boolean {
    if (job === undefined) return false;
    const d = this.store.jobDeployments(ns, id).find((x) => x.JobVersion === num(job, "Version") && x.JobModifyIndex === num(job, "JobModifyIndex"));
    if (d === undefined) return false;
    const canaryGroups = Object.values(d.TaskGroups).filter((g) => g.DesiredCanaries > 0);
    return canaryGroups.length > 0 && canaryGroups.every((g) => g.Promoted);
  }

  /** Processes one pending evaluation: reconcile, place, record the outcome. */
  processEval(id: string): void {
    const e = this.store.evals.get(id);
    if (e === undefined || e.Status !== "pending") return;
    const entry = this.store.getJob(e.Namespace, e.JobID);
    const job = entry?.job;
    const live = this.liveAllocs(e.Namespace, e.JobID, job);
    const systemCount = job ? eligibleNodes(job, this.settings.nodes).eligible.length : 0;
    const plans = reconcile(job, live, { rolling: false, promoted: this.promoted(e.Namespace, e.JobID, job), systemCount });
    const replaced = new Set(plans.flatMap((p) => [...p.stop, ...p.destructive]).map((r) => r.alloc.ID));
    const usage = nodeUsage(this.store.allocs.values(), replaced);
    const occupied = new Map<string, Set<string>>();
    for (const p of plans) occupied.set(p.name, new Set([...p.ignore, ...p.inplace].map((r) => r.alloc.NodeID)));
    const result = job !== undefined && job.Stop !== true
      ? placeAll(job, plans, this.settings.nodes, usage, occupied)
      : { placements: [], failed: {}, queued: {} };
    const index = this.store.write("evals", "allocs", "job_summary");

    // Older blocked evaluations of this job are superseded by this one.
    for (const other of this.store.jobEvals(e.Namespace, e.JobID)) {
      if (other.ID !== e.ID && other.Status === "blocked") {
        Object.assign(other, { Status: "canceled", StatusDescription: `evaluation "${e.ID}" successful`, ModifyIndex: index, ModifyTime: nowNanos() });
      }
    }

    const deployment = job ? this.deploymentFor(e, entry as JobEntry, plans, live, index) : undefined;
    const freed = this.applyPlans(e, job, plans, result.placements, deployment, index);
    e.Status = "complete";
    e.DeploymentID = deployment?.ID ?? "";
    e.QueuedAllocations = job !== undefined && job.Stop !== true ? result.queued : null;
    e.ModifyIndex = index;
    e.ModifyTime = nowNanos();
    if (Object.keys(result.failed).length > 0) {
      e.FailedTGAllocs = result.failed;
      const blocked = this.createBlockedEval(e, index);
      e.BlockedEval = blocked.ID;
    }
    if (entry) {
      entry.summaryIndex = index;
      this.refreshStatus(entry, index);
    }
    if (deployment && deployment.Status === "running") this.scheduleDeployment(deployment.ID);
    if (freed) this.retryBlocked(e.ID);
  }

  private createBlockedEval(e: Evaluation, index: number): Evaluation {
    const now = nowNanos();
    const b: Evaluation = {
      ...e, ID: randomUUID(), TriggeredBy: "queued-allocs", Status: "blocked", StatusDescription: "created to place remaining allocations",
      PreviousEval: e.ID, BlockedEval: "", NextEval: "", DeploymentID: "", QueuedAllocations: null, CreateIndex: index, ModifyIndex: index,
      CreateTime: now, ModifyTime: now, SnapshotIndex: index,
    };
    this.store.evals.set(b.ID, b);
    return b;
  }

  /** Re-queues blocked evaluations (capacity was freed); `except` is the evaluation that freed it. */
  retryBlocked(except = ""): void {
    const blocked = [...this.store.evals.values()].filter((b) => b.Status === "blocked" && b.ID !== except);
    if (blocked.length === 0) return;
    const index = this.store.write("evals");
    for (const b of blocked) {
      b.Status = "pending";
      b.ModifyIndex = index;
      this.scheduleEval(b.ID);
    }
  }

  /** Finds or starts the deployment of the job's current version when this evaluation changes allocations. */
  private deploymentFor(e: Evaluation, entry: JobEntry, plans: GroupPlan[], live: AllocRecord[], index: number): Deployment | undefined {
    const job = entry.job;
    if (str(job, "Type") !== "service" || job.Stop === true) return undefined;
    const groups = objs(job, "TaskGroups").filter((g) => num(obj(g, "Update"), "MaxParallel") > 0);
    if (groups.length === 0) return undefined;
    const jmi = num(job, "JobModifyIndex");
    const existing = this.store.jobDeployments(entry.namespace, entry.id).find((d) => d.JobModifyIndex === jmi);
    if (existing !== undefined) return ACTIVE_DEPLOYMENT.has(existing.Status) ? existing : undefined;
    const hadRunning = live.some((r) => num(r.job, "JobModifyIndex") === jmi);
    const updating = plans.some((p) => p.destructive.length + p.inplace.length + p.canary > 0);
    const total = groups.reduce((n, g) => n + num(g, "Count", 1), 0);
    if (total === 0 || (hadRunning && !updating)) return undefined;
    for (const d of this.store.jobDeployments(entry.namespace, entry.id, true)) {
      if (ACTIVE_DEPLOYMENT.has(d.Status)) this.endDeployment(d, "cancelled", DEPLOYMENT_DESC.newerJob, index);
    }
    const now = nowNanos();
    const d: Deployment = {
      ID: randomUUID(), Namespace: entry.namespace, JobID: entry.id, JobVersion: num(job, "Version"), JobModifyIndex: jmi,
      JobSpecModifyIndex: jmi, JobCreateIndex: num(job, "CreateIndex"), IsMultiregion: false, TaskGroups: {},
      Status: "running", StatusDescription: DEPLOYMENT_DESC.running, EvalPriority: e.Priority, CreateIndex: index,
      ModifyIndex: index, CreateTime: now, ModifyTime: now,
    };
    for (const g of groups) {
      const u = obj(g, "Update");
      const plan = plans.find((p) => p.name === str(g, "Name"));
      d.TaskGroups[str(g, "Name")] = {
        AutoRevert: bool(u, "AutoRevert"), AutoPromote: bool(u, "AutoPromote"), ProgressDeadline: num(u, "ProgressDeadline"),
        RequireProgressBy: null, Promoted: false, PlacedCanaries: null, DesiredCanaries: plan?.canary ?? 0,
        DesiredTotal: num(g, "Count", 1), PlacedAllocs: 0, HealthyAllocs: 0, UnhealthyAllocs: 0,
      };
    }
    this.store.deployments.set(d.ID, d);
    this.store.stamp(index, "deployment");
    return d;
  }

  /** Applies the plans: stops, in-place updates, replacements and new placements. Returns whether capacity was freed. */
  private applyPlans(e: Evaluation, job: JsonObject | undefined, plans: GroupPlan[], placements: Placement[], d: Deployment | undefined, index: number): boolean {
    const now = nowNanos();
    let freed = false;
    const stop = (r: AllocRecord, why: string): void => {
      const a = r.alloc;
      Object.assign(a, {
        DesiredStatus: "stop", DesiredDescription: why, ClientStatus: "complete", ClientDescription: "All tasks have completed",
        TaskStates: finishTaskStates(a.TaskStates, "killed"), ModifyIndex: index, AllocModifyIndex: index, ModifyTime: now,
      });
      freed = true;
    };
    for (const p of plans) {
      for (const r of p.stop) stop(r, ALLOC_NOT_NEEDED);
      for (const r of p.inplace) {
        if (job === undefined) continue;
        r.job = job;
        Object.assign(r.alloc, {
          EvalID: e.ID, JobVersion: num(job, "Version"), ModifyIndex: index, AllocModifyIndex: index, ModifyTime: now,
          ...(d ? { DeploymentID: d.ID, DeploymentStatus: { Healthy: null, Timestamp: iso(), Canary: false, ModifyIndex: index } } : {}),
        });
        const tg = d?.TaskGroups[p.name];
        if (tg) tg.PlacedAllocs += 1;
      }
    }
    if (job === undefined) return freed;
    const used = new Map<string, Set<number>>();
    for (const r of this.liveAllocs(e.Namespace, e.JobID, job)) {
      if (r.alloc.DesiredStatus !== "run") continue;
      const m = /\[(\d+)\]$/.exec(r.alloc.Name);
      if (m === null) continue;
      const set = used.get(r.alloc.TaskGroup) ?? new Set<number>();
      set.add(Number(m[1]));
      used.set(r.alloc.TaskGroup, set);
    }
    const batchIds: string[] = [];
    for (const pl of placements) {
      const g = findGroup(job, pl.group);
      if (g === undefined) continue;
      let name: string;
      if (pl.replaces) {
        name = pl.replaces.alloc.Name;
        stop(pl.replaces, ALLOC_UPDATING);
      } else {
        const taken = used.get(pl.group) ?? new Set<number>();
        let i = 0;
        while (taken.has(i)) i++;
        taken.add(i);
        used.set(pl.group, taken);
        name = `${e.JobID}.${pl.group}[${i}]`;
      }
      const a = this.newAlloc(e, job, g, pl, name, d, index);
      if (pl.replaces) pl.replaces.alloc.NextAllocation = a.ID;
      this.store.allocs.set(a.ID, { alloc: a, job });
      const tg = d?.TaskGroups[pl.group];
      if (tg) {
        tg.PlacedAllocs += 1;
        if (pl.canary) tg.PlacedCanaries = [...(tg.PlacedCanaries ?? []), a.ID];
      }
      const t = str(job, "Type");
      if (t === "batch" || t === "sysbatch") batchIds.push(a.ID);
    }
    if (d) {
      d.ModifyIndex = index;
      this.store.stamp(index, "deployment");
    }
    if (batchIds.length > 0) this.scheduleBatchCompletion(batchIds);
    return freed;
  }

  private newAlloc(e: Evaluation, job: JsonObject, g: JsonObject, pl: Placement, name: string, d: Deployment | undefined, index: number): Allocation {
    const now = nowNanos();
    const ports: { Label: string; Value: number; To: number; HostIP: string }[] = [];
    let dynamic = 20000 + Math.floor(Math.random() * 10000);
    for (const n of objs(g, "Networks")) {
      for (const p of objs(n, "ReservedPorts")) ports.push({ Label: str(p, "Label"), Value: num(p, "Value"), To: num(p, "To"), HostIP: pl.node.Address });
      for (const p of objs(n, "DynamicPorts")) ports.push({ Label: str(p, "Label"), Value: dynamic++, To: num(p, "To"), HostIP: pl.node.Address });
    }
    const tasks: JsonObject = {};
    for (const t of objs(g, "Tasks")) {
      const r = obj(t, "Resources");
      tasks[str(t, "Name")] = { Cpu: { CpuShares: num(r, "CPU", 100) }, Memory: { MemoryMB: num(r, "MemoryMB", 300) }, Networks: null };
    }
    return {
      ID: randomUUID(), Namespace: e.Namespace, EvalID: e.ID, Name: name, NodeID: pl.node.ID, NodeName: pl.node.Name,
      JobID: e.JobID, JobType: str(job, "Type"), JobVersion: num(job, "Version"), TaskGroup: pl.group,
      AllocatedResources: { Tasks: tasks, Shared: { DiskMB: num(obj(g, "EphemeralDisk"), "SizeMB", 300), Networks: null, Ports: ports } },
      DesiredStatus: "run", DesiredDescription: "", DesiredTransition: {}, ClientStatus: "running", ClientDescription: "Tasks are running",
      TaskStates: startedTaskStates(g), DeploymentID: d?.ID ?? "",
      DeploymentStatus: d ? { Healthy: null, Timestamp: iso(), Canary: pl.canary, ModifyIndex: index } : null,
      FollowupEvalID: "", RescheduleTracker: null, PreemptedAllocations: null, PreemptedByAllocation: "",
      PreviousAllocation: pl.replaces?.alloc.ID ?? "", NextAllocation: "", CreateIndex: index, ModifyIndex: index,
      AllocModifyIndex: index, CreateTime: now, ModifyTime: now,
    };
  }

  private scheduleBatchCompletion(ids: string[]): void {
    this.schedule(this.settings.batchMs, () => {
      const index = this.store.write("allocs", "job_summary");
      const touched = new Set<JobEntry>();
      for (const id of ids) {
        const r = this.store.allocs.get(id);
        if (!r || r.alloc.DesiredStatus !== "run" || r.alloc.ClientStatus !== "running") continue;
        Object.assign(r.alloc, {
          ClientStatus: "complete", ClientDescription: "All tasks have completed", TaskStates: finishTaskStates(r.alloc.TaskStates, "completed"),
          ModifyIndex: index, ModifyTime: nowNanos(),
        });
        const entry = this.store.getJob(r.alloc.Namespace, r.alloc.JobID);
        if (entry) touched.add(entry);
      }
      for (const entry of touched) {
        entry.summaryIndex = index;
        this.refreshStatus(entry, index);
      }
      this.retryBlocked();
    });
  }

  private scheduleDeployment(id: string): void {
    if (this.deploymentTimers.has(id)) return;
    const cancel = this.schedule(this.settings.deploymentMs, () => {
      this.deploymentTimers.delete(id);
      this.progressDeployment(id);
    });
    this.deploymentTimers.set(id, cancel);
  }

  private deploymentAllocs(d: Deployment): AllocRecord[] {
    return [...this.store.allocs.values()].filter((r) => r.alloc.DeploymentID === d.ID && r.alloc.DesiredStatus === "run");
  }

  /** Moves a running deployment on: failure (devserver switch), canary health, or success. */
  private progressDeployment(id: string): void {
    const d = this.store.deployments.get(id);
    if (d === undefined || d.Status !== "running") return;
    const entry = this.store.getJob(d.Namespace, d.JobID);
    if (entry === undefined) return;
    const version = entry.versions.find((v) => num(v, "Version") === d.JobVersion) ?? entry.job;
    const key = `${d.Namespace}\u0000${d.JobID}`;
    if (wantsFailedDeployment(version) || this.failNextDeployment.has(key)) {
      this.failNextDeployment.delete(key);
      this.failDeployment(d, DEPLOYMENT_DESC.unhealthy, true);
      return;
    }
    const index = this.store.write("deployment", "allocs");
    const canaryGroups = Object.entries(d.TaskGroups).filter(([, g]) => g.DesiredCanaries > 0 && !g.Promoted);
    for (const r of this.deploymentAllocs(d)) {
      if (r.alloc.DeploymentStatus && r.alloc.DeploymentStatus.Healthy === null) {
        r.alloc.DeploymentStatus = { ...r.alloc.DeploymentStatus, Healthy: true, Timestamp: iso(), ModifyIndex: index };
        r.alloc.ModifyIndex = index;
        const g = d.TaskGroups[r.alloc.TaskGroup];
        if (g) g.HealthyAllocs += 1;
      }
    }
    d.ModifyIndex = index;
    d.ModifyTime = nowNanos();
    if (canaryGroups.length > 0) {
      if (canaryGroups.every(([, g]) => g.AutoPromote)) {
        this.promote(d, index);
      } else {
        d.StatusDescription = DEPLOYMENT_DESC.needsPromotion;
      }
      return;
    }
    this.endDeployment(d, "successful", DEPLOYMENT_DESC.successful, index);
    this.markStable(entry, d.JobVersion, index);
  }

  /** Promotes the canaries of a deployment: the old allocations get replaced by a follow-up evaluation. */
  promote(d: Deployment, index: number): Evaluation {
    for (const g of Object.values(d.TaskGroups)) if (g.DesiredCanaries > 0) g.Promoted = true;
    d.StatusDescription = DEPLOYMENT_DESC.running;
    d.ModifyIndex = index;
    const entry = this.store.getJob(d.Namespace, d.JobID);
    return this.createEval(index, {
      namespace: d.Namespace, jobId: d.JobID, type: str(entry?.job, "Type") || "service", priority: d.EvalPriority || 50,
      triggeredBy: "deployment-watcher", jobModifyIndex: d.JobModifyIndex, deploymentId: d.ID,
    });
  }

  /** Marks a job version stable (and the current job when it is that version). */
  markStable(entry: JobEntry, version: number, index: number, stable = true): boolean {
    const i = entry.versions.findIndex((v) => num(v, "Version") === version);
    const v = entry.versions[i];
    if (v === undefined) return false;
    entry.versions[i] = { ...v, Stable: stable, ModifyIndex: index };
    if (num(entry.job, "Version") === version) entry.job = { ...entry.job, Stable: stable, ModifyIndex: index };
    this.store.stamp(index, "jobs", "job_version");
    return true;
  }

  /** Ends a deployment with a terminal status. */
  endDeployment(d: Deployment, status: Deployment["Status"], desc: string, index: number): void {
    const cancel = this.deploymentTimers.get(d.ID);
    this.deploymentTimers.delete(d.ID);
    cancel?.();
    d.Status = status;
    d.StatusDescription = desc;
    d.ModifyIndex = index;
    d.ModifyTime = nowNanos();
    this.store.stamp(index, "deployment");
  }

  /**
   * Fails a deployment; with `unhealthy` its allocations report unhealthy and fail. When a group has
   * auto_revert, the newest stable version is registered again if its spec differs (reference §3.9).
   * Returns the version rolled back to, if any.
   */
  failDeployment(d: Deployment, desc: string, unhealthy: boolean): number | undefined {
    const index = this.store.write("deployment", "allocs", "job_summary");
    if (unhealthy) {
      for (const r of this.deploymentAllocs(d)) {
        const g = d.TaskGroups[r.alloc.TaskGroup];
        if (g) g.UnhealthyAllocs += 1;
        Object.assign(r.alloc, {
          ClientStatus: "failed", ClientDescription: "Failed tasks", TaskStates: finishTaskStates(r.alloc.TaskStates, "failed"),
          DeploymentStatus: { ...(r.alloc.DeploymentStatus ?? { Canary: false }), Healthy: false, Timestamp: iso(), ModifyIndex: index },
          ModifyIndex: index, ModifyTime: nowNanos(),
        });
      }
    }
    const entry = this.store.getJob(d.Namespace, d.JobID);
    let description = desc;
    let rollbackTo: JsonObject | undefined;
    if (entry && Object.values(d.TaskGroups).some((g) => g.AutoRevert)) {
      const stable = entry.versions.find((v) => v.Stable === true && num(v, "Version") !== num(entry.job, "Version"));
      if (stable === undefined) {
        description += " - no stable job version to auto revert to";
      } else if (!specChanged(entry.job, stable)) {
        description += ` - not rolling back to stable job version ${num(stable, "Version")} as current job has same specification`;
      } else {
        description += ` - rolling back to job version ${num(stable, "Version")}`;
        rollbackTo = stable;
      }
    }
    this.endDeployment(d, "failed", description, index);
    if (entry) {
      entry.summaryIndex = index;
      this.refreshStatus(entry, index);
    }
    if (entry && rollbackTo && this.rollback) this.rollback(entry, rollbackTo);
    return rollbackTo ? num(rollbackTo, "Version") : undefined;
  }

  /** Recomputes a job's status the way the real server does; bumps ModifyIndex when it changes. */
  refreshStatus(entry: JobEntry, index: number): void {
    const status = this.jobStatus(entry);
    if (status === str(entry.job, "Status")) return;
    entry.job = { ...entry.job, Status: status, ModifyIndex: index };
    this.store.stamp(index, "jobs");
  }

  private jobStatus(entry: JobEntry): string {
    const job = entry.job;
    if (str(job, "Type") === "system" || isTemplateJob(job)) return job.Stop === true ? "dead" : "running";
    const allocs = this.store.jobAllocs(entry.namespace, entry.id, true);
    if (allocs.some((r) => !allocTerminal(r.alloc))) return "running";
    const evals = this.store.jobEvals(entry.namespace, entry.id);
    if (evals.some((e) => !evalTerminal(e))) return "pending";
    if (allocs.length > 0 || evals.length > 0) return "dead";
    return "pending";
  }
}

/** Server-managed fields ignored when deciding whether a registration changes the job (reference §3.2). */
const MASKED = ["Status", "StatusDescription", "Stable", "Version", "CreateIndex", "ModifyIndex", "JobModifyIndex", "SubmitTime"];

/** Returns whether `next` differs from `current` in anything but the server-managed fields. */
export function specChanged(current: JsonObject, next: JsonObject): boolean {
  const a: JsonObject = { ...current };
  const b: JsonObject = { ...next };
  for (const k of MASKED) {
    delete a[k];
    delete b[k];
  }
  return !deepEqual(a, b);
}
