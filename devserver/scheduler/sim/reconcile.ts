// The reconciler: given the desired job version and the job's live allocations, decides per task group
// what the scheduler keeps (ignore), updates in place, replaces (destructive update), stops, adds, or
// places as canaries, following the real scheduler's rules for what forces a replacement.
import { findGroup, isSystem } from "./cluster";
import { deepEqual, num, obj, objs, str, strMap, type Json, type JsonObject } from "../state/json";
import type { AllocRecord } from "../state/store";
import type { DesiredUpdates } from "../state/types";
import type { GroupPlan } from "./types";

function combinedMeta(job: JsonObject, group: JsonObject, task: JsonObject): Record<string, string> {
  return { ...strMap(job, "Meta"), ...strMap(group, "Meta"), ...strMap(task, "Meta") };
}

/** Compares networks ignoring the values the scheduler assigns to dynamic ports. */
function networksDiffer(a: JsonObject[], b: JsonObject[]): boolean {
  const shape = (n: JsonObject): Json => ({
    ...n,
    DynamicPorts: objs(n, "DynamicPorts").map((p) => ({ ...p, Value: -1 })),
  });
  return !deepEqual(a.map(shape), b.map(shape));
}

/**
 * Returns whether moving a group from `oldJob` to `newJob` needs new allocations (a destructive update),
 * following the real scheduler's rules: task driver, user, config, env, artifacts, secrets, templates,
 * combined job/group/task meta, resources, networks, volumes, affinities, spreads and ephemeral disk.
 */
function tasksUpdated(oldJob: JsonObject, newJob: JsonObject, groupName: string): boolean {
  const a = findGroup(oldJob, groupName);
  const b = findGroup(newJob, groupName);
  if (a === undefined || b === undefined) return true;
  const ta = objs(a, "Tasks");
  const tb = objs(b, "Tasks");
  if (ta.length !== tb.length) return true;
  if (!deepEqual(a.EphemeralDisk, b.EphemeralDisk)) return true;
  if (networksDiffer(objs(a, "Networks"), objs(b, "Networks"))) return true;
  if (!deepEqual(a.Volumes ?? null, b.Volumes ?? null)) return true;
  const affinities = (j: JsonObject, g: JsonObject, ts: JsonObject[]): Json => [
    ...objs(j, "Affinities"),
    ...objs(g, "Affinities"),
    ...ts.flatMap((t) => objs(t, "Affinities")),
  ];
  if (!deepEqual(affinities(oldJob, a, ta), affinities(newJob, b, tb))) return true;
  if (
    !deepEqual([...objs(oldJob, "Spreads"), ...objs(a, "Spreads")], [...objs(newJob, "Spreads"), ...objs(b, "Spreads")])
  )
    return true;
  for (const at of ta) {
    const bt = tb.find((t) => str(t, "Name") === str(at, "Name"));
    if (bt === undefined) return true;
    for (const k of [
      "Driver",
      "User",
      "Config",
      "Env",
      "Artifacts",
      "Secrets",
      "Templates",
      "CSIPluginConfig",
      "VolumeMounts",
      "Identity",
      "Identities",
    ]) {
      if (!deepEqual(at[k] ?? null, bt[k] ?? null)) return true;
    }
    if (!deepEqual(combinedMeta(oldJob, a, at), combinedMeta(newJob, b, bt))) return true;
    const ra = obj(at, "Resources");
    const rb = obj(bt, "Resources");
    if (networksDiffer(objs(ra, "Networks"), objs(rb, "Networks"))) return true;
    for (const k of ["CPU", "Cores", "MemoryMB", "MemoryMaxMB", "Devices", "SecretsMB"]) {
      if (!deepEqual(ra?.[k] ?? null, rb?.[k] ?? null)) return true;
    }
    if ((obj(at, "LogConfig")?.Disabled ?? false) !== (obj(bt, "LogConfig")?.Disabled ?? false)) return true;
    if ((obj(at, "RestartPolicy")?.RenderTemplates ?? false) !== (obj(bt, "RestartPolicy")?.RenderTemplates ?? false))
      return true;
  }
  return false;
}

/** Returns an all-zero DesiredUpdates record. */
function emptyDesired(): DesiredUpdates {
  return {
    Ignore: 0,
    Place: 0,
    Migrate: 0,
    Stop: 0,
    InPlaceUpdate: 0,
    DestructiveUpdate: 0,
    Canary: 0,
    Preemptions: 0,
    Disconnect: 0,
    Reconnect: 0,
    RescheduleNow: 0,
    RescheduleLater: 0,
  };
}

/** Stop reasons as the real reconciler words them. */
export const ALLOC_NOT_NEEDED = "alloc not needed due to job update";
export const ALLOC_UPDATING = "alloc is being updated due to job update";

