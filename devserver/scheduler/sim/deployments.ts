// Deployments of service jobs: one starts when an evaluation places or updates allocations of a new job
// version; after `deploymentMs` its allocations report health and it succeeds (the version becomes
// stable), waits for canary promotion, or fails when the job asks for it; a failure with auto_revert
// registers the newest stable version again (reference/scheduler.md §3.9). Descriptions are the real server's.
import { randomUUID } from "node:crypto";
import { specChanged } from "../state/spec";
import { bool, num, obj, objs, str, strMap, nowNanos, type JsonObject } from "../state/json";
import type { AllocRecord, JobEntry, Store } from "../state/store";
import {
  ACTIVE_DEPLOYMENT,
  DEPLOYMENT_DESC,
  type Deployment,
  type DeploymentGroupState,
  type Evaluation,
} from "../state/types";
import { finishTaskStates, iso } from "./allocs";
import type { EvalSpec, GroupPlan, RollbackFn } from "./types";

/**
 * Moves a group's progress deadline on: the real server sets `RequireProgressBy` to now plus the group's
 * `ProgressDeadline` when it places an allocation of the deployment and again when one turns healthy.
 */
export function progressBy(g: DeploymentGroupState): void {
  if (g.ProgressDeadline > 0) g.RequireProgressBy = iso(Date.now() + g.ProgressDeadline / 1e6);
}

/** Job meta key that makes the deployment of that job version fail (value "true"). */
export const FAIL_DEPLOYMENT_META = "devserver.fail_deployment";

/**
 * Job meta key that keeps the allocations of that job version from ever turning healthy (value "true"), as
 * a task that keeps restarting: the deployment then ends at its progress deadline, if it has one.
 */
const NEVER_HEALTHY_META = "devserver.never_healthy";

/** Returns whether a job, one of its groups or one of their tasks sets meta `key` to "true". */
function metaFlag(job: JsonObject, key: string): boolean {
  if (strMap(job, "Meta")[key] === "true") return true;
  for (const g of objs(job, "TaskGroups")) {
    if (strMap(g, "Meta")[key] === "true") return true;
    for (const t of objs(g, "Tasks")) if (strMap(t, "Meta")[key] === "true") return true;
  }
  return false;
}

/** Returns whether a job (or one of its groups or tasks) asks the devserver to fail its deployment. */
function wantsFailedDeployment(job: JsonObject): boolean {
  return metaFlag(job, FAIL_DEPLOYMENT_META);
}

/**
 * What deployments use of the engine that runs them (the engine passes itself at construction; this module
 * does not import the engine, which imports it).
 */
export interface DeploymentHost {
  readonly store: Store;
  readonly settings: { readonly deploymentMs: number };
  /** Jobs (namespace\0id) whose next deployment fails regardless of meta (control API). */
  readonly failNextDeployment: Set<string>;
  /** Registers a job version again (auto-revert), when set. */
  readonly rollback: RollbackFn | undefined;
  schedule(ms: number, fn: () => void): () => void;
  scheduleQuiet(ms: number, fn: () => void): () => void;
  createEval(index: number, spec: EvalSpec): Evaluation;
  refreshStatus(entry: JobEntry, index: number): void;
}

/** Starts, advances, promotes and ends the deployments of one engine. */
export class Deployments {
  /** Pending health steps by deployment ID (cancelled when the deployment ends early). */
  private readonly timers = new Map<string, () => void>();
  /** The progress-deadline timer of each running deployment, with the cutoff it was set for. */
  private readonly deadlines = new Map<string, { at: string; cancel: () => void }>();

  constructor(private readonly engine: DeploymentHost) {}

