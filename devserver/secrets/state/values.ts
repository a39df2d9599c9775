import { randomUUID } from "node:crypto";
import { DevHttpError } from "../../core/errors";

/**
 * Field coercions of the secrets service's request framework (string, bool, int, duration-in-seconds,
 * comma-string-or-list), with its error wording, plus Go-style formatting used in its messages.
 */

const UNIT_SECONDS: Readonly<Record<string, number>> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600,
};
const GO_DURATION_PART = /^([0-9]*\.?[0-9]+)(ns|us|µs|μs|ms|s|m|h)/;

/** Parses a signed Go duration ("1h30m", "-5s", "300ms") into seconds; returns undefined when invalid. */
function goDurationSeconds(text: string): number | undefined {
  let rest = text;
  let sign = 1;
  if (rest.startsWith("-") || rest.startsWith("+")) {
    if (rest.startsWith("-")) sign = -1;
    rest = rest.slice(1);
  }
  if (rest === "0") return 0;
  if (rest === "") return undefined;
  let total = 0;
  while (rest.length > 0) {
    const m = GO_DURATION_PART.exec(rest);
    if (m === null) return undefined;
    const unit = UNIT_SECONDS[m[2] ?? ""];
    if (unit === undefined) return undefined;
    total += Number(m[1]) * unit;
    rest = rest.slice(m[0].length);
  }
  return sign * total;
}

// Fields whose values must never be echoed back in an error message.
const SECRET_FIELDS: ReadonlySet<string> = new Set(["client_secret", "jwt"]);

/** A request field that could not be converted to its declared type (rendered as a 400). */
function fieldError(field: string, value: unknown, reason: string): DevHttpError {
  if (SECRET_FIELDS.has(field))
    return new DevHttpError(400, `error converting input for field ${goQuote(field)}: expected a string`);
  return new DevHttpError(400, `error converting input ${goValue(value)} for field ${goQuote(field)}: ${reason}`);
}

/**
 * Parses a duration given as integer seconds, a numeric string, a Go duration ("1h") or days ("2d");
 * returns whole seconds (may be negative; callers reject negatives with their own wording).
 */
export function durationSeconds(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? Math.trunc(value) : undefined;
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (text === "") return 0;
  if (/^[-+]?[0-9]+$/.test(text)) return Number(text);
  if (/^[-+]?[0-9]+d$/.test(text)) return Number(text.slice(0, -1)) * 86400;
  const secs = goDurationSeconds(text);
  return secs === undefined ? undefined : Math.trunc(secs);
}

/** Reads a duration field in seconds; throws the framework's 400 when it cannot be parsed. */
export function readDuration(field: string, value: unknown): number {
  const secs = durationSeconds(value);
  if (secs === undefined) {
    const reason =
      typeof value === "string"
        ? `time: invalid duration ${goQuote(value)}`
        : `cannot parse ${goValue(value)} as a duration`;
    throw fieldError(field, value, reason);
  }
  return secs;
}

/** Reads a string field (numbers and booleans are converted the way a weakly typed decoder does). */
export function readString(field: string, value: unknown): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  if (typeof value === "boolean") return value ? "1" : "0";
  if (value === null) return "";
  throw fieldError(field, value, "expected a string");
}

/** Reads a boolean field (accepts true/false, "true"/"false"/"1"/"0", 0/1). */
export function readBool(field: string, value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (value === null) return false;
  if (typeof value === "number" && (value === 0 || value === 1)) return value === 1;
  if (typeof value === "string") {
    const t = value.trim().toLowerCase();
    if (t === "true" || t === "1" || t === "t") return true;
    if (t === "false" || t === "0" || t === "f" || t === "") return false;
    throw fieldError(field, value, `strconv.ParseBool: parsing ${goQuote(value)}: invalid syntax`);
  }
  throw fieldError(field, value, "expected a boolean");
}

/** Reads an integer field. */
export function readInt(field: string, value: unknown): number {
  if (typeof value === "number" && Number.isInteger(value)) return value;
  if (value === null) return 0;
  if (typeof value === "string" && /^\s*[-+]?[0-9]+\s*$/.test(value)) return Number(value.trim());
  const reason =
    typeof value === "string" ? `strconv.ParseInt: parsing ${goQuote(value)}: invalid syntax` : "expected an integer";
  throw fieldError(field, value, reason);
}

