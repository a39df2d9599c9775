// JSON value helpers for the scheduler's loose records. Jobs are kept as the JSON the client sent (after
// admission), never as typed structs, so fields this devserver does not know survive a round trip.

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | JsonObject;

/** A JSON object. */
export interface JsonObject {
  [key: string]: Json;
}

/** Returns whether `v` is a plain JSON object (not an array, not null). */
export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Returns whether two JSON values are structurally equal (object key order ignored). */
export function deepEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(b, k)) return false;
    if (!deepEqual(a[k], b[k])) return false;
  }
  return true;
}

/** Returns the string at `key`, or `fallback` when absent or not a string. */
export function str(o: JsonObject | undefined, key: string, fallback = ""): string {
  const v = o?.[key];
  return typeof v === "string" ? v : fallback;
}

/** Returns the number at `key`, or `fallback` when absent or not a number. */
export function num(o: JsonObject | undefined, key: string, fallback = 0): number {
  const v = o?.[key];
  return typeof v === "number" && Number.isFinite(v) ? v : fallback;
}

/** Returns the boolean at `key` (false when absent). */
export function bool(o: JsonObject | undefined, key: string): boolean {
  return o?.[key] === true;
}

/** Returns the object at `key`, or undefined. */
export function obj(o: JsonObject | undefined, key: string): JsonObject | undefined {
  const v = o?.[key];
  return isObject(v) ? v : undefined;
}

/** Returns the objects in the list at `key` (non-objects skipped; [] when absent). */
export function objs(o: JsonObject | undefined, key: string): JsonObject[] {
  const v = o?.[key];
  return Array.isArray(v) ? v.filter(isObject) : [];
}

/** Returns the strings in the list at `key` ([] when absent). */
export function strs(o: JsonObject | undefined, key: string): string[] {
  const v = o?.[key];
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** Returns the string map at `key` (non-string values skipped). */
export function strMap(o: JsonObject | undefined, key: string): Record<string, string> {
  const v = obj(o, key);
  const out: Record<string, string> = {};
  if (v === undefined) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === "string") out[k] = x;
  return out;
}

/** Converts an unknown parsed value into Json, dropping undefined and non-JSON values. */
export function toJson(v: unknown): Json {
  if (v === null || typeof v === "boolean" || typeof v === "string") return v;
  if (typeof v === "number") return Number.isFinite(v) ? v : null;
  if (Array.isArray(v)) return v.map(toJson);
  if (typeof v === "object") {
    const out: JsonObject = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (x !== undefined) out[k] = toJson(x);
    }
    return out;
  }
  return null;
}

/** Returns the current time in unix nanoseconds, as the scheduler's integer timestamps carry it. */
export function nowNanos(): number {
  return Date.now() * 1_000_000;
}
