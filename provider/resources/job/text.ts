/**
 * The text a Job shows of a plan, as pure functions: the preview of a plan (what the scheduler says it would
 * do with the desired job, as lines a person reads in `pulumi preview`; shown through ../../log.ts), the
 * placements that failed, and the facts of a plan that apply compares with what the preview showed. The
 * error texts and notes are ./messages.ts.
 */
import type {
  AllocMetric,
  DesiredUpdates,
  FieldDiff,
  JobDiff,
  ObjectDiff,
  PlanResponse,
  TaskDiff,
} from "../../schemas/scheduler";
import { SECRET_SHOWN, maskFieldName, maskName, maskText, masksField } from "./mask-text";
import { NO_SECRETS, type SecretMask } from "./secrets";
import type { PlanFacts, ShownPlan } from "./memo";

export type { ShownPlan } from "./memo";

/** What the formatter needs to know besides the plan. */
export interface PlanContext {
  jobId: string;
  namespace: string;
  /** The JobModifyIndex state recorded; a different server index means someone else changed the job. */
  stateJobModifyIndex?: number;
  /** What of the text is secret (see secrets.ts); default: nothing. */
  mask?: SecretMask;
}

const MARK: Record<string, string> = { Added: "+", Deleted: "-", Edited: "~", None: " " };

/** Returns the preview text of a plan: per group what would be placed, updated, stopped or fail to place. */
export function formatPlan(plan: PlanResponse, ctx: PlanContext): string {
  const given = ctx.mask ?? NO_SECRETS;
  // The job's identity is shown even when everything else is masked (it is the resource's ID).
  const mask = given.everything ? { ...given, shown: [...(given.shown ?? []), ctx.jobId, ctx.namespace] } : given;
  const lines: string[] = [];
  const diff = plan.Diff ?? undefined;
  const type = diff?.Type ?? "None";
  lines.push(`Scheduler plan for job "${ctx.jobId}" in namespace "${ctx.namespace}": ${describeType(type)}`);
  if (diff) pushFields(lines, mask, "  ", diff.Fields, diff.Objects);

  const updates = plan.Annotations?.DesiredTGUpdates ?? {};
  const failed = plan.FailedTGAllocs ?? {};
  const groupDiffs = new Map((diff?.TaskGroups ?? []).map((g) => [g.Name ?? "", g] as const));
  const names = orderedGroups(diff, updates, failed);
  for (const name of names) {
    const g = groupDiffs.get(name);
    const counts = updates[name];
    const gType = g?.Type && g.Type !== "None" ? ` (${g.Type})` : "";
    lines.push(
      `  ${MARK[g?.Type ?? "None"] ?? "~"} Group "${maskName(name, mask)}"${gType}: ${describeUpdates(counts)}`,
    );
    if (g) {
      pushFields(lines, mask, "      ", g.Fields, g.Objects);
      for (const t of g.Tasks ?? []) pushTask(lines, mask, t);
    }
    const metric = failed[name];
    if (metric) pushFailure(lines, metric, mask);
  }

  const blocked = (plan.CreatedEvals ?? []).filter((e) => e.Status === "blocked").length;
  if (blocked > 0)
    lines.push(`  The scheduler would create ${count(blocked, "blocked evaluation")} waiting for resources.`);
  const next = plan.NextPeriodicLaunch;
  if (next !== undefined && next !== null && next !== "" && next !== 0 && !String(next).startsWith("0001-01-01")) {
    lines.push(`  Next periodic launch: ${String(next)}`);
  }
  const warnings = (plan.Warnings ?? "").trim();
  if (warnings !== "") {
    lines.push("  Warnings:");
    for (const w of warnings
      .split("\n")
      .map((s) => s.trim())
      .filter((s) => s !== ""))
      lines.push(`    ! ${w}`);
  }
  const serverIndex = plan.JobModifyIndex ?? 0;
  if (ctx.stateJobModifyIndex !== undefined && serverIndex !== 0 && serverIndex !== ctx.stateJobModifyIndex) {
    lines.push(
      `  ! The job was changed outside Pulumi: its JobModifyIndex is ${serverIndex}, state has ${ctx.stateJobModifyIndex}. ` +
        "The update will be refused until you run `pulumi refresh`.",
    );
  }
  return maskText(lines.join("\n") + "\n", mask);
}

function describeType(type: string): string {
  switch (type) {
    case "None":
      return "no changes";
    case "Added":
      return "new job";
    case "Deleted":
      return "job removed";
    case "Edited":
      return "job changed";
    default:
      return type;
  }
}

function orderedGroups(
  diff: JobDiff | undefined,
  updates: Record<string, unknown>,
  failed: Record<string, unknown>,
): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  const add = (n: string): void => {
    if (n !== "" && !seen.has(n)) {
      seen.add(n);
      out.push(n);
    }
  };
  for (const g of diff?.TaskGroups ?? []) add(g.Name ?? "");
  for (const n of Object.keys(updates).sort()) add(n);
  for (const n of Object.keys(failed).sort()) add(n);
  return out;
}

/**
 * Returns the counts of what the scheduler would do to one group, in words ("1 to place, 2 in-place updates").
 */
