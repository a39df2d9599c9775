/**
 * Pieces every resource provider shares: the unknown-value sentinel, zod-driven `check`, outputs with a
 * schema version, and the init error that keeps a half-finished object in state.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { z as zod, type z } from "zod";
import { definedDeep } from "../defined";
import { ResourceError, isOutcomeUnknown, outcomeUnknown } from "../errors";
import { sleep } from "../http/core";
import { DEFAULT_RETRY, jitteredDelay, type RetryPolicy } from "../http/retry";
import { hasControlCharacter } from "../http/settings";
import { PARSE_OPTIONS } from "../schemas/parse-options";

/**
 * A name the requests carry (a namespace, a region): non-empty, without control characters. A line break
 * would otherwise fail every attempt inside the HTTP library instead of naming the input at check.
 */
export function requestName(): z.ZodType<string> {
  return zod
    .string()
    .min(1)
    .refine(
      (s) => !hasControlCharacter(s),
      "must not hold a control character (a line break, CR or LF, a tab or another)",
    );
}

/** What a preview passes for a value not known yet (`unknownValue` of @pulumi/pulumi's runtime). */
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A provider implementation: every method a resource needs. */
export interface ProviderImpl<I = Record<string, unknown>, O = Record<string, unknown>> {
  check(olds: Record<string, unknown>, news: Record<string, unknown>): Promise<dynamic.CheckResult<I>>;
  diff(id: string, olds: O, news: I): Promise<dynamic.DiffResult>;
  create(inputs: I): Promise<dynamic.CreateResult<O>>;
  read(id: string, props: O): Promise<dynamic.ReadResult<O>>;
  update(id: string, olds: O, news: I): Promise<dynamic.UpdateResult<O>>;
  delete(id: string, props: O): Promise<void>;
}

/** True when a value, or any value inside it, is the preview's unknown sentinel. */
export function containsUnknown(v: unknown): boolean {
  if (v === UNKNOWN) return true;
  if (Array.isArray(v)) return v.some(containsUnknown);
  if (v !== null && typeof v === "object") return Object.values(v).some(containsUnknown);
  return false;
}

/**
 * Copies the engine's inputs into a null-prototype object: own enumerable keys only, `__provider` left
 * out. A key named `__proto__` stays an ordinary own key, so it can be refused by name instead of swapping
 * the prototype of the copy (and having its contents read as inputs). Every resource's `check` copies
 * through here.
 */
export function copyInputs(news: Record<string, unknown>): Record<string, unknown> {
  const out = Object.create(null) as Record<string, unknown>;
  if (news === null || typeof news !== "object") return out;
  for (const k of Object.keys(news)) {
    if (k === "__provider") continue;
    out[k] = news[k];
  }
  return out;
}

/** True when `v` is an object whose prototype is neither `Object.prototype` nor null (a `__proto__` key was assigned). */
export function hasForeignPrototype(v: unknown): boolean {
  if (v === null || typeof v !== "object" || Array.isArray(v)) return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto !== null && proto !== Object.prototype;
}

/** The most characters of a user-chosen key a failure text repeats. */
const MAX_KEY_SHOWN = 64;

/** Returns a user-chosen key for a failure text, cut short when long. */
export function shownKey(k: string): string {
  return k.length > MAX_KEY_SHOWN ? `${k.slice(0, MAX_KEY_SHOWN)}…` : k;
}

/** Returns a property path as Pulumi shows it: `job.TaskGroups[0].Count`. */
export function propertyPath(path: ReadonlyArray<PropertyKey>): string {
  let out = "";
  for (const p of path) {
    if (typeof p === "number") out += `[${p}]`;
    else out += out === "" ? String(p) : `.${String(p)}`;
  }
  return out;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  number: "a number",
  int: "an integer",
  boolean: "a boolean",
  record: "a map",
  object: "an object",
  array: "a list",
  null: "null",
};

function typeList(types: string[]): string {
  const names = [...new Set(types)].map((t) => TYPE_NAMES[t] ?? t);
  if (names.length <= 1) return names[0] ?? "another type";
  return `${names.slice(0, -1).join(", ")} or ${names[names.length - 1]}`;
}

interface Issue {
  code: string;
  path: PropertyKey[];
  message: string;
  expected?: string;
  keys?: string[];
  errors?: Issue[][];
}

