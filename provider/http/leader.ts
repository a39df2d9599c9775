/**
 * Leader changes: which answers mean a cluster is electing a leader (and whether a write was applied), a
 * standby's redirect and when it is followed to the active node the cluster names, and the hints and
 * progress lines that say so.
 */
import type { Dispatcher } from "undici";
import { ApiError, type ServiceName } from "../errors";
import { show } from "../log";
import { LeaderStatusSchema } from "../schemas/leader";
import { PARSE_OPTIONS } from "../schemas/parse-options";
import { SERVICE_LABEL, type Failed, type PreparedCall, type Redirect } from "./call";
import { undiciParts } from "./pools";
import type { Method } from "./request";
import { repeatsOnLeaderChange, type LeaderChange, type Safety } from "./retry";
import type { ResolvedConnection } from "./settings";

/**
 * Answers a leader change produces, and whether the server acted. The scheduler (Nomad 1.6.5, nomad/rpc.go
 * and helper/pool): `No cluster leader` once a server has held a request for its RPC hold time without a
 * leader, `Not ready to serve consistent reads` from a new leader, `rpc error: failed to get conn: dial tcp
 * ...: connect: connection refused` when the RPC forwarded to the old leader could not connect, raft's `node
 * is not the leader` and `leadership transfer in progress`: none of them applied anything. `rpc error: ...EOF`
 * and raft's `leadership lost while committing log` lost the answer of an RPC the old leader received.
 * The secrets service (OpenBao 2.6.2, http/handler.go): 503 `no active Vault instance found` and 500 `local
 * node not active but active cluster node not found` while no node is active. A sealed node (503 `Vault is
 * sealed`) waits for an operator, not an election: it keeps the ordinary bounded retries.
 */
const LEADER_NOT_APPLIED: Record<ServiceName, RegExp> = {
  scheduler:
    /no cluster leader|not ready to serve consistent reads|rpc error: failed to get conn|node is not the leader|leadership transfer in progress/i,
  secrets: /local node not active but active cluster node not found|no active vault instance|node is not active/i,
};
const LEADER_MAYBE_APPLIED: Record<ServiceName, RegExp> = {
  scheduler: /rpc error:.*\bEOF\b|leadership lost while committing log|raft is already shutdown/i,
  secrets: /(?!)/,
};

/** What a failed answer says about a leader change (see LEADER_NOT_APPLIED), or undefined for none. */
export function leaderChangeOf(service: ServiceName, status: number, messages: string[]): LeaderChange | undefined {
  if (status !== 500 && status !== 503) return undefined;
  if (messages.some((m) => LEADER_NOT_APPLIED[service].test(m))) return "not-applied";
  if (status === 500 && messages.some((m) => LEADER_MAYBE_APPLIED[service].test(m))) return "maybe-applied";
  return undefined;
}

/**
 * Tells whether a failed call met a leader change (see leaderChangeOf) or a standby's redirect: a caller
 * that reads before sending an unguarded write again keeps doing so within the time budget, not a count.
 */
export function isLeaderChange(e: unknown): boolean {
  if (!ApiError.is(e) || e.status === undefined) return false;
  if (e.status === 307 || e.status === 308) return true;
  return leaderChangeOf(e.service, e.status, e.serverErrors) !== undefined;
}

/** What the server is doing, in words, for progress lines and hints. */
function leaderWords(service: ServiceName): string {
  return service === "scheduler" ? "is electing a leader" : "has no active node (a new one is taking over)";
}

/** The hint of a leader-change answer: what happened and, for a write, whether it was applied. */
export function leaderHint(service: ServiceName, leader: LeaderChange, safety: Safety, method: Method): string {
  const who = `the ${SERVICE_LABEL[service]} ${leaderWords(service)}`;
  if (method === "GET" || method === "HEAD") return `${who}; the read can be made again once it has one`;
  if (leader === "not-applied") return `${who}; the write was not applied`;
  return repeatsOnLeaderChange(leader, safety)
    ? `${who}; the write reached the old leader, whose answer was lost with it`
    : `${who}; the write reached the old leader, whose answer was lost with it: it may or may not have been applied`;
}

/** The hint of a standby's redirect that was not followed. */
export function redirectHint(service: ServiceName, redirect: Redirect): string {
  return (
    `a standby node of the ${SERVICE_LABEL[service]} redirected the request to ${redirect.origin}` +
    (redirect.own
      ? ""
      : ", which is not the configured address: it was not followed (the token goes only to the configured address, " +
        "and to an active node the cluster itself names when the request may be sent again)") +
    "; the active node may have changed, so a write may or may not have been applied"
  );
}

/** The hint when a leader change outlasted the retries' time budget. */
export function leaderBudgetHint(c: ResolvedConnection, elapsedMs: number): string {
  const since =
    c.service === "scheduler"
      ? "since the first such answer"
      : "since the first such answer or the last new active node";
  return (
    `the ${SERVICE_LABEL[c.service]} at ${c.origin} ${leaderWords(c.service)}, and no node took the request in the ` +
    `${seconds(elapsedMs)} ${since} (the retries' time budget is ${seconds(c.retry.maxTotalMs)}: retry.maxTotalMs); ` +
    "check the cluster's servers, then run the command again"
  );
}

