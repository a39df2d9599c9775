// Batch work of the simulation: which tasks of a batch allocation fail when it finishes (meta
// `devserver.fail_batch = "true"` on the job, the group or the task; with no rescheduling, so a failed
// allocation stays failed). Finished batch jobs are collected by gc.ts.
import { objs, str, strMap, type JsonObject } from "../state/json";

/** Meta key that makes a batch task (or every task of a group or job) exit with code 1. */
const FAIL_BATCH_META = "devserver.fail_batch";

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
