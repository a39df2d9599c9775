/**
 * The one HTTP core behind both clients: an undici keep-alive pool per origin, timeouts, cancellation,
 * retries, TLS, header names, error mapping and secret redaction all live here once.
 */
import { createHash } from "node:crypto";
import type { Dispatcher, Pool } from "undici";
import { z } from "zod";
import { ApiError, ConfigError, type ApiErrorCode, type ApiErrorFields, type ServiceName } from "../errors";
import { redact } from "./redact";
import {
  isBeforeSend,
  parseRetryAfter,
  repeatsOnLeaderChange,
  retryDelay,
  type LeaderChange,
  type Outcome,
  type Safety,
} from "./retry";
import {
  certificateHint,
  invalidRequestHint,
  isCertificateFailure,
  lostAfterSendHint,
  permissionHint,
  timeoutHint,
  transportHint,
} from "./hints";
import {
  howToSet,
  resolveConnection,
  settingSource,
  type ConnectionOptions,
  type ResolvedConnection,
} from "./settings";
import { show, warnOnce } from "../log";
import { isLocalhostName, isLoopbackHost, loopbackLookup } from "./loopback";
import { PARSE_OPTIONS } from "../schemas/parse-options";

/** An HTTP method the services use. */
export type Method = "GET" | "POST" | "PUT" | "DELETE" | "HEAD";

/** A query value; `undefined` and `null` are left out, booleans and numbers are written as text. */
export type QueryValue = string | number | boolean | undefined | null;

/** One call through the core. */
export interface RequestOptions<T> {
  /** What the caller was doing, in words ("register job"); it starts every error message. */
  operation: string;
  method: Method;
  /** Path under the address, each dynamic segment already encoded (use {@link encodePath}). */
  path: string;
  query?: Record<string, QueryValue>;
  /** JSON body. */
  body?: unknown;
  /** Raw body, sent as is (dispatch payloads). */
  rawBody?: Uint8Array | string;
  contentType?: string;
  headers?: Record<string, string>;
  /** Schema of the response body; without it the body is returned as `unknown` JSON. */
  schema?: z.ZodType<T>;
  /** Send the token (default true). Login calls set false. */
  auth?: boolean;
  /**
   * Safe to repeat after an ambiguous failure (repeating it changes nothing more). Defaults to true for GET
   * and HEAD only: every write says so at its call site, where what it sends is known.
   */
  idempotent?: boolean;
  /**
   * The write carries a check-and-set guard (EnforceIndex with the JobModifyIndex it expects): a repeat
   * cannot apply twice, so it is sent again after an answer that says the server did not act on it (no
   * cluster leader), never after one whose outcome is unknown.
   */
  checkAndSet?: boolean;
  /** More strings to keep out of every error (client secrets, JWTs in the body). */
  secrets?: ReadonlyArray<string | undefined>;
  signal?: AbortSignal;
  /** Added to the attempt timeout (a blocking query's wait). */
  extraTimeoutMs?: number;
  /**
   * The request may change what the server holds (default: any method but GET and HEAD); a plan or a
   * parse sets false. Such a request moves {@link HttpCore.writes}, so kept reads know they may be stale.
   */
  mutates?: boolean;
}

/** Facts about a response, read from its status and headers. */
export interface ResponseMeta {
  status: number;
  /** Blocking-query index (header `index` of the header names). */
  lastIndex?: number;
  knownLeader?: boolean;
  lastContact?: number;
  /** Paging continuation token. */
  nextToken?: string;
  attempts: number;
  requestMs: number;
}

/** A parsed response and its meta. */
export interface ApiResponse<T> {
  value: T;
  meta: ResponseMeta;
}

export { encodePath } from "./path";

