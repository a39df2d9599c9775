/**
 * Autoscaler-safe updates (issue 21): with `preserveCounts` and/or `preserveResources`, the task group counts
 * and task resources the scheduler runs now are kept over the spec's, and a job whose JobModifyIndex moved
 * only because of such changes (`POST /v1/job/:id/scale`, an autoscaler, a register that changed only
 * counts or resources) is not treated as changed outside Pulumi: the update registers with check-and-set on
 * the server's current index instead of failing.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import type { Job } from "../../schemas/scheduler";
import { canonicalJson } from "../common";
import { CREDENTIAL_FIELDS, parseStoredJob, type DesiredJob } from "./spec";
import type { JobInputs } from "./inputs";
import type { JobObject } from "./normalize";
import type { JobRef } from "./follow";

/** Task resource fields `preserveResources` keeps (what vertical scaling changes). */
export const SCALED_RESOURCE_FIELDS: readonly string[] = Object.freeze(["CPU", "Cores", "MemoryMB", "MemoryMaxMB"]);

/** Which scaled values the inputs keep. */
export interface Preserve {
  counts: boolean;
  resources: boolean;
}

/** Returns what the inputs ask to keep; undefined when neither `preserveCounts` nor `preserveResources` is set. */
export function preserveOf(inputs: Pick<JobInputs, "preserveCounts" | "preserveResources">): Preserve | undefined {
  const p = { counts: inputs.preserveCounts === true, resources: inputs.preserveResources === true };
  return p.counts || p.resources ? p : undefined;
}

type Rec = Record<string, unknown>;

function isRec(v: unknown): v is Rec {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

function named(list: unknown): Map<string, Rec> {
  const out = new Map<string, Rec>();
  if (Array.isArray(list)) for (const x of list) if (isRec(x) && typeof x.Name === "string") out.set(x.Name, x);
  return out;
}

/**
 * Returns `job` with the counts (and task resources) of the groups and tasks `server` also has, taken from
 * `server`. Groups or tasks only one side has are left as they are; nothing else changes.
 */
export function withServerScale(job: JobObject, server: Job, how: Preserve): JobObject {
  if (!Array.isArray(job.TaskGroups)) return job;
  const serverGroups = named(server.TaskGroups);
  const groups = job.TaskGroups.map((g: unknown) => {
    if (!isRec(g) || typeof g.Name !== "string") return g;
    const sg = serverGroups.get(g.Name);
    if (sg === undefined) return g;
    let out: Rec = g;
    if (how.counts && typeof sg.Count === "number") out = { ...out, Count: sg.Count };
    if (how.resources && Array.isArray(g.Tasks)) {
      const serverTasks = named(sg.Tasks);
      out = {
        ...out,
        Tasks: g.Tasks.map((t: unknown) => {
          if (!isRec(t) || typeof t.Name !== "string") return t;
          const sr = serverTasks.get(t.Name)?.Resources;
          if (!isRec(sr)) return t;
          const resources: Rec = isRec(t.Resources) ? { ...t.Resources } : {};
          for (const f of SCALED_RESOURCE_FIELDS) {
            if (sr[f] !== undefined && sr[f] !== null) resources[f] = sr[f];
            else delete resources[f];
          }
          return { ...t, Resources: resources };
        }),
      };
    }
    return out;
  });
  return { ...job, TaskGroups: groups };
}

/** Returns the desired job with the server's scaled values kept (its state text recomputed). */
export function desiredWithServerScale(d: DesiredJob, server: Job, how: Preserve): DesiredJob {
  const job = withServerScale(d.job as JobObject, server, how);
  const stored: JobObject = { ...job };
  for (const k of CREDENTIAL_FIELDS) delete stored[k];
  return { ...d, job: job as Job, text: canonicalJson(stored) };
}

/** What an update of a job that keeps scaled values registers against. */
export interface ScaleBase {
  /** The desired job with the server's counts/resources. */
  desired: DesiredJob;
  /** The check-and-set index to register on. */
  index: number;
  /** The version a failed rollout goes back to. */
  priorVersion: number | undefined;
  /** Set when the job moved only by scaling since state was written: the index it moved from and to. */
  scaledFrom?: { stateIndex: number; serverIndex: number };
}

/**
 * Settles what an update registers when the inputs keep scaled values: reads the job (one request), keeps
 * its counts/resources in the desired job, and, when its JobModifyIndex moved since state, asks the
 * scheduler (one plan) whether the job state recorded, with the server's counts/resources, is what runs:
 * then only scaling moved it and the register goes on the current index. Anything else keeps state's
 * index, so the register is refused as a change made outside Pulumi. Without those inputs, no request.
 */
export async function scaleBase(
  client: SchedulerClient,
  ref: JobRef,
  olds: { jobModifyIndex?: number; version?: number; normalizedJob?: string },
  inputs: JobInputs,
  d: DesiredJob,
): Promise<ScaleBase> {
  const base: ScaleBase = { desired: d, index: olds.jobModifyIndex ?? 0, priorVersion: olds.version };
  const how = preserveOf(inputs);
  if (how === undefined) return base;
  const opts = { namespace: ref.namespace, region: ref.region };
  const server = (await client.jobs.find(ref.jobId, opts))?.value;
  if (server === undefined) return base;
  const desired = desiredWithServerScale(d, server, how);
  const serverIndex = server.JobModifyIndex ?? 0;
  if (serverIndex === base.index || server.Stop === true) return { ...base, desired };
  const stored = parseStoredJob(olds.normalizedJob);
  if (stored === undefined) return { ...base, desired };
  const recorded = withServerScale(stored, server, how);
  const { value } = await client.jobs.plan(ref.jobId, { Job: recorded as Job, Diff: true }, opts);
  if (value.Diff?.Type !== "None") return { ...base, desired };
  return {
    desired,
    index: serverIndex,
    priorVersion: server.Version ?? undefined,
    scaledFrom: { stateIndex: base.index, serverIndex },
  };
}

/** The note shown when an update goes on over a job that was only scaled outside Pulumi. */
export function scaledNote(jobId: string, how: Preserve, from: { stateIndex: number; serverIndex: number }): string {
  const what = how.counts && how.resources ? "counts and task resources" : how.counts ? "counts" : "task resources";
  return (
    `Job "${jobId}" was scaled outside Pulumi (JobModifyIndex ${from.stateIndex} -> ${from.serverIndex}); only its ${what} changed, ` +
    `which preserve${how.counts && how.resources ? "Counts/preserveResources keep" : how.counts ? "Counts keeps" : "Resources keeps"}: the update keeps them and registers on index ${from.serverIndex}.`
  );
}
