import type * as net from "node:net";
import { IndexClock, parseBlockingQuery } from "./blocking";
import { renderError, type ServiceName } from "./errors";
import { FaultInjector } from "./faults";
import { createGuardedServer, isLoopbackHost } from "./listener";
import { SPEC_HEADER_NAMES } from "./names";
import type { DevServer, RequestLogEntry, ServiceHostOptions, ServiceStats } from "./options";
import { Persister, readJsonIfExists } from "./persist";
import { createRequestHandler, type HostedService } from "./pipeline";
import { Router } from "./router";
import { restoreState, snapshotState } from "./state";
import { TokenStore } from "./tokens";
import type { ServiceContext, ServiceHeaderNames } from "./types";

export type {
  DevServer,
  DevTlsOptions,
  RequestLogEntry,
  ServiceEndpointOptions,
  ServiceHostOptions,
  ServiceStats,
} from "./options";

const SERVICE_NAMES: readonly ServiceName[] = ["secrets", "scheduler"];

export { isLoopbackHost };

/**
 * Starts one listener per service on loopback and hosts the given service modules; resolves once both
 * listen. Services without a module answer 404 to everything.
 */
export async function startServiceHost(options: ServiceHostOptions = {}): Promise<DevServer> {
  const hostAddr = options.host ?? "127.0.0.1";
  if (!options.allowNonLoopback && !isLoopbackHost(hostAddr)) {
    throw new Error(
      `refusing to listen on ${JSON.stringify(hostAddr)}, which is not a loopback address: ` +
        "it would expose the services to the network (allowNonLoopback / --allow-non-loopback says you mean it)",
    );
  }
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const logLimit = options.requestLogLimit ?? 10_000;
  const faults = new FaultInjector();
  let log: RequestLogEntry[] = [];
  let persister: Persister | undefined;
  const markDirty = (): void => persister?.markDirty();

  const hosts = {} as Record<ServiceName, HostedService>;
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
  let restoredRoots: Partial<Record<ServiceName, string>> = {};
  let persisted: unknown;
  try {
    persisted = options.persistPath !== undefined ? readJsonIfExists(options.persistPath) : undefined;
    const warn = options.onRestoreWarning ?? ((m: string): void => console.warn(`devserver: ${m}`));
    if (persisted !== undefined) restoredRoots = restoreState(persisted, hosts, warn);
  } catch (err) {
    // A state file that cannot be read (or is of a newer layout) stops the start: release what the modules
    // opened in `routes` (timers, the cloud listener) before saying why.
    await Promise.allSettled(SERVICE_NAMES.map(async (name) => hosts[name].module?.close?.()));
    throw err;
  }
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

  const handle = createRequestHandler({ faults, maxBodyBytes: maxBody, record, markDirty });

  const listen = (host: HostedService, port: number): Promise<void> =>
    new Promise((resolve, reject) => {
      const tls = options.tls;
      const server = createGuardedServer({
        ...(tls
          ? {
              tls: {
                cert: tls.cert,
                key: tls.key,
                ...(tls.ca !== undefined ? { ca: tls.ca } : {}),
                requestCert: tls.requestClientCert === true,
                rejectUnauthorized: tls.requestClientCert === true,
              },
            }
          : {}),
        hostNames: [hostAddr, ...(options.hostNames ?? [])],
        renderError: (status, message) => renderError(host.name, [message]),
        onRequest: (req, res) => handle(host, req, res),
        onUpgrade: (req, socket, head) => {
          host.requests += 1;
          return host.module?.upgrade?.(req, socket, head, host.ctx) ?? false;
        },
      });
      server.on("connection", (socket: net.Socket) => {
        host.connections += 1;
        host.sockets.add(socket);
        socket.once("close", () => host.sockets.delete(socket));
      });
      server.once("error", reject);
      server.listen(port, hostAddr, () => {
        server.off("error", reject);
        const addr = server.address() as net.AddressInfo;
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
  // A new file is written at once; a restored one too, so a file of an older layout is written back in the
  // current one (with the defaults of fields it lacked) whether or not anything changes afterwards.
  persister?.markDirty();

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