/** Reads a comma-separated string or a list into a list of trimmed strings ("" gives []). */
export function readStringList(field: string, value: unknown): string[] {
  if (value === null || value === undefined) return [];
  if (typeof value === "string") {
    if (value === "") return [];
    return value.split(",").map((s) => s.trim());
  }
  if (typeof value === "number") return [String(value)];
  if (Array.isArray(value)) {
    return value.map((v: unknown) => {
      if (typeof v === "string") return v.trim();
      if (typeof v === "number" || typeof v === "boolean") return String(v);
      throw fieldError(field, value, "list elements must be strings");
    });
  }
  throw fieldError(field, value, "expected a comma-separated string or a list of strings");
}

/** Returns the request body as a JSON object (an empty body is `{}`); throws 400 for other JSON values. */
export function bodyObject(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== "object" || Array.isArray(raw)) {
    throw new DevHttpError(400, "failed to parse JSON input: body must be a JSON object");
  }
  return raw as Record<string, unknown>;
}

/** Returns whether a body carries a key (an explicit null counts as present, like the real framework). */
export function has(body: Readonly<Record<string, unknown>>, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(body, key);
}

/** Formats seconds the way Go prints a time.Duration ("768h0m0s", "1m30s", "5s", "0s"). */
export function goDuration(seconds: number): string {
  if (seconds === 0) return "0s";
  const neg = seconds < 0;
  let s = Math.abs(seconds);
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  let out: string;
  if (h > 0) out = `${h}h${m}m${s}s`;
  else if (m > 0) out = `${m}m${s}s`;
  else out = `${s}s`;
  return neg ? `-${out}` : out;
}

/** Quotes a string the way Go's %q does for printable text. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}

/** Formats a list the way Go's %q prints a []string (`["a" "b"]`). */
export function goQuoteList(list: readonly string[]): string {
  return `[${list.map(goQuote).join(" ")}]`;
}

/** Formats a value roughly the way Go's %v prints it (lists as `[a b]`). */
export function goValue(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goValue).join(" ")}]`;
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "<nil>";
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

/** Formats epoch seconds the way Go prints a UTC time.Time ("2024-05-01 10:00:00 +0000 UTC"). */
export function goTime(epochSeconds: number): string {
  const iso = new Date(Math.trunc(epochSeconds) * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;
}

/** Wraps data in the secrets service's response envelope. */
export function envelope(
  data: unknown,
  extra: { readonly warnings?: readonly string[]; readonly auth?: unknown } = {},
): Record<string, unknown> {
  return {
    request_id: randomUUID(),
    lease_id: "",
    renewable: false,
    lease_duration: 0,
    data: data === undefined ? null : data,
    wrap_info: null,
    warnings: extra.warnings !== undefined && extra.warnings.length > 0 ? [...extra.warnings] : null,
    auth: extra.auth === undefined ? null : extra.auth,
    mount_type: "",
  };
}

/** Returns the warning the framework adds for body keys an endpoint does not know. */
export function unknownFieldsWarning(body: Readonly<Record<string, unknown>>, known: ReadonlySet<string>): string[] {
  const unknown = Object.keys(body)
    .filter((k) => !known.has(k))
    .sort();
  return unknown.length === 0 ? [] : [`Endpoint ignored these unrecognized parameters: [${unknown.join(" ")}]`];
}

/** Lowercases, trims, de-duplicates and sorts policy names; adds `default` when asked (root stands alone). */
export function sanitizePolicies(policies: readonly string[], addDefault: boolean): string[] {
  const out = new Set<string>();
  for (const p of policies) {
    const name = p.trim().toLowerCase();
    if (name === "") continue;
    if (name === "root") return ["root"];
    out.add(name);
  }
  if (addDefault) out.add("default");
  return [...out].sort();
}

/** Compares two strings case-insensitively (the auth method's list membership rule). */
export function listContainsFold(list: readonly string[], value: string): boolean {
  const v = value.toLowerCase();
  return list.some((item) => item.toLowerCase() === v);
}