/** The two parts of undici the core uses. */
interface UndiciParts {
  Pool: typeof import("undici").Pool;
  request: (this: Dispatcher, opts: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
}
let undici: UndiciParts | undefined;

/**
 * Loads undici's Pool and its request API with the first pool, never with this module (a preview with
 * nothing to ask the server needs neither), and only those two: the package's index also loads fetch,
 * WebSocket, caches, proxies and mocks, 110 modules that took about 110 ms in a provider host, where these
 * 30 modules take about 23 ms. The paths are those of the pinned undici release (the package has no
 * exports map); test/provider/http/undici-parts.test.ts checks them against the full package.
 * @internal for tests: the module paths are checked against the full undici package.
 */
export function undiciParts(): UndiciParts {
  if (undici === undefined) {
    const Pool = require("undici/lib/dispatcher/pool") as UndiciParts["Pool"];
    const request = require("undici/lib/api/api-request") as UndiciParts["request"];
    undici = { Pool, request };
  }
  return undici;
}

interface PoolEntry {
  pool: Pool;
  listeners: Set<(origin: string) => void>;
}
const pools = new Map<string, PoolEntry>();

function poolKey(conn: ResolvedConnection): string {
  const h = createHash("sha256");
  h.update(conn.origin);
  h.update(JSON.stringify(conn.tls));
  return h.digest("hex");
}

function poolFor(conn: ResolvedConnection): PoolEntry {
  const key = poolKey(conn);
  let entry = pools.get(key);
  if (entry === undefined) {
    const { Pool: UndiciPool } = undiciParts();
    const pool = new UndiciPool(conn.origin, {
      connections: 32,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: {
        ...(conn.tls.ca !== undefined ? { ca: conn.tls.ca } : {}),
        ...(conn.tls.cert !== undefined ? { cert: conn.tls.cert } : {}),
        ...(conn.tls.key !== undefined ? { key: conn.tls.key } : {}),
        ...(conn.tls.servername !== undefined ? { servername: conn.tls.servername } : {}),
        rejectUnauthorized: conn.tls.rejectUnauthorized,
        // `localhost` and `*.localhost` go to loopback without asking a resolver (see ./loopback.ts).
        ...(isLocalhostName(new URL(conn.origin).hostname) ? { lookup: loopbackLookup } : {}),
      },
    });
    const listeners = new Set<(origin: string) => void>();
    pool.on("connect", (origin) => {
      for (const l of listeners) l(String(origin));
    });
    entry = { pool, listeners };
    pools.set(key, entry);
  }
  return entry;
}

/** Counts closeConnections calls: an HttpCore holding a pool from before one takes its pool again. */
let poolsGeneration = 0;

/** Closes every pooled connection of this process (scripts call it before exiting early). */
export async function closeConnections(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  poolsGeneration++;
  await Promise.all(all.map((e) => e.pool.close().catch(() => undefined)));
}

const SERVICE_LABEL: Record<ServiceName, string> = { secrets: "secrets service", scheduler: "scheduler" };

const CANCELLED = "the operation was cancelled";

/** The fields of a failure that the request itself does not already say. */
type FailureFields = Omit<ApiErrorFields, "service" | "operation" | "method" | "path">;

/** One request as every attempt sends it, and how its failures read. */
interface PreparedCall<T> {
  opts: RequestOptions<T>;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  /** Base path, path and query, as sent. */
  path: string;
  /** The encoded query ("" or starting with "?"). */
  query: string;
  idempotent: boolean;
  /** How safe the request is to send again (from `idempotent` and `checkAndSet`). */
  safety: Safety;
  /** Set after a leader-change answer: later attempts close their connection after use (see attempt). */
  freshConnections: boolean;
  /**
   * When the first leader-change answer came back: a leader change's time budget counts from there, so a
   * blocking query that waited minutes before the leader went away still gets the whole budget.
   */
  leaderSince?: number;
  /** Failed attempts so far: leader-change answers, and the others (only these count against maxAttempts). */
  failures: { leader: number; other: number };
  /** When the first attempt started (the retries' time budget counts from here). */
  started: number;
  /**
   * The origin the next attempt goes to instead of the configured address: the active node a standby
   * redirected to, once the cluster itself named that node (see HttpCore.followTarget). One attempt only.
   */
  target?: string;
  /** The active node the cluster last named during this call: when it changes, an election has ended. */
  namedActive?: string;
  /** Active nodes named during this call that could not be reached: never followed to again. */
  unreachable: Set<string>;
  fail(f: FailureFields): ApiError;
}

/** A failed attempt: the error to throw if no retry follows, and what the retry policy needs of it. */
interface Failed {
  kind: "failed";
  error: ApiError;
  outcome: Outcome;
  redirect?: Redirect;
}

/** What one attempt came to. */
type Attempt<T> = { kind: "answered"; response: ApiResponse<T> } | Failed;

/** Where a standby's 307 or 308 pointed (see HttpCore.redirectOf). */
interface Redirect {
  /** It names this connection's own origin and the request's own path. */
  own: boolean;
  /** It names the request's own path and query (under whichever origin). */
  samePath: boolean;
  /** The origin it named (scheme, host and port only: never its path or query). */
  origin: string;
}

/** Redirects followed in a row (to the configured address or the named active node) before backing off. */
const MAX_FOLLOWED_REDIRECTS = 3;

/** The secrets service's leader status (`GET /v1/sys/leader`, no token needed); other fields are kept. */
const LeaderStatusSchema = z.looseObject({
  ha_enabled: z.boolean().optional(),
  leader_address: z.string().optional(),
});

/** The HTTP core of one service connection. Cheap to create: pools are shared per origin and TLS setting. */
export class HttpCore {
  readonly connection: ResolvedConnection;
  private pooled: PoolEntry | undefined;
  private pooledGeneration = -1;
  private writeCount = 0;