function describeUpdates(u: DesiredUpdates | undefined): string {
  if (!u) return "no allocation changes reported";
  const parts: string[] = [];
  const add = (n: number | null | undefined, one: string, many: string): void => {
    if (n !== undefined && n !== null && n > 0) parts.push(`${n} ${n === 1 ? one : many}`);
  };
  add(u.Place, "to place", "to place");
  add(u.InPlaceUpdate, "in-place update", "in-place updates");
  add(u.DestructiveUpdate, "destructive update", "destructive updates");
  add(u.Canary, "canary", "canaries");
  add(u.Stop, "to stop", "to stop");
  add(u.Migrate, "to migrate", "to migrate");
  add(u.Preemptions, "preemption", "preemptions");
  add(u.RescheduleNow, "to reschedule now", "to reschedule now");
  add(u.RescheduleLater, "to reschedule later", "to reschedule later");
  add(u.Disconnect, "to disconnect", "to disconnect");
  add(u.Reconnect, "to reconnect", "to reconnect");
  add(u.Ignore, "unchanged", "unchanged");
  return parts.length > 0 ? parts.join(", ") : "no allocation changes";
}

function pushTask(lines: string[], mask: SecretMask, t: TaskDiff): void {
  if (!t.Type || t.Type === "None") return;
  const notes = (t.Annotations ?? []).length > 0 ? ` [${(t.Annotations ?? []).join(", ")}]` : "";
  lines.push(`      ${MARK[t.Type] ?? "~"} Task "${maskName(t.Name ?? "", mask)}" (${t.Type})${notes}`);
  pushFields(lines, mask, "          ", t.Fields, t.Objects);
}

function pushFields(
  lines: string[],
  mask: SecretMask,
  indent: string,
  fields: FieldDiff[] | null | undefined,
  objects: ObjectDiff[] | null | undefined,
  prefix = "",
): void {
  for (const f of fields ?? []) {
    if (!f.Type || f.Type === "None") continue;
    const name = prefix + (f.Name ?? "");
    const shownName = maskFieldName(name, mask);
    const notes = (f.Annotations ?? []).length > 0 ? ` (${(f.Annotations ?? []).join(", ")})` : "";
    const shown = (v: string | null | undefined): string => (masksField(mask, name, v ?? "") ? SECRET_SHOWN : quote(v));
    let text: string;
    if (f.Type === "Added") text = `${shownName}: ${shown(f.New)}`;
    else if (f.Type === "Deleted") text = `${shownName}: ${shown(f.Old)}`;
    else text = `${shownName}: ${shown(f.Old)} => ${shown(f.New)}`;
    lines.push(`${indent}${MARK[f.Type] ?? "~"} ${text}${notes}`);
  }
  for (const o of objects ?? []) {
    if (!o.Type || o.Type === "None") continue;
    pushFields(lines, mask, indent, o.Fields, o.Objects, `${prefix}${o.Name ?? ""}.`);
  }
}

function quote(v: string | null | undefined): string {
  return JSON.stringify(v ?? "");
}

function pushFailure(lines: string[], m: AllocMetric, mask: SecretMask): void {
  const n = (m.CoalescedFailures ?? 0) + 1;
  lines.push(`      ! Failed placement: ${count(n, "allocation")} could not be placed`);
  for (const reason of failureReasons(m, mask)) lines.push(`        - ${reason}`);
  const stats: string[] = [];
  if (m.NodesInPool !== undefined && m.NodesInPool !== null) stats.push(`${m.NodesInPool} in pool`);
  if (m.NodesEvaluated !== undefined && m.NodesEvaluated !== null) stats.push(`${m.NodesEvaluated} evaluated`);
  if (m.NodesFiltered !== undefined && m.NodesFiltered !== null) stats.push(`${m.NodesFiltered} filtered`);
  if (m.NodesExhausted !== undefined && m.NodesExhausted !== null) stats.push(`${m.NodesExhausted} exhausted`);
  if (stats.length > 0) lines.push(`        - nodes: ${stats.join(", ")}`);
}

/** The key under which the scheduler counts nodes of a node class it already found ineligible. */
const CLASS_INELIGIBLE = "computed class ineligible";

/**
 * Returns every reason the metrics of one group give, each on its own: no node evaluated, each
 * datacenter without available nodes, each node class and each constraint that filtered nodes, each
 * exhausted dimension and node class, and each quota hit. Sorted by name within each kind. With a secret
 * job, the constraints and datacenters (which come from it) show as `[secret]`.
 */
