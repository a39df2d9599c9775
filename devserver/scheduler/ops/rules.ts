// Rules and texts shared by the write operations: check-and-set prefix, dispatch payload limit, the job
// transitions the server refuses, and how it formats warnings and sizes.
import { DevHttpError } from "../../core";
import { bool, obj, str, type JsonObject } from "../state/json";

/** Prefix of every check-and-set failure (reference/scheduler.md §3.2). */
export const ENFORCE_PREFIX = "Enforcing job modify index";
/** Largest dispatch payload in bytes (scheduler-jobs-api.md, "Limits"). */
export const DISPATCH_PAYLOAD_LIMIT = 16384;

/** Formats warnings the way the server merges them ("N warning(s):" then one "* " line each). */
export function mergeWarnings(list: readonly string[]): string {
  if (list.length === 0) return "";
  return `${list.length} warning(s):\n${list.map((w) => `\n* ${w}`).join("")}`;
}

/** Formats a byte count like go-humanize's SI `Bytes`. */
export function humanBytes(n: number): string {
  if (n < 10) return `${n} B`;
  const units = ["B", "kB", "MB", "GB", "TB"];
  const e = Math.min(Math.floor(Math.log(n) / Math.log(1000)), units.length - 1);
  const v = n / 1000 ** e;
  return `${v < 10 ? v.toFixed(1) : v.toFixed(0)} ${units[e]}`;
}

/** Returns whether a job is periodic (a periodic block, even a disabled one). */
export function isPeriodic(job: JsonObject): boolean {
  return obj(job, "Periodic") !== undefined;
}

/** Returns whether a job is a parameterized template (dispatched children are not). */
export function isParameterized(job: JsonObject): boolean {
  return obj(job, "ParameterizedJob") !== undefined && !bool(job, "Dispatched");
}

/** Returns the server's generic 500 with `message` as the plain-text body. */
export function err500(message: string): DevHttpError {
  return new DevHttpError(500, message);
}

/** Validates a type, periodic, parameterized or dispatch transition (texts of the real server). */
export function validateJobUpdate(old: JsonObject | undefined, next: JsonObject): void {
  if (old === undefined) {
    if (bool(next, "Dispatched")) throw err500("job can't be submitted with 'Dispatched' set");
    return;
  }
  if (str(old, "Type") !== str(next, "Type")) {
    throw err500(
      `cannot update job from type ${JSON.stringify(str(old, "Type"))} to ${JSON.stringify(str(next, "Type"))}`,
    );
  }
  if (isPeriodic(old) && !isPeriodic(next)) throw err500("cannot update periodic job to being non-periodic");
  if (isPeriodic(next) && !isPeriodic(old)) throw err500("cannot update non-periodic job to being periodic");
  if (isParameterized(old) && !isParameterized(next))
    throw err500("cannot update parameterized job to being non-parameterized");
  if (isParameterized(next) && !isParameterized(old))
    throw err500("cannot update non-parameterized job to being parameterized");
  if (bool(old, "Dispatched") !== bool(next, "Dispatched")) throw err500("field 'Dispatched' is read-only");
}