  constructor(service: ServiceName, options: ConnectionOptions = {}) {
    this.connection = resolveConnection(service, options);
    const c = this.connection;
    if (!c.tls.rejectUnauthorized && c.origin.startsWith("https:")) {
      warnOnce(
        `tls-off ${c.service} ${c.origin}`,
        `TLS certificate verification is off for the ${SERVICE_LABEL[c.service]} at ${c.origin} (${settingSource(c, "dangerouslySkipTlsVerify")}): ` +
          "anyone on the network path can pose as the service and read the token. Use it only with a throwaway test cluster; give the CA instead " +
          `(${howToSet(c.service, "caCert", c.optionsFrom)}).`,
      );
    }
  }

  /** The pool of this connection, taken (or opened) on first use. */
  private get entry(): PoolEntry {
    if (this.pooled === undefined || this.pooledGeneration !== poolsGeneration) {
      const entry = poolFor(this.connection);
      const onConnect = this.connection.hooks.onConnect;
      const service = this.connection.service;
      if (onConnect) entry.listeners.add((origin) => onConnect({ service, origin }));
      this.pooled = entry;
      this.pooledGeneration = poolsGeneration;
    }
    return this.pooled;
  }

  /** The undici dispatcher of this connection (for WebSocket upgrades). */
  get dispatcher(): Dispatcher {
    return this.entry.pool;
  }

  /** Returns the full URL of a path and query under this connection's address. */
  url(path: string, query?: Record<string, QueryValue>): string {
    return this.connection.origin + this.connection.basePath + path + encodeQuery(query);
  }

  /**
   * Returns the auth headers a request needs. Without a token the scheduler gets no token header (clusters
   * with ACLs off; one that enforces ACLs answers 403), never a placeholder; the secrets service always
   * needs one, so a missing secrets token is a ConfigError before anything is sent.
   */
  authHeaders(operation: string): Record<string, string> {
    const c = this.connection;
    if (c.token === undefined) {
      if (c.service === "scheduler") return {};
      throw new ConfigError(`${operation}: the ${SERVICE_LABEL[c.service]} token is not set: use ${c.tokenSource}.`);
    }
    if (c.origin.startsWith("http:") && !isLoopbackHost(new URL(c.origin).hostname)) {
      warnOnce(
        `plain-http ${c.service} ${c.origin}`,
        `the ${SERVICE_LABEL[c.service]} token is sent over plain http to ${c.origin}, which is not this machine: anyone on the network ` +
          `path can read it. Use an https:// address (${settingSource(c, "address")}).`,
      );
    }
    return { [c.headers.token]: c.token };
  }

