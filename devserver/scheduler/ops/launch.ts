// Child jobs: dispatching a parameterized job (`<parent>/dispatch-<ts>-<8 hex>`, meta and payload rules,
// idempotency token) and forcing a periodic launch (`<parent>/periodic-<ts>`); see reference §3.8.
import { randomBytes } from "node:crypto";
import { num, obj, str, strMap, strs, nowNanos, type JsonObject } from "../state/json";
import type { JobOps } from "./jobs";
import { DISPATCH_PAYLOAD_LIMIT, err500, isParameterized } from "./rules";
import { isTemplateJob } from "../state/spec";

/** Dispatches an instance of a parameterized job; see reference §3.8. */
export function dispatchJob(
  ops: JobOps,
  ns: string,
  id: string,
  payload: Buffer,
  meta: Record<string, string>,
  idPrefixTemplate: string,
  idempotencyToken: string,
): JsonObject {
  const entry = ops.store.getJob(ns, id);
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
    const same = ops.store.children(ns, id).find((c) => str(c.job, "DispatchIdempotencyToken") === idempotencyToken);
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
  return launchChild(ops, ns, child, "job-register");
}

/** Launches a periodic job's instance now; see reference §3.8. */
export function forcePeriodic(ops: JobOps, ns: string, id: string): JsonObject {
  const entry = ops.store.getJob(ns, id);
  if (entry === undefined) throw err500("job not found");
  const parent = entry.job;
  const periodic = obj(parent, "Periodic");
  if (periodic === undefined || periodic.Enabled === false || parent.Stop === true || isParameterized(parent)) {
    throw err500("can't force launch non-periodic job");
  }
  let ts = Math.floor(Date.now() / 1000);
  while (ops.store.getJob(ns, `${id}/periodic-${ts}`) !== undefined) ts++;
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
  const out = launchChild(ops, ns, child, "periodic-job");
  return { EvalID: out.EvalID ?? "", EvalCreateIndex: out.EvalCreateIndex ?? 0, Index: out.Index ?? 0 };
}

function launchChild(ops: JobOps, ns: string, child: JsonObject, triggeredBy: string): JsonObject {
  const withEval = !isTemplateJob(child);
  const index = ops.store.write("jobs", "job_version", "job_summary", ...(withEval ? (["evals"] as const) : []));
  const stored = ops.storeVersion(ns, str(child, "ID"), child, index, undefined);
  const out: JsonObject = {
    Index: index,
    JobCreateIndex: index,
    EvalCreateIndex: 0,
    EvalID: "",
    DispatchedJobID: str(child, "ID"),
  };
  if (withEval) {
    const e = ops.engine.createEval(index, {
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
  const entry = ops.store.getJob(ns, str(child, "ID"));
  if (entry) ops.engine.refreshStatus(entry, index);
  const parent = ops.store.getJob(ns, str(child, "ParentID"));
  if (parent) parent.summaryIndex = index;
  return out;
}
