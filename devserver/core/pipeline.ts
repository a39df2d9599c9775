import type * as http from "node:http";
import type { Socket } from "node:net";
import { DevHttpError, missingTokenError, permissionDenied, renderError, type ServiceName } from "./errors";
import type { FaultInjector, FaultSpec } from "./faults";
import { checkJsonBody } from "./listener";
import type { RequestLogEntry } from "./options";
import { DevRequestImpl, presentedToken, readBody, sendBody, sendError } from "./request";
import type { CapabilityRule, Router } from "./router";
import { tokenAllows } from "./tokens";
import type { ServiceModule } from "./module";
import type { DevRequest, DevResponse, ServiceContext } from "./types";

/** One hosted service: its module, routes, context and listener bookkeeping. */
export interface HostedService {
  readonly name: ServiceName;
  readonly module: ServiceModule | undefined;
  readonly router: Router;
  readonly ctx: ServiceContext;
  readonly tokenHeaderLower: string;
  readonly namespaceHeaderLower: string;
  readonly enforce: boolean;
  readonly sockets: Set<Socket>;
  connections: number;
  requests: number;
  server?: http.Server;
  url?: string;
  /** The module's state from before the latest write, kept while a stale-read fault is pending. */
  beforeLastWrite?: unknown;
}

/** What the request pipeline needs from the server. */
export interface PipelineDeps {
  readonly faults: FaultInjector;
  readonly maxBodyBytes: number;
  record(entry: RequestLogEntry): void;
  markDirty(): void;
}

const READ_METHODS = new Set(["GET", "HEAD", "LIST"]);

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Returns the per-request handler: faults, routing, body limit, token and capability checks, the route
 * handler, the service-style reply and the request log entry.
 */
