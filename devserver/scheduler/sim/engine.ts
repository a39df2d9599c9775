// The simulated cluster: evaluations are processed shortly after they are created (allocations placed,
// updated in place, replaced or stopped), batch allocations complete after `batchMs`, and deployments
// (deployments.ts) follow. Statuses follow the real server (reference/scheduler.md §3.9). Every state change takes one
// write index so blocking queries wake up.
import { randomUUID } from "node:crypto";
import { finishTaskStates, iso, newAllocation } from "./allocs";
import { failingTasks } from "./batch";
import { eligibleNodes, findGroup, placeAll, type Placement, type PlacementResult } from "./cluster";
import { Deployments, progressBy } from "./deployments";
import { num, str, nowNanos, type JsonObject } from "../state/json";
import { ALLOC_NOT_NEEDED, ALLOC_UPDATING, reconcile } from "./reconcile";
import { isTemplateJob } from "../state/spec";
import type { AllocRecord, JobEntry, Store } from "../state/store";
import { allocTerminal, evalTerminal, type Deployment, type Evaluation } from "../state/types";
import type { EvalSpec, GroupPlan, Node, RollbackFn } from "./types";

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

/** Runs the simulated scheduler over a store. */
export class Engine {
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  /** Timers `idle` does not wait for (progress deadlines, minutes away by default); `close` cancels them. */
  private readonly quietTimers = new Set<ReturnType<typeof setTimeout>>();
  private readonly idleWaiters: (() => void)[] = [];
  private closed = false;
  /** Jobs (namespace\0id) whose next deployment fails regardless of meta (control API). */
  readonly failNextDeployment = new Set<string>();
  rollback: RollbackFn | undefined;
  readonly deployments: Deployments = new Deployments(this);

