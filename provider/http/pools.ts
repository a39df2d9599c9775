/**
 * The undici keep-alive pools of this process, one per origin and TLS setting, shared by every HttpCore
 * (./core.ts), and the two parts of undici they need, loaded with the first pool.
 */
import { createHash } from "node:crypto";
import type { Dispatcher, Pool } from "undici";
import { isLocalhostName, loopbackLookup } from "./loopback";
import type { ResolvedConnection } from "./settings";

/** The two parts of undici the core uses. */
interface UndiciParts {
  Pool: typeof import("undici").Pool;
  request: (this: Dispatcher, opts: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
}
let undici: UndiciParts | undefined;

/**
 * Loads undici's Pool and its request API with the first pool, never with this module (a preview with
 * nothing to ask the server needs neither), and only those two: the package's index also loads fetch,
 * WebSocket, caches, proxies and mocks, 110 modules that took about 110 ms in a provider host, where these
 * 30 modules take about 23 ms. The paths are those of the pinned undici release (the package has no
 * exports map); test/provider/http/undici-parts.test.ts checks them against the full package.
 */
export function undiciParts(): UndiciParts {
  if (undici === undefined) {
    const Pool = require("undici/lib/dispatcher/pool") as UndiciParts["Pool"];
    const request = require("undici/lib/api/api-request") as UndiciParts["request"];
    undici = { Pool, request };
  }
  return undici;
}

export interface PoolEntry {
  pool: Pool;
  listeners: Set<(origin: string) => void>;
}
const pools = new Map<string, PoolEntry>();

function poolKey(conn: ResolvedConnection): string {
  const h = createHash("sha256");
  h.update(conn.origin);
  h.update(JSON.stringify(conn.tls));
  return h.digest("hex");
}

export function poolFor(conn: ResolvedConnection): PoolEntry {
  const key = poolKey(conn);
  let entry = pools.get(key);
  if (entry === undefined) {
    const { Pool: UndiciPool } = undiciParts();
    const pool = new UndiciPool(conn.origin, {
      connections: 32,
      pipelining: 1,
      keepAliveTimeout: 30_000,
      connect: {
        ...(conn.tls.ca !== undefined ? { ca: conn.tls.ca } : {}),
        ...(conn.tls.cert !== undefined ? { cert: conn.tls.cert } : {}),
        ...(conn.tls.key !== undefined ? { key: conn.tls.key } : {}),
        ...(conn.tls.servername !== undefined ? { servername: conn.tls.servername } : {}),
        rejectUnauthorized: conn.tls.rejectUnauthorized,
        // `localhost` and `*.localhost` go to loopback without asking a resolver (see ./loopback.ts).
        ...(isLocalhostName(new URL(conn.origin).hostname) ? { lookup: loopbackLookup } : {}),
      },
    });
    const listeners = new Set<(origin: string) => void>();
    pool.on("connect", (origin) => {
      for (const l of listeners) l(String(origin));
    });
    entry = { pool, listeners };
    pools.set(key, entry);
  }
  return entry;
}

/** Counts closeConnections calls: an HttpCore holding a pool from before one takes its pool again. */
let generation = 0;

/** The count of closeConnections calls so far (see `HttpCore`'s pool). */
export function poolsGeneration(): number {
  return generation;
}

/** Closes every pooled connection of this process (scripts call it before exiting early). */
export async function closeConnections(): Promise<void> {
  const all = [...pools.values()];
  pools.clear();
  generation++;
  await Promise.all(all.map((e) => e.pool.close().catch(() => undefined)));
}
