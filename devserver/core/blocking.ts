import { EventEmitter } from "node:events";
import { DevHttpError } from "./errors";

/** Longest blocking wait the scheduler honours (its documented cap), in ms. */
export const MAX_WAIT_MS = 300_000;

const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

const DURATION = /^([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)/;

/**
 * Parses a Go duration string ("5s", "300ms", "1m30s", "1.5h", "0") into milliseconds; returns undefined
 * when the text is not a valid, non-negative Go duration.
 */
export function parseGoDuration(text: string): number | undefined {
  if (text === "0") return 0;
  if (text === "") return undefined;
  let rest = text.startsWith("+") ? text.slice(1) : text;
  let total = 0;
  while (rest.length > 0) {
    const m = DURATION.exec(rest);
    if (m === null) return undefined;
    const value = Number(m[1]);
    const unit = UNIT_MS[m[2] ?? ""];
    if (!Number.isFinite(value) || unit === undefined) return undefined;
    total += value * unit;
    rest = rest.slice(m[0].length);
  }
  return total;
}

/** Blocking parameters of a request: the index to wait past and how long to wait. */
export interface BlockingParams {
  readonly index: number;
  readonly waitMs: number;
}

/**
 * Reads `index` and `wait` from a query the way the scheduler does; returns undefined when no `index` asks
 * to block. Throws 400 "Invalid index" / "Invalid wait time" for malformed values; caps the wait at 300s.
 */
export function parseBlockingQuery(query: URLSearchParams): BlockingParams | undefined {
  const wait = query.get("wait");
  let waitMs = MAX_WAIT_MS;
  if (wait !== null) {
    const parsed = parseGoDuration(wait);
    if (parsed === undefined) throw new DevHttpError(400, "Invalid wait time");
    waitMs = Math.min(parsed, MAX_WAIT_MS);
  }
  const index = query.get("index");
  if (index === null) return undefined;
  if (!/^[0-9]+$/.test(index)) throw new DevHttpError(400, "Invalid index");
  const n = Number(index);
  if (!Number.isSafeInteger(n)) throw new DevHttpError(400, "Invalid index");
  return n === 0 ? undefined : { index: n, waitMs };
}

/**
 * A service's monotonic raft-like index. Every state change calls `next()`, which wakes blocked queries
 * through an event (no polling).
 */
export class IndexClock {
  private value: number;
  private readonly events = new EventEmitter();
  private closed = false;
  private wakeQueued = false;

  constructor(start = 1) {
    this.value = start;
    // Every pending blocking query is one listener; there is no leak to warn about.
    this.events.setMaxListeners(0);
  }

  /** Returns the current index. */
  current(): number {
    return this.value;
  }

  /**
   * Advances the index by one and wakes waiters; returns the new index. Waiters wake in a microtask, after
   * the caller's synchronous code, so `job.ModifyIndex = ctx.nextIndex()` is visible to them.
   */
  next(): number {
    this.value += 1;
    if (!this.wakeQueued) {
      this.wakeQueued = true;
      queueMicrotask(() => {
        this.wakeQueued = false;
        this.events.emit("change", this.value);
      });
    }
    return this.value;
  }

  /** Moves the index forward to at least `value` (used after a restore); never moves it back. */
  advanceTo(value: number): void {
    if (value > this.value) this.value = value;
  }

  /** Returns the number of pending waits (for tests). */
  waiting(): number {
    return this.events.listenerCount("change");
  }

  /**
   * Resolves with `currentIndexFn()` once it exceeds `sinceIndex`, or when `waitMs` elapses, or when the
   * clock closes. `currentIndexFn` defaults to the clock itself; pass a resource's modify index to wait
   * for that resource only.
   */
  waitForChange(sinceIndex: number, waitMs: number, currentIndexFn: () => number = () => this.value): Promise<number> {
    const now = currentIndexFn();
    if (now > sinceIndex || waitMs <= 0 || this.closed) return Promise.resolve(now);
    return new Promise<number>((resolve) => {
      const finish = (): void => {
        clearTimeout(timer);
        this.events.off("change", onChange);
        this.events.off("close", finish);
        resolve(currentIndexFn());
      };
      const onChange = (): void => {
        if (currentIndexFn() > sinceIndex) finish();
      };
      const timer = setTimeout(finish, waitMs);
      this.events.on("change", onChange);
      this.events.once("close", finish);
    });
  }

  /** Releases every pending wait (server shutdown). */
  close(): void {
    this.closed = true;
    this.events.emit("close");
  }
}
