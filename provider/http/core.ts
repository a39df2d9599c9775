/**
 * The one HTTP core behind both clients: an undici keep-alive pool per origin, timeouts, cancellation,
 * retries, TLS, header names, error mapping and secret redaction all live here once. This file holds the
 * attempt and retry loop; the request's shape is in ./request.ts, the pools in ./pools.ts, what an answer
 * says in ./answers.ts, leader changes and standby redirects in ./leader.ts.
 */
import type { Dispatcher } from "undici";
import { ApiError, ConfigError, type ApiErrorCode, type ServiceName } from "../errors";
import { warnOnce } from "../log";
import { classify, headerValue, isTransient500, parseBody, responseMeta, serverMessages } from "./answers";
import { CANCELLED, SERVICE_LABEL, type Attempt, type Failed, type PreparedCall } from "./call";
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
  MAX_FOLLOWED_REDIRECTS,
  followTarget,
  leaderBudgetHint,
  leaderChangeOf,
  leaderHint,
  leaderProgress,
  redirectHint,
  redirectOf,
} from "./leader";
import { isLoopbackHost } from "./loopback";
import { poolFor, poolsGeneration, undiciParts, type PoolEntry } from "./pools";
import { redact } from "./redact";
import { encodeQuery, type ApiResponse, type QueryValue, type RequestOptions } from "./request";
import { isBeforeSend, parseRetryAfter, retryDelay } from "./retry";
import {
  howToSet,
  resolveConnection,
  settingSource,
  type ConnectionOptions,
  type ResolvedConnection,
} from "./settings";

export { encodePath } from "./path";

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
    if (this.pooled === undefined || this.pooledGeneration !== poolsGeneration()) {
      const entry = poolFor(this.connection);
      const onConnect = this.connection.hooks.onConnect;
      const service = this.connection.service;
      if (onConnect) entry.listeners.add((origin) => onConnect({ service, origin }));
      this.pooled = entry;
      this.pooledGeneration = poolsGeneration();
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
      const meta = responseMeta(c.headers, res.statusCode, res.headers, attempt, call.started);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        return { kind: "answered", response: { value: parseBody(opts, text, res.headers, meta, call.fail), meta } };
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
      status === 307 || status === 308
        ? redirectOf(this.connection, call, headerValue(headers, "location"))
        : undefined;
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

  /** Waits before the next attempt, or throws the failure when the retry policy or the time budget says stop. */
  private async waitToRetry<T>(call: PreparedCall<T>, attempt: number, failed: Failed): Promise<void> {
    const c = this.connection;
    const { opts } = call;
    const outcome = failed.outcome;
    const leader = outcome.leader;
    if (call.target !== undefined && outcome.kind === "network") call.unreachable.add(call.target);
    call.target = undefined;
    // A standby's redirect is followed at once when the request may repeat: back to this very address, or
    // to the active node it names once the cluster itself names the same node (see followTarget in ./leader.ts).
    const redirect = failed.redirect;
    const repeats = call.safety === "idempotent";
    const target =
      redirect !== undefined && !redirect.own && c.service === "secrets" && repeats
        ? await followTarget(c, this.entry.pool, call, redirect)
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
