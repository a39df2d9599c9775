/**
 * Normal form of a job definition, so that what the user wrote can be compared with what state holds
 * without formatting, key order, empty lists or server bookkeeping ever showing as a change.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../common";

/** A job definition in the API's JSON shape (loose: every field the server knows is kept). */
export type JobObject = Record<string, unknown>;

/**
 * Top-level fields the server manages. They are masked when the server compares specs and must never be
 * sent back: a stale `VersionTag` would duplicate a tag, `Dispatched` is read-only, the indexes belong to
 * check-and-set only.
 */
export const SERVER_MANAGED_FIELDS: readonly string[] = Object.freeze([
  "Version",
  "VersionTag",
  "Stable",
  "Status",
  "StatusDescription",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "SubmitTime",
  "Dispatched",
]);

/**
 * Returns the normal form of a job: server-managed fields removed, and at every level `null` values and
 * empty lists dropped (the server treats `[]`, `null` and a missing list alike, yet a stored `[]` would
 * otherwise look like a change; see the scheduler's issue 20497). Empty objects are kept: for the server
 * an empty block is not the same as no block.
 */
export function normalizeJob(job: JobObject): JobObject {
  const out: JobObject = {};
  for (const [k, v] of Object.entries(job)) {
    if (SERVER_MANAGED_FIELDS.includes(k)) continue;
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

/** Returns the canonical text of a job's normal form: equal texts mean equal specs. */
export function canonicalJobText(job: JobObject): string {
  return canonicalJson(normalizeJob(job));
}

/** Returns a short stable hash of any value's canonical JSON text. */
export function hashOf(v: unknown): string {
  return createHash("sha256").update(canonicalJson(v)).digest("hex").slice(0, 32);
}

/** What makes a job a different job, or one the server refuses to turn into the other. */
export interface JobIdentity {
  id: string;
  namespace: string;
  region: string;
  type: string;
  periodic: boolean;
  parameterized: boolean;
}

/** Returns a job's identity; the server's defaults fill what the job leaves out. */
export function identityOf(job: JobObject): JobIdentity {
  return {
    id: typeof job.ID === "string" ? job.ID : "",
    namespace: typeof job.Namespace === "string" && job.Namespace !== "" ? job.Namespace : "default",
    region: typeof job.Region === "string" && job.Region !== "" ? job.Region : "global",
    type: typeof job.Type === "string" && job.Type !== "" ? job.Type : "service",
    periodic: isObject(job.Periodic),
    parameterized: isObject(job.ParameterizedJob),
  };
}

/** One reason why a change needs a new job instead of an update. */
export interface ReplaceReason {
  field: keyof JobIdentity;
  old: string;
  new: string;
}

/**
 * Lists why going from one job to another needs a replacement. A different ID, namespace or region is a
 * different job (an update would leave the old one running); the server refuses to change a job's type or
 * to switch periodic or parameterized on or off, so those must be decided at preview, never at apply.
 */
export function replaceReasons(olds: JobIdentity, news: JobIdentity): ReplaceReason[] {
  const out: ReplaceReason[] = [];
  const fields: Array<keyof JobIdentity> = ["id", "namespace", "region", "type", "periodic", "parameterized"];
  for (const f of fields) {
    if (olds[f] !== news[f]) out.push({ field: f, old: String(olds[f]), new: String(news[f]) });
  }
  return out;
}

/**
 * True when the server runs no deployment for jobs of this kind, so there is nothing to wait for
 * (periodic and parameterized jobs do not even get an evaluation until they launch).
 */
export function hasNoDeployment(identity: JobIdentity): boolean {
  return identity.periodic || identity.parameterized || identity.type === "batch" || identity.type === "sysbatch";
}

function isObject(v: unknown): boolean {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}
