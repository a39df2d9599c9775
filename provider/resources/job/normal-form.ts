/**
 * A job's normal form and the text state keeps of it, so that what the user wrote, what state holds and what
 * the server holds compare without formatting, key order, empty lists, server bookkeeping or credentials
 * ever showing as a change.
 */
import { SERVER_MANAGED_JOB_FIELDS } from "../../clients/scheduler/jobs";
import type { Job } from "../../schemas/scheduler";
import { canonicalJson } from "../common";

/**
 * Job fields that carry credentials. They are sent when the user sets them, but never kept in state's
 * normal form or compared (the real scheduler never returns them on reads).
 */
const CREDENTIAL_FIELDS: readonly string[] = Object.freeze(["SecretsToken", "DiscoveryToken"]);

/** Returns the text state keeps of a job already in normal form: its canonical JSON without credentials. */
export function stateText(normal: JobObject): string {
  const stored: JobObject = { ...normal };
  for (const k of CREDENTIAL_FIELDS) delete stored[k];
  return canonicalJson(stored);
}

/*
 * Normal form of a job definition, so that what the user wrote can be compared with what state holds
 * without formatting, key order, empty lists or server bookkeeping ever showing as a change.
 */

/** A job definition in the API's JSON shape (loose: every field the server knows is kept). */
export type JobObject = Record<string, unknown>;

/** The fields the normal form leaves out: every server-managed one (the client's list). */
const SERVER_MANAGED: ReadonlySet<string> = new Set(SERVER_MANAGED_JOB_FIELDS);

/**
 * Returns the normal form of a job: server-managed fields removed, and at every level `null` values and
 * empty lists dropped (the server treats `[]`, `null` and a missing list alike, yet a stored `[]` would
 * otherwise look like a change; see the scheduler's issue 20497). Empty objects are kept: for the server
 * an empty block is not the same as no block.
 */
export function normalizeJob(job: JobObject): JobObject {
  const out: JobObject = {};
  for (const [k, v] of Object.entries(job)) {
    if (SERVER_MANAGED.has(k)) continue;
    const n = normalizeValue(v);
    if (n !== undefined) out[k] = n;
  }
  return out;
}

function normalizeValue(v: unknown): unknown {
  if (v === null || v === undefined) return undefined;
  if (Array.isArray(v)) {
    if (v.length === 0) return undefined;
    // Elements keep their place (a null element is still an element).
    return v.map((x) => (x === null ? null : normalizeValue(x)));
  }
  if (typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      const n = normalizeValue(x);
      if (n !== undefined) out[k] = n;
    }
    return out;
  }
  return v;
}

/** Returns the canonical normal-form text of a job as the server holds it (credentials left out). */
export function serverJobText(job: Job): string {
  return stateText(normalizeJob(job as JobObject));
}

/**
 * True when state holds a stored job's text, without parsing it: this library writes it as the canonical
 * JSON of an object (`stateText`, or the server's job), so it starts with "{".
 */
export function storedObjectText(text: unknown): text is string {
  return typeof text === "string" && text.startsWith("{");
}

/** Parses a stored normal-form text back into a job; undefined when state holds none. */
export function parseStoredJob(text: unknown): JobObject | undefined {
  if (typeof text !== "string" || text === "") return undefined;
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as JobObject) : undefined;
  } catch {
    return undefined;
  }
}