  /**
   * How many requests that may change what the server holds this connection has started: a snapshot taken
   * at one count describes the server only while the count stays the same.
   */
  get writes(): number {
    return this.writeCount;
  }

  /**
   * Sends one request with retries; resolves to the parsed body and meta, or throws ApiError. The steps:
   * {@link prepare} the request every attempt sends, {@link attempt} it once (an answer, or a failure
   * classified for the retry policy), and {@link waitToRetry} or give up.
   */
  async request<T = unknown>(opts: RequestOptions<T>): Promise<ApiResponse<T>> {
    if (opts.mutates ?? (opts.method !== "GET" && opts.method !== "HEAD")) this.writeCount++;
    const call = this.prepare(opts);
    for (let attempt = 1; ; attempt++) {
      if (opts.signal?.aborted) throw call.fail({ code: "aborted", attempts: attempt - 1, hint: CANCELLED });
      const tried = await this.attempt(call, attempt);
      if (tried.kind === "answered") return tried.response;
      await this.waitToRetry(call, attempt, tried);
    }
  }

  /** The request every attempt sends (headers, body, path), and how its failures read (secrets redacted). */
  private prepare<T>(opts: RequestOptions<T>): PreparedCall<T> {
    const c = this.connection;
    const headers: Record<string, string> = { accept: "application/json", ...(opts.headers ?? {}) };
    if (opts.auth !== false) Object.assign(headers, this.authHeaders(opts.operation));
    if (c.service === "secrets" && c.namespace !== undefined) headers[c.headers.namespace] = c.namespace;
    if (c.service === "secrets" && c.headers.requestMarker !== "") headers[c.headers.requestMarker] = "true";
    let body: string | Uint8Array | undefined;
    if (opts.rawBody !== undefined) {
      body = opts.rawBody;
      headers["content-type"] = opts.contentType ?? "application/octet-stream";
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers["content-type"] = "application/json";
    }
    const query = encodeQuery(opts.query);
    const secrets = [c.token, ...(opts.secrets ?? [])];
    const idempotent = opts.idempotent ?? (opts.method === "GET" || opts.method === "HEAD");
    return {
      opts,
      headers,
      body,
      path: c.basePath + opts.path + query,
      query,
      idempotent,
      safety: idempotent ? "idempotent" : opts.checkAndSet === true ? "check-and-set" : "unguarded",
      freshConnections: false,
      failures: { leader: 0, other: 0 },
      started: Date.now(),
      unreachable: new Set(),
      fail: (f) =>
        new ApiError({
          ...f,
          service: c.service,
          operation: opts.operation,
          method: opts.method,
          path: opts.path,
          serverErrors: (f.serverErrors ?? []).map((s) => redact(s, secrets)),
        }),
    };
  }