/** Options of `reconcile`. */
export interface ReconcileOptions {
  /** Limit destructive updates to the group's max_parallel (what one scheduler pass does; plan shows it). */
  readonly rolling: boolean;
  /** Canaries of this job version were promoted (all, or the named groups): replace the old allocations now. */
  readonly promoted: boolean | ReadonlySet<string>;
  /** Node count for system and sysbatch jobs (one allocation per eligible node). */
  readonly systemCount: number;
}

/**
 * Decides, per task group, what happens to the live allocations of a job when `job` is the desired state
 * (undefined or stopped: stop everything). `live` holds the job's non-terminal allocations (and, for batch
 * jobs, the ones that completed successfully, which are kept rather than re-run).
 */
export function reconcile(job: JsonObject | undefined, live: readonly AllocRecord[], o: ReconcileOptions): GroupPlan[] {
  const byGroup = new Map<string, AllocRecord[]>();
  // Allocations of an earlier registration of the same ID (purged, then registered again) only stop.
  const stale = new Map<string, AllocRecord[]>();
  for (const r of live) {
    if (job !== undefined && num(r.job, "CreateIndex") !== num(job, "CreateIndex")) {
      stale.set(r.alloc.TaskGroup, [...(stale.get(r.alloc.TaskGroup) ?? []), r]);
      continue;
    }
    const list = byGroup.get(r.alloc.TaskGroup) ?? [];
    list.push(r);
    byGroup.set(r.alloc.TaskGroup, list);
  }
  const plans: GroupPlan[] = [];
  const stopped = job === undefined || job.Stop === true;
  const groups = stopped ? [] : objs(job, "TaskGroups");
  const service = str(job, "Type") === "service";
  for (const g of groups) {
    const name = str(g, "Name");
    const count = isSystem(job) ? o.systemCount : Math.max(0, num(g, "Count", 1));
    const existing = [...(byGroup.get(name) ?? [])];
    byGroup.delete(name);
    const jmi = num(job, "JobModifyIndex");
    const sameVersion = (r: AllocRecord): boolean => num(r.job, "JobModifyIndex") === jmi && jmi !== 0;
    const update = obj(g, "Update");
    const canary = service ? num(update, "Canary") : 0;
    const maxParallel = service ? num(update, "MaxParallel") : 0;
    const promoted = typeof o.promoted === "boolean" ? o.promoted : o.promoted.has(name);
    // Canaries placed before promotion ride along: they neither count toward the group nor get placed again.
    const placedCanaries =
      canary > 0 && !promoted
        ? existing.filter((r) => sameVersion(r) && r.alloc.DeploymentStatus?.Canary === true)
        : [];
    const regular = existing.filter((r) => !placedCanaries.includes(r));
    // Surplus allocations go first from older versions, then from the highest names.
    regular.sort((x, y) => Number(sameVersion(x)) - Number(sameVersion(y)) || (x.alloc.Name < y.alloc.Name ? 1 : -1));
    const plan: GroupPlan = {
      name,
      count,
      place: 0,
      canary: 0,
      destructive: [],
      inplace: [],
      ignore: [...placedCanaries],
      stop: [],
      desired: emptyDesired(),
    };
    const surplus = Math.max(0, regular.length - count);
    plan.stop = regular.slice(0, surplus);
    const kept = regular.slice(surplus);
    plan.place = Math.max(0, count - kept.length);
    for (const r of kept) {
      if (sameVersion(r) || (r.alloc.ClientStatus === "complete" && !tasksUpdated(r.job, job as JsonObject, name)))
        plan.ignore.push(r);
      else if (tasksUpdated(r.job, job as JsonObject, name)) plan.destructive.push(r);
      else plan.inplace.push(r);
    }
    if (plan.destructive.length > 0 && canary > 0 && !promoted) {
      plan.canary = Math.max(0, canary - placedCanaries.length);
      plan.ignore.push(...plan.destructive);
      plan.destructive = [];
    } else if (o.rolling && maxParallel > 0 && plan.destructive.length > maxParallel) {
      plan.ignore.push(...plan.destructive.slice(maxParallel));
      plan.destructive = plan.destructive.slice(0, maxParallel);
    }
    plans.push(plan);
  }
  for (const [name, rest] of byGroup) {
    const plan: GroupPlan = {
      name,
      count: 0,
      place: 0,
      canary: 0,
      destructive: [],
      inplace: [],
      ignore: [],
      stop: [...rest],
      desired: emptyDesired(),
    };
    plans.push(plan);
  }
  for (const [name, old] of stale) {
    const plan = plans.find((p) => p.name === name);
    if (plan) plan.stop.push(...old);
    else
      plans.push({
        name,
        count: 0,
        place: 0,
        canary: 0,
        destructive: [],
        inplace: [],
        ignore: [],
        stop: [...old],
        desired: emptyDesired(),
      });
  }
  for (const p of plans) {
    p.desired.Place = p.place;
    p.desired.Canary = p.canary;
    p.desired.Stop = p.stop.length;
    p.desired.InPlaceUpdate = p.inplace.length;
    p.desired.DestructiveUpdate = p.destructive.length;
    p.desired.Ignore = p.ignore.length;
  }
  return plans;
}
