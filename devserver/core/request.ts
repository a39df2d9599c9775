import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { DevHttpError, permissionDenied, renderError, type ServiceName } from "./errors";
import { tokenAllows, type TokenRecord } from "./tokens";
import type { DevRequest } from "./types";

const EMPTY = Buffer.alloc(0);

/** Result of reading a body under a size limit. */
export type BodyResult = { readonly ok: true; readonly body: Buffer } | { readonly ok: false };

/** Reads the whole request body, giving up (without buffering further) once it exceeds `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<BodyResult> {
  const declared = req.headers["content-length"];
  if (declared === undefined && req.headers["transfer-encoding"] === undefined) {
    return Promise.resolve({ ok: true, body: EMPTY });
  }
  if (declared !== undefined && Number(declared) > limit) return Promise.resolve({ ok: false });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        resolve({ ok: false });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve({ ok: true, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size) });
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const cleanup = (): void => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
  });
}

/** Returns the token a request presents: the service's token header, else `Authorization: Bearer`. */
export function presentedToken(headers: IncomingHttpHeaders, tokenHeaderLower: string): string | undefined {
  const direct = headers[tokenHeaderLower];
  if (typeof direct === "string" && direct !== "") return direct;
  const auth = headers.authorization;
  if (typeof auth === "string" && auth.length > 7 && auth.slice(0, 7).toLowerCase() === "bearer ") {
    const value = auth.slice(7).trim();
    return value === "" ? undefined : value;
  }
  return undefined;
}

/** Per-request data the core hands to `DevRequestImpl`. */
export interface RequestInit {
  readonly service: ServiceName;
  readonly method: string;
  readonly path: string;
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly namespace: string;
  readonly token: TokenRecord | undefined;
  readonly remoteAddress: string;
  readonly enforce: boolean;
  readonly policyCapabilities: ((policy: string) => readonly string[] | undefined) | undefined;
}

/** The `DevRequest` handed to route handlers. */
export class DevRequestImpl implements DevRequest {
  readonly service: ServiceName;
  readonly method: string;
  readonly path: string;
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  readonly raw: Buffer;
  readonly namespace: string;
  readonly token: TokenRecord | undefined;
  readonly remoteAddress: string;
  private readonly enforce: boolean;
  private readonly policyCapabilities: RequestInit["policyCapabilities"];
  private parsed = false;
  private parsedValue: unknown;

  constructor(init: RequestInit) {
    this.service = init.service;
    this.method = init.method;
    this.path = init.path;
    this.params = init.params;
    this.query = init.query;
    this.headers = init.headers;
    this.raw = init.raw;
    this.namespace = init.namespace;
    this.token = init.token;
    this.remoteAddress = init.remoteAddress;
    this.enforce = init.enforce;
    this.policyCapabilities = init.policyCapabilities;
  }

  json(): unknown {
    if (this.parsed) return this.parsedValue;
    if (this.raw.length === 0) {
      this.parsed = true;
      return undefined;
    }
    try {
      this.parsedValue = JSON.parse(this.raw.toString("utf8")) as unknown;
    } catch {
      // V8's parse message quotes the start of the body, which may be a JWT or a secret: keep it out.
      throw new DevHttpError(
        400,
        this.service === "secrets" ? "failed to parse JSON input" : "Request body decode failed",
      );
    }
    this.parsed = true;
    return this.parsedValue;
  }

  can(capabilities: string | readonly string[], namespace?: string): boolean {
    if (!this.enforce) return true;
    if (this.token === undefined) return false;
    const needed = typeof capabilities === "string" ? [capabilities] : capabilities;
    return tokenAllows(this.token, needed, namespace ?? this.namespace, this.policyCapabilities);
  }

  requireCapability(capabilities: string | readonly string[], namespace?: string): void {
    if (!this.can(capabilities, namespace)) throw permissionDenied(this.service);
  }
}

/** Writes a complete response with content-length; omits the body for 204/304 and HEAD. */
export function sendBody(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: string | Buffer | undefined,
  contentType: string | undefined,
  head = false,
): void {
  if (body === undefined || status === 204 || status === 304) {
    if (status !== 204 && status !== 304) headers["content-length"] = 0;
    res.writeHead(status, headers);
    res.end();
    return;
  }
  if (contentType !== undefined) headers["content-type"] = contentType;
  // A string body goes out in one write together with the head; a Buffer would need a second chunk.
  headers["content-length"] = typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length;
  res.writeHead(status, headers);
  if (head) res.end();
  else if (typeof body === "string") res.end(body, "utf8");
  else res.end(body);
}

/** Writes an error in the service's style. */
export function sendError(
  res: ServerResponse,
  service: ServiceName,
  status: number,
  messages: readonly string[],
  extraHeaders?: Readonly<Record<string, string>>,
): void {
  const rendered = renderError(service, messages);
  sendBody(res, status, { ...extraHeaders }, rendered.body, rendered.contentType);
}
