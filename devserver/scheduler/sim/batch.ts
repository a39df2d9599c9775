// Batch work of the simulation: which tasks of a batch allocation fail when it finishes (meta
// `devserver.fail_batch = "true"` on the job, the group or the task; with no rescheduling, so a failed
// allocation stays failed), and the garbage collection of finished jobs (`PUT /v1/system/gc`, the real
// server's forced collection: a job whose status is `dead` goes with its evaluations, allocations and
// deployments; the real server also waits for its `job_gc_threshold`, which a forced collection skips).
import { objs, str, strMap, type JsonObject } from "../state/json";
import type { Store } from "../state/store";
import { jobKey } from "../state/store";

/** Meta key that makes a batch task (or every task of a group or job) exit with code 1. */
export const FAIL_BATCH_META = "devserver.fail_batch";

/** Returns the names of the tasks of group `groupName` that fail when their batch allocation finishes. */
export function failingTasks(job: JsonObject, groupName: string): Set<string> {
  const out = new Set<string>();
  const group = objs(job, "TaskGroups").find((g) => str(g, "Name") === groupName);
  if (group === undefined) return out;
  const all = strMap(job, "Meta")[FAIL_BATCH_META] === "true" || strMap(group, "Meta")[FAIL_BATCH_META] === "true";
  for (const t of objs(group, "Tasks"))
    if (all || strMap(t, "Meta")[FAIL_BATCH_META] === "true") out.add(str(t, "Name"));
  return out;
}

/** Removes every dead job with its records; returns how many jobs went. Takes one write index when any did. */
export function collectGarbage(store: Store): number {
  const dead = [...store.jobs.values()].filter((e) => str(e.job, "Status") === "dead");
  if (dead.length === 0) return 0;
  store.write("jobs", "job_version", "job_summary", "evals", "allocs", "deployment", "job_submission");
  for (const e of dead) {
    store.jobs.delete(jobKey(e.namespace, e.id));
    for (const ev of [...store.evals.ofJob(e.namespace, e.id)]) store.evals.delete(ev.ID);
    for (const r of [...store.allocs.ofJob(e.namespace, e.id)]) store.allocs.delete(r.alloc.ID);
    for (const d of [...store.deployments.ofJob(e.namespace, e.id)]) store.deployments.delete(d.ID);
  }
  return dead.length;
}