function failureReasons(m: AllocMetric, mask: SecretMask = NO_SECRETS): string[] {
  const out: string[] = [];
  const sorted = (rec: Record<string, number> | null | undefined): [string, number][] =>
    Object.entries(rec ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (m.NodesEvaluated === 0) out.push("no nodes were eligible for evaluation");
  for (const [dc, available] of sorted(m.NodesAvailable))
    if (available === 0)
      out.push(`no nodes are available in datacenter ${mask.everything ? SECRET_SHOWN : JSON.stringify(dc)}`);
  for (const [dim, nodes] of sorted(m.DimensionExhausted)) out.push(`${dim} exhausted on ${count(nodes, "node")}`);
  for (const [cls, nodes] of sorted(m.ClassExhausted))
    out.push(`node class ${JSON.stringify(cls)} exhausted on ${count(nodes, "node")}`);
  const constraints = sorted(m.ConstraintFiltered);
  const named = constraints.some(([c]) => c !== CLASS_INELIGIBLE);
  for (const [c, nodes] of constraints) {
    if (c !== CLASS_INELIGIBLE)
      out.push(`constraint ${mask.everything ? SECRET_SHOWN : c} filtered ${count(nodes, "node")}`);
    // Next to a named constraint, these are further nodes of a node class already found ineligible.
    else if (named) out.push(`${count(nodes, "more node")} of the same node class skipped (${CLASS_INELIGIBLE})`);
    // Alone (a class found ineligible earlier in the evaluation), the server names no constraint: say what it said.
    else out.push(`${count(nodes, "node")} filtered as "${CLASS_INELIGIBLE}", the server names no constraint`);
  }
  for (const [cls, nodes] of sorted(m.ClassFiltered))
    out.push(`node class ${JSON.stringify(cls)} filtered ${count(nodes, "node")}`);
  for (const q of m.QuotaExhausted ?? []) out.push(`quota exhausted: ${q}`);
  return out;
}

/** Returns "1 thing" or "n things". */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/** Returns a one-line summary of failed placements per group ("web: memory exhausted on 2 nodes"). */
export function summarizeFailedPlacements(
  failed: Record<string, AllocMetric> | null | undefined,
  mask: SecretMask = NO_SECRETS,
): string {
  const parts: string[] = [];
  for (const [group, m] of Object.entries(failed ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const n = (m.CoalescedFailures ?? 0) + 1;
    const why = failureReasons(m, mask);
    parts.push(
      `group "${maskName(group, mask)}": ${count(n, "allocation")} could not be placed${why.length > 0 ? ` (${why.join("; ")})` : ""}`,
    );
  }
  return parts.join("; ");
}

/*
 * Apply matches preview (input `allowPlanDrift`). The engine calls `diff` for a resource right before it
 * calls `update` on it, in the same provider process and the same `pulumi up`; `diff` plans the job and
 * shows that plan, and ./memo.ts remembers, per job and desired spec, what that plan said (destructive
 * updates and failed placements per group); `update` plans again right before its register and refuses
 * when the new plan has destructive updates or failed placements beyond what was shown.
 */

/** Returns the facts of a plan response. */
export function planFacts(plan: PlanResponse): PlanFacts {
  const destructive: Record<string, number> = {};
  for (const [group, u] of Object.entries(plan.Annotations?.DesiredTGUpdates ?? {})) {
    const n = u?.DestructiveUpdate ?? 0;
    if (n > 0) destructive[group] = n;
  }
  const failed: Record<string, number> = {};
  for (const [group, m] of Object.entries(plan.FailedTGAllocs ?? {})) failed[group] = (m.CoalescedFailures ?? 0) + 1;
  return { destructive, failed, failedSummary: summarizeFailedPlacements(plan.FailedTGAllocs) };
}

/** What `diff` showed: the facts of the plan it showed, or that it could not plan. */
export function shownPlan(plan: { value: PlanResponse; text: string } | undefined): ShownPlan {
  return plan === undefined ? { planned: false } : { planned: true, facts: planFacts(plan.value), text: plan.text };
}

/** Lists what `now` has beyond `before` (destructive updates, failed placements); empty when nothing. */
export function planDrift(before: ShownPlan | undefined, now: PlanFacts): string[] {
  const base: PlanFacts = before?.planned === true ? before.facts : { destructive: {}, failed: {}, failedSummary: "" };
  const out: string[] = [];
  for (const [group, n] of Object.entries(now.destructive).sort(([a], [b]) => a.localeCompare(b))) {
    const was = base.destructive[group] ?? 0;
    if (n > was) out.push(`group "${group}": ${n} destructive update${n === 1 ? "" : "s"} (the preview showed ${was})`);
  }
  for (const [group, n] of Object.entries(now.failed).sort(([a], [b]) => a.localeCompare(b))) {
    const was = base.failed[group] ?? 0;
    if (n > was)
      out.push(
        `group "${group}": ${n} allocation${n === 1 ? "" : "s"} that cannot be placed (the preview showed ${was})`,
      );
  }
  return out;
}

/** Describes what the preview showed, for the refusal message. */
export function describeShown(before: ShownPlan | undefined): string {
  if (before === undefined) return "this `up` showed no scheduler plan for this spec";
  if (!before.planned)
    return "this `up` could not plan the job, so its preview showed no destructive update or failed placement";
  const d = Object.entries(before.facts.destructive).map(([g, n]) => `group "${g}": ${n} destructive`);
  const parts = [...d, ...(before.facts.failedSummary !== "" ? [before.facts.failedSummary] : [])];
  return `the preview's plan showed ${parts.length > 0 ? parts.join("; ") : "no destructive update and no failed placement"}`;
}
