// The work of one job (scheduler-jobs-api.md, "Reading a job"): its allocations, evaluations, deployments,
// summary, services, actions and scale, and the writes that start work (dispatch, periodic force, scale).
import { DevHttpError, type DevRequest, type DevResponse, type RouteRow } from "../../core";
import { bodyObject, boolParam, jobIdParam, writeHeaders, type RouteDeps } from "./http";
import { num, str, strMap, type JsonObject } from "../state/json";
import type { JobEntry } from "../state/store";
import { registerHandlerRefusal } from "./release";
import { OVERRIDE, SUBMIT } from "./submit";
import { allocStub, jobActions, jobSummary, scaleStatus, serviceRegistrations } from "./views";

const READ_JOB = "namespace:read-job";
const DISPATCH = "namespace:dispatch-job";

/** Returns the job a request names, or answers 404. */
function requireJob(deps: RouteDeps, req: DevRequest): JobEntry {
  const entry = deps.store.getJob(req.namespace, jobIdParam(req));
  if (entry === undefined) throw new DevHttpError(404, "job not found");
  return entry;
}

async function allocations(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const index = await deps.ctx.blockingQuery(req, () => deps.store.tables.allocs);
  const all = boolParam(req, "all");
  const list = deps.store.jobAllocs(req.namespace, jobIdParam(req), all).map((x) => allocStub(x.alloc));
  return { json: list, headers: deps.ctx.queryMeta(index) };
}

async function evaluations(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const index = await deps.ctx.blockingQuery(req, () => deps.store.tables.evals);
  return { json: deps.store.jobEvals(req.namespace, jobIdParam(req)), headers: deps.ctx.queryMeta(index) };
}

async function deployments(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const index = await deps.ctx.blockingQuery(req, () => deps.store.tables.deployment);
  return {
    json: deps.store.jobDeployments(req.namespace, jobIdParam(req), boolParam(req, "all")),
    headers: deps.ctx.queryMeta(index),
  };
}

async function latestDeployment(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const index = await deps.ctx.blockingQuery(req, () => deps.store.tables.deployment);
  const latest = deps.store.jobDeployments(req.namespace, jobIdParam(req))[0] ?? null;
  return { json: latest, headers: deps.ctx.queryMeta(index) };
}

async function summary(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { store } = deps;
  const index = await deps.ctx.blockingQuery(req, () => {
    const e = store.getJob(req.namespace, jobIdParam(req));
    return e ? Math.max(e.summaryIndex, num(e.job, "CreateIndex")) : store.tables.job_summary;
  });
  return { json: jobSummary(store, requireJob(deps, req), false), headers: deps.ctx.queryMeta(index) };
}

async function services(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const index = await deps.ctx.blockingQuery(req, () => deps.store.tables.allocs);
  const entry = requireJob(deps, req);
  return {
    json: serviceRegistrations(deps.store, entry, deps.engine.settings.nodes, deps.serviceProviders),
    headers: deps.ctx.queryMeta(index),
  };
}

function actions(deps: RouteDeps, req: DevRequest): DevResponse {
  if (!deps.has("jobActions")) throw new DevHttpError(404, "job not found");
  const entry = requireJob(deps, req);
  return { json: jobActions(entry.job), headers: deps.ctx.queryMeta(num(entry.job, "ModifyIndex")) };
}

async function readScale(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const index = await ctx.blockingQuery(req, () => {
    const e = store.getJob(req.namespace, jobIdParam(req));
    return e ? Math.max(num(e.job, "ModifyIndex"), store.tables.scaling_event, store.tables.allocs) : ctx.index();
  });
  return { json: scaleStatus(store, requireJob(deps, req)), headers: ctx.queryMeta(index) };
}

function scale(deps: RouteDeps, req: DevRequest): DevResponse {
  const body = bodyObject(req);
  if (body.PolicyOverride === true) req.requireCapability(OVERRIDE);
  const out = deps.ops.scale(req.namespace, jobIdParam(req), body);
  return { json: out as unknown as JsonObject, headers: writeHeaders(deps, out.Index) };
}

function decodePayload(text: string): Buffer {
  const clean = text.replace(/\s/g, "");
  const bad = clean.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0 || clean.length % 4 === 1)
    throw new DevHttpError(400, `illegal base64 data at input byte ${bad >= 0 ? bad : clean.length - 1}`);
  return Buffer.from(clean, "base64");
}

function dispatchWith(deps: RouteDeps, req: DevRequest, payload: Buffer, body: JsonObject): DevResponse {
  if (str(body, "JobID") !== "" && str(body, "JobID") !== jobIdParam(req))
    throw new DevHttpError(400, "Job ID does not match");
  const out = deps.ops.dispatch(
    req.namespace,
    jobIdParam(req),
    payload,
    strMap(body, "Meta"),
    str(body, "IdPrefixTemplate"),
    req.query.get("idempotency_token") ?? "",
  );
  return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
}

/** `POST /v1/job/:job_id/dispatch/payload`: the raw body is the payload (no JSON envelope). */
function dispatchPayload(deps: RouteDeps, req: DevRequest): DevResponse {
  if (!deps.has("dispatchPayload")) throw registerHandlerRefusal(req.raw);
  return dispatchWith(deps, req, req.raw, {});
}

function dispatch(deps: RouteDeps, req: DevRequest): DevResponse {
  const body = bodyObject(req);
  const payload = typeof body.Payload === "string" ? decodePayload(body.Payload) : Buffer.alloc(0);
  return dispatchWith(deps, req, payload, body);
}

function periodicForce(deps: RouteDeps, req: DevRequest): DevResponse {
  const out = deps.ops.periodicForce(req.namespace, jobIdParam(req));
  return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
}

/** Routes of a job's work (each must come before the bare `/v1/job/*job_id` routes). */
export const JOB_WORK_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/job/*job_id/allocations", handler: allocations, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/evaluations", handler: evaluations, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/deployments", handler: deployments, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/deployment", handler: latestDeployment, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/summary", handler: summary, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/services", handler: services, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/actions", handler: actions, capability: READ_JOB },
  {
    method: "GET",
    path: "/v1/job/*job_id/scale",
    handler: readScale,
    capability: ["namespace:read-job-scaling", READ_JOB],
  },
  { method: "POST", path: "/v1/job/*job_id/scale", handler: scale, capability: ["namespace:scale-job", SUBMIT] },
  {
    method: "POST",
    path: "/v1/job/*job_id/dispatch/payload",
    handler: dispatchPayload,
    capability: DISPATCH,
    rawBody: true,
  },
  { method: "POST", path: "/v1/job/*job_id/dispatch", handler: dispatch, capability: DISPATCH },
  { method: "POST", path: "/v1/job/*job_id/periodic/force", handler: periodicForce, capability: [DISPATCH, SUBMIT] },
];
