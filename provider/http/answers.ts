/**
 * What an answer says: the server's messages, the error code of a failing answer, the facts a response's
 * headers carry, and a successful answer's body read and checked against the request's schema.
 */
import { z } from "zod";
import type { ApiError, ApiErrorCode, ServiceName } from "../errors";
import { PARSE_OPTIONS } from "../schemas/parse-options";
import type { RequestOptions, ResponseMeta } from "./request";
import type { ResolvedConnection } from "./settings";

export function headerValue(h: Record<string, string | string[] | undefined>, name: string): string | undefined {
  const v = h[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

/** Reads the server's messages: `{"errors": [...]}` (secrets service) or plain text (scheduler). */
export function serverMessages(text: string): string[] {
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

export function isTransient500(service: ServiceName, messages: string[]): boolean {
  return messages.some((m) => TRANSIENT_500[service].test(m));
}

/** Facts about a response, read from its status and headers (the header names of the connection's style). */
export function responseMeta(
  names: ResolvedConnection["headers"],
  status: number,
  h: Record<string, string | string[] | undefined>,
  attempts: number,
  started: number,
): ResponseMeta {
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

/** The body of a 2xx answer: JSON (or text) read and checked against the request's schema. */
export function parseBody<T>(
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
