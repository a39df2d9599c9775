// Child jobs (reference/scheduler.md §3.8): a parameterized job's dispatched instances and a periodic job's
// forced launches, each stored as its own job's first version and evaluated.
import { randomBytes } from "node:crypto";
import { num, obj, str, strMap, strs, nowNanos, type JsonObject } from "../state/json";
import { isTemplateJob } from "../state/spec";
import { DISPATCH_PAYLOAD_LIMIT, err500, isParameterized } from "./rules";
import type { JobWriter } from "./writer";

/**
 * Dispatches an instance of a parameterized job as `<parent>/dispatch-<ts>-<8 hex>` with the meta and
 * payload rules and the idempotency token (reference/scheduler.md §3.8).
 */
export function dispatchChild(
  w: JobWriter,
  ns: string,
  id: string,
  payload: Buffer,
  meta: Record<string, string>,
  idPrefixTemplate: string,
  idempotencyToken: string,
): JsonObject {
  const entry = w.store.getJob(ns, id);
  if (entry === undefined) throw err500("parameterized job not found");
  const parent = entry.job;
  if (!isParameterized(parent)) throw err500(`Specified job ${JSON.stringify(id)} is not a parameterized job`);
  if (parent.Stop === true) throw err500(`Specified job ${JSON.stringify(id)} is stopped`);
  const config = obj(parent, "ParameterizedJob");
  const payloadRule = str(config, "Payload") || "optional";
  if (payloadRule === "required" && payload.length === 0)
    throw err500("Payload is not provided but required by parameterized job");
  if (payloadRule === "forbidden" && payload.length > 0)
    throw err500("Payload provided but forbidden by parameterized job");
  if (payload.length > DISPATCH_PAYLOAD_LIMIT)
    throw err500(`Payload exceeds maximum size; ${payload.length} > ${DISPATCH_PAYLOAD_LIMIT}`);
  const required = strs(config, "MetaRequired");
  const optional = strs(config, "MetaOptional");
  const unpermitted = Object.keys(meta).filter((k) => !required.includes(k) && !optional.includes(k));
  if (unpermitted.length > 0)
    throw err500(`Dispatch request included unpermitted metadata keys: [${unpermitted.join(" ")}]`);
  const missing = required.filter((k) => !(k in meta));
  if (missing.length > 0) throw err500(`Dispatch did not provide required meta keys: [${missing.join(" ")}]`);
  if (idempotencyToken !== "") {
    const same = w.store.children(ns, id).find((c) => str(c.job, "DispatchIdempotencyToken") === idempotencyToken);
    if (same !== undefined) {
      return {
        Index: num(same.job, "ModifyIndex"),
        JobCreateIndex: num(same.job, "CreateIndex"),
        EvalCreateIndex: 0,
        EvalID: "",
        DispatchedJobID: same.id,
      };
    }
  }
  const ts = Math.floor(Date.now() / 1000);
  const suffix = randomBytes(4).toString("hex");
  const childId =
    idPrefixTemplate !== "" ? `${id}/dispatch-${idPrefixTemplate}-${ts}-${suffix}` : `${id}/dispatch-${ts}-${suffix}`;
  const child: JsonObject = {
    ...parent,
    ID: childId,
    ParentID: id,
    Name: childId,
    Dispatched: true,
    DispatchIdempotencyToken: idempotencyToken,
    Meta: { ...strMap(parent, "Meta"), ...meta },
    Payload: payload.length > 0 ? payload.toString("base64") : null,
    SubmitTime: nowNanos(),
  };
  delete child.VersionTag;
  return launchChild(w, ns, child, "job-register");
}

/** Launches a periodic job's instance now as `<parent>/periodic-<ts>` (reference/scheduler.md §3.8). */
export function forcePeriodic(w: JobWriter, ns: string, id: string): JsonObject {
  const entry = w.store.getJob(ns, id);
  if (entry === undefined) throw err500("job not found");
  const parent = entry.job;
  const periodic = obj(parent, "Periodic");
  if (periodic === undefined || periodic.Enabled === false || parent.Stop === true || isParameterized(parent)) {
    throw err500("can't force launch non-periodic job");
  }
  let ts = Math.floor(Date.now() / 1000);
  while (w.store.getJob(ns, `${id}/periodic-${ts}`) !== undefined) ts++;
  const childId = `${id}/periodic-${ts}`;
  const child: JsonObject = {
    ...parent,
    ID: childId,
    ParentID: id,
    Name: childId,
    Periodic: null,
    SubmitTime: nowNanos(),
  };
  delete child.Periodic;
  delete child.VersionTag;
  const out = launchChild(w, ns, child, "periodic-job");
  return { EvalID: out.EvalID ?? "", EvalCreateIndex: out.EvalCreateIndex ?? 0, Index: out.Index ?? 0 };
}

/** Stores a dispatched or periodic child job as its first version and evaluates it. */
function launchChild(w: JobWriter, ns: string, child: JsonObject, triggeredBy: string): JsonObject {
  const withEval = !isTemplateJob(child);
  const index = w.store.write("jobs", "job_version", "job_summary", ...(withEval ? (["evals"] as const) : []));
  const stored = w.storeVersion(ns, str(child, "ID"), child, index, undefined);
  const out: JsonObject = {
    Index: index,
    JobCreateIndex: index,
    EvalCreateIndex: 0,
    EvalID: "",
    DispatchedJobID: str(child, "ID"),
  };
  if (withEval) {
    const e = w.engine.createEval(index, {
      namespace: ns,
      jobId: str(child, "ID"),
      type: str(stored, "Type"),
      priority: num(stored, "Priority", 50),
      triggeredBy,
      jobModifyIndex: index,
    });
    out.EvalID = e.ID;
    out.EvalCreateIndex = index;
  }
  const entry = w.store.getJob(ns, str(child, "ID"));
  if (entry) w.engine.refreshStatus(entry, index);
  const parent = w.store.getJob(ns, str(child, "ParentID"));
  if (parent) parent.summaryIndex = index;
  return out;
}
