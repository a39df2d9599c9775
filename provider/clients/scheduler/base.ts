/**
 * What every scheduler operation shares: read and write options, how namespace, region and blocking-query
 * parameters become the query, and the two request shapes (read, write) over the one HTTP core.
 */
import type { z } from "zod";
import { UsageError } from "../../errors";
import { segmentProblem } from "../../http/path";
import type { HttpCore } from "../../http/core";
import type { ApiResponse, Method, QueryValue, ResponseMeta } from "../../http/request";

/** Facts about a response: lastIndex (blocking-query index), knownLeader, lastContact, nextToken, attempts. */
export type QueryMeta = ResponseMeta;

/** A value and the meta of the response it came from. */
export type Result<T> = ApiResponse<T>;

/** Options of every read. Namespace and region default to the connection's. */
export interface ReadOptions {
  /** Namespace of the request (default: the connection's, else `default`). */
  namespace?: string;
  /** Region to forward the request to (default: the connection's, else the server's own). */
  region?: string;
  /** Blocking query: return only once the index is above this (from `meta.lastIndex`). */
  waitIndex?: number;
  /** Blocking query: longest wait in ms (server default and cap 300 s). */
  waitMs?: number;
  /** Allow any server, not only the leader, to answer. */
  stale?: boolean;
  signal?: AbortSignal;
}

/** Options of every write. Namespace and region default to the connection's. */
export interface WriteOptions {
  /** Namespace of the request; the query beats the body's own namespace on the server. */
  namespace?: string;
  region?: string;
  /** Token that makes a repeated dispatch a no-op; also makes the write safe to retry. */
  idempotencyToken?: string;
  signal?: AbortSignal;
}

/** The server's default and largest blocking wait. */
const MAX_WAIT_MS = 300_000;

/** Formats ms as a Go duration (`5000ms`). */
export function goDuration(ms: number): string {
  return `${Math.max(0, Math.ceil(ms))}ms`;
}

/** One read: a GET with namespace, region and blocking parameters. */
export interface ReadCall<T> {
  operation: string;
  path: string;
  schema: z.ZodType<T>;
  query?: Record<string, QueryValue>;
}

/** One write. */
export interface WriteCall<T> {
  operation: string;
  method: Method;
  path: string;
  schema: z.ZodType<T>;
  body?: unknown;
  rawBody?: Uint8Array | string;
  query?: Record<string, QueryValue>;
  idempotent: boolean;
  /** The body carries a check-and-set guard (EnforceIndex, EnforcePriorVersion): a repeat cannot apply twice. */
  checkAndSet?: boolean;
  /** Namespace to use when the options give none (a job's own namespace). */
  namespaceFallback?: string | null;
  /** Values to keep out of errors (tokens in the body). */
  secrets?: ReadonlyArray<string | undefined>;
  /** False for a POST that stores nothing (plan, parse). */
  mutates?: boolean;
}

/** The request layer the area classes share. */
export class SchedulerRequester {
  constructor(readonly core: HttpCore) {}

  /** The namespace a request uses: the option, then the fallback, then the connection's, then `default`. */
  namespace(option: string | undefined, fallback?: string | null): string {
    return nonEmpty(option) ?? nonEmpty(fallback) ?? nonEmpty(this.core.connection.namespace) ?? "default";
  }

  /** Sends a read; honours blocking-query options. */
  async read<T>(call: ReadCall<T>, opts: ReadOptions = {}): Promise<Result<T>> {
    const query: Record<string, QueryValue> = {
      namespace: this.namespace(opts.namespace),
      region: nonEmpty(opts.region) ?? this.core.connection.region,
      ...(call.query ?? {}),
    };
    if (opts.stale) query.stale = "";
    let extraTimeoutMs: number | undefined;
    if (opts.waitIndex !== undefined) {
      if (!Number.isInteger(opts.waitIndex) || opts.waitIndex < 0) {
        throw new UsageError(
          `${call.operation}: waitIndex must be a non-negative integer, got ${String(opts.waitIndex)}.`,
        );
      }
      query.index = opts.waitIndex;
    }
    if (opts.waitMs !== undefined) {
      if (!Number.isFinite(opts.waitMs) || opts.waitMs < 0) {
        throw new UsageError(`${call.operation}: waitMs must be a non-negative number of milliseconds.`);
      }
      query.wait = goDuration(Math.min(opts.waitMs, MAX_WAIT_MS));
    }
    if (opts.waitIndex !== undefined && opts.waitIndex > 0) {
      const wait = Math.min(opts.waitMs ?? MAX_WAIT_MS, MAX_WAIT_MS);
      // The server adds up to wait/16 of jitter before answering.
      extraTimeoutMs = Math.ceil(wait + wait / 16) + 1000;
    }
    return this.core.request({
      operation: call.operation,
      method: "GET",
      path: call.path,
      query,
      schema: call.schema,
      idempotent: true,
      signal: opts.signal,
      extraTimeoutMs,
    });
  }