/**
 * Turns zod issues into failures that name the property. A union names the deepest key that failed in the
 * branch the value's type matched (`variables.image`), else the accepted types; no text repeats the value.
 */
function issueFailures(
  issues: readonly Issue[],
  prefix: PropertyKey[],
  out: Array<{ path: PropertyKey[]; reason: string }>,
): void {
  for (const issue of issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "invalid_union" && issue.errors !== undefined) {
      // A branch whose issues lie below the union's own value: the value had that branch's shape.
      const deeper = issue.errors.find((branch) => branch.some((i) => i.path.length > 0 || i.code !== "invalid_type"));
      if (deeper !== undefined) {
        issueFailures(deeper, path, out);
        continue;
      }
      const expected = issue.errors.flat().map((i) => i.expected ?? "");
      out.push({ path, reason: `must be ${typeList(expected.filter((e) => e !== ""))}` });
      continue;
    }
    if (issue.code === "unrecognized_keys" && issue.keys !== undefined) {
      for (const k of issue.keys) out.push({ path: [...path, k], reason: `unknown field "${shownKey(k)}"` });
      continue;
    }
    out.push({ path, reason: issue.message });
  }
}

const shapeKeys = new WeakMap<object, ReadonlySet<string>>();

/** The input names of an object schema, computed once per schema. */
function inputNames(schema: z.ZodType): ReadonlySet<string> | undefined {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  if (shape === undefined || shape === null || typeof shape !== "object") return undefined;
  let keys = shapeKeys.get(schema);
  if (keys === undefined) {
    keys = new Set(Object.keys(shape));
    shapeKeys.set(schema, keys);
  }
  return keys;
}

/**
 * Validates inputs with a zod schema and names each bad property. Properties whose value is unknown at
 * preview are not validated (they pass through unchanged and are checked again at `up`). With an object
 * schema, an input the resource does not have is refused by name (`__proto__` included).
 */
export function checkInputs<S extends z.ZodType>(
  schema: S,
  news: Record<string, unknown>,
  resource = "the resource",
): { inputs?: z.infer<S>; failures: dynamic.CheckFailure[] } {
  const all = copyInputs(news);
  const known = Object.create(null) as Record<string, unknown>;
  const unknown = Object.create(null) as Record<string, unknown>;
  const unknownKeys: string[] = [];
  const names = inputNames(schema);
  const failures: dynamic.CheckFailure[] = [];
  // An input object deserialized with a `__proto__` key has had its prototype swapped: refuse that key.
  if (hasForeignPrototype(news))
    failures.push({ property: "__proto__", reason: `${resource} has no input "__proto__"` });
  for (const k of Object.keys(all)) {
    const v = all[k];
    if (names !== undefined && !names.has(k)) {
      failures.push({ property: shownKey(k), reason: `${resource} has no input "${shownKey(k)}"` });
      continue;
    }
    if (containsUnknown(v)) {
      unknownKeys.push(k);
      unknown[k] = v;
    } else known[k] = v;
  }
  const parsed = schema.safeParse(known, PARSE_OPTIONS);
  if (!parsed.success) {
    const found: Array<{ path: PropertyKey[]; reason: string }> = [];
    issueFailures(parsed.error.issues as unknown as Issue[], [], found);
    for (const f of found) {
      const top = String(f.path[0] ?? "");
      // A required property that is unknown at preview time is missing from `known` on purpose.
      if (top !== "" && unknownKeys.includes(top)) continue;
      failures.push({ property: propertyPath(f.path), reason: f.reason });
    }
  }
  if (failures.length > 0) return { failures };
  const base = parsed.success ? (parsed.data as object) : known;
  return { inputs: { ...base, ...unknown } as z.infer<S>, failures: [] };
}

export { definedDeep };

/**
 * An error that tells the engine the object exists but did not finish: the engine keeps `id` and
 * `properties` in state (Pulumi's init-error mechanism), so nothing is orphaned.
 */
export class ResourceInitError extends ResourceError {
  override readonly name = "ResourceInitError";
  readonly id: string;
  readonly properties: Record<string, unknown>;
  readonly reasons: string[];
  constructor(message: string, id: string, properties: Record<string, unknown>, reasons: string[] = [message]) {
    super("unfinished", message);
    this.id = id;
    this.properties = definedDeep(properties);
    this.reasons = reasons;
  }
}