  constructor(
    readonly store: Store,
    readonly settings: EngineSettings,
  ) {}

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
      // After the step that cancelled it: that step may still schedule more.
      queueMicrotask(() => this.notifyIdle());
    };
  }

  /**
   * Runs `fn` after `ms` like `schedule`, but `idle` does not wait for it: a deadline that may lie minutes
   * ahead. What `fn` schedules is waited for as usual. Returns a cancel function.
   */
  scheduleQuiet(ms: number, fn: () => void): () => void {
    if (this.closed) return () => undefined;
    const t = setTimeout(() => {
      this.quietTimers.delete(t);
      try {
        fn();
      } finally {
        this.notifyIdle();
      }
    }, ms);
    this.quietTimers.add(t);
    return () => {
      clearTimeout(t);
      this.quietTimers.delete(t);
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
    for (const t of this.quietTimers) clearTimeout(t);
    this.quietTimers.clear();
    this.notifyIdle();
  }

  /** Inserts a pending evaluation at `index` and schedules its processing; returns it. */
  createEval(index: number, spec: EvalSpec): Evaluation {
    const now = nowNanos();
    const e: Evaluation = {
      ID: randomUUID(),
      Namespace: spec.namespace,
      Priority: spec.priority,
      Type: spec.type,
      TriggeredBy: spec.triggeredBy,
      JobID: spec.jobId,
      JobModifyIndex: spec.jobModifyIndex,
      NodeID: "",
      NodeModifyIndex: 0,
      DeploymentID: spec.deploymentId ?? "",
      Status: "pending",
      StatusDescription: "",
      Wait: 0,
      WaitUntil: null,
      NextEval: "",
      PreviousEval: spec.previousEval ?? "",
      BlockedEval: "",
      RelatedEvals: null,
      FailedTGAllocs: null,
      ClassEligibility: null,
      QuotaLimitReached: "",
      EscapedComputedClass: false,
      AnnotatePlan: false,
      QueuedAllocations: null,
      LeaderACL: "",
      SnapshotIndex: index,
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
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
    for (const d of this.store.deployments.values()) if (d.Status === "running") this.deployments.arm(d.ID);
    for (const r of this.store.allocs.values()) {
      const t = str(r.job, "Type");
      if (
        (t === "batch" || t === "sysbatch") &&
        r.alloc.ClientStatus === "running" &&
        r.alloc.DesiredStatus === "run"
      ) {
        this.scheduleBatchCompletion([r.alloc.ID]);
      }
    }
  }

  /** Returns the allocations the reconciler works with: non-terminal ones plus completed batch work (any registration). */
  liveAllocs(ns: string, id: string, job: JsonObject | undefined): AllocRecord[] {
    const batch = str(job, "Type") === "batch" || str(job, "Type") === "sysbatch";
    // Every registration of the ID: allocations left by a purged one must still be stopped.
    return this.store
      .jobAllocs(ns, id, true)
      .filter(
        (r) =>
          !allocTerminal(r.alloc) || (batch && r.alloc.DesiredStatus === "run" && r.alloc.ClientStatus === "complete"),
      );
  }

  /** Returns the groups whose canaries of the job's current version were promoted. */
  promoted(ns: string, id: string, job: JsonObject | undefined): ReadonlySet<string> {
    if (job === undefined) return new Set();
    const d = this.store
      .jobDeployments(ns, id)
      .find((x) => x.JobVersion === num(job, "Version") && x.JobModifyIndex === num(job, "JobModifyIndex"));
    if (d === undefined) return new Set();
    return new Set(
      Object.entries(d.TaskGroups)
        .filter(([, g]) => g.DesiredCanaries > 0 && g.Promoted)
        .map(([name]) => name),
    );
  }

  /** Processes one pending evaluation: reconcile, place, record the outcome. */
  processEval(id: string): void {
    const e = this.store.evals.get(id);
    if (e === undefined || e.Status !== "pending") return;
    const entry = this.store.getJob(e.Namespace, e.JobID);
    const job = entry?.job;
    const live = this.liveAllocs(e.Namespace, e.JobID, job);
    const systemCount = job ? eligibleNodes(job, this.settings.nodes).eligible.length : 0;
    const plans = reconcile(job, live, {
      rolling: false,
      promoted: this.promoted(e.Namespace, e.JobID, job),
      systemCount,
    });
    const result =
      job !== undefined && job.Stop !== true ? this.place(job, plans) : { placements: [], failed: {}, queued: {} };
    const index = this.store.write("evals", "allocs", "job_summary");

    // Older blocked evaluations of this job are superseded by this one.
    for (const other of this.store.jobEvals(e.Namespace, e.JobID)) {
      if (other.ID !== e.ID && other.Status === "blocked") {
        Object.assign(other, {
          Status: "canceled",
          StatusDescription: `evaluation "${e.ID}" successful`,
          ModifyIndex: index,
          ModifyTime: nowNanos(),
        });
      }
    }

    const deployment = job ? this.deployments.start(e, entry as JobEntry, plans, live, index) : undefined;
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
    if (deployment && deployment.Status === "running") this.deployments.arm(deployment.ID);
    if (freed) this.retryBlocked(e.ID);
  }

  /** Fits the plans' new allocations onto the nodes, beside every other live allocation. */
  private place(job: JsonObject, plans: GroupPlan[]): PlacementResult {
    const replaced = new Set(plans.flatMap((p) => [...p.stop, ...p.destructive]).map((r) => r.alloc.ID));
    const usage = this.store.usage(replaced);
    const occupied = new Map<string, Set<string>>();
    for (const p of plans) occupied.set(p.name, new Set([...p.ignore, ...p.inplace].map((r) => r.alloc.NodeID)));
    return placeAll(job, plans, this.settings.nodes, usage, occupied);
  }

  private createBlockedEval(e: Evaluation, index: number): Evaluation {
    const now = nowNanos();
    const b: Evaluation = {
      ...e,
      ID: randomUUID(),
      TriggeredBy: "queued-allocs",
      Status: "blocked",
      StatusDescription: "created to place remaining allocations",
      PreviousEval: e.ID,
      BlockedEval: "",
      NextEval: "",
      DeploymentID: "",
      QueuedAllocations: null,
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
      SnapshotIndex: index,
    };
    this.store.evals.set(b.ID, b);
    return b;
  }

  /** Re-queues blocked evaluations (capacity was freed); `except` is the evaluation that freed it. */
  retryBlocked(except = ""): void {
    const blocked = [...this.store.evals.holding()].filter((b) => b.ID !== except);
    if (blocked.length === 0) return;
    const index = this.store.write("evals");
    for (const b of blocked) {
      b.Status = "pending";
      b.ModifyIndex = index;
      this.scheduleEval(b.ID);
    }
  }

  /** Applies the plans: stops, in-place updates, replacements and new placements. Returns whether capacity was freed. */
  private applyPlans(
    e: Evaluation,
    job: JsonObject | undefined,
    plans: GroupPlan[],
    placements: Placement[],
    d: Deployment | undefined,
    index: number,
  ): boolean {
    const now = nowNanos();
    let freed = false;
    const stop = (r: AllocRecord, why: string): void => {
      const a = r.alloc;
      Object.assign(a, {
        DesiredStatus: "stop",
        DesiredDescription: why,
        ClientStatus: "complete",
        ClientDescription: "All tasks have completed",
        TaskStates: finishTaskStates(a.TaskStates, "killed"),
        ModifyIndex: index,
        AllocModifyIndex: index,
        ModifyTime: now,
      });
      freed = true;
    };
    for (const p of plans) {
      for (const r of p.stop) stop(r, ALLOC_NOT_NEEDED);
      for (const r of p.inplace) {
        if (job === undefined) continue;
        r.job = job;
        Object.assign(r.alloc, {
          EvalID: e.ID,
          JobVersion: num(job, "Version"),
          ModifyIndex: index,
          AllocModifyIndex: index,
          ModifyTime: now,
          ...(d
            ? {
                DeploymentID: d.ID,
                DeploymentStatus: { Healthy: null, Timestamp: iso(), Canary: false, ModifyIndex: index },
              }
            : {}),
        });
        const tg = d?.TaskGroups[p.name];
        if (tg) {
          tg.PlacedAllocs += 1;
          progressBy(tg);
        }
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
      const a = newAllocation(e, job, g, pl, name, d, index);
      if (pl.replaces) pl.replaces.alloc.NextAllocation = a.ID;
      this.store.allocs.set(a.ID, { alloc: a, job });
      const tg = d?.TaskGroups[pl.group];
      if (tg) {
        tg.PlacedAllocs += 1;
        if (pl.canary) tg.PlacedCanaries = [...(tg.PlacedCanaries ?? []), a.ID];
        progressBy(tg);
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

  private scheduleBatchCompletion(ids: string[]): void {
    this.schedule(this.settings.batchMs, () => {
      const index = this.store.write("allocs", "job_summary");
      const touched = new Set<JobEntry>();
      for (const id of ids) {
        const r = this.store.allocs.get(id);
        if (!r || r.alloc.DesiredStatus !== "run" || r.alloc.ClientStatus !== "running") continue;
        const failing = failingTasks(r.job, r.alloc.TaskGroup);
        const ok: typeof r.alloc.TaskStates = {};
        const bad: typeof r.alloc.TaskStates = {};
        for (const [name, st] of Object.entries(r.alloc.TaskStates)) (failing.has(name) ? bad : ok)[name] = st;
        const failed = Object.keys(bad).length > 0;
        Object.assign(r.alloc, {
          ClientStatus: failed ? "failed" : "complete",
          ClientDescription: failed ? "Failed tasks" : "All tasks have completed",
          TaskStates: { ...finishTaskStates(ok, "completed"), ...finishTaskStates(bad, "failed") },
          ModifyIndex: index,
          ModifyTime: nowNanos(),
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
