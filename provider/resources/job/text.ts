/**
 * The text a Job shows, as pure functions: the preview of a plan (what the scheduler says it would do with
 * the desired job, as lines a person reads in `pulumi preview`; shown through ../../log.ts), the error texts (a failed deployment, a refused check-and-set, an existing job, a
 * refused replacement), the notes, and the facts of a plan that apply compares with what the preview showed.
 */
import type {
  AllocMetric,
  DeploymentGroupState,
  DesiredUpdates,
  FieldDiff,
  JobDiff,
  ObjectDiff,
  PlanResponse,
  TaskDiff,
} from "../../schemas/scheduler";
import { SECRET_SHOWN, maskFieldName, maskName, maskText, masksField } from "./mask-text";
import { NO_SECRETS, type SecretMask } from "./secrets";
import type { Preserve } from "./inputs";
import type { PlanFacts, ShownPlan } from "./memo";
import type { ReplaceReason } from "./spec";

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

/** Returns the counts of what the scheduler would do to one group, in words ("1 to place, 2 in-place updates"). */
export function describeUpdates(u: DesiredUpdates | undefined): string {
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
export function failureReasons(m: AllocMetric, mask: SecretMask = NO_SECRETS): string[] {
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
 * The Job resource's error texts, as pure functions: a failed deployment (with what was rolled back and
 * what runs now), a refused check-and-set, an existing job, a refused replacement.
 */

/** What happened after a rollout failed. */
export type Rollback =
  /** The server's auto_revert registered version `toVersion` again, as `newVersion`. */
  | { kind: "auto"; toVersion: number; newVersion?: number; deploymentId?: string; deploymentStatus?: string }
  /** This provider reverted to the version that ran before the update (or to the one carrying version tag `tag`). */
  | {
      kind: "pulumi";
      toVersion: number;
      tag?: string;
      newVersion?: number;
      deploymentId?: string;
      deploymentStatus?: string;
    }
  /** A revert was wanted but the server refused it (usually: someone else changed the job meanwhile), or the tag was not found. */
  | { kind: "refused"; toVersion?: number; tag?: string; reason: string }
  /** Nothing was rolled back. */
  | { kind: "none"; reason: "fail-mode" | "no-prior-version" | "timeout" | "server-declined"; detail?: string };

/** Facts of a failed rollout, for {@link formatRolloutFailure}. */
export interface RolloutFailure {
  jobId: string;
  namespace: string;
  /** The version that failed to roll out. */
  failedVersion?: number;
  deploymentId?: string;
  deploymentStatus?: string;
  statusDescription?: string;
  groups?: Record<string, DeploymentGroupState> | null;
  /** Placement failures of the evaluation (when the scheduler could not place the new allocations). */
  evalId?: string;
  placementFailure?: string;
  timedOutAfterMs?: number;
  /** Status of the evaluation last seen, when the wait timed out before a deployment was known. */
  evaluationStatus?: string;
  rollback: Rollback;
  /** Version the job is on now (after any rollback). */
  runningVersion?: number;
}

/** Returns the message of a failed rollout: the deployment, its description, the failed groups, the rollback, the running version. */
export function formatRolloutFailure(f: RolloutFailure): string {
  const job = `job "${f.jobId}" in namespace "${f.namespace}"`;
  const version = f.failedVersion !== undefined ? ` version ${f.failedVersion}` : "";
  const parts: string[] = [];
  if (f.timedOutAfterMs !== undefined) {
    const what = f.deploymentId ? `deployment ${f.deploymentId}` : `evaluation ${f.evalId ?? "(none)"}`;
    const state = f.deploymentStatus
      ? ` (status ${f.deploymentStatus}${f.statusDescription ? `: ${f.statusDescription}` : ""})`
      : "";
    parts.push(`Timed out after ${formatMs(f.timedOutAfterMs)} waiting for ${what} of ${job}${version}${state}.`);
  } else if (f.placementFailure !== undefined) {
    parts.push(
      `The scheduler could not place ${version !== "" ? `${version.trim()} of ` : ""}${job} (evaluation ${f.evalId ?? "(none)"}` +
        `${f.deploymentId ? `, deployment ${f.deploymentId}` : ""}): ${f.placementFailure}.`,
    );
  } else {
    parts.push(
      `Deployment ${f.deploymentId ?? "(none)"} of ${job}${version} ${f.deploymentStatus ?? "failed"}: ` +
        `${f.statusDescription && f.statusDescription !== "" ? f.statusDescription : "no description"}.`,
    );
  }
  if (f.timedOutAfterMs !== undefined) {
    // Nothing failed: say what had not finished yet.
    parts.push(inProgressSentence(f));
  } else {
    const groups = failedGroups(f.groups);
    if (groups !== "") parts.push(`Failed groups: ${groups}.`);
  }
  parts.push(rollbackSentence(f.rollback));
  if (f.runningVersion !== undefined) parts.push(`Version now running: ${f.runningVersion}.`);
  parts.push("State records what the scheduler runs now, so the next preview shows the change again.");
  return parts.join(" ");
}

function rollbackSentence(r: Rollback): string {
  switch (r.kind) {
    case "auto":
      return (
        `The scheduler's auto_revert rolled the job back to version ${r.toVersion}` +
        `${r.newVersion !== undefined ? ` (now registered as version ${r.newVersion})` : ""}` +
        `${r.deploymentId ? `; rollback deployment ${r.deploymentId} is ${r.deploymentStatus ?? "unknown"}` : ""}.`
      );
    case "pulumi":
      return (
        `Pulumi reverted the job to version ${r.toVersion}${r.tag !== undefined ? `, tagged "${r.tag}"` : ""}` +
        `${r.newVersion !== undefined ? ` (now registered as version ${r.newVersion})` : ""}` +
        `${r.deploymentId ? `; revert deployment ${r.deploymentId} is ${r.deploymentStatus ?? "unknown"}` : ""}.`
      );
    case "refused":
      return `Pulumi did not revert to ${r.tag !== undefined ? `the version tagged "${r.tag}"` : `version ${r.toVersion ?? "?"}`}: ${r.reason}.`;
    case "none":
      switch (r.reason) {
        case "fail-mode":
          return 'The job was left on the failed version (onDeploymentFailure is "fail").';
        case "no-prior-version":
          return "There is no earlier version to revert to.";
        case "timeout":
          return "Nothing was rolled back.";
        case "server-declined":
          return `The scheduler did not roll back${r.detail ? ` (${r.detail})` : ""}.`;
      }
  }
  return "";
}

/** Lists the groups of a deployment that did not become healthy, with their counts. */
export function failedGroups(groups: Record<string, DeploymentGroupState> | null | undefined): string {
  const out: string[] = [];
  for (const [name, g] of Object.entries(groups ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const unhealthy = g.UnhealthyAllocs ?? 0;
    const healthy = g.HealthyAllocs ?? 0;
    const desired = g.DesiredTotal ?? 0;
    if (unhealthy > 0 || healthy < desired) {
      out.push(
        `"${name}" (${unhealthy} unhealthy, ${healthy} healthy of ${desired} desired, ${count(g.PlacedAllocs ?? 0, "placed allocation")})`,
      );
    }
  }
  return out.join(", ");
}

/** Says what was still in progress when a wait timed out: the groups not yet healthy, or the evaluation. */
function inProgressSentence(f: RolloutFailure): string {
  if (f.deploymentId === undefined) {
    return `No deployment had started yet${f.evaluationStatus ? ` (the evaluation was ${f.evaluationStatus})` : ""}.`;
  }
  const pending = inProgressGroups(f.groups);
  if (pending !== "") return `Still in progress: ${pending}.`;
  return "Every group had all its allocations healthy; the deployment had not been marked successful yet.";
}

/** Lists the groups of a running deployment that are not yet complete, with their progress. */
export function inProgressGroups(groups: Record<string, DeploymentGroupState> | null | undefined): string {
  const out: string[] = [];
  for (const [name, g] of Object.entries(groups ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const healthy = g.HealthyAllocs ?? 0;
    const desired = g.DesiredTotal ?? 0;
    const canaries = g.DesiredCanaries ?? 0;
    const awaitingPromotion = canaries > 0 && g.Promoted !== true;
    if (healthy >= desired && !awaitingPromotion) continue;
    const facts = [`${healthy} of ${desired} healthy`, count(g.PlacedAllocs ?? 0, "placed allocation")];
    if ((g.UnhealthyAllocs ?? 0) > 0) facts.push(`${g.UnhealthyAllocs ?? 0} unhealthy`);
    if (awaitingPromotion) facts.push(`${g.PlacedCanaries?.length ?? 0} of ${canaries} canaries placed, not promoted`);
    out.push(`"${name}" (${facts.join(", ")})`);
  }
  return out.join(", ");
}

/** Returns the auto_revert target of a failed deployment's description, when the server rolled back. */
export function autoRevertTarget(description: string | null | undefined): number | undefined {
  const m = / - rolling back to job version (\d+)\s*$/.exec(description ?? "");
  return m ? Number(m[1]) : undefined;
}

/** Returns the message of an update refused by check-and-set. */
export function changedOutsideMessage(
  jobId: string,
  namespace: string,
  stateIndex: number | undefined,
  detail: string,
): string {
  return (
    `Job "${jobId}" in namespace "${namespace}" was changed outside Pulumi: its JobModifyIndex is no longer ` +
    `${stateIndex ?? "the one in state"} (${detail}). Run \`pulumi refresh\` to see the change, then \`pulumi up\` again.`
  );
}

/** Returns the message of a create that found a live job with the same ID. */
export function alreadyExistsMessage(jobId: string, namespace: string): string {
  return (
    `Job "${jobId}" already exists in namespace "${namespace}" and is not managed by this stack; it was left untouched. ` +
    "Set `adopt: true` to take it over, or choose another job ID."
  );
}

/** Returns the message of an update that would need a replacement (decided at preview; seen here only if state is stale). */
export function replaceNeededMessage(jobId: string, reasons: ReplaceReason[]): string {
  const what = reasons.map((r) => `${r.field} "${r.old}" -> "${r.new}"`).join(", ");
  return `Job "${jobId}" cannot be updated in place (${what}); run \`pulumi preview\` again so the job is replaced.`;
}

function formatMs(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
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

/** The note shown when an update goes on over a job that was only scaled outside Pulumi. */
export function scaledNote(jobId: string, how: Preserve, from: { stateIndex: number; serverIndex: number }): string {
  const what = how.counts && how.resources ? "counts and task resources" : how.counts ? "counts" : "task resources";
  return (
    `Job "${jobId}" was scaled outside Pulumi (JobModifyIndex ${from.stateIndex} -> ${from.serverIndex}); only its ${what} changed, ` +
    `which preserve${how.counts && how.resources ? "Counts/preserveResources keep" : how.counts ? "Counts keeps" : "Resources keeps"}: the update keeps them and registers on index ${from.serverIndex}.`
  );
}
