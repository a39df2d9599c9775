/**
 * Cheap resource registration. Pulumi's Node SDK gives every output property of a resource four promises and
 * records a stack trace on each one (`debuggablePromise`, kept only for its leaked-promise report), and the
 * program runs under ts-node's source-map support, which maps every frame of every trace. A Job has twenty
 * output properties, so its constructor spent about 30 ms on stack traces (200 Jobs: 8.4 s of a 28 s
 * preview on the benchmark machine; see bench/scale.js). Our constructors therefore call `super` with stack
 * capture off. Pulumi's own source position of the resource is unaffected (it raises the limit itself
 * while it reads the call site), and an error thrown while registering gets the caller's stack back.
 */

/** Turns stack capture off; returns the limit to restore. */
export function pauseStackTraces(): number {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  return limit;
}

/**
 * Restores the stack limit; given an error thrown while it was off, captures its stack again (from the
 * resource constructor `ctor`'s caller) and returns it.
 */
export function resumeStackTraces(
  limit: number,
  error?: unknown,
  ctor?: abstract new (...args: never[]) => unknown,
): unknown {
  Error.stackTraceLimit = limit;
  if (error instanceof Error && ctor !== undefined) Error.captureStackTrace(error, ctor);
  return error;
}
