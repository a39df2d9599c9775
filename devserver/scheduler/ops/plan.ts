// Plan: a dry run of the scheduler against the current state (nothing is stored). Reports what would
// happen per task group (DesiredTGUpdates), placement failures against the fake node pool, the job diff
// annotated the way the real server annotates it, and the next launch of a periodic job.
import { randomUUID } from "node:crypto";
import { eligibleNodes, placeAll } from "../sim/cluster";
import { reconcile } from "../sim/reconcile";
import { nextCronIn, parseCron } from "../sim/cron";
import { jobDiff, type JobDiff, type TaskDiff, type TaskGroupDiff } from "./diff";
import type { Engine } from "../sim/engine";
import { specChanged } from "../state/spec";
import { num, obj, str, nowNanos, type JsonObject } from "../state/json";
import { DevHttpError } from "../../core";
import type { DesiredUpdates, Evaluation } from "../state/types";

/** Zero time as the real server encodes an unset timestamp. */
const ZERO_TIME = "0001-01-01T00:00:00Z";

const UPDATE_NAMES: readonly (readonly [keyof DesiredUpdates, string])[] = [
  ["Ignore", "ignore"],
  ["Place", "create"],
  ["Migrate", "migrate"],
  ["Stop", "destroy"],
  ["Canary", "canary"],
  ["InPlaceUpdate", "in-place update"],
  ["DestructiveUpdate", "create/destroy update"],
];

/** Task diff annotations (what a task change forces). */
const FORCES_CREATE = "forces create";
const FORCES_DESTROY = "forces destroy";
const FORCES_INPLACE = "forces in-place update";
const FORCES_DESTRUCTIVE = "forces create/destroy update";

/** Task objects whose changes can be applied in place. */
const INPLACE_OBJECTS = new Set(["LogConfig", "Service", "Constraint"]);

function annotateTask(t: TaskDiff, parent: TaskGroupDiff): void {
  if (t.Type === "None") return;
  if ((parent.Type === "Added" || parent.Type === "Deleted") && (t.Type === "Added" || t.Type === "Deleted")) {
    t.Annotations = [t.Type === "Added" ? FORCES_CREATE : FORCES_DESTROY];
    return;
  }
  const destructive =
    (t.Fields ?? []).some((f) => f.Type !== "None" && f.Name !== "KillTimeout") ||
    (t.Objects ?? []).some((o) => o.Type !== "None" && !INPLACE_OBJECTS.has(o.Name));
  t.Annotations = [destructive ? FORCES_DESTRUCTIVE : FORCES_INPLACE];
}

/** Adds the scheduler's annotations to a job diff: per-group update counts, count changes, task effects. */
function annotate(diff: JobDiff, desired: Record<string, DesiredUpdates>): void {
  for (const g of diff.TaskGroups ?? []) {
    const d = desired[g.Name];
    if (d !== undefined) {
      const updates: Record<string, number> = {};
      for (const [k, label] of UPDATE_NAMES) if (d[k] !== 0) updates[label] = d[k];
      g.Updates = updates;
    }
    const count = (g.Fields ?? []).find((f) => f.Name === "Count");
    if (count !== undefined) {
      const before = Number(count.Old || "0");
      const after = Number(count.New || "0");
      if (before < after) count.Annotations = [FORCES_CREATE];
      else if (after < before) count.Annotations = [FORCES_DESTROY];
    }
    for (const t of g.Tasks ?? []) annotateTask(t, g);
  }
}

