/**
 * What the provider's values mean, for both services and their clients: durations (Go duration text, the
 * secrets service's seconds), lists (an array or a comma-separated string; `null`, `[]` and `[""]` alike)
 * and CIDRs (a bare IP as /32 or /128). What a user wrote and what a server echoes compare equal when they
 * mean the same thing. Names of a service's objects (mount paths, role names) keep to its client.
 */
import { isIP } from "node:net";
import { z } from "zod";

// ---------------------------------------------------------------------------------------------------------
// Durations

/** Milliseconds per unit; `µs` is the micro sign and `μs` the Greek letter mu, as Go takes both. */
const UNIT_MS: Readonly<Record<string, number>> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * The one parser of Go duration text in the provider ("90s", "1h30m", "1.5h", "250ms"), as both services read
 * durations: a sequence of decimal numbers, each with a unit, with an optional leading `-`. The secrets
 * service also takes a day unit (`d`), which callers for it turn on. Returns the milliseconds (negative with a
 * leading `-`), or undefined when the text is not one. A bare number without a unit is not a duration here:
 * callers decide what plain numbers mean.
 */
export function parseGoDuration(text: string, opts: { days?: boolean } = {}): number | undefined {
  const negative = text.startsWith("-");
  const part = /(\d+(?:\.\d+)?)(ns|us|µs|μs|ms|s|m|h|d)/y;
  part.lastIndex = negative ? 1 : 0;
  if (part.lastIndex === text.length) return undefined;
  let total = 0;
  let m: RegExpExecArray | null;
  while (part.lastIndex < text.length && (m = part.exec(text)) !== null) {
    const unit = m[2] ?? "";
    if (unit === "d" && opts.days !== true) return undefined;
    total += Number(m[1]) * (UNIT_MS[unit] ?? 0);
  }
  if (part.lastIndex !== text.length) return undefined;
  return negative ? -total : total;
}

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

/** Returns a duration as the wire form the secrets service parses everywhere: `"<n>s"`. */
export function durationWire(seconds: number): string {
  return `${seconds}s`;
}

// ---------------------------------------------------------------------------------------------------------
// Lists

/** Splits a comma-separated string into trimmed, non-empty items. */
export function splitCommaList(s: string): string[] {
  return s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
}

/** A list sent either as a comma-separated string (CLI form) or as an array (API form); parsed to an array. */
export const StringOrListSchema = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (typeof v === "string" ? splitCommaList(v) : v));

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

// ---------------------------------------------------------------------------------------------------------
// Addresses

/** Returns a CIDR with an explicit prefix: a bare IPv4 gets `/32`, a bare IPv6 `/128`. */
export function canonicalCidr(s: string): string {
  const t = s.trim();
  if (t.includes("/")) return t;
  const family = isIP(t);
  if (family === 4) return `${t}/32`;
  if (family === 6) return `${t}/128`;
  return t;
}