  /** Finds or starts the deployment of the job's current version when this evaluation changes allocations. */
  start(
    e: Evaluation,
    entry: JobEntry,
    plans: GroupPlan[],
    live: AllocRecord[],
    index: number,
  ): Deployment | undefined {
    const job = entry.job;
    if (str(job, "Type") !== "service" || job.Stop === true) return undefined;
    const groups = objs(job, "TaskGroups").filter((g) => num(obj(g, "Update"), "MaxParallel") > 0);
    if (groups.length === 0) return undefined;
    const jmi = num(job, "JobModifyIndex");
    const existing = this.engine.store.jobDeployments(entry.namespace, entry.id).find((d) => d.JobModifyIndex === jmi);
    if (existing !== undefined) return ACTIVE_DEPLOYMENT.has(existing.Status) ? existing : undefined;
    const hadRunning = live.some((r) => num(r.job, "JobModifyIndex") === jmi);
    const updating = plans.some((p) => p.destructive.length + p.inplace.length + p.canary > 0);
    const total = groups.reduce((n, g) => n + num(g, "Count", 1), 0);
    if (total === 0 || (hadRunning && !updating)) return undefined;
    for (const d of this.engine.store.jobDeployments(entry.namespace, entry.id, true)) {
      if (ACTIVE_DEPLOYMENT.has(d.Status)) this.end(d, "cancelled", DEPLOYMENT_DESC.newerJob, index);
    }
    const now = nowNanos();
    const d: Deployment = {
      ID: randomUUID(),
      Namespace: entry.namespace,
      JobID: entry.id,
      JobVersion: num(job, "Version"),
      JobModifyIndex: jmi,
      JobSpecModifyIndex: jmi,
      JobCreateIndex: num(job, "CreateIndex"),
      IsMultiregion: false,
      TaskGroups: {},
      Status: "running",
      StatusDescription: DEPLOYMENT_DESC.running,
      EvalPriority: e.Priority,
      CreateIndex: index,
      ModifyIndex: index,
      CreateTime: now,
      ModifyTime: now,
    };
    for (const g of groups) {
      const u = obj(g, "Update");
      const plan = plans.find((p) => p.name === str(g, "Name"));
      d.TaskGroups[str(g, "Name")] = {
        AutoRevert: bool(u, "AutoRevert"),
        AutoPromote: bool(u, "AutoPromote"),
        ProgressDeadline: num(u, "ProgressDeadline"),
        RequireProgressBy: null,
        Promoted: false,
        PlacedCanaries: null,
        DesiredCanaries: plan?.canary ?? 0,
        DesiredTotal: num(g, "Count", 1),
        PlacedAllocs: 0,
        HealthyAllocs: 0,
        UnhealthyAllocs: 0,
      };
    }
    // Like the real scheduler's reconciler, a deployment that needs its canaries promoted says so from
    // the moment it is created, before any canary is placed or healthy.
    const waiting = Object.values(d.TaskGroups).filter((g) => g.DesiredCanaries > 0 && !g.Promoted);
    if (waiting.length > 0)
      d.StatusDescription = waiting.every((g) => g.AutoPromote)
        ? DEPLOYMENT_DESC.autoPromotion
        : DEPLOYMENT_DESC.needsPromotion;
    this.engine.store.deployments.set(d.ID, d);
    this.engine.store.stamp(index, "deployment");
    return d;
  }

  arm(id: string): void {
    this.armDeadline(id);
    if (this.timers.has(id)) return;
    const cancel = this.engine.schedule(this.engine.settings.deploymentMs, () => {
      this.timers.delete(id);
      this.progress(id);
    });
    this.timers.set(id, cancel);
  }

  private allocs(d: Deployment): AllocRecord[] {
    return [...this.engine.store.allocs.ofJob(d.Namespace, d.JobID)].filter(
      (r) => r.alloc.DeploymentID === d.ID && r.alloc.DesiredStatus === "run",
    );
  }

  /**
   * Groups whose rollout is done, as the real deployment watcher counts them: a group with canaries waiting
   * for promotion is not; any other is once it has as many healthy running allocations as it wants.
   */
  private doneGroups(d: Deployment): Set<string> {
    const healthy = new Map<string, number>();
    for (const r of this.allocs(d))
      if (r.alloc.DeploymentStatus?.Healthy === true && !["complete", "failed", "lost"].includes(r.alloc.ClientStatus))
        healthy.set(r.alloc.TaskGroup, (healthy.get(r.alloc.TaskGroup) ?? 0) + 1);
    const done = new Set<string>();
    for (const [name, g] of Object.entries(d.TaskGroups)) {
      if (g.DesiredCanaries > 0 && !g.Promoted) continue;
      if ((healthy.get(name) ?? 0) >= g.DesiredTotal) done.add(name);
    }
    return done;
  }