/** Milliseconds as seconds for a message ("0.4 s", "60 s"). */
function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(ms < 10_000 ? 1 : 0))} s`;
}

/** When each connection last printed a leader-change progress line (one every few seconds at most). */
const leaderLines = new Map<string, number>();
const LEADER_LINE_EVERY_MS = 5_000;

/** Prints that the server is electing a leader and the call waits for it (throttled per service and address). */
export function leaderProgress(c: ResolvedConnection, failed: Failed, remainingMs: number): void {
  const key = `${c.service} ${c.origin}`;
  const now = Date.now();
  const last = leaderLines.get(key);
  if (last !== undefined && now - last < LEADER_LINE_EVERY_MS) return;
  leaderLines.set(key, now);
  const e = failed.error;
  // No status: the active node a standby named gave no answer (the only leader change without one).
  const said =
    failed.redirect !== undefined
      ? "a standby redirected the request"
      : (e.serverErrors[0] ?? (e.status !== undefined ? String(e.status) : (e.hint ?? "no answer")));
  void show(
    `The ${SERVICE_LABEL[c.service]} at ${c.origin} ${leaderWords(c.service)} (${e.method} ${e.path}: ${said}); ` +
      `waiting for it, for up to ${seconds(remainingMs)} more.`,
  );
}

/** Redirects followed in a row (to the configured address or the named active node) before backing off. */
export const MAX_FOLLOWED_REDIRECTS = 3;

/**
 * Where a 307 or 308 points: `own` when it names this connection's own origin and the same path (a
 * standby sending the request back through the configured address, which a balancer routes to a live
 * node); any other origin is not followed and never gets the token.
 */
export function redirectOf<T>(c: ResolvedConnection, call: PreparedCall<T>, location: string | undefined): Redirect {
  if (location === undefined || location === "") return { own: false, samePath: false, origin: "(no Location)" };
  let target: URL;
  try {
    target = new URL(location, c.origin);
  } catch {
    return { own: false, samePath: false, origin: "(an unreadable Location)" };
  }
  const samePath = target.pathname + target.search === call.path;
  return { own: samePath && target.origin === c.origin, samePath, origin: target.origin };
}

/**
 * The active node to send the request to after a standby redirected it elsewhere than the configured
 * address, or undefined to go on through the configured address. The token goes to another origin only
 * when the cluster, asked through the configured address (`GET /v1/sys/leader`, no token sent), names
 * that origin as its active node, over the same scheme or https, for the request's own path, and the node
 * was not already found unreachable in this call. When the node the cluster names changes within one
 * call, an election has ended: the leader change's budget and backoff start again from there.
 */
export async function followTarget<T>(
  c: ResolvedConnection,
  pool: Dispatcher,
  call: PreparedCall<T>,
  redirect: Redirect,
): Promise<string | undefined> {
  const active = await namedActiveNode(c, pool, call);
  if (active === undefined) return undefined;
  if (call.namedActive !== undefined && call.namedActive !== active) {
    call.leaderSince = Date.now();
    call.failures.leader = 0;
  }
  call.namedActive = active;
  const scheme = new URL(active).protocol;
  const follow =
    redirect.samePath &&
    redirect.origin === active &&
    !call.unreachable.has(active) &&
    (scheme === "https:" || scheme === new URL(c.origin).protocol);
  return follow ? active : undefined;
}

/**
 * The asks of `GET /v1/sys/leader` on the way, per connection pool and base path: calls a standby redirects at
 * the same time (the resources of one command, during one election) share one ask. An answer is shared only
 * while it is on the way, never kept: a later redirect asks again.
 */
const leaderAsks = new WeakMap<Dispatcher, Map<string, Promise<string | undefined>>>();

/** The origin of the active node the secrets service names at its configured address, if it names one. */
function namedActiveNode<T>(
  c: ResolvedConnection,
  pool: Dispatcher,
  call: PreparedCall<T>,
): Promise<string | undefined> {
  const signal = call.opts.signal;
  if (signal?.aborted === true) return Promise.resolve(undefined);
  let asks = leaderAsks.get(pool);
  if (asks === undefined) leaderAsks.set(pool, (asks = new Map()));
  const onTheWay = asks;
  let ask = onTheWay.get(c.basePath);
  if (ask === undefined) {
    ask = askLeader(c, pool).finally(() => onTheWay.delete(c.basePath));
    onTheWay.set(c.basePath, ask);
  }
  if (signal === undefined) return ask;
  // This call's abort ends its own wait, not the ask the others share.
  const shared = ask;
  return new Promise((resolve) => {
    const stop = () => resolve(undefined);
    signal.addEventListener("abort", stop, { once: true });
    void shared.then(resolve).finally(() => signal.removeEventListener("abort", stop));
  });
}

/** Asks the configured address which node is active (no token sent); undefined when it names none. */
async function askLeader(c: ResolvedConnection, pool: Dispatcher): Promise<string | undefined> {
  try {
    const res = await undiciParts().request.call(pool, {
      path: c.basePath + "/v1/sys/leader",
      method: "GET",
      headers: { accept: "application/json" },
      signal: AbortSignal.timeout(c.timeoutMs),
      reset: true,
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) return undefined;
    const parsed = LeaderStatusSchema.safeParse(JSON.parse(text), PARSE_OPTIONS);
    const address = parsed.success ? parsed.data.leader_address : undefined;
    return address === undefined || address === "" ? undefined : new URL(address).origin;
  } catch {
    return undefined;
  }
}
