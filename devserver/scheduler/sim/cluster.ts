// The fake node pool and placement against it: which nodes a job may use, what an allocation asks for,
// and where new allocations fit (bin packing on CPU and memory), with the failure metrics the real
// scheduler reports when they do not. Used by evaluations (for real) and by plan (dry run).
import { createHash } from "node:crypto";
import { constraintKey, firstFailed, groupConstraints } from "./constraints";
import { num, obj, objs, str, strs, type JsonObject } from "../state/json";
import type { AllocRecord, Resources, Usage } from "../state/store";
import type { AllocMetric } from "../state/types";
import type { GroupPlan, Node } from "./types";

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
function groupAsk(group: JsonObject): Resources {
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
  const re = new RegExp(
    `^${pattern
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replace(/\*/g, ".*")
      .replace(/\?/g, ".")}$`,
  );
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

/** Returns whether a job places one allocation per eligible node (system and sysbatch). */
export function isSystem(job: JsonObject | undefined): boolean {
  const t = str(job, "Type");
  return t === "system" || t === "sysbatch";
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
  /** Placement failures per group (first failure's metrics, later ones coalesced); every constraint that filtered a node and every exhausted dimension is counted. */
  readonly failed: Record<string, AllocMetric>;
  /** Allocations per group that could not be placed. */
  readonly queued: Record<string, number>;
}

/**
 * What one allocation asks of its node: the tasks of its group in the job version it runs (null: no such
 * group). The store counts it as the allocation starts and takes it back as it stops.
 */
export function allocAsk(r: AllocRecord): Resources | null {
  const g = findGroup(r.job, r.alloc.TaskGroup);
  return g === undefined ? null : groupAsk(g);
}

function emptyMetric(): AllocMetric {
  return {
    NodesEvaluated: 0,
    NodesFiltered: 0,
    NodesInPool: 0,
    NodesAvailable: {},
    ClassFiltered: null,
    ConstraintFiltered: null,
    NodesExhausted: 0,
    ClassExhausted: null,
    DimensionExhausted: null,
    QuotaExhausted: null,
    ResourcesExhausted: null,
    Scores: null,
    ScoreMetaData: null,
    AllocationTime: 0,
    CoalescedFailures: 0,
  };
}

/**
 * Fits the new allocations of `plans` onto the nodes (most-used node that fits, like bin packing).
 * `usage` must already exclude allocations that the plans stop or replace; it is updated in place.
 * `occupied` lists, per group, nodes already holding one of the job's allocations (system jobs use one per node).
 */
export function placeAll(
  job: JsonObject,
  plans: readonly GroupPlan[],
  nodes: readonly Node[],
  usage: Usage,
  occupied: Map<string, Set<string>>,
): PlacementResult {
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
    // System jobs skip nodes their constraints rule out (no failure); other jobs count them as filtered.
    const constraints = system ? [] : groupConstraints(job, g);
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
      const filteredBy: Record<string, number> = {};
      let filtered = 0;
      let exhausted = 0;
      let evaluated = 0;
      for (const n of eligible) {
        if (system && taken.has(n.ID)) continue;
        evaluated++;
        const failedConstraint = firstFailed(n, constraints);
        if (failedConstraint !== undefined) {
          filtered++;
          const key = constraintKey(failedConstraint);
          filteredBy[key] = (filteredBy[key] ?? 0) + 1;
          continue;
        }
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
        m.NodesFiltered = filtered;
        m.ConstraintFiltered = Object.keys(filteredBy).length > 0 ? filteredBy : null;
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