  /** Sends a write. */
  async write<T>(call: WriteCall<T>, opts: WriteOptions = {}): Promise<Result<T>> {
    const query: Record<string, QueryValue> = {
      namespace: this.namespace(opts.namespace, call.namespaceFallback),
      region: nonEmpty(opts.region) ?? this.core.connection.region,
      ...(call.query ?? {}),
    };
    if (nonEmpty(opts.idempotencyToken) !== undefined) query.idempotency_token = opts.idempotencyToken;
    return this.core.request({
      operation: call.operation,
      method: call.method,
      path: call.path,
      query,
      body: call.body,
      rawBody: call.rawBody,
      schema: call.schema,
      idempotent: call.idempotent || nonEmpty(opts.idempotencyToken) !== undefined,
      checkAndSet: call.checkAndSet === true,
      secrets: call.secrets,
      signal: opts.signal,
      mutates: call.mutates,
    });
  }
}

function nonEmpty(s: string | null | undefined): string | undefined {
  return s === undefined || s === null || s === "" ? undefined : s;
}

/** Throws UsageError unless `id` is a non-empty string; a `jobId` must also be one the scheduler can route. */
export function requireId(operation: string, what: string, id: unknown): string {
  if (typeof id !== "string" || id === "") throw new UsageError(`${operation}: ${what} must be a non-empty string.`);
  const problem = what === "jobId" ? jobIdProblem(id) : undefined;
  if (problem !== undefined) throw new UsageError(`${operation}: ${what} ${problem}.`);
  return id;
}

/**
 * Endpoints below `/v1/job/<id>/`. The real scheduler decodes the path and picks the endpoint by its
 * suffix, so a job ID with a "/" that ends in one of these names would reach that endpoint of another job.
 */
const JOB_SUB_ENDPOINTS: ReadonlySet<string> = new Set([
  "action",
  "actions",
  "allocations",
  "deployment",
  "deployments",
  "dispatch",
  "evaluate",
  "evaluations",
  "plan",
  "revert",
  "scale",
  "services",
  "stable",
  "submission",
  "summary",
  "tag",
  "versions",
]);

/** Endpoints whose suffix has two parts. */
const TWO_PART_ENDPOINTS: ReadonlySet<string> = new Set(["periodic/force", "dispatch/payload"]);

/**
 * Returns why a job ID cannot be routed as one path segment, or undefined when it can: an empty, `.` or
 * `..` part between slashes (the path would be normalised to another endpoint), or a last part that names
 * a job endpoint. IDs with other slashes (dispatched children, `parent/dispatch-…`) are routed fine.
 */
export function jobIdProblem(id: string): string | undefined {
  const parts = id.split("/");
  if (parts.length === 1) return segmentProblem(id);
  for (const part of parts) {
    if (part === "") return 'must not have an empty part between "/" (a leading, trailing or doubled slash)';
    if (part === "." || part === "..")
      return 'must not have a "." or ".." part between "/" (a dot segment addresses another path)';
    const p = segmentProblem(part);
    if (p !== undefined) return p;
  }
  const last = parts[parts.length - 1] ?? "";
  const two = `${parts[parts.length - 2] ?? ""}/${last}`;
  const suffix = JOB_SUB_ENDPOINTS.has(last) ? last : TWO_PART_ENDPOINTS.has(two) ? two : undefined;
  if (suffix !== undefined) {
    return `must not end in "/${suffix}": the scheduler would read it as the ${suffix} endpoint of another job`;
  }
  return undefined;
}

/** Throws UsageError when EnforceIndex is set without a JobModifyIndex (the check would test nothing). */
export function checkEnforceIndex(operation: string, req: { EnforceIndex?: boolean; JobModifyIndex?: number }): void {
  if (req.EnforceIndex !== true) return;
  const idx = req.JobModifyIndex;
  if (idx === undefined || idx === null || !Number.isInteger(idx) || idx < 0) {
    throw new UsageError(
      `${operation}: EnforceIndex is set but JobModifyIndex is missing; pass the JobModifyIndex the job must still have (0 = the job must be new).`,
    );
  }
}
