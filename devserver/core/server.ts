import * as http from "node:http";
import * as https from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { IndexClock, parseBlockingQuery } from "./blocking";
import { DevHttpError, missingTokenError, permissionDenied, renderError, type ServiceName } from "./errors";
import { FaultInjector, type FaultSpec } from "./faults";
import { SPEC_HEADER_NAMES } from "./names";
import { Persister, readJsonIfExists } from "./persist";
import { DevRequestImpl, presentedToken, readBody, sendBody, sendError } from "./request";
import { Router, type CapabilityRule } from "./router";
import { restoreState, snapshotState } from "./state";
import { TokenStore, tokenAllows, type TokenSpec } from "./tokens";
import type { DevRequest, DevResponse, ServiceContext, ServiceHeaderNames, ServiceModule } from "./types";

/** Listener and wire-name settings of one service. */
export interface ServiceEndpointOptions {
  /** Port to listen on (default 0: any free port). */
  readonly port?: number;
  /** Root token value (default: random, or the persisted one). */
  readonly rootToken?: string;
  /** Header names; defaults are the spec's (`X-Svc-Token`, `X-Svc-Index`, ...). */
  readonly headerNames?: Partial<ServiceHeaderNames>;
}

/** TLS settings shared by both listeners. */
export interface DevTlsOptions {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** CA used to verify client certificates. */
  readonly ca?: string | Buffer;
  /** Require and verify a client certificate (mutual TLS). */
  readonly requestClientCert?: boolean;
}

/** Options of `startServiceHost`. */
export interface ServiceHostOptions {
  readonly services?: readonly ServiceModule[];
  /** Loopback address to bind (default 127.0.0.1). */
  readonly host?: string;
  readonly secrets?: ServiceEndpointOptions;
  readonly scheduler?: ServiceEndpointOptions;
  /** Enforce scheduler ACLs (default true). The secrets service always checks tokens. */
  readonly acl?: boolean;
  readonly tls?: DevTlsOptions;
  /** Largest accepted request body in bytes (default 1 MiB); larger bodies get 413. */
  readonly maxBodyBytes?: number;
  /** JSON file for state across restarts; written atomically, debounced, flushed on close. */
  readonly persistPath?: string;
  /** Debounce of persistence writes in ms (default 50). */
  readonly persistDelayMs?: number;
  /** Most request-log entries kept (default 10,000); when full, the older half is dropped. */
  readonly requestLogLimit?: number;
}

/** One handled request. Token values are never recorded. */
export interface RequestLogEntry {
  readonly service: ServiceName;
  readonly method: string;
  readonly path: string;
  /** Raw query string without `?` ("" when none). */
  readonly query: string;
  /** Response status; 0 when the connection was reset by an injected fault. */
  readonly status: number;
  readonly ms: number;
  /** True when an injected fault answered or delayed the request. */
  readonly fault?: true;
}

/** Connection and request counts of one service since start. */
export interface ServiceStats {
  readonly connections: number;
  readonly openConnections: number;
  readonly requests: number;
}

/** A running devserver. */
export interface DevServer {
  readonly urls: Readonly<Record<ServiceName, string>>;
  readonly rootTokens: Readonly<Record<ServiceName, string>>;
  /** Handled requests, oldest first (a live array; copy it to keep a view). */
  readonly requestLog: readonly RequestLogEntry[];
  readonly faults: FaultInjector;
  /** Returns a service's context (index clock, token store) for tests that drive state directly. */
  context(service: ServiceName): ServiceContext;
  /** Clears the request log. */
  resetLog(): void;
  /** Mints a token for a service; returns its value. */
  createToken(service: ServiceName, spec?: TokenSpec): string;
  /** Revokes a token by value; returns whether it existed. */
  revokeToken(service: ServiceName, token: string): boolean;
  /** Returns connection and request counts per service. */
  stats(): Record<ServiceName, ServiceStats>;
  /** Writes pending state to `persistPath` now. */
  flush(): Promise<void>;
  /** Stops both listeners, releases blocked queries, closes modules and flushes state. */
  close(): Promise<void>;
}

const SERVICE_NAMES: readonly ServiceName[] = ["secrets", "scheduler"];
const READ_METHODS = new Set(["GET", "HEAD", "LIST"]);

