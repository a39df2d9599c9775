// The fake node pool and the scheduling decisions made against it: which allocations a job version
// keeps, updates in place, replaces, stops or adds (the reconciler), and where new ones fit (bin packing
// on CPU and memory). Used by evaluations (for real) and by plan (dry run).
import { createHash } from "node:crypto";
import { deepEqual, num, obj, objs, str, strMap, strs, type Json, type JsonObject } from "./json";
import type { AllocRecord } from "./store";
import type { AllocMetric, DesiredUpdates } from "./types";

/** Shape of the fake node pool (devserver option `nodes`). */
export interface NodePoolOptions {
  /** Number of nodes (default 3). */
  readonly count?: number;
  /** CPU capacity of each node in MHz (default 4000). */
  readonly cpu?: number;
  /** Memory capacity of each node in MB (default 8192). */
  readonly memoryMB?: number;
  /** Datacenter of every node (default "dc1"). */
  readonly datacenter?: string;
  /** Node pool of every node (default "default"). */
  readonly nodePool?: string;
}

export interface Node {
  readonly ID: string;
  readonly Name: string;
  readonly Datacenter: string;
  readonly NodePool: string;
  readonly Address: string;
  readonly CPU: number;
  readonly MemoryMB: number;
}

/** Default task resources when a task sets none (the client library's canonical defaults). */
const DEFAULT_CPU = 100;
const DEFAULT_MEMORY = 300;

/** Builds the node list; node IDs derive from the position so they survive a restart. */
export function makeNodes(o: NodePoolOptions = {}): Node[] {
  const count = o.count ?? 3;
  const out: Node[] = [];
  for (let i = 0; i < count; i++) {
    const h = createHash("sha256").update(`devserver-node-${i}`).digest("hex");
    const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
    out.push({
      ID: id,
      Name: `devserver-node-${i}`,
      Datacenter: o.datacenter ?? "dc1",
      NodePool: o.nodePool ?? "default",
      Address: "127.0.0.1",
      CPU: o.cpu ?? 4000,
      MemoryMB: o.memoryMB ?? 8192,
    });
  }
  return out;
}

/** Returns the CPU and memory one allocation of a group asks for. */
export function groupAsk(group: JsonObject): { cpu: number; memoryMB: number } {
  let cpu = 0;
  let memoryMB = 0;
  for (const t of objs(group, "Tasks")) {
    const r = obj(t, "Resources");
    cpu += num(r, "CPU", DEFAULT_CPU);
    memoryMB += num(r, "MemoryMB", DEFAULT_MEMORY);
  }
  return { cpu, memoryMB };
}

