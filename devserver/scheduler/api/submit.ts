// What registering and planning a job share: the namespace the job ends up in (query, then body, then job),
// the admission context, and the register handler itself (`POST /v1/jobs` and `POST /v1/job/:job_id`).
import { DevHttpError, type DevRequest } from "../../core";
import { admitJob, requestJob, type AdmissionContext } from "../ops/admission";
import { bodyObject, checkEvalPriority, writeHeaders, type RouteDeps } from "./http";
import { isObject, num, str, type JsonObject } from "../state/json";

export const SUBMIT = "namespace:submit-job";
export const OVERRIDE = "namespace:policy-override";

/** The namespace a submitted job ends up in: the query's, else the body's, else the job's, else `default`. */
export function namespaceFor(req: DevRequest, body: JsonObject, job: JsonObject): string {
  return req.query.get("namespace") || str(body, "Namespace") || str(job, "Namespace") || "default";
}

/**
 * `*` names every namespace only when reading; a job can never be in it. The real server's check passes
 * (any namespace granting the capability will do) and the write fails where the job is stored.
 */
export function refuseWildcardNamespace(ns: string, job: JsonObject): void {
  if (ns === "*")
    throw new DevHttpError(
      500,
      `job ${JSON.stringify(str(job, "ID"))} is in nonexistent namespace ${JSON.stringify(ns)}`,
    );
}

/** The admission context of a submitted job. */
export function admission(deps: RouteDeps, req: DevRequest, body: JsonObject): AdmissionContext {
  return {
    queryNamespace: req.query.get("namespace") ?? "",
    bodyNamespace: str(body, "Namespace"),
    queryRegion: req.query.get("region") ?? "",
    bodyRegion: str(body, "Region"),
    tokenAccessor: req.token?.accessor,
    agentRegion: deps.region,
  };
}

/** Handles a register request (`POST /v1/jobs`, or `POST /v1/job/:job_id` with the path ID in `pathId`). */
export function registerJob(
  deps: RouteDeps,
  req: DevRequest,
  pathId: string | undefined,
): { json: JsonObject; headers: Record<string, string> } {
  const body = bodyObject(req);
  const raw = requestJob(body, "Job ID hasn't been provided");
  if (pathId !== undefined && str(raw, "ID") !== pathId) throw new DevHttpError(400, "Job ID does not match name");
  if (
    str(raw, "Type") === "system" &&
    Array.isArray(raw.TaskGroups) &&
    raw.TaskGroups.some((g) => isObject(g) && isObject(g.Scaling))
  ) {
    throw new DevHttpError(400, "Task groups with job type system do not support scaling blocks");
  }
  const evalPriority = num(body, "EvalPriority");
  checkEvalPriority(evalPriority);
  const ns = namespaceFor(req, body, raw);
  req.requireCapability(SUBMIT, ns);
  if (body.PolicyOverride === true) req.requireCapability(OVERRIDE, ns);
  const job = admitJob(raw, admission(deps, req, body));
  refuseWildcardNamespace(ns, job);
  const result = deps.ops.register({
    job,
    submission: isObject(body.Submission) ? body.Submission : undefined,
    enforceIndex: body.EnforceIndex === true,
    jobModifyIndex: num(body, "JobModifyIndex"),
    evalPriority,
    preserveCounts: body.PreserveCounts === true,
    tokenAccessor: req.token?.accessor,
  });
  return { json: result as unknown as JsonObject, headers: writeHeaders(deps, result.Index) };
}
