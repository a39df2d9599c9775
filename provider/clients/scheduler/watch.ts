/**
 * Blocking queries as an async iterator: each read passes the last response's index back as `waitIndex`,
 * so the server answers only when something changed (or the wait ran out).
 */
import type { ReadOptions, Result } from "./base";

/** Options of {@link watch}. */
export interface WatchOptions {
  /** Longest wait of each blocking read in ms (default 300 s, the server's cap). */
  waitMs?: number;
  /** Start from this index: the first value comes only after a change past it. Default: yield at once. */
  startIndex?: number;
  signal?: AbortSignal;
}

/**
 * Yields the result of `read` now, then again each time the server's index moves past the last one seen.
 * Wait timeouts with no change are not yielded. Stops when `signal` aborts (the pending read throws
 * ApiError `aborted`, which ends the iteration quietly).
 */
export async function* watch<T>(
  read: (opts: ReadOptions) => Promise<Result<T>>,
  options: WatchOptions = {},
): AsyncGenerator<Result<T>, void, undefined> {
  let index = options.startIndex ?? 0;
  let first = options.startIndex === undefined;
  while (!options.signal?.aborted) {
    let res: Result<T>;
    try {
      res = await read({
        waitIndex: first ? undefined : index,
        waitMs: first ? undefined : options.waitMs,
        signal: options.signal,
      });
    } catch (e) {
      if (options.signal?.aborted) return;
      throw e;
    }
    const next = res.meta.lastIndex ?? 0;
    if (first || next > index) {
      first = false;
      // Never wait on index 0: the server would answer at once, and the loop would spin.
      index = Math.max(next, 1);
      yield res;
    } else if (next < index) {
      // An index that went backwards (a restored server): read afresh, as the real clients do.
      first = true;
    }
  }
}
