// Evaluations, deployments, allocations and the system's garbage collection: the records a job's work leaves,
// read by ID (scheduler-jobs-api.md), plus the real server's deployment promote/fail endpoints used to steer
// simulated rollouts.
import { DevHttpError, type DevRequest, type DevResponse, type RouteRow } from "../../core";
import { bodyObject, writeHeaders, type RouteDeps } from "./http";
import type { JsonObject } from "../state/json";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESC } from "../state/types";
import { SUBMIT } from "./submit";
import { allocFull } from "./views";

const READ_JOB = "namespace:read-job";

async function readEvaluation(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const id = req.params.eval_id ?? "";
  const index = await ctx.blockingQuery(req, () => store.evals.get(id)?.ModifyIndex ?? store.tables.evals);
  const e = store.evals.get(id);
  if (e === undefined || e.Namespace !== req.namespace) throw new DevHttpError(404, "eval not found");
  return { json: e, headers: ctx.queryMeta(index) };
}

async function readDeployment(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const id = req.params.deployment_id ?? "";
  const index = await ctx.blockingQuery(req, () => store.deployments.get(id)?.ModifyIndex ?? store.tables.deployment);
  const d = store.deployments.get(id);
  if (d === undefined || d.Namespace !== req.namespace) throw new DevHttpError(404, "deployment not found");
  return { json: d, headers: ctx.queryMeta(index) };
}

function failDeployment(deps: RouteDeps, req: DevRequest): DevResponse {
  const { store } = deps;
  const d = store.deployments.get(req.params.deployment_id ?? "");
  if (d === undefined || d.Namespace !== req.namespace) throw new DevHttpError(404, "deployment not found");
  if (!ACTIVE_DEPLOYMENT.has(d.Status)) throw new DevHttpError(500, "can't fail terminal deployment");
  const reverted = deps.engine.deployments.fail(d, DEPLOYMENT_DESC.markedFailed, false);
  const latestEval = store.jobEvals(d.Namespace, d.JobID)[0];
  const out: JsonObject = {
    EvalID: reverted !== undefined ? (latestEval?.ID ?? "") : "",
    EvalCreateIndex: reverted !== undefined ? (latestEval?.CreateIndex ?? 0) : 0,
    DeploymentModifyIndex: d.ModifyIndex,
    Index: d.ModifyIndex,
    ...(reverted !== undefined ? { RevertedJobVersion: reverted } : {}),
  };
  return { json: out, headers: writeHeaders(deps, d.ModifyIndex) };
}

function promoteDeployment(deps: RouteDeps, req: DevRequest): DevResponse {
  const { store } = deps;
  const d = store.deployments.get(req.params.deployment_id ?? "");
  if (d === undefined || d.Namespace !== req.namespace) throw new DevHttpError(404, "deployment not found");
  if (!ACTIVE_DEPLOYMENT.has(d.Status)) throw new DevHttpError(500, "can't promote terminal deployment");
  if (!Object.values(d.TaskGroups).some((g) => g.DesiredCanaries > 0 && !g.Promoted))
    throw new DevHttpError(500, "no canaries to promote");
  // `All`, or only the groups named in `Groups`; each promoted group needs all its canaries healthy.
  const body = req.raw.length > 0 ? bodyObject(req) : {};
  const groups =
    body.All === true
      ? undefined
      : (Array.isArray(body.Groups) ? body.Groups : []).filter((g): g is string => typeof g === "string");
  const unhealthy = deps.engine.deployments.unhealthyCanaryGroups(d, groups);
  if (unhealthy.length > 0) throw new DevHttpError(500, unhealthy.join("\n"));
  const index = store.write("deployment", "evals");
  const e = deps.engine.deployments.promote(d, index, groups);
  return {
    json: { EvalID: e.ID, EvalCreateIndex: index, DeploymentModifyIndex: index, Index: index },
    headers: writeHeaders(deps, index),
  };
}

async function readAllocation(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const id = req.params.alloc_id ?? "";
  const index = await ctx.blockingQuery(req, () => store.allocs.get(id)?.alloc.ModifyIndex ?? store.tables.allocs);
  const a = store.allocs.get(id);
  if (a === undefined || a.alloc.Namespace !== req.namespace) throw new DevHttpError(404, "alloc not found");
  return { json: allocFull(a), headers: ctx.queryMeta(index) };
}

/**
 * The real server's forced garbage collection (management tokens only): every finished record, whatever its
 * age. (The real one queues it and answers at once; this one has collected when it answers.)
 */
function collectGarbage(deps: RouteDeps): DevResponse {
  deps.gc.force();
  return { text: "", headers: writeHeaders(deps, deps.store.tables.jobs) };
}

export const EVALUATION_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/evaluation/:eval_id", handler: readEvaluation, capability: READ_JOB },
];

export const DEPLOYMENT_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/deployment/:deployment_id", handler: readDeployment, capability: READ_JOB },
  { method: "POST", path: "/v1/deployment/fail/:deployment_id", handler: failDeployment, capability: SUBMIT },
  { method: "POST", path: "/v1/deployment/promote/:deployment_id", handler: promoteDeployment, capability: SUBMIT },
];

export const ALLOCATION_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/allocation/:alloc_id", handler: readAllocation, capability: READ_JOB },
];

export const SYSTEM_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "POST", path: "/v1/system/gc", handler: collectGarbage, capability: "management" },
];
