import { request } from "undici";

/** A response as the secrets-service tests look at it. */
export interface Reply {
  readonly status: number;
  /** Parsed JSON body (undefined for an empty body). */
  readonly body: unknown;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** Options of `call`. */
export interface CallOptions {
  readonly token?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/**
 * Sends one request over real HTTP (undici) and parses the JSON body. `LIST` is sent as `GET ?list=true`, the
 * way the service's own client sends it (node:http cannot parse a LIST request line).
 */
export async function call(base: string, method: string, path: string, options: CallOptions = {}): Promise<Reply> {
  if (method === "LIST") {
    method = "GET";
    path = `${path}${path.includes("?") ? "&" : "?"}list=true`;
  }
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers["x-svc-token"] = options.token;
  let payload: string | undefined;
  if (options.body !== undefined) {
    payload = typeof options.body === "string" ? options.body : JSON.stringify(options.body);
    headers["content-type"] = "application/json";
  }
  const res = await request(`${base}${path}`, { method: method as "GET", headers, body: payload });
  const text = await res.body.text();
  return {
    status: res.statusCode,
    body: text === "" ? undefined : (JSON.parse(text) as unknown),
    headers: res.headers,
  };
}

/** Returns `body.data` of a reply as a record (throws when missing). */
export function data(reply: Reply): Record<string, unknown> {
  const b = reply.body as { data?: unknown } | undefined;
  if (b === undefined || typeof b.data !== "object" || b.data === null) {
    throw new Error(`no data in reply ${reply.status}: ${JSON.stringify(reply.body)}`);
  }
  return b.data as Record<string, unknown>;
}

/** Returns `body.errors` of a reply. */
export function errors(reply: Reply): string[] {
  const b = reply.body as { errors?: unknown } | undefined;
  return Array.isArray(b?.errors) ? (b.errors as string[]) : [];
}

/** The secrets service's 403 body for a token that lacks a capability. */
export const DENIED = "1 error occurred:\n\t* permission denied\n\n";