interface Host {
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
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Starts one listener per service on loopback and hosts the given service modules; resolves once both
 * listen. Services without a module answer 404 to everything.
 */
export async function startServiceHost(options: ServiceHostOptions = {}): Promise<DevServer> {
  const hostAddr = options.host ?? "127.0.0.1";
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const logLimit = options.requestLogLimit ?? 10_000;
  const faults = new FaultInjector();
  let log: RequestLogEntry[] = [];
  let persister: Persister | undefined;
  const markDirty = (): void => persister?.markDirty();

  const hosts = {} as Record<ServiceName, Host>;
  for (const name of SERVICE_NAMES) {
    const endpoint = options[name] ?? {};
    const headerNames: ServiceHeaderNames = { ...SPEC_HEADER_NAMES, ...endpoint.headerNames };
    const module = options.services?.find((s) => s.name === name);
    const enforce = name === "secrets" || options.acl !== false;
    const clock = new IndexClock();
    const tokens = new TokenStore(name);
    const ctx: ServiceContext = {
      name,
      headerNames,
      aclEnabled: enforce,
      tokens,
      clock,
      index: () => clock.current(),
      nextIndex: () => {
        markDirty();
        return clock.next();
      },
      waitForChange: (since, waitMs, fn) => clock.waitForChange(since, waitMs, fn),
      blockingQuery: async (req, fn = () => clock.current()) => {
        const params = parseBlockingQuery(req.query);
        return params === undefined ? fn() : clock.waitForChange(params.index, params.waitMs, fn);
      },
      queryMeta: (index, nextToken) => {
        const h: Record<string, string> = {
          [headerNames.index]: String(index),
          [headerNames.knownLeader]: "true",
          [headerNames.lastContact]: "0",
        };
        if (nextToken !== undefined && nextToken !== "") h[headerNames.nextToken] = nextToken;
        return h;
      },
      markDirty,
    };
    const router = new Router();
    module?.routes(router, ctx);
    hosts[name] = {
      name,
      module,
      router,
      ctx,
      tokenHeaderLower: headerNames.token.toLowerCase(),
      namespaceHeaderLower: headerNames.namespace.toLowerCase(),
      enforce,
      sockets: new Set(),
      connections: 0,
      requests: 0,
    };
  }

  // Root tokens: explicit option, else the persisted one, else random.
  const persisted = options.persistPath !== undefined ? readJsonIfExists(options.persistPath) : undefined;
  const restoredRoots = persisted !== undefined ? restoreState(persisted, hosts) : {};
  const rootTokens = {} as Record<ServiceName, string>;
  for (const name of SERVICE_NAMES) {
    const wanted = options[name]?.rootToken ?? restoredRoots[name];
    const existing = wanted !== undefined ? hosts[name].ctx.tokens.lookup(wanted) : undefined;
    rootTokens[name] =
      existing?.root === true && wanted !== undefined
        ? wanted
        : hosts[name].ctx.tokens.create(wanted !== undefined ? { token: wanted } : {}, true).token;
  }
  if (options.persistPath !== undefined) {
    persister = new Persister(
      options.persistPath,
      () => snapshotState(hosts, rootTokens),
      options.persistDelayMs ?? 50,
    );
  }

  const record = (entry: RequestLogEntry): void => {
    // Trim in halves: trimming one entry per request would move the whole array every time once full.
    if (log.length >= logLimit) log.splice(0, Math.max(1, log.length - Math.floor(logLimit / 2)));
    log.push(entry);
  };

  async function handle(host: Host, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
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

    let status: number;
    try {
      status = await route(host, req, res, sentMethod, sentPath, search);
    } catch (err) {
      status = err instanceof DevHttpError ? err.status : 500;
      const messages = err instanceof DevHttpError ? err.messages : [err instanceof Error ? err.message : String(err)];
      if (!res.headersSent) sendError(res, host.name, status, messages, err instanceof DevHttpError ? err.headers : undefined);
      else res.destroy();
    }
    done(status, delayed);
    if (status < 400 && !READ_METHODS.has(sentMethod)) markDirty();
  }

  async function applyFault(host: Host, fault: FaultSpec, req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> {
    if (fault.delayMs !== undefined && fault.delayMs > 0) await delay(fault.delayMs);
    if (fault.reset) {
      req.socket.destroy();
      return true;
    }
    if (fault.status === undefined) return false;
    const headers: Record<string, string | number> = {};
    if (fault.retryAfter !== undefined) headers["retry-after"] = String(fault.retryAfter);
    if (fault.body === undefined) {
      const rendered = renderError(host.name, ["injected fault"]);
      sendBody(res, fault.status, headers, rendered.body, rendered.contentType);
    } else if (typeof fault.body === "string") {
      sendBody(res, fault.status, headers, fault.body, host.name === "secrets" ? "application/json" : "text/plain; charset=utf-8");
    } else {
      sendBody(res, fault.status, headers, JSON.stringify(fault.body), "application/json");
    }
    return true;
  }

  async function route(
    host: Host,
    req: http.IncomingMessage,
    res: http.ServerResponse,
    sentMethod: string,
    sentPath: string,
    search: string,
  ): Promise<number> {
    const path = sentPath.length > 1 && sentPath.endsWith("/") ? sentPath.slice(0, -1) : sentPath;
    const query = new URLSearchParams(search);
    const method = host.name === "secrets" && sentMethod === "GET" && query.get("list") === "true" ? "LIST" : sentMethod;
    const match = host.router.match(method, path);
    if (match.kind === "not-found") {
      throw new DevHttpError(404, host.name === "secrets" ? [] : "404 page not found");
    }
    if (match.kind === "method-not-allowed") {
      throw new DevHttpError(405, host.name === "secrets" ? [] : "Invalid method", { allow: match.allowed.join(", ") });
    }
    const r = match.route;
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
    const out = await r.handler(devReq);
    return writeResponse(res, out, method === "HEAD");
  }

  function authorize(host: Host, req: DevRequest, tokenValue: string | undefined, rule: CapabilityRule | undefined): void {
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
    const headers: Record<string, string | number> = { ...out.headers };
    if (out.json !== undefined) {
      const status = out.status ?? 200;
      sendBody(res, status, headers, JSON.stringify(out.json), "application/json", head);
      return status;
    }
    if (out.text !== undefined) {
      const status = out.status ?? 200;
      sendBody(res, status, headers, out.text, (out.headers?.["content-type"] as string | undefined) ?? "text/plain; charset=utf-8", head);
      return status;
    }
    if (out.raw !== undefined) {
      const status = out.status ?? 200;
      sendBody(res, status, headers, out.raw, "application/octet-stream", head);
      return status;
    }
    const status = out.status ?? 204;
    sendBody(res, status, headers, undefined, undefined, head);
    return status;
  }

  const listen = (host: Host, port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
        // Errors are answered inside handle; this only guards against a failure while answering.
        handle(host, req, res).catch(() => res.destroy());
      };
      const tls = options.tls;
      const server = tls
        ? https.createServer(
            {
              cert: tls.cert,
              key: tls.key,
              ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
              requestCert: tls.requestClientCert === true,
              rejectUnauthorized: tls.requestClientCert === true,
            },
            onRequest,
          )
        : http.createServer(onRequest);
      server.on("connection", (socket: Socket) => {
        host.connections += 1;
        host.sockets.add(socket);
        socket.once("close", () => host.sockets.delete(socket));
      });
      server.on("upgrade", (req: http.IncomingMessage, socket: Socket, head: Buffer) => {
        host.requests += 1;
        let accepted: boolean;
        try {
          accepted = host.module?.upgrade?.(req, socket, head, host.ctx) ?? false;
        } catch {
          socket.destroy();
          return;
        }
        if (!accepted) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n");
      });
      server.once("error", reject);
      server.listen(port, hostAddr, () => {
        server.off("error", reject);
        const addr = server.address() as AddressInfo;
        const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
        host.server = server;
        host.url = `${tls ? "https" : "http"}://${shownHost}:${addr.port}`;
        resolve();
      });
    });

