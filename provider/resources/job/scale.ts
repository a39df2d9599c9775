/**
 * The server's scale kept in the desired job (`preserveCounts`, `preserveResources`): the counts and task
 * resources that scaling outside Pulumi changed, taken from the job the server holds.
 */
import type { Job } from "../../schemas/scheduler";
import { isRecord } from "../common";
import type { Preserve } from "./inputs";
import { stateText, type JobObject } from "./normal-form";
import type { DesiredJob } from "./spec";

/** Task resource fields `preserveResources` keeps (what vertical scaling changes). */
const SCALED_RESOURCE_FIELDS: readonly string[] = Object.freeze(["CPU", "Cores", "MemoryMB", "MemoryMaxMB"]);

function named(list: unknown): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  if (Array.isArray(list)) for (const x of list) if (isRecord(x) && typeof x.Name === "string") out.set(x.Name, x);
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
    if (!isRecord(g) || typeof g.Name !== "string") return g;
    const sg = serverGroups.get(g.Name);
    if (sg === undefined) return g;
    let out: Record<string, unknown> = g;
    if (how.counts && typeof sg.Count === "number") out = { ...out, Count: sg.Count };
    if (how.resources && Array.isArray(g.Tasks)) {
      const serverTasks = named(sg.Tasks);
      out = {
        ...out,
        Tasks: g.Tasks.map((t: unknown) => {
          if (!isRecord(t) || typeof t.Name !== "string") return t;
          const sr = serverTasks.get(t.Name)?.Resources;
          if (!isRecord(sr)) return t;
          const resources: Record<string, unknown> = isRecord(t.Resources) ? { ...t.Resources } : {};
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
  return { ...d, job: job as Job, text: stateText(job) };
}
