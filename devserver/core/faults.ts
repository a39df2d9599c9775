import type { ServiceName } from "./errors";
import { compilePath, matchPath } from "./router";

/**
 * A fault to inject into the next matching requests. `path` is a route-style pattern (`/v1/job/:id`) or a
 * RegExp tested against the raw path. With none of `status`/`reset`, only `delayMs` applies and the request
 * is then handled normally.
 */
export interface FaultSpec {
  readonly service: ServiceName;
  /** Method as the client sent it (case-insensitive); any method if omitted. */
  readonly method?: string;
  readonly path: string | RegExp;
  /** How many matching requests to affect (default 1; `Infinity` for all). */
  readonly times?: number;
  /** Respond with this status instead of running the handler. */
  readonly status?: number;
  /** Seconds for a `Retry-After` header on the injected response. */
  readonly retryAfter?: number;
  /** Body of the injected response; default is the service-style error "injected fault". */
  readonly body?: string | Readonly<Record<string, unknown>>;
  /** Latency added before the request is answered (or reset). */
  readonly delayMs?: number;
  /** Destroy the connection instead of answering (the client sees a reset / socket hang-up). */
  readonly reset?: true;
  /**
   * With a 307 or 308 `status`: the address (scheme, host and port) of the node the redirect names, as a
   * standby names the active node; the `Location` header is that address plus the request's own path and
   * query, and the body is empty.
   */
  readonly location?: string;
  /**
   * Answer matching reads (GET, HEAD) from the state as it was before the latest write, as a standby that has
   * not yet caught up with the active node does; writes are unaffected. While such a fault is pending, the
   * server keeps a copy of its state from before each write. The read runs as usual otherwise.
   */
  readonly stale?: true;
}

/**
 * Answers the real clusters give while a leader changes, to pass as a fault (`{ service, path, times,
 * ...LEADER_CHANGE.noLeader }`). Texts as the services write them: Nomad 1.6.5 (nomad/rpc.go, helper/pool)
 * and OpenBao 2.6.2 (http/handler.go); the node addresses in them are placeholders.
 */
export const LEADER_CHANGE = Object.freeze({
  /** Scheduler: a server held the request for its RPC hold time and no leader was elected. Nothing applied. */
  noLeader: Object.freeze({ status: 500, body: "No cluster leader" }),
  /** Scheduler: the RPC forwarded to the old leader could not connect to it. Nothing applied. */
  forwardRefused: Object.freeze({
    status: 500,
    body: "rpc error: failed to get conn: dial tcp 127.0.0.1:4647: connect: connection refused",
  }),
  /**
   * Scheduler: the RPC to the old leader waited on another caller's dial to it, which failed (recorded from
   * a three-server Nomad 1.6.5 while its leader was killed). Nothing applied.
   */
  forwardNoConn: Object.freeze({
    status: 500,
    body: "rpc error: failed to get conn: rpc error: lead thread didn't get connection",
  }),
  /** Scheduler: the old leader took the forwarded RPC and its answer was lost with it. Maybe applied. */
  forwardLost: Object.freeze({ status: 500, body: "rpc error: EOF" }),
  /** Secrets: a standby while no node is active (no leader address known). */
  noActiveNode: Object.freeze({ status: 503, body: Object.freeze({ errors: ["no active Vault instance found"] }) }),
  /** Secrets: a standby that knows no active node when it forwards a request. */
  standbyWithoutActive: Object.freeze({
    status: 500,
    body: Object.freeze({ errors: ["local node not active but active cluster node not found"] }),
  }),
  /** Secrets: a node restarted after a crash, not unsealed yet (recorded from a three-node OpenBao 2.6.2). */
  sealed: Object.freeze({ status: 503, body: Object.freeze({ errors: ["Vault is sealed"] }) }),
});

const READ_METHODS = new Set(["GET", "HEAD"]);

/** A registered fault; `hits` counts the requests it affected. */
export interface FaultHandle {
  readonly spec: FaultSpec;
  readonly hits: number;
  readonly remaining: number;
  /** Removes the fault before it is used up. */
  remove(): void;
}

class Fault implements FaultHandle {
  hits = 0;
  remaining: number;
  private readonly pattern: (path: string) => boolean;

  constructor(
    readonly spec: FaultSpec,
    private readonly owner: FaultInjector,
  ) {
    this.remaining = spec.times ?? 1;
    if (typeof spec.path === "string") {
      const compiled = compilePath(spec.path);
      this.pattern = (p) => matchPath(compiled, p) !== undefined;
    } else {
      const re = spec.path;
      this.pattern = (p) => {
        re.lastIndex = 0;
        return re.test(p);
      };
    }
  }

  matches(service: ServiceName, method: string, rawPath: string): boolean {
    return (
      this.remaining > 0 &&
      this.spec.service === service &&
      (this.spec.method === undefined || this.spec.method.toUpperCase() === method) &&
      (this.spec.stale !== true || READ_METHODS.has(method)) &&
      this.pattern(rawPath)
    );
  }

  remove(): void {
    this.owner.remove(this);
  }
}

/** Holds the injected faults of a server; the request pipeline consumes them in registration order. */
export class FaultInjector {
  private faults: Fault[] = [];

  /** Adds a fault; returns a handle that counts its hits. */
  add(spec: FaultSpec): FaultHandle {
    if (spec.status === undefined && spec.reset === undefined && spec.delayMs === undefined && spec.stale !== true) {
      throw new TypeError("fault needs status, reset, delayMs or stale");
    }
    if (spec.location !== undefined && spec.status !== 307 && spec.status !== 308) {
      throw new TypeError("fault location needs status 307 or 308");
    }
    const fault = new Fault(spec, this);
    this.faults.push(fault);
    return fault;
  }

  /** Removes every fault. */
  clear(): void {
    this.faults = [];
  }

  /** Removes one fault. */
  remove(handle: FaultHandle): void {
    this.faults = this.faults.filter((f) => f !== handle);
  }

  /** Tells whether a stale-read fault of this service can still fire (the server then keeps pre-write state). */
  wantsStale(service: ServiceName): boolean {
    return this.faults.some((f) => f.remaining > 0 && f.spec.service === service && f.spec.stale === true);
  }

  /** Returns the number of faults that can still fire. */
  get pending(): number {
    return this.faults.filter((f) => f.remaining > 0).length;
  }

  /** Consumes one use of the first matching fault; returns its spec or undefined. */
  take(service: ServiceName, method: string, rawPath: string): FaultSpec | undefined {
    if (this.faults.length === 0) return undefined;
    for (const f of this.faults) {
      if (f.matches(service, method, rawPath)) {
        f.remaining -= 1;
        f.hits += 1;
        if (f.remaining <= 0) this.remove(f);
        return f.spec;
      }
    }
    return undefined;
  }
}