  /**
   * (Re)sets the deployment's progress-deadline timer to the earliest `RequireProgressBy` of its groups not
   * done yet (none: no timer). When it fires, the deployment fails as the real watcher fails it.
   */
  private armDeadline(id: string): void {
    const d = this.engine.store.deployments.get(id);
    if (d === undefined || d.Status !== "running") return;
    const done = this.doneGroups(d);
    let at: string | undefined;
    for (const [name, g] of Object.entries(d.TaskGroups)) {
      if (done.has(name) || g.RequireProgressBy === null) continue;
      if (at === undefined || Date.parse(g.RequireProgressBy) < Date.parse(at)) at = g.RequireProgressBy;
    }
    const current = this.deadlines.get(id);
    if (current?.at === at) return;
    current?.cancel();
    this.deadlines.delete(id);
    if (at === undefined) return;
    const cancel = this.engine.scheduleQuiet(Math.max(0, Date.parse(at) - Date.now()), () => {
      this.deadlines.delete(id);
      this.deadlineHit(id);
    });
    this.deadlines.set(id, { at, cancel });
  }

  /**
   * The progress deadline passed: the deployment fails ("Failed due to progress deadline") when a group
   * lacks the healthy allocations it needs (its canaries while they wait for promotion, else its total), and
   * reverts when such a group has auto_revert. A deployment whose canaries are healthy and wait for a
   * manual promotion goes on waiting.
   */
  private deadlineHit(id: string): void {
    const d = this.engine.store.deployments.get(id);
    if (d === undefined || d.Status !== "running") return;
    let failed = false;
    let revert = false;
    for (const g of Object.values(d.TaskGroups)) {
      const needed = g.DesiredCanaries > 0 && !g.Promoted ? g.DesiredCanaries : g.DesiredTotal;
      if (g.HealthyAllocs >= needed) continue;
      failed = true;
      if (g.AutoRevert) revert = true;
    }
    if (failed) this.fail(d, DEPLOYMENT_DESC.progressDeadline, false, revert);
  }

  /** Moves a running deployment on: failure (devserver switch), canary health, or success. */
  private progress(id: string): void {
    const d = this.engine.store.deployments.get(id);
    if (d === undefined || d.Status !== "running") return;
    const entry = this.engine.store.getJob(d.Namespace, d.JobID);
    if (entry === undefined) return;
    const version = entry.versions.find((v) => num(v, "Version") === d.JobVersion) ?? entry.job;
    const key = `${d.Namespace}\u0000${d.JobID}`;
    if (wantsFailedDeployment(version) || this.engine.failNextDeployment.has(key)) {
      this.engine.failNextDeployment.delete(key);
      this.fail(d, DEPLOYMENT_DESC.unhealthy, true);
      return;
    }
    // Allocations that never turn healthy leave the deployment running until its progress deadline.
    if (metaFlag(version, NEVER_HEALTHY_META)) return;
    const index = this.engine.store.write("deployment", "allocs");
    const canaryGroups = Object.entries(d.TaskGroups).filter(([, g]) => g.DesiredCanaries > 0 && !g.Promoted);
    for (const r of this.allocs(d)) {
      if (r.alloc.DeploymentStatus && r.alloc.DeploymentStatus.Healthy === null) {
        r.alloc.DeploymentStatus = { ...r.alloc.DeploymentStatus, Healthy: true, Timestamp: iso(), ModifyIndex: index };
        r.alloc.ModifyIndex = index;
        const g = d.TaskGroups[r.alloc.TaskGroup];
        if (g) {
          g.HealthyAllocs += 1;
          progressBy(g);
        }
      }
    }
    d.ModifyIndex = index;
    d.ModifyTime = nowNanos();
    if (canaryGroups.length > 0) {
      // The description was set when the deployment was made; only the watcher's auto-promotion acts here.
      if (canaryGroups.every(([, g]) => g.AutoPromote)) this.promote(d, index);
      this.armDeadline(id);
      return;
    }
    this.end(d, "successful", DEPLOYMENT_DESC.successful, index);
    this.markStable(entry, d.JobVersion, index);
  }

  /**
   * Returns one "Task group ... has n/m healthy allocations" line per group (of `groups`, or every group)
   * whose placed canaries are not all healthy and running: the real server then refuses the promotion.
   */
  unhealthyCanaryGroups(d: Deployment, groups: readonly string[] | undefined): string[] {
    const out: string[] = [];
    for (const [name, g] of Object.entries(d.TaskGroups)) {
      if ((groups !== undefined && !groups.includes(name)) || g.DesiredCanaries === 0) continue;
      const placed = new Set(g.PlacedCanaries ?? []);
      const have = this.allocs(d).filter(
        (r) =>
          placed.has(r.alloc.ID) && r.alloc.DeploymentStatus?.Healthy === true && r.alloc.ClientStatus === "running",
      ).length;
      if (have < g.DesiredCanaries)
        out.push(`Task group ${JSON.stringify(name)} has ${have}/${g.DesiredCanaries} healthy allocations`);
    }
    return out;
  }

