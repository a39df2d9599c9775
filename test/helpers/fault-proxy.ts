/**
 * A fault proxy on loopback (port 0) in front of one service: it forwards requests to the service and, when
 * told (a script of faults) or by chance (a seeded, bounded random mode), breaks them in the ways a real
 * network and a real cluster do:
 *
 * - `reset-before`: the connection is reset before the request is forwarded (the server never sees it);
 * - `reset-after`: the request is forwarded, the server applies it, then the connection is reset instead of
 *   answering (the client cannot tell whether anything happened);
 * - `error-after`: the request is forwarded and applied, then a 502/504 comes back (a gateway that gave up);
 * - `status`: a 5xx (503 or 500) is answered without forwarding, for a burst of consecutive requests;
 * - `rate-limit`: 429 with `Retry-After`, without forwarding;
 * - `delay`: the request is held for a while, then forwarded normally.
 *
 * Everything is counted so tests can say which faults an operation met.
 */
import http from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** A kind of fault. */
export type FaultKind = "reset-before" | "reset-after" | "error-after" | "status" | "rate-limit" | "delay";

/** All fault kinds. */
export const FAULT_KINDS: readonly FaultKind[] = [
  "reset-before",
  "reset-after",
  "error-after",
  "status",
  "rate-limit",
  "delay",
];

/** Which requests a fault may hit. */
export interface FaultMatch {
  method?: string;
  /** Tested against the path without the query string. */
  path?: RegExp;
}

/** A scripted fault: hits the next `times` matching requests (default 1). */
export interface ScriptedFault extends FaultMatch {
  kind: FaultKind;
  times?: number;
  /** Matching requests to let through before the fault starts (default 0). */
  skip?: number;
  /** `status`/`error-after`: the status to answer (default 503 / 502). */
  status?: number;
  /** `rate-limit`: the Retry-After value, in seconds (fractions allowed; default 0.01). */
  retryAfter?: number;
  /** `delay`: milliseconds (default 50). */
  delayMs?: number;
}

/** The seeded random mode: each matching request meets a fault with probability `rate`, at most `maxFaults` in all. */
export interface RandomFaults extends FaultMatch {
  seed: number;
  rate: number;
  kinds: readonly FaultKind[];
  maxFaults: number;
  /** Longest burst of `status` faults (default 3). */
  maxBurst?: number;
  /** Longest `delay` (default 40 ms). */
  maxDelayMs?: number;
  /** Requests never faulted, whatever else matches (blocking queries, say). */
  exclude?: (method: string, path: string) => boolean;
}

/** One request the proxy saw. */
export interface ProxyLogEntry {
  method: string;
  path: string;
  /** The query string as the client sent it (before `rewrite`), without its `?`; empty when none. */
  query: string;
  fault?: FaultKind;
  /** True when the request reached the service. */
  forwarded: boolean;
}

/** A running proxy. */
export interface FaultProxy {
  /** The proxy's base URL, to use as the service address. */
  readonly url: string;
  readonly log: ProxyLogEntry[];
  /** Faults injected so far, by kind. */
  readonly injected: Record<FaultKind, number>;
  /** Adds scripted faults (they take precedence over the random mode). */
  script(...faults: ScriptedFault[]): void;
  /** Starts (or, with undefined, stops) the random mode. */
  random(opts: RandomFaults | undefined): void;
  /** Faults injected since `mark` (an index into `log`), by kind. */
  faultsSince(mark: number): Partial<Record<FaultKind, number>>;
  /** Removes scripted faults and stops the random mode. */
  clear(): void;
  close(): Promise<void>;
}

/** A small seeded generator (mulberry32): the same seed gives the same faults for the same requests. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function matches(m: FaultMatch, method: string, path: string): boolean {
  return (m.method === undefined || m.method.toUpperCase() === method) && (m.path === undefined || m.path.test(path));
}

interface Decision {
  kind: FaultKind;
  status?: number;
  retryAfter?: number;
  delayMs?: number;
}

/** How the proxy changes what it forwards. */
export interface ProxyOptions {
  /**
   * Changes a request's path or query before it is forwarded (a server that pages by fewer items than
   * asked, say); the log keeps what the client sent.
   */
  rewrite?: (method: string, url: URL) => void;
}

/**
 * Starts a proxy to `target` (an origin such as `http://127.0.0.1:1234`) on a loopback port; `service` sets
 * the style of injected error bodies (JSON `errors` for the secrets service, plain text for the scheduler).
 */
