// What counts as the job's specification: the server-managed fields a registration ignores when deciding
// whether it changes the job (reference/scheduler.md §3.2), and which jobs are templates without evaluations.
import { bool, deepEqual, obj, type JsonObject } from "./json";

/** Returns whether a job is a periodic or parameterized template (no evaluations of its own). */
export function isTemplateJob(job: JsonObject): boolean {
  return obj(job, "Periodic") !== undefined || (obj(job, "ParameterizedJob") !== undefined && !bool(job, "Dispatched"));
}

/**
 * Server-managed fields ignored when deciding whether a registration changes the job (reference/scheduler.md §3.2).
 */
export const MASKED_SPEC_FIELDS: readonly string[] = [
  "Status",
  "StatusDescription",
  "Stable",
  "Version",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "SubmitTime",
];

/** Returns whether `next` differs from `current` in anything but the server-managed fields. */
export function specChanged(current: JsonObject, next: JsonObject): boolean {
  const a: JsonObject = { ...current };
  const b: JsonObject = { ...next };
  for (const k of MASKED_SPEC_FIELDS) {
    delete a[k];
    delete b[k];
  }
  return !deepEqual(a, b);
}