/** Returns the next launch of a periodic job as RFC 3339 text, the zero time when not periodic. */
function nextLaunch(job: JsonObject, now = new Date()): string {
  const p = obj(job, "Periodic");
  if (p === undefined || p.Enabled === false) return ZERO_TIME;
  const specs =
    Array.isArray(p.Specs) && p.Specs.length > 0
      ? p.Specs.filter((s): s is string => typeof s === "string")
      : [str(p, "Spec")];
  const zone = str(p, "TimeZone") || "UTC";
  let best: Date | undefined;
  for (const s of specs) {
    let n: Date | undefined;
    try {
      n = nextCronIn(parseCron(s), now, zone);
    } catch (e) {
      throw new DevHttpError(500, `Failed to parse cron expression: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (n !== undefined && (best === undefined || n < best)) best = n;
  }
  return best === undefined ? ZERO_TIME : best.toISOString().replace(/\.000Z$/, "Z");
}

/**
 * Runs a dry-run plan of `job` (already admitted) against the engine's current state; returns the plan
 * response body. `withDiff` adds the annotated job diff.
 */
export function planJob(engine: Engine, job: JsonObject, withDiff: boolean, warnings: string): JsonObject {
  const ns = str(job, "Namespace") || "default";
  const id = str(job, "ID");
  const entry = engine.store.getJob(ns, id);
  const existing = entry?.job;
  const candidate: JsonObject = { ...job };
  let index = 0;
  if (existing !== undefined) {
    index = num(existing, "JobModifyIndex");
    const changed = specChanged(existing, job);
    candidate.JobModifyIndex = changed ? index + 1 : index;
    candidate.Version = changed ? num(existing, "Version") + 1 : num(existing, "Version");
    candidate.CreateIndex = num(existing, "CreateIndex");
  } else {
    candidate.JobModifyIndex = 100;
    candidate.CreateIndex = 100;
    candidate.Version = 0;
  }
  const live = engine.liveAllocs(ns, id, existing ?? candidate);
  const systemCount = eligibleNodes(candidate, engine.settings.nodes).eligible.length;
  const plans = reconcile(candidate, live, { rolling: true, promoted: false, systemCount });
  const replaced = new Set(plans.flatMap((p) => [...p.stop, ...p.destructive]).map((r) => r.alloc.ID));
  const usage = engine.store.usage(replaced);
  const occupied = new Map<string, Set<string>>();
  for (const p of plans) occupied.set(p.name, new Set([...p.ignore, ...p.inplace].map((r) => r.alloc.NodeID)));
  const result =
    candidate.Stop === true
      ? { failed: {}, queued: {}, placements: [] }
      : placeAll(candidate, plans, engine.settings.nodes, usage, occupied);
  const desired: Record<string, DesiredUpdates> = {};
  for (const p of plans) desired[p.name] = p.desired;
  const failed = Object.keys(result.failed).length > 0 ? result.failed : null;
  let createdEvals: Evaluation[] | null = null;
  if (failed !== null) {
    const now = nowNanos();
    createdEvals = [
      {
        ID: randomUUID(),
        Namespace: ns,
        Priority: num(candidate, "Priority", 50),
        Type: str(candidate, "Type"),
        TriggeredBy: "queued-allocs",
        JobID: id,
        JobModifyIndex: num(candidate, "JobModifyIndex"),
        NodeID: "",
        NodeModifyIndex: 0,
        DeploymentID: "",
        Status: "blocked",
        StatusDescription: "created to place remaining allocations",
        Wait: 0,
        WaitUntil: null,
        NextEval: "",
        PreviousEval: "",
        BlockedEval: "",
        RelatedEvals: null,
        FailedTGAllocs: failed,
        ClassEligibility: null,
        QuotaLimitReached: "",
        EscapedComputedClass: false,
        AnnotatePlan: false,
        QueuedAllocations: null,
        LeaderACL: "",
        SnapshotIndex: 0,
        CreateIndex: 0,
        ModifyIndex: 0,
        CreateTime: now,
        ModifyTime: now,
      },
    ];
  }
  let diff: JobDiff | null = null;
  if (withDiff) {
    diff = jobDiff(existing, candidate, true);
    annotate(diff, desired);
  }
  return {
    Index: index,
    NextPeriodicLaunch: nextLaunch(candidate),
    Warnings: warnings,
    Diff: diff as unknown as JsonObject,
    CreatedEvals: createdEvals as unknown as JsonObject[],
    JobModifyIndex: index,
    FailedTGAllocs: failed as unknown as JsonObject,
    Annotations: { DesiredTGUpdates: desired as unknown as JsonObject, PreemptedAllocs: null },
  };
}