/** What reading an object back showed after a write whose outcome is unknown. */
export type ReadBack = "applied" | "not-applied" | "unsure";

/**
 * Runs an idempotent `write` (the HTTP core has already retried it); when it still fails with an unknown
 * outcome, reads back before giving up. Resolves when the write was applied (answered, or read back as
 * applied); rejects with the write's own error when it was not applied, or with an
 * `outcome_unknown` {@link ResourceError} when reading cannot tell.
 */
export async function writeWithReadBack(
  what: string,
  write: () => Promise<void>,
  readBack: () => Promise<ReadBack>,
  policy: ReadYourWritePolicy = DEFAULT_RETRY,
): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (!isOutcomeUnknown(e)) throw e;
    let seen: ReadBack;
    try {
      // "Not applied" may be a standby that has not caught up yet: read again for a while before believing it.
      seen = await readUntil(readBack, (s) => s !== "not-applied", policy);
    } catch (readError) {
      throw outcomeUnknown(what, e, readError);
    }
    if (seen === "applied") return;
    if (seen === "not-applied") throw e;
    throw outcomeUnknown(what, e, "what was read back does not tell whether it was applied");
  }
}

/** The parts of a connection's retry policy that bound a read waiting for this provider's own write. */
export type ReadYourWritePolicy = Pick<RetryPolicy, "baseDelayMs" | "maxDelayMs" | "maxTotalMs">;

/**
 * How long a read that must show this provider's own write keeps reading. A standby that answers reads
 * itself (OpenBao's default since 2.5, `disable_standby_reads=false`) lags the active node: about 1.3 s
 * was measured on a three-node OpenBao 2.6.2 cluster. OpenBao 2.6.2 has no request header that asks for
 * the active node's view (its `X-Vault-Index`/`X-Vault-Inconsistent` consistency headers are not in that
 * release), so the read is retried until it shows the write.
 */
export const READ_YOUR_WRITE_MS = 10_000;

/** Longest wait between two such reads. */
const READ_YOUR_WRITE_STEP_MS = 1_000;

/**
 * Reads until `shows` accepts what was read, or until {@link READ_YOUR_WRITE_MS} (or the connection's
 * `maxTotalMs`, when smaller) has passed; resolves to the last value read either way (the caller decides
 * what a read that never showed the write means). The waits grow from the policy's base delay.
 */
export async function readUntil<T>(
  read: () => Promise<T>,
  shows: (value: T) => boolean,
  policy: ReadYourWritePolicy,
): Promise<T> {
  const bound = Math.min(READ_YOUR_WRITE_MS, policy.maxTotalMs);
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const value = await read();
    if (shows(value)) return value;
    const ceiling = Math.min(
      READ_YOUR_WRITE_STEP_MS,
      policy.maxDelayMs,
      policy.baseDelayMs * 2 ** Math.min(attempt - 1, 20),
    );
    const wait = Math.max(1, Math.floor(ceiling / 2 + (Math.random() * ceiling) / 2));
    if (Date.now() - started + wait > bound) return value;
    await sleep(wait);
  }
}

/** Waits a jittered backoff of the given connection policy before attempt `attempt + 1`. */
export function backoff(policy: { baseDelayMs: number; maxDelayMs: number }, attempt: number): Promise<void> {
  return sleep(jitteredDelay(policy, attempt));
}

/**
 * Returns what a refresh stores for one optional input: the old spelling when the server's value means the
 * same, nothing when the user never set it and the server holds the default, else the server's value.
 */
export function refreshed<T>(
  old: T | undefined,
  server: T,
  same: (a: T | undefined, b: T) => boolean,
  isDefault: (v: T) => boolean,
): T | undefined {
  if (same(old, server)) return old === undefined && isDefault(server) ? undefined : (old ?? server);
  if (old === undefined && isDefault(server)) return undefined;
  return server;
}

/** Deterministic JSON text: keys sorted at every level. */
export function canonicalJson(v: unknown): string {
  return JSON.stringify(sortDeep(v));
}

function sortDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortDeep);
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) out[k] = sortDeep(x);
    }
    return out;
  }
  return v;
}

/** True for a plain record: an object that is not null and not an array. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