  // Stop accepting, release blocked queries, let modules close their own sockets (WebSockets), then give
  // in-flight handlers a moment before destroying whatever is left.
  const closeHosts = async (): Promise<void> => {
    const closed = SERVICE_NAMES.map((name) => {
      const host = hosts[name];
      host.ctx.clock.close();
      const server = host.server;
      if (server === undefined || !server.listening) return Promise.resolve();
      const done = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      return done;
    });
    const moduleErrors: unknown[] = [];
    for (const name of SERVICE_NAMES) {
      try {
        await hosts[name].module?.close?.();
      } catch (err) {
        moduleErrors.push(err);
      }
    }
    const force = setTimeout(() => {
      for (const name of SERVICE_NAMES) {
        hosts[name].server?.closeAllConnections();
        for (const s of hosts[name].sockets) s.destroy();
      }
    }, 250);
    force.unref();
    await Promise.all(closed);
    clearTimeout(force);
    if (moduleErrors.length > 0) throw new AggregateError(moduleErrors, "devserver: a service module failed to close");
  };

  try {
    await listen(hosts.secrets, options.secrets?.port ?? 0);
    await listen(hosts.scheduler, options.scheduler?.port ?? 0);
  } catch (err) {
    await closeHosts();
    throw err;
  }
  if (persister !== undefined && persisted === undefined) persister.markDirty();

  let closing: Promise<void> | undefined;
  return {
    urls: { secrets: hosts.secrets.url ?? "", scheduler: hosts.scheduler.url ?? "" },
    rootTokens,
    get requestLog() {
      return log;
    },
    faults,
    context: (service) => hosts[service].ctx,
    resetLog: () => {
      log = [];
    },
    createToken: (service, spec) => {
      const minted = hosts[service].ctx.tokens.create(spec);
      markDirty();
      return minted.token;
    },
    revokeToken: (service, token) => {
      const ok = hosts[service].ctx.tokens.revoke(token);
      if (ok) markDirty();
      return ok;
    },
    stats: () => {
      const out = {} as Record<ServiceName, ServiceStats>;
      for (const name of SERVICE_NAMES) {
        const h = hosts[name];
        out[name] = { connections: h.connections, openConnections: h.sockets.size, requests: h.requests };
      }
      return out;
    },
    flush: async () => {
      await persister?.flush();
    },
    close: () => {
      if (closing === undefined) {
        closing = (async () => {
          try {
            await closeHosts();
          } finally {
            await persister?.flush();
          }
        })();
      }
      return closing;
    },
  };
}
