/**
 * What one call through the HTTP core (./core.ts) is and what it answers: the request's options, the facts
 * read from a response, and the query's encoding.
 */
import type { z } from "zod";

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

/** Encodes a query ("" or starting with "?"); `undefined` and `null` values are left out. */
export function encodeQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    params.append(k, String(v));
  }
  const s = params.toString();
  return s === "" ? "" : "?" + s;
}