  /**
   * Promotes the canaries of a deployment (of `groups`, or every group): the old allocations get replaced by
   * a follow-up evaluation. Groups left unpromoted keep the deployment waiting for promotion.
   */
  promote(d: Deployment, index: number, groups?: readonly string[]): Evaluation {
    for (const [name, g] of Object.entries(d.TaskGroups))
      if (g.DesiredCanaries > 0 && (groups === undefined || groups.includes(name))) g.Promoted = true;
    // A deployment that no longer needs promotion says it is running; a partial promotion keeps its text.
    const waiting = Object.values(d.TaskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted);
    if (!waiting && d.Status === "running") d.StatusDescription = DEPLOYMENT_DESC.running;
    d.ModifyIndex = index;
    const entry = this.engine.store.getJob(d.Namespace, d.JobID);
    return this.engine.createEval(index, {
      namespace: d.Namespace,
      jobId: d.JobID,
      type: str(entry?.job, "Type") || "service",
      priority: d.EvalPriority || 50,
      triggeredBy: "deployment-watcher",
      jobModifyIndex: d.JobModifyIndex,
      deploymentId: d.ID,
    });
  }

  /** Marks a job version stable (and the current job when it is that version). */
  markStable(entry: JobEntry, version: number, index: number, stable = true): boolean {
    const i = entry.versions.findIndex((v) => num(v, "Version") === version);
    const v = entry.versions[i];
    if (v === undefined) return false;
    entry.versions[i] = { ...v, Stable: stable, ModifyIndex: index };
    if (num(entry.job, "Version") === version) entry.job = { ...entry.job, Stable: stable, ModifyIndex: index };
    this.engine.store.stamp(index, "jobs", "job_version");
    return true;
  }

  /** Ends a deployment with a terminal status. */
  end(d: Deployment, status: Deployment["Status"], desc: string, index: number): void {
    const cancel = this.timers.get(d.ID);
    this.timers.delete(d.ID);
    cancel?.();
    this.deadlines.get(d.ID)?.cancel();
    this.deadlines.delete(d.ID);
    d.Status = status;
    d.StatusDescription = desc;
    d.ModifyIndex = index;
    d.ModifyTime = nowNanos();
    this.engine.store.stamp(index, "deployment");
  }

  /**
   * Fails a deployment; with `unhealthy` its allocations report unhealthy and fail. With `revert` (by
   * default: when a group has auto_revert), the newest stable version is registered again if its spec
   * differs (reference/scheduler.md §3.9). Returns the version rolled back to, if any.
   */
  fail(
    d: Deployment,
    desc: string,
    unhealthy: boolean,
    revert = Object.values(d.TaskGroups).some((g) => g.AutoRevert),
  ): number | undefined {
    const index = this.engine.store.write("deployment", "allocs", "job_summary");
    if (unhealthy) {
      for (const r of this.allocs(d)) {
        const g = d.TaskGroups[r.alloc.TaskGroup];
        if (g) g.UnhealthyAllocs += 1;
        Object.assign(r.alloc, {
          ClientStatus: "failed",
          ClientDescription: "Failed tasks",
          TaskStates: finishTaskStates(r.alloc.TaskStates, "failed"),
          DeploymentStatus: {
            ...(r.alloc.DeploymentStatus ?? { Canary: false }),
            Healthy: false,
            Timestamp: iso(),
            ModifyIndex: index,
          },
          ModifyIndex: index,
          ModifyTime: nowNanos(),
        });
      }
    }
    const entry = this.engine.store.getJob(d.Namespace, d.JobID);
    let description = desc;
    let rollbackTo: JsonObject | undefined;
    if (entry && revert) {
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
    this.end(d, "failed", description, index);
    if (entry) {
      entry.summaryIndex = index;
      this.engine.refreshStatus(entry, index);
    }
    if (entry && rollbackTo && this.engine.rollback) this.engine.rollback(entry, rollbackTo);
    return rollbackTo ? num(rollbackTo, "Version") : undefined;
  }
}