export async function startFaultProxy(
  target: string,
  service: "secrets" | "scheduler",
  options: ProxyOptions = {},
): Promise<FaultProxy> {
  const upstream = new URL(target);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const scripted: Array<ScriptedFault & { left: number; skipLeft: number }> = [];
  let rand: { opts: RandomFaults; next: () => number; used: number; burst: number; burstStatus: number } | undefined;
  const log: ProxyLogEntry[] = [];
  const injected = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  const sockets = new Set<Socket>();

  function decide(method: string, path: string): Decision | undefined {
    for (const f of scripted) {
      if (f.left > 0 && matches(f, method, path)) {
        if (f.skipLeft > 0) {
          f.skipLeft -= 1;
          continue;
        }
        f.left -= 1;
        return { kind: f.kind, status: f.status, retryAfter: f.retryAfter, delayMs: f.delayMs };
      }
    }
    const r = rand;
    if (r === undefined || !matches(r.opts, method, path) || r.opts.exclude?.(method, path)) return undefined;
    if (r.burst > 0) {
      r.burst -= 1;
      return { kind: "status", status: r.burstStatus };
    }
    if (r.used >= r.opts.maxFaults || r.next() >= r.opts.rate) return undefined;
    r.used += 1;
    const kind = r.opts.kinds[Math.floor(r.next() * r.opts.kinds.length)] ?? "status";
    switch (kind) {
      case "status": {
        const status = r.next() < 0.5 ? 503 : 500;
        // The rest of the burst follows on the next matching requests (bounded by maxBurst).
        r.burst = Math.floor(r.next() * (r.opts.maxBurst ?? 3));
        r.burstStatus = status;
        return { kind, status };
      }
      case "error-after":
        return { kind, status: r.next() < 0.5 ? 502 : 504 };
      case "rate-limit":
        return { kind, retryAfter: 0.01 };
      case "delay":
        return { kind, delayMs: 1 + Math.floor(r.next() * (r.opts.maxDelayMs ?? 40)) };
      default:
        return { kind };
    }
  }

  const server = http.createServer((req, res) => {
    const method = (req.method ?? "GET").toUpperCase();
    const asSent = req.url ?? "/";
    const at = asSent.indexOf("?");
    const path = at < 0 ? asSent : asSent.slice(0, at);
    const query = at < 0 ? "" : asSent.slice(at + 1);
    // The request goes on as sent, byte for byte, unless a rewrite is asked for.
    let full = asSent;
    if (options.rewrite !== undefined) {
      const url = new URL(asSent, upstream);
      options.rewrite(method, url);
      full = url.pathname + url.search;
    }
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const d = decide(method, path);
      const entry: ProxyLogEntry = { method, path, query, forwarded: false, ...(d ? { fault: d.kind } : {}) };
      log.push(entry);
      if (d) injected[d.kind] += 1;
      const body = Buffer.concat(chunks);
      const secretsStyle = service === "secrets";
      const errorBody = (msg: string) => (secretsStyle ? JSON.stringify({ errors: [msg] }) : msg);
      switch (d?.kind) {
        case "reset-before":
          req.socket.resetAndDestroy();
          return;
        case "status":
          res.writeHead(d.status ?? 503, { "content-type": secretsStyle ? "application/json" : "text/plain" });
          res.end(
            errorBody(
              d.status === 500 ? (secretsStyle ? "internal error" : "rpc error: EOF") : "injected: service unavailable",
            ),
          );
          return;
        case "rate-limit":
          res.writeHead(429, { "retry-after": String(d.retryAfter ?? 0.01), "content-type": "text/plain" });
          res.end(errorBody("injected: too many requests"));
          return;
        default:
          break;
      }
      const forward = () => {
        const headers = { ...req.headers, host: upstream.host };
        const up = http.request(
          { host: upstream.hostname, port: upstream.port, method, path: full, headers, agent },
          (ur) => {
            const out: Buffer[] = [];
            ur.on("data", (c: Buffer) => out.push(c));
            ur.on("end", () => {
              entry.forwarded = true;
              if (d?.kind === "reset-after") {
                req.socket.resetAndDestroy();
                return;
              }
              if (d?.kind === "error-after") {
                res.writeHead(d.status ?? 502, { "content-type": "text/plain" });
                res.end(errorBody("injected: bad gateway"));
                return;
              }
              const h: Record<string, string | string[]> = {};
              for (const [k, v] of Object.entries(ur.headers)) {
                if (v === undefined || k === "connection" || k === "transfer-encoding" || k === "keep-alive") continue;
                h[k] = v;
              }
              res.writeHead(ur.statusCode ?? 502, h);
              res.end(Buffer.concat(out));
            });
            ur.on("error", () => req.socket.destroy());
          },
        );
        up.on("error", () => req.socket.destroy());
        up.end(body);
      };
      if (d?.kind === "delay") setTimeout(forward, d.delayMs ?? 50);
      else forward();
    });
  });
  server.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    log,
    injected,
    script(...faults) {
      for (const f of faults) scripted.push({ ...f, left: f.times ?? 1, skipLeft: f.skip ?? 0 });
    },
    random(opts) {
      rand =
        opts === undefined ? undefined : { opts, next: seededRandom(opts.seed), used: 0, burst: 0, burstStatus: 503 };
    },
    faultsSince(mark) {
      const out: Partial<Record<FaultKind, number>> = {};
      for (const e of log.slice(mark)) if (e.fault) out[e.fault] = (out[e.fault] ?? 0) + 1;
      return out;
    },
    clear() {
      scripted.length = 0;
      rand = undefined;
    },
    async close() {
      for (const s of sockets) s.destroy();
      agent.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
