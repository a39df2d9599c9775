/**
 * Normal forms of the method's values, so that what a user wrote and what the server echoes compare
 * equal when they mean the same thing: durations as integer seconds, lists with `null`/`[]`/`[""]` alike,
 * CIDRs with their prefix, mount paths without slashes.
 */
import { isIP } from "node:net";
import { parseGoDuration } from "../../duration";
import { encodeSegments } from "../../http/path";

/**
 * Returns a duration in whole seconds: a number is seconds, a string is integer seconds ("90") or a Go
 * duration with an optional day unit ("90s", "1h30m", "2d"). Returns undefined when it is neither.
 */
export function durationSeconds(v: string | number): number | undefined {
  if (typeof v === "number") return Number.isFinite(v) ? Math.trunc(v) : undefined;
  const s = v.trim();
  if (/^-?\d+$/.test(s)) return Number(s);
  const ms = parseGoDuration(s, { days: true });
  if (ms === undefined) return undefined;
  const secs = Math.trunc(Math.abs(ms) / 1000 + 1e-9);
  return s.startsWith("-") ? -secs : secs;
}

/** Returns a duration as the wire form the service parses everywhere: `"<n>s"`. */
export function durationWire(seconds: number): string {
  return `${seconds}s`;
}

/** Returns a list with blanks removed: `null`, `[]` and `[""]` all become `[]`. */
export function cleanList(v: readonly string[] | null | undefined): string[] {
  return (v ?? []).map((x) => x.trim()).filter((x) => x !== "");
}

/** True when two lists hold the same items, ignoring order, duplicates and blanks. */
export function sameSet(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): boolean {
  const x = new Set(cleanList(a));
  const y = new Set(cleanList(b));
  if (x.size !== y.size) return false;
  for (const i of x) if (!y.has(i)) return false;
  return true;
}

/** True when two lists are equal item by item after removing blanks. */
export function sameList(a: readonly string[] | null | undefined, b: readonly string[] | null | undefined): boolean {
  const x = cleanList(a);
  const y = cleanList(b);
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

/** Returns a CIDR with an explicit prefix: a bare IPv4 gets `/32`, a bare IPv6 `/128`. */
export function canonicalCidr(s: string): string {
  const t = s.trim();
  if (t.includes("/")) return t;
  const family = isIP(t);
  if (family === 4) return `${t}/32`;
  if (family === 6) return `${t}/128`;
  return t;
}

/** Returns a mount path without leading or trailing slashes ("/cloud/" → "cloud"). */
export function trimMountPath(p: string): string {
  return p.replace(/^\/+/, "").replace(/\/+$/, "");
}

/**
 * Returns the encoded URL form of a mount path: each segment encoded on its own, so a nested mount
 * ("team/cloud") keeps its slashes. Throws UsageError for an empty path and for an empty, `.` or `..`
 * segment: those would address another endpoint.
 */
export function encodeMount(p: string): string {
  return encodeSegments(trimMountPath(p), "the mount path");
}

/** Returns a role name in the form the service stores it (lowercase). */
export function canonicalRoleName(name: string): string {
  return name.toLowerCase();
}