  /** Sends one attempt: the parsed answer, or the failure and what kind it was (for the retry policy). */
  private async attempt<T>(call: PreparedCall<T>, attempt: number): Promise<Attempt<T>> {
    const { opts } = call;
    const c = this.connection;
    c.hooks.onRequest?.({
      service: c.service,
      method: opts.method,
      path: opts.path,
      query: call.query.slice(1),
      attempt,
    });
    const t0 = Date.now();
    const timeoutMs = c.timeoutMs + (opts.extraTimeoutMs ?? 0);
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    // An attempt to the active node a standby named goes there once, over that node's own pool.
    const pool = call.target !== undefined ? poolFor({ ...c, origin: call.target }).pool : this.entry.pool;
    try {
      const res = await undiciParts().request.call(pool, {
        path: call.path,
        method: opts.method,
        headers: call.headers,
        body: call.body,
        signal,
        // After a leader change, each attempt closes its connection once answered, so the next one is a new
        // connection that a balancer may send to another node (a kept-alive one would reach the same node).
        ...(call.freshConnections ? { reset: true } : {}),
      });
      const text = await res.body.text();
      const ms = Date.now() - t0;
      c.hooks.onResponse?.({
        service: c.service,
        method: opts.method,
        path: opts.path,
        attempt,
        status: res.statusCode,
        ms,
      });
      const meta = this.meta(res.statusCode, res.headers, attempt, call.started);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return { kind: "answered", response: { value: this.parse(opts, text, res.headers, meta, call.fail), meta } };
      }
      return this.refused(call, attempt, res.statusCode, res.headers, text);
    } catch (e) {
      if (ApiError.is(e)) throw e;
      c.hooks.onResponse?.({
        service: c.service,
        method: opts.method,
        path: opts.path,
        attempt,
        ms: Date.now() - t0,
      });
      return this.unanswered(call, attempt, e, timeout.aborted, timeoutMs);
    }
  }

  /** An answer other than 2xx, as the ApiError it is. */
  private refused<T>(
    call: PreparedCall<T>,
    attempt: number,
    status: number,
    headers: Record<string, string | string[] | undefined>,
    text: string,
  ): Failed {
    const service = this.connection.service;
    const redirect =
      status === 307 || status === 308 ? this.redirectOf(call, headerValue(headers, "location")) : undefined;
    const serverErrors = redirect === undefined ? serverMessages(text) : [];
    const code = classify(service, status, serverErrors);
    const leader = redirect !== undefined ? "maybe-applied" : leaderChangeOf(service, status, serverErrors);
    return {
      kind: "failed",
      error: call.fail({
        code,
        status,
        serverErrors,
        attempts: attempt,
        hint:
          redirect !== undefined
            ? redirectHint(this.connection.service, redirect)
            : leader !== undefined
              ? leaderHint(this.connection.service, leader, call.safety, call.opts.method)
              : this.hint(code, status, serverErrors),
        requestSent: true,
      }),
      outcome: {
        kind: "status",
        status,
        retryAfterMs: parseRetryAfter(headerValue(headers, "retry-after")),
        transient500: status === 500 && isTransient500(service, serverErrors),
        ...(leader !== undefined ? { leader } : {}),
      },
      ...(redirect !== undefined ? { redirect } : {}),
    };
  }

  /**
   * A failure without an answer (a network error or the attempt's timeout), as the ApiError it is; throws
   * it at once where no further attempt can do better: cancelled, a request the HTTP library cannot build,
   * or a certificate that failed verification.
   */
  private unanswered<T>(
    call: PreparedCall<T>,
    attempt: number,
    e: unknown,
    timedOut: boolean,
    timeoutMs: number,
  ): Failed {
    const c = this.connection;
    const { opts } = call;
    if (opts.signal?.aborted) throw call.fail({ code: "aborted", attempts: attempt, hint: CANCELLED });
    const netCode = timedOut ? "TIMEOUT" : errorCode(e);
    // The HTTP library refused to build the request (a header or the path it cannot carry): nothing
    // was sent, and every attempt would fail the same way.
    if (netCode === "UND_ERR_INVALID_ARG") {
      throw call.fail({
        code: "transport",
        attempts: attempt,
        hint: invalidRequestHint(),
        requestSent: false,
        cause: { code: netCode },
      });
    }
    const certificate = !timedOut && isCertificateFailure(netCode);
    const beforeSend = !timedOut && isBeforeSend(netCode);
    if (call.target !== undefined) {
      // The active node a standby named could not be reached (it may have gone since): part of the leader
      // change, so the call goes on through the configured address within the leader change's budget.
      const unsent = beforeSend || certificate;
      const error = call.fail({
        code: timedOut ? "timeout" : "transport",
        attempts: attempt,
        hint: `the active node the ${SERVICE_LABEL[c.service]} named (${call.target}) could not be reached (${netCode})`,
        requestSent: !unsent,
        cause: { code: netCode },
      });
      return {
        kind: "failed",
        error,
        outcome: {
          kind: "network",
          code: netCode,
          beforeSend: unsent,
          leader: unsent ? "not-applied" : "maybe-applied",
        },
      };
    }
    const error = call.fail({
      code: timedOut ? "timeout" : "transport",
      attempts: attempt,
      hint: timedOut
        ? timeoutHint(c, timeoutMs)
        : certificate
          ? certificateHint(c, netCode)
          : beforeSend
            ? transportHint(c, netCode)
            : lostAfterSendHint(c, netCode, opts.method !== "GET" && opts.method !== "HEAD"),
      requestSent: !beforeSend,
      cause: { code: netCode },
    });
    // A certificate that failed verification fails the same way on every attempt.
    if (certificate) throw error;
    return { kind: "failed", error, outcome: { kind: "network", code: netCode, beforeSend } };
  }

