/**
 * What a Job's provider keeps in memory between calls, all of it here: memory of this provider process
 * only (never in state, never serialized, nothing of it printed), each memo bounded, the oldest entry
 * dropped first.
 *
 * - Parse results `check` got, each waiting for the one `diff`, `create` or `update` of the same resource
 *   the engine runs right after it in this process: that call takes the result instead of sending the same
 *   parse again (at preview, one parse per Job instead of two). Keyed by a SHA-256 of the exact request:
 *   where it goes (origin, base path, token, namespace, region) and what it sends (jobspec text, variables,
 *   canonicalize), so a different input or connection never gets another's result. A result is taken once;
 *   failures are never kept.
 * - What `diff` showed for a job (the plan's facts, see ./text.ts), for `update` to compare the plan right
 *   before its register with: per job, with the SHA-256 of the desired spec's normal form; only counts,
 *   group names and the shown text are kept.
 */
import { createHash } from "node:crypto";
import type { ParseJobRequest, SchedulerClient } from "../../clients/scheduler";
import type { Job } from "../../schemas/scheduler";
import { canonicalJson } from "../common";

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

/** The job a shown plan is remembered for. */
interface JobAddress {
  namespace: string;
  region: string;
  jobId: string;
}

/** A map that keeps at most `limit` entries, dropping the oldest. */
class BoundedMemo<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly limit: number) {}

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Returns the entry and forgets it. */
  take(key: string): V | undefined {
    const v = this.entries.get(key);
    this.entries.delete(key);
    return v;
  }

  /** Sets the entry as the newest one. */
  set(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value as string);
  }
}

const parsed = new BoundedMemo<Job>(64);

/** The key of a parse request (see above). */
export function parseKey(client: SchedulerClient, body: ParseJobRequest, opts: { namespace?: string }): string {
  const c = client.core.connection;
  const where = [c.origin, c.basePath, c.anonymous ? null : (c.token ?? null), c.namespace ?? null, c.region ?? null];
  return createHash("sha256")
    .update(canonicalJson({ where, namespace: opts.namespace ?? null, body }))
    .digest("hex");
}

/** Takes the parse result kept for `key`, once. */
export function takeParsed(key: string): Job | undefined {
  return parsed.take(key);
}

/** Keeps a copy of a parse result for the next call with the same request. */
export function keepParsed(key: string, job: Job): void {
  parsed.set(key, structuredClone(job));
}

const shown = new BoundedMemo<{ spec: string; plan: ShownPlan }>(1000);

function jobKey(ref: JobAddress): string {
  return JSON.stringify([ref.namespace, ref.region, ref.jobId]);
}

function specKey(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Remembers what `diff` showed for `ref` with desired spec `specText` (see ./text.ts shownPlan). */
export function rememberShownPlan(ref: JobAddress, specText: string, plan: ShownPlan): void {
  shown.set(jobKey(ref), { spec: specKey(specText), plan });
}

/** What `diff` showed for `ref` with exactly this desired spec; undefined when it showed nothing for it. */
export function shownPlanOf(ref: JobAddress, specText: string): ShownPlan | undefined {
  const entry = shown.get(jobKey(ref));
  return entry !== undefined && entry.spec === specKey(specText) ? entry.plan : undefined;
}
