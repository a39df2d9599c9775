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
}

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
    if (spec.status === undefined && spec.reset === undefined && spec.delayMs === undefined) {
      throw new TypeError("fault needs status, reset or delayMs");
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