export function createRequestHandler(
  deps: PipelineDeps,
): (host: HostedService, req: http.IncomingMessage, res: http.ServerResponse) => Promise<void> {
  const { faults, record, markDirty } = deps;
  const maxBody = deps.maxBodyBytes;

  async function handle(host: HostedService, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const started = performance.now();
    host.requests += 1;
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const sentPath = q === -1 ? url : url.slice(0, q);
    const search = q === -1 ? "" : url.slice(q + 1);
    const sentMethod = req.method ?? "GET";
    const done = (status: number, fault?: true): void =>
      record({
        service: host.name,
        method: sentMethod,
        path: sentPath,
        query: search,
        status,
        ms: Math.round((performance.now() - started) * 100) / 100,
        ...(fault ? { fault } : {}),
      });

    const fault = faults.take(host.name, sentMethod, sentPath);
    if (fault !== undefined && (await applyFault(host, fault, req, res))) {
      done(fault.reset ? 0 : (fault.status ?? 0), true);
      return;
    }
    const delayed = fault !== undefined ? (true as const) : undefined;
    const stale = fault?.stale === true;
    if (!READ_METHODS.has(sentMethod)) {
      host.beforeLastWrite = faults.wantsStale(host.name) ? host.module?.snapshot?.() : undefined;
    }

    let status: number;
    try {
      status = await route(host, req, res, sentMethod, sentPath, search, stale);
    } catch (err) {
      status = err instanceof DevHttpError ? err.status : 500;
      const messages = err instanceof DevHttpError ? err.messages : [err instanceof Error ? err.message : String(err)];
      if (!res.headersSent)
        sendError(res, host.name, status, messages, err instanceof DevHttpError ? err.headers : undefined);
      else res.destroy();
    }
    done(status, delayed);
    if (status < 400 && !READ_METHODS.has(sentMethod)) markDirty();
  }

  async function applyFault(
    host: HostedService,
    fault: FaultSpec,
    req: http.IncomingMessage,
    res: http.ServerResponse,
  ): Promise<boolean> {
    if (fault.delayMs !== undefined && fault.delayMs > 0) await delay(fault.delayMs);
    if (fault.reset) {
      req.socket.destroy();
      return true;
    }
    if (fault.status === undefined) return false;
    const headers: Record<string, string | number> = {};
    if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
    if (fault.location !== undefined) {
      headers.location = new URL(req.url ?? "/", fault.location).toString();
      sendBody(res, fault.status, headers, undefined, undefined);
      return true;
    }
    if (fault.body === undefined) {
      const rendered = renderError(host.name, ["injected fault"]);
      sendBody(res, fault.status, headers, rendered.body, rendered.contentType);
    } else if (typeof fault.body === "string") {
      sendBody(
        res,
        fault.status,
        headers,
        fault.body,
        host.name === "secrets" ? "application/json" : "text/plain; charset=utf-8",
      );
    } else {
      sendBody(res, fault.status, headers, JSON.stringify(fault.body), "application/json");
    }
    return true;
  }

  async function route(
    host: HostedService,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    sentMethod: string,
    sentPath: string,
    search: string,
    stale = false,
  ): Promise<number> {
    const path = sentPath.length > 1 && sentPath.endsWith("/") ? sentPath.slice(0, -1) : sentPath;
    const query = new URLSearchParams(search);
    const method =
      host.name === "secrets" && sentMethod === "GET" && query.get("list") === "true" ? "LIST" : sentMethod;
    const match = host.router.match(method, path);
    if (match.kind === "not-found") {
      throw new DevHttpError(404, host.name === "secrets" ? [] : "404 page not found");
    }
    if (match.kind === "method-not-allowed") {
      throw new DevHttpError(405, host.name === "secrets" ? [] : "Invalid method", { allow: match.allowed.join(", ") });
    }
    const r = match.route;
    try {
      checkJsonBody(req, r.rawBody === true);
    } catch (err) {
      // The body is never read, so the connection cannot be reused.
      res.shouldKeepAlive = false;
      throw err;
    }
    const body = await readBody(req, r.maxBodyBytes ?? maxBody);
    if (!body.ok) {
      // The rest of the body is never read, so the connection cannot be reused.
      res.shouldKeepAlive = false;
      res.once("finish", () => req.socket.destroy());
      throw new DevHttpError(413, host.name === "secrets" ? "http: request body too large" : "Request body too large");
    }
    const tokenValue = presentedToken(req.headers, host.tokenHeaderLower);
    const token = tokenValue !== undefined ? host.ctx.tokens.lookup(tokenValue) : undefined;
    const nsHeader = host.name === "secrets" ? req.headers[host.namespaceHeaderLower] : undefined;
    const namespace =
      host.name === "scheduler" ? query.get("namespace") || "default" : typeof nsHeader === "string" ? nsHeader : "";
    const devReq = new DevRequestImpl({
      service: host.name,
      method,
      path,
      params: match.params,
      query,
      headers: req.headers,
      raw: body.body,
      namespace,
      token,
      remoteAddress: req.socket.remoteAddress ?? "",
      enforce: host.enforce,
      policyCapabilities: host.module?.policyCapabilities?.bind(host.module),
    });
    if (host.enforce && r.auth !== false) authorize(host, devReq, tokenValue, r.capability);
    const out = await (stale ? staleHandle(host, () => r.handler(devReq)) : r.handler(devReq));
    return writeResponse(res, out, method === "HEAD");
  }

  /**
   * Runs a read against the state from before the latest write (a lagging standby), then puts the current
   * state back. The handler's synchronous part sees the old state (every read handler of both services
   * reads its state synchronously); without a kept state the read runs as usual.
   */
  function staleHandle<T>(host: HostedService, run: () => T): T {
    const mod = host.module;
    const before = host.beforeLastWrite;
    if (before === undefined || mod?.snapshot === undefined || mod.restore === undefined) return run();
    const now = mod.snapshot();
    mod.restore(before);
    try {
      return run();
    } finally {
      mod.restore(now);
    }
  }

  function authorize(
    host: HostedService,
    req: DevRequest,
    tokenValue: string | undefined,
    rule: CapabilityRule | undefined,
  ): void {
    if (req.token === undefined && (host.name === "secrets" || tokenValue !== undefined)) {
      throw missingTokenError(host.name, tokenValue !== undefined);
    }
    if (rule === undefined) return;
    const resolved = typeof rule === "function" ? rule(req) : rule;
    const needed = resolved === undefined ? [] : typeof resolved === "string" ? [resolved] : resolved;
    if (needed.length === 0) return;
    const policyCaps = host.module?.policyCapabilities?.bind(host.module);
    if (req.token === undefined || !tokenAllows(req.token, needed, req.namespace, policyCaps)) {
      throw permissionDenied(host.name);
    }
  }

  function writeResponse(res: http.ServerResponse, out: DevResponse, head: boolean): number {
    const headers: Record<string, string | number> = {};
    let ownType: string | undefined;
    if (out.headers !== undefined) {
      for (const key of Object.keys(out.headers)) {
        const value = out.headers[key] as string;
        // A handler's content-type wins over the default for its body kind.
        if (key.toLowerCase() === "content-type") ownType = value;
        else headers[key] = value;
      }
    }
    if (out.json !== undefined) {
      const status = out.status ?? 200;
      sendBody(res, status, headers, JSON.stringify(out.json), ownType ?? "application/json", head);
      return status;
    }
    if (out.text !== undefined) {
      const status = out.status ?? 200;
      sendBody(res, status, headers, out.text, ownType ?? "text/plain; charset=utf-8", head);
      return status;
    }
    if (out.raw !== undefined) {
      const status = out.status ?? 200;
      sendBody(res, status, headers, out.raw, ownType ?? "application/octet-stream", head);
      return status;
    }
    const status = out.status ?? 204;
    sendBody(res, status, headers, undefined, undefined, head);
    return status;
  }

  return handle;
}
