/**
 * Apply matches preview (input `allowPlanDrift`). The engine calls `diff` for a resource right before it
 * calls `update` on it, in the same provider process and the same `pulumi up`; `diff` plans the job and
 * shows that plan. This module remembers, per job and desired spec, what that plan said (destructive
 * updates and failed placements per group); `update` plans again right before its register and refuses
 * when the new plan has destructive updates or failed placements beyond what was shown.
 *
 * Memory only, in the provider host (never in state, never serialized): a spec is keyed by a SHA-256 of its
 * normal form, and only counts and group names are kept.
 */
import { createHash } from "node:crypto";
import type { PlanResponse } from "../../schemas/scheduler";
import { summarizeFailedPlacements } from "./text";
import type { JobRef } from "./follow";

/** What a plan says that apply must not exceed: destructive updates and failed placements per group. */
export interface PlanFacts {
  /** Destructive updates per group (groups with none left out). */
  destructive: Record<string, number>;
  /** Allocations that could not be placed, per group. */
  failed: Record<string, number>;
  /** One-line summary of the failed placements ("" when none). */
  failedSummary: string;
}

/** What `diff` showed for one job and desired spec: the plan's facts, or that it could not plan. */
export type ShownPlan = { planned: true; facts: PlanFacts; text: string } | { planned: false };

const LIMIT = 1000;
const shown = new Map<string, { spec: string; plan: ShownPlan }>();

function jobKey(ref: JobRef): string {
  return JSON.stringify([ref.namespace, ref.region, ref.jobId]);
}

function specKey(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

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

/** Remembers what `diff` showed for `ref` with desired spec `specText` (a plan, or none when planning failed). */
export function rememberShownPlan(
  ref: JobRef,
  specText: string,
  plan: { value: PlanResponse; text: string } | undefined,
): void {
  const key = jobKey(ref);
  shown.delete(key);
  shown.set(key, {
    spec: specKey(specText),
    plan: plan === undefined ? { planned: false } : { planned: true, facts: planFacts(plan.value), text: plan.text },
  });
  while (shown.size > LIMIT) shown.delete(shown.keys().next().value as string);
}

/** What `diff` showed for `ref` with exactly this desired spec; undefined when it showed nothing for it. */
export function shownPlanOf(ref: JobRef, specText: string): ShownPlan | undefined {
  const entry = shown.get(jobKey(ref));
  return entry !== undefined && entry.spec === specKey(specText) ? entry.plan : undefined;
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
