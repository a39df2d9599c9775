/**
 * The retry policy: pure functions, so the decisions can be tested with a table.
 * Exponential backoff with full jitter, `Retry-After` honoured, bounded attempts and total time.
 */

/** How many times and how long the core retries. */
export interface RetryPolicy {
  /** Attempts in all, the first one included; 1 disables retries. */
  maxAttempts: number;
  /** Backoff base in ms: attempt n waits a random time in [0, min(maxDelayMs, baseDelayMs * 2^(n-1))]. */
  baseDelayMs: number;
  /** Cap of one backoff wait, and of a server's `Retry-After`. */
  maxDelayMs: number;
  /** No retry starts once this much time has passed since the first attempt. */
  maxTotalMs: number;
  /** Statuses that may be retried (safe requests only; 500 only where the service says it is transient). */
  retryStatuses: readonly number[];
}

/** The defaults: 4 attempts, 250 ms base, 10 s cap, 60 s in all; 412, 429, 500, 502, 503, 504. */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxTotalMs: 60_000,
  retryStatuses: Object.freeze([412, 429, 500, 502, 503, 504]),
});

/**
 * What an answer says about a leader change in a cluster: `not-applied` when the server refused before
 * acting (no leader yet, the leader not reachable from the node that answered, no active node);
 * `maybe-applied` when the request reached the old leader and its answer was lost with it.
 */
export type LeaderChange = "not-applied" | "maybe-applied";

/**
 * How safe a request is to send again, as its call site knows it: `idempotent` (repeating it changes
 * nothing more: reads, full-state writes, deletes), `check-and-set` (a repeat cannot apply twice: the
 * server refuses it once the object moved) or `unguarded` (neither; never repeated without reading first).
 */
export type Safety = "idempotent" | "check-and-set" | "unguarded";

/** What happened on one attempt. */
export type Outcome =
  | { kind: "status"; status: number; retryAfterMs?: number; transient500?: boolean; leader?: LeaderChange }
  | {
      kind: "network";
      code: string;
      beforeSend: boolean;
      /** Set when the attempt went to the node a cluster named as its active one and could not reach it. */
      leader?: LeaderChange;
    };

/** Error codes of failures that happen before a request reaches the server, so any request may repeat. */
const CONNECT_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** Tells whether a network failure with this code happened before the request was sent. */
export function isBeforeSend(code: string): boolean {
  return CONNECT_CODES.has(code);
}

/** Exponential backoff with full jitter: a random wait below base × 2^(failures − 1), capped at the maximum. */
export function jitteredDelay(
  policy: { baseDelayMs: number; maxDelayMs: number },
  failures: number,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (failures - 1)));
}

/**
 * Returns how long to wait before the next attempt, or `undefined` to stop.
 * `failures` counts the failed attempts so far (1 after the first). `idempotent` requests may repeat after
 * any retryable outcome; others only when the server cannot have acted (connection not made, 429, 412).
 * A leader change is not bounded by `maxAttempts` (an election outlasts a few quick attempts): the caller
 * bounds it by the time budget; it repeats reads and idempotent writes, a check-and-set write only when the
 * server did not act on it, and never an unguarded write (the caller reads first).
 */
export function retryDelay(
  policy: RetryPolicy,
  failures: number,
  outcome: Outcome,
  safety: boolean | Safety,
  random: () => number = Math.random,
): number | undefined {
  const safe: Safety = safety === true ? "idempotent" : safety === false ? "unguarded" : safety;
  if (outcome.leader !== undefined) {
    if (!repeatsOnLeaderChange(outcome.leader, safe)) return undefined;
    return leaderChangeDelay(policy, failures, outcome.kind === "status" ? outcome.retryAfterMs : undefined, random);
  }
  const idempotent = safe === "idempotent";
  if (failures >= policy.maxAttempts) return undefined;
  if (!isRetryable(policy, outcome, idempotent)) return undefined;
  const jittered = jitteredDelay(policy, failures, random);
  if (outcome.kind === "status" && outcome.retryAfterMs !== undefined) {
    return Math.min(policy.maxDelayMs, Math.max(outcome.retryAfterMs, jittered));
  }
  return jittered;
}

/** Tells whether a request of this safety may be sent again after this kind of leader-change answer. */
export function repeatsOnLeaderChange(leader: LeaderChange, safety: Safety): boolean {
  if (safety === "idempotent") return true;
  return safety === "check-and-set" && leader === "not-applied";
}

/**
 * The wait before the next attempt through a leader change: a random time in the upper half of the
 * backoff ceiling, so the waits keep growing through an election instead of hammering the cluster, and at
 * least the server's `Retry-After`; capped at `maxDelayMs`.
 */
function leaderChangeDelay(
  policy: RetryPolicy,
  failures: number,
  retryAfterMs: number | undefined,
  random: () => number,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (Math.min(failures, 30) - 1));
  const wait = Math.floor(ceiling / 2 + (random() * ceiling) / 2);
  return Math.min(policy.maxDelayMs, Math.max(retryAfterMs ?? 0, wait));
}

function isRetryable(policy: RetryPolicy, outcome: Outcome, idempotent: boolean): boolean {
  if (outcome.kind === "network") return outcome.beforeSend || idempotent;
  const s = outcome.status;
  if (!policy.retryStatuses.includes(s)) return false;
  // 429 and 412 mean the server did not act on the request, so even a write may repeat.
  if (s === 429 || s === 412) return true;
  if (!idempotent) return false;
  // A 500 is also how both services report deterministic failures (validation, check-and-set), so it is
  // retried only when the service's classifier called it transient.
  if (s === 500) return outcome.transient500 === true;
  return true;
}

/** Parses a `Retry-After` value (seconds or an HTTP date) into ms from `now`; undefined when absent or bad. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === "") return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
