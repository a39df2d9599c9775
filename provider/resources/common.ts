/**
 * Pieces every resource provider shares: the unknown-value sentinel, zod-driven `check`, outputs with a
 * schema version, and the init error that keeps a half-finished object in state.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { z } from "zod";
import { isOutcomeUnknown } from "../errors";
import { sleep } from "../http/core";

/** What a preview passes for a value not known yet. */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** Version of the outputs' layout; bump it only with a migration in `read`/`update`/`delete`. */
export const SCHEMA_VERSION = 1;

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
 * Validates inputs with a zod schema and names each bad property. Properties whose value is unknown at
 * preview are not validated (they pass through unchanged and are checked again at `up`).
 */
export function checkInputs<S extends z.ZodType>(
  schema: S,
  news: Record<string, unknown>,
): { inputs?: z.infer<S>; failures: dynamic.CheckFailure[] } {
  const known: Record<string, unknown> = {};
  const unknownKeys: string[] = [];
  for (const [k, v] of Object.entries(news)) {
    if (k === "__provider") continue;
    if (containsUnknown(v)) unknownKeys.push(k);
    else known[k] = v;
  }
  const parsed = schema.safeParse(known);
  if (!parsed.success) {
    const failures: dynamic.CheckFailure[] = [];
    for (const issue of parsed.error.issues) {
      const property = issue.path.length > 0 ? issue.path.map(String).join(".") : "";
      const top = String(issue.path[0] ?? "");
      if (top !== "" && unknownKeys.includes(top)) continue;
      // A required property that is unknown at preview time is missing from `known` on purpose.
      failures.push({ property, reason: issue.message });
    }
    if (failures.length > 0) return { failures };
    return { inputs: { ...known, ...pick(news, unknownKeys) } as z.infer<S>, failures: [] };
  }
  return { inputs: { ...(parsed.data as object), ...pick(news, unknownKeys) } as z.infer<S>, failures: [] };
}

function pick(o: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = o[k];
  return out;
}

/** Removes `undefined` values deeply: the engine's protobuf structs cannot carry them. */
export function definedDeep<T>(v: T): T {
  if (Array.isArray(v)) return v.map(definedDeep) as unknown as T;
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== undefined) out[k] = definedDeep(x);
    return out as T;
  }
  return v;
}

/**
 * An error that tells the engine the object exists but did not finish: the engine keeps `id` and
 * `properties` in state (Pulumi's init-error mechanism), so nothing is orphaned.
 */
export class ResourceInitError extends Error {
  override readonly name = "ResourceInitError";
  readonly id: string;
  readonly properties: Record<string, unknown>;
  readonly reasons: string[];
  constructor(message: string, id: string, properties: Record<string, unknown>, reasons: string[] = [message]) {
    super(message);
    this.id = id;
    this.properties = definedDeep(properties);
    this.reasons = reasons;
  }
}

/**
 * A write was sent, no answer said whether it was applied, and reading the object back could not tell
 * either: the object may exist. Create and update turn it into a {@link ResourceInitError} so state keeps
 * the ID and the next `up` finishes.
 */
export class OutcomeUnknownError extends Error {
  override readonly name = "OutcomeUnknownError";
  constructor(what: string, writeError: unknown, readError: unknown) {
    const read = typeof readError === "string" ? readError : `reading it back to see whether it was applied failed too: ${errorText(readError)}`;
    super(`${what}: ${errorText(writeError)}; ${read}`, { cause: writeError });
  }
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** What reading an object back showed after a write whose outcome is unknown. */
export type ReadBack = "applied" | "not-applied" | "unsure";

/**
 * Runs an idempotent `write` (the HTTP core has already retried it); when it still fails with an unknown
 * outcome, reads back before giving up. Resolves when the write was applied (answered, or read back as
 * applied); rejects with the write's own error when it was not applied, or with an
 * {@link OutcomeUnknownError} when reading cannot tell.
 */
export async function writeWithReadBack(what: string, write: () => Promise<void>, readBack: () => Promise<ReadBack>): Promise<void> {
  try {
    await write();
  } catch (e) {
    if (!isOutcomeUnknown(e)) throw e;
    let seen: ReadBack;
    try {
      seen = await readBack();
    } catch (readError) {
      throw new OutcomeUnknownError(what, e, readError);
    }
    if (seen === "applied") return;
    if (seen === "not-applied") throw e;
    throw new OutcomeUnknownError(what, e, "what was read back does not tell whether it was applied");
  }
}

/** Waits a jittered backoff of the given connection policy before attempt `attempt + 1`. */
export function backoff(policy: { baseDelayMs: number; maxDelayMs: number }, attempt: number): Promise<void> {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  return sleep(Math.floor(Math.random() * ceiling));
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