  /**
   * Where a 307 or 308 points: `own` when it names this connection's own origin and the same path (a
   * standby sending the request back through the configured address, which a balancer routes to a live
   * node); any other origin is not followed and never gets the token.
   */
  private redirectOf<T>(call: PreparedCall<T>, location: string | undefined): Redirect {
    const c = this.connection;
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
  private async followTarget<T>(call: PreparedCall<T>, redirect: Redirect): Promise<string | undefined> {
    const c = this.connection;
    const active = await this.namedActiveNode(call);
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

  /** The origin of the active node the secrets service names at its configured address, if it names one. */
  private async namedActiveNode<T>(call: PreparedCall<T>): Promise<string | undefined> {
    const c = this.connection;
    try {
      const res = await undiciParts().request.call(this.entry.pool, {
        path: c.basePath + "/v1/sys/leader",
        method: "GET",
        headers: { accept: "application/json" },
        signal: call.opts.signal
          ? AbortSignal.any([call.opts.signal, AbortSignal.timeout(c.timeoutMs)])
          : AbortSignal.timeout(c.timeoutMs),
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

  /** Waits before the next attempt, or throws the failure when the retry policy or the time budget says stop. */
  private async waitToRetry<T>(call: PreparedCall<T>, attempt: number, failed: Failed): Promise<void> {
    const c = this.connection;
    const { opts } = call;
    const outcome = failed.outcome;
    const leader = outcome.leader;
    if (call.target !== undefined && outcome.kind === "network") call.unreachable.add(call.target);
    call.target = undefined;
    // A standby's redirect is followed at once when the request may repeat: back to this very address, or
    // to the active node it names once the cluster itself names the same node (see followTarget).
    const redirect = failed.redirect;
    const repeats = call.safety === "idempotent";
    const target =
      redirect !== undefined && !redirect.own && c.service === "secrets" && repeats
        ? await this.followTarget(call, redirect)
        : undefined;
    const mayFollow = repeats && call.failures.leader < MAX_FOLLOWED_REDIRECTS;
    const followNow = mayFollow && (redirect?.own === true || target !== undefined);
    if (followNow && target !== undefined) call.target = target;
    const failures = leader !== undefined ? ++call.failures.leader : ++call.failures.other;
    const wait = followNow ? 0 : retryDelay(c.retry, failures, outcome, call.safety);
    if (leader !== undefined) call.leaderSince ??= Date.now();
    const elapsed = Date.now() - (call.leaderSince ?? call.started);
    if (wait === undefined || elapsed + wait > c.retry.maxTotalMs) {
      if (leader !== undefined && wait !== undefined) throw failed.error.with({ hint: leaderBudgetHint(c, elapsed) });
      throw failed.error;
    }
    // After a leader change or another 5xx, later attempts take new connections (see attempt).
    if (leader !== undefined || (outcome.kind === "status" && outcome.status >= 500)) call.freshConnections = true;
    if (leader !== undefined) {
      if (!followNow) leaderProgress(c, failed, Math.max(0, c.retry.maxTotalMs - elapsed));
    }
    c.hooks.onRetry?.({
      service: c.service,
      method: opts.method,
      path: opts.path,
      attempt,
      delayMs: wait,
      ...(failed.outcome.kind === "status" ? { status: failed.outcome.status } : { code: failed.outcome.code }),
    });
    await sleep(wait, opts.signal);
  }

  private meta(
    status: number,
    h: Record<string, string | string[] | undefined>,
    attempts: number,
    started: number,
  ): ResponseMeta {
    const names = this.connection.headers;
    const meta: ResponseMeta = { status, attempts, requestMs: Date.now() - started };
    const index = headerValue(h, names.index);
    if (index !== undefined && /^\d+$/.test(index)) meta.lastIndex = Number(index);
    const leader = headerValue(h, names.knownLeader);
    if (leader !== undefined) meta.knownLeader = leader === "true";
    const contact = headerValue(h, names.lastContact);
    if (contact !== undefined && /^\d+$/.test(contact)) meta.lastContact = Number(contact);
    const next = headerValue(h, names.nextToken);
    if (next !== undefined && next !== "") meta.nextToken = next;
    return meta;
  }

  private parse<T>(
    opts: RequestOptions<T>,
    text: string,
    headers: Record<string, string | string[] | undefined>,
    meta: ResponseMeta,
    fail: (f: {
      code: ApiErrorCode;
      status?: number;
      serverErrors?: string[];
      attempts?: number;
      hint?: string;
    }) => ApiError,
  ): T {
    let data: unknown = undefined;
    if (text.trim() !== "") {
      const type = headerValue(headers, "content-type") ?? "";
      const looksJson = type.includes("json") || /^\s*[[{"]/.test(text) || /^\s*(null|true|false|-?\d)/.test(text);
      if (!looksJson) data = text;
      else {
        try {
          data = JSON.parse(text);
        } catch {
          throw fail({
            code: "bad_response",
            status: meta.status,
            attempts: meta.attempts,
            hint: "the response body is not valid JSON; is the address pointing at the right service?",
          });
        }
      }
    }
    if (opts.schema === undefined) return data as T;
    const parsed = opts.schema.safeParse(data, PARSE_OPTIONS);
    if (!parsed.success) {
      throw fail({
        code: "bad_response",
        status: meta.status,
        attempts: meta.attempts,
        serverErrors: [z.prettifyError(parsed.error).replace(/\s*\n\s*/g, " ")],
        hint: "the response did not have the expected shape; is the address pointing at the right service and version?",
      });
    }
    return parsed.data;
  }

  private hint(code: ApiErrorCode, status: number, serverErrors: string[]): string | undefined {
    const c = this.connection;
    switch (code) {
      case "permission_denied":
        return permissionHint(c);
      case "unavailable":
        if (serverErrors.some((s) => /sealed/i.test(s))) return "the secrets service is sealed: unseal it, then retry";
        return `the ${SERVICE_LABEL[c.service]} is unavailable (${status}); retry later`;
      case "rate_limited":
        return "the service is rate limiting requests; retry later";
      case "conflict":
        return c.service === "scheduler" ? "the object changed since it was last read; refresh and retry" : undefined;
      default:
        return undefined;
    }
  }
}

function encodeQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    params.append(k, String(v));
  }
  const s = params.toString();
  return s === "" ? "" : "?" + s;
}

function headerValue(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Reads the server's messages: `{"errors": [...]}` (secrets service) or plain text (scheduler). */
function serverMessages(text: string): string[] {
  const t = text.trim();
  if (t === "") return [];
  if (t.startsWith("{")) {
    try {
      const j = JSON.parse(t) as { errors?: unknown; error?: unknown; error_description?: unknown };
      if (Array.isArray(j.errors)) return j.errors.map((e) => String(e).trim()).filter((e) => e !== "");
      if (typeof j.error === "string")
        return [typeof j.error_description === "string" ? `${j.error}: ${j.error_description}` : j.error];
    } catch {
      // not JSON after all: fall through to plain text
    }
  }
  return [t.length > 1024 ? t.slice(0, 1024) + "…" : t];
}

const CONFLICT_500 =
  /Enforcing job modify index|already exists on a different version|Current job has version|job already exists/i;
const TRANSIENT_500: Record<ServiceName, RegExp> = {
  scheduler: /no cluster leader|no path to region|rpc error: EOF|connection reset|i\/o timeout|leader changed/i,
  secrets: /internal error|local node not active|context deadline exceeded/i,
};

/** The code of an error answer: by status, and for a scheduler 500 by its message. */
export function classify(service: ServiceName, status: number, messages: string[]): ApiErrorCode {
  if (status === 400 || status === 405 || status === 413 || status === 422) return "bad_request";
  if (status === 401 || status === 403) return "permission_denied";
  if (status === 404) return "not_found";
  if (status === 409) return "conflict";
  if (status === 429) return "rate_limited";
  if (status === 412 || status === 502 || status === 503 || status === 504) return "unavailable";
  if (status === 307 || status === 308) return "unavailable";
  if (status === 500 && service === "scheduler" && messages.some((m) => CONFLICT_500.test(m))) return "conflict";
  return status >= 500 ? "server" : "bad_request";
}

function isTransient500(service: ServiceName, messages: string[]): boolean {
  return messages.some((m) => TRANSIENT_500[service].test(m));
}

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

/**
 * What a failed answer says about a leader change (see LEADER_NOT_APPLIED), or undefined for none.
 * @internal for tests: the recorded cluster answers are classified without a cluster.
 */
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
function leaderHint(service: ServiceName, leader: LeaderChange, safety: Safety, method: Method): string {
  const who = `the ${SERVICE_LABEL[service]} ${leaderWords(service)}`;
  if (method === "GET" || method === "HEAD") return `${who}; the read can be made again once it has one`;
  if (leader === "not-applied") return `${who}; the write was not applied`;
  return repeatsOnLeaderChange(leader, safety)
    ? `${who}; the write reached the old leader, whose answer was lost with it`
    : `${who}; the write reached the old leader, whose answer was lost with it: it may or may not have been applied`;
}

/** The hint of a standby's redirect that was not followed. */
function redirectHint(service: ServiceName, redirect: Redirect): string {
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
function leaderBudgetHint(c: ResolvedConnection, elapsedMs: number): string {
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
function leaderProgress(c: ResolvedConnection, failed: Failed, remainingMs: number): void {
  const key = `${c.service} ${c.origin}`;
  const now = Date.now();
  const last = leaderLines.get(key);
  if (last !== undefined && now - last < LEADER_LINE_EVERY_MS) return;
  leaderLines.set(key, now);
  const e = failed.error;
  const said =
    failed.redirect !== undefined ? "a standby redirected the request" : (e.serverErrors[0] ?? String(e.status));
  void show(
    `The ${SERVICE_LABEL[c.service]} at ${c.origin} ${leaderWords(c.service)} (${e.method} ${e.path}: ${said}); ` +
      `waiting for it, for up to ${seconds(remainingMs)} more.`,
  );
}

function errorCode(e: unknown): string {
  const err = e as { code?: unknown; cause?: { code?: unknown } };
  if (typeof err.cause?.code === "string" && err.code === "UND_ERR_SOCKET") return err.cause.code;
  if (typeof err.code === "string") return err.code;
  if (typeof err.cause?.code === "string") return err.cause.code;
  return "UNKNOWN";
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