function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`);
  return re.test(value);
}

/** Returns the nodes a job may run on: its node pool and datacenters (glob patterns, default all). */
export function eligibleNodes(job: JsonObject, nodes: readonly Node[]): { pool: Node[]; eligible: Node[] } {
  const wantedPool = str(job, "NodePool") || "default";
  const pool = nodes.filter((n) => wantedPool === "all" || n.NodePool === wantedPool);
  const dcs = strs(job, "Datacenters");
  const patterns = dcs.length === 0 ? ["*"] : dcs;
  const eligible = pool.filter((n) => patterns.some((p) => globMatch(p, n.Datacenter)));
  return { pool, eligible };
}

/** Returns a task group of a job by name. */
export function findGroup(job: JsonObject | undefined, name: string): JsonObject | undefined {
  return objs(job, "TaskGroups").find((g) => str(g, "Name") === name);
}

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
export function tasksUpdated(oldJob: JsonObject, newJob: JsonObject, groupName: string): boolean {
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
    ...objs(j, "Affinities"), ...objs(g, "Affinities"), ...ts.flatMap((t) => objs(t, "Affinities")),
  ];
  if (!deepEqual(affinities(oldJob, a, ta), affinities(newJob, b, tb))) return true;
  if (!deepEqual([...objs(oldJob, "Spreads"), ...objs(a, "Spreads")], [...objs(newJob, "Spreads"), ...objs(b, "Spreads")])) return true;
  for (const at of ta) {
    const bt = tb.find((t) => str(t, "Name") === str(at, "Name"));
    if (bt === undefined) return true;
    for (const k of ["Driver", "User", "Config", "Env", "Artifacts", "Secrets", "Templates", "CSIPluginConfig", "VolumeMounts", "Identity", "Identities"]) {
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
    if ((obj(at, "RestartPolicy")?.RenderTemplates ?? false) !== (obj(bt, "RestartPolicy")?.RenderTemplates ?? false)) return true;
  }
  return false;
}

/** Returns an all-zero DesiredUpdates record. */
export function emptyDesired(): DesiredUpdates {
  return {
    Ignore: 0, Place: 0, Migrate: 0, Stop: 0, InPlaceUpdate: 0, DestructiveUpdate: 0, Canary: 0, Preemptions: 0,
    Disconnect: 0, Reconnect: 0, RescheduleNow: 0, RescheduleLater: 0,
  };
}

/** Stop reasons as the real reconciler words them. */
export const ALLOC_NOT_NEEDED = "alloc not needed due to job update";
export const ALLOC_UPDATING = "alloc is being updated due to job update";

/** The scheduler's decision for one task group. */
export interface GroupPlan {
  readonly name: string;
  readonly count: number;
  /** Fresh allocations to place (missing ones). */
  place: number;
  /** Canaries to place before the old allocations are replaced. */
  canary: number;
  destructive: AllocRecord[];
  inplace: AllocRecord[];
  ignore: AllocRecord[];
  stop: AllocRecord[];
  desired: DesiredUpdates;
}

/** Options of `reconcile`. */
export interface ReconcileOptions {
  /** Limit destructive updates to the group's max_parallel (what one scheduler pass does; plan shows it). */
  readonly rolling: boolean;
  /** Canaries of this job version were promoted: replace the old allocations now. */
  readonly promoted: boolean;
  /** Node count for system and sysbatch jobs (one allocation per eligible node). */
  readonly systemCount: number;
}

function isSystem(job: JsonObject | undefined): boolean {
  const t = str(job, "Type");
  return t === "system" || t === "sysbatch";
}

/**
 * Decides, per task group, what happens to the live allocations of a job when `job` is the desired state
 * (undefined or stopped: stop everything). `live` holds the job's non-terminal allocations (and, for batch
 * jobs, the ones that completed successfully, which are kept rather than re-run).
 */
export function reconcile(job: JsonObject | undefined, live: readonly AllocRecord[], o: ReconcileOptions): GroupPlan[] {
  const byGroup = new Map<string, AllocRecord[]>();
  for (const r of live) {
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
    // Surplus allocations go first from older versions, then from the highest names.
    existing.sort((x, y) => Number(sameVersion(x)) - Number(sameVersion(y)) || (x.alloc.Name < y.alloc.Name ? 1 : -1));
    const plan: GroupPlan = { name, count, place: 0, canary: 0, destructive: [], inplace: [], ignore: [], stop: [], desired: emptyDesired() };
    const surplus = Math.max(0, existing.length - count);
    plan.stop = existing.slice(0, surplus);
    const kept = existing.slice(surplus);
    plan.place = Math.max(0, count - kept.length);
    for (const r of kept) {
      if (sameVersion(r) || (r.alloc.ClientStatus === "complete" && !tasksUpdated(r.job, job as JsonObject, name))) plan.ignore.push(r);
      else if (tasksUpdated(r.job, job as JsonObject, name)) plan.destructive.push(r);
      else plan.inplace.push(r);
    }
    const update = obj(g, "Update");
    const canary = service ? num(update, "Canary") : 0;
    const maxParallel = service ? num(update, "MaxParallel") : 0;
    if (plan.destructive.length > 0 && canary > 0 && !o.promoted) {
      plan.canary = canary;
      plan.ignore.push(...plan.destructive);
      plan.destructive = [];
    } else if (o.rolling && maxParallel > 0 && plan.destructive.length > maxParallel) {
      plan.ignore.push(...plan.destructive.slice(maxParallel));
      plan.destructive = plan.destructive.slice(0, maxParallel);
    }
    plans.push(plan);
  }
  for (const [name, rest] of byGroup) {
    const plan: GroupPlan = { name, count: 0, place: 0, canary: 0, destructive: [], inplace: [], ignore: [], stop: [...rest], desired: emptyDesired() };
    plans.push(plan);
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

/** One new allocation and the node it goes to. */
export interface Placement {
  readonly group: string;
  readonly node: Node;
  readonly canary: boolean;
  /** The allocation this one replaces (destructive update). */
  readonly replaces?: AllocRecord;
}

/** Result of fitting a job's new allocations onto the node pool. */
export interface PlacementResult {
  readonly placements: Placement[];
  /** Placement failures per group (first failure's metrics, later ones coalesced). */
  readonly failed: Record<string, AllocMetric>;
  /** Allocations per group that could not be placed. */
  readonly queued: Record<string, number>;
}

/** Current CPU/memory use per node ID. */
export type Usage = Map<string, { cpu: number; memoryMB: number }>;

/** Sums the resources used by live allocations, skipping the given allocation IDs (being stopped/replaced). */
export function nodeUsage(allocs: Iterable<AllocRecord>, skip: ReadonlySet<string>): Usage {
  const usage: Usage = new Map();
  for (const r of allocs) {
    const a = r.alloc;
    if (skip.has(a.ID) || a.DesiredStatus !== "run" || a.ClientStatus === "complete" || a.ClientStatus === "failed" || a.ClientStatus === "lost") continue;
    const g = findGroup(r.job, a.TaskGroup);
    if (g === undefined) continue;
    const ask = groupAsk(g);
    const u = usage.get(a.NodeID) ?? { cpu: 0, memoryMB: 0 };
    u.cpu += ask.cpu;
    u.memoryMB += ask.memoryMB;
    usage.set(a.NodeID, u);
  }
  return usage;
}

function emptyMetric(): AllocMetric {
  return {
    NodesEvaluated: 0, NodesFiltered: 0, NodesInPool: 0, NodesAvailable: {}, ClassFiltered: null, ConstraintFiltered: null,
    NodesExhausted: 0, ClassExhausted: null, DimensionExhausted: null, QuotaExhausted: null, ResourcesExhausted: null,
    Scores: null, ScoreMetaData: null, AllocationTime: 0, CoalescedFailures: 0,
  };
}

/**
 * Fits the new allocations of `plans` onto the nodes (most-used node that fits, like bin packing).
 * `usage` must already exclude allocations that the plans stop or replace; it is updated in place.
 * `occupied` lists, per group, nodes already holding one of the job's allocations (system jobs use one per node).
 */
export function placeAll(job: JsonObject, plans: readonly GroupPlan[], nodes: readonly Node[], usage: Usage, occupied: Map<string, Set<string>>): PlacementResult {
  const { pool, eligible } = eligibleNodes(job, nodes);
  const placements: Placement[] = [];
  const failed: Record<string, AllocMetric> = {};
  const queued: Record<string, number> = {};
  const system = isSystem(job);
  for (const p of plans) {
    const g = findGroup(job, p.name);
    if (g === undefined) continue;
    queued[p.name] = 0;
    const ask = groupAsk(g);
    const wanted: { canary: boolean; replaces?: AllocRecord }[] = [
      ...p.destructive.map((r) => ({ canary: false, replaces: r })),
      ...Array.from({ length: p.canary }, () => ({ canary: true })),
      ...Array.from({ length: p.place }, () => ({ canary: false })),
    ];
    for (const w of wanted) {
      const started = process.hrtime.bigint();
      const taken = occupied.get(p.name) ?? new Set<string>();
      let best: Node | undefined;
      let bestUsed = -1;
      const dims: Record<string, number> = {};
      let exhausted = 0;
      let evaluated = 0;
      for (const n of eligible) {
        if (system && taken.has(n.ID)) continue;
        evaluated++;
        const u = usage.get(n.ID) ?? { cpu: 0, memoryMB: 0 };
        const dim = u.cpu + ask.cpu > n.CPU ? "cpu" : u.memoryMB + ask.memoryMB > n.MemoryMB ? "memory" : undefined;
        if (dim !== undefined) {
          exhausted++;
          dims[dim] = (dims[dim] ?? 0) + 1;
          continue;
        }
        const used = u.cpu / n.CPU + u.memoryMB / n.MemoryMB;
        if (used > bestUsed) {
          best = n;
          bestUsed = used;
        }
      }
      if (best === undefined) {
        queued[p.name] = (queued[p.name] ?? 0) + 1;
        const existing = failed[p.name];
        if (existing !== undefined) {
          existing.CoalescedFailures += 1;
          continue;
        }
        const m = emptyMetric();
        m.NodesEvaluated = evaluated;
        m.NodesInPool = pool.length;
        for (const n of eligible) m.NodesAvailable[n.Datacenter] = (m.NodesAvailable[n.Datacenter] ?? 0) + 1;
        m.NodesExhausted = exhausted;
        m.DimensionExhausted = Object.keys(dims).length > 0 ? dims : null;
        m.AllocationTime = Number(process.hrtime.bigint() - started);
        failed[p.name] = m;
        continue;
      }
      const u = usage.get(best.ID) ?? { cpu: 0, memoryMB: 0 };
      u.cpu += ask.cpu;
      u.memoryMB += ask.memoryMB;
      usage.set(best.ID, u);
      taken.add(best.ID);
      occupied.set(p.name, taken);
      placements.push({ group: p.name, node: best, canary: w.canary, ...(w.replaces ? { replaces: w.replaces } : {}) });
    }
  }
  return { placements, failed, queued };
}
