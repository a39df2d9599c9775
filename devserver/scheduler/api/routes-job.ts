// One job (scheduler-jobs-api.md, "Reading a job", "Changing a job" and "Version tags"): the job itself, its
// versions and submissions, version tags, revert, stability, plan and re-evaluation. Its work's routes
// (routes-job-work.ts) are part of its table; the bare `/v1/job/*job_id` routes come last, as a job ID may
// end in a sub-resource's name.
import { DevHttpError, type DevRequest, type DevResponse, type RouteRow } from "../../core";
import { admitJob, requestJob } from "../ops/admission";
import { jobDiff } from "../ops/diff";
import { planJob } from "../ops/plan";
import { bodyObject, boolParam, checkEvalPriority, intParam, jobIdParam, writeHeaders, type RouteDeps } from "./http";
import { isObject, num, obj, str, type JsonObject } from "../state/json";
import { deregisterNothing, registerHandlerRefusal } from "./release";
import { JOB_WORK_ROUTES } from "./routes-job-work";
import { admission, namespaceFor, OVERRIDE, refuseWildcardNamespace, registerJob, SUBMIT } from "./submit";

const READ_JOB = "namespace:read-job";
const TAG = [SUBMIT, "namespace:tag-job-version"];

/** Suffixes of the job sub-resources; a job ID ending in one of them reached a route with the wrong method. */
const SUB_RESOURCES = [
  "/submission",
  "/versions",
  "/allocations",
  "/evaluations",
  "/deployments",
  "/deployment",
  "/summary",
  "/services",
  "/actions",
  "/action",
  "/scale",
  "/dispatch",
  "/payload",
  "/revert",
  "/stable",
  "/evaluate",
  "/plan",
  "/force",
];

/** A sub-resource path reached with a method it does not support lands on a bare route: answer like the real router. */
function wrongMethod(id: string): void {
  if (SUB_RESOURCES.some((s) => id.endsWith(s))) throw new DevHttpError(405, "Invalid method");
}

async function readJob(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const id = jobIdParam(req);
  const index = await ctx.blockingQuery(
    req,
    () => num(store.getJob(req.namespace, id)?.job, "ModifyIndex") || store.tables.jobs,
  );
  const entry = store.getJob(req.namespace, id);
  if (entry === undefined) {
    wrongMethod(id);
    throw new DevHttpError(404, "job not found");
  }
  return { json: entry.job, headers: ctx.queryMeta(index) };
}

function updateJob(deps: RouteDeps, req: DevRequest): DevResponse {
  const id = jobIdParam(req);
  const raw = requestJob(bodyObject(req), "Job ID hasn't been provided");
  if (str(raw, "ID") !== id) wrongMethod(id);
  return registerJob(deps, req, id);
}

function stopJob(deps: RouteDeps, req: DevRequest): DevResponse {
  const purge = boolParam(req, "purge");
  boolParam(req, "global");
  boolParam(req, "no_shutdown_delay");
  const evalPriority = intParam(req, "eval_priority") ?? 0;
  if (evalPriority > 0) checkEvalPriority(evalPriority);
  const out = deps.ops.deregister(req.namespace, jobIdParam(req), { purge, evalPriority });
  return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
}

async function submission(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const raw = req.query.get("version") ?? "";
  if (!/^[0-9]+$/.test(raw)) throw new DevHttpError(400, "Unable to parse job submission version parameter");
  const version = Number(raw);
  const find = (): JsonObject | undefined =>
    deps.store.getJob(req.namespace, jobIdParam(req))?.submissions.get(version);
  const index = await deps.ctx.blockingQuery(req, () => num(find(), "JobIndex"));
  const sub = find();
  if (sub === undefined) throw new DevHttpError(404, "job source not found");
  return { json: sub, headers: deps.ctx.queryMeta(index) };
}

async function versions(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const versionsIndex = (): number => {
    const e = store.getJob(req.namespace, jobIdParam(req));
    return e ? Math.max(...e.versions.map((v) => num(v, "ModifyIndex"))) : store.tables.job_version;
  };
  const index = await ctx.blockingQuery(req, versionsIndex);
  const entry = store.getJob(req.namespace, jobIdParam(req));
  if (entry === undefined || entry.versions.length === 0) throw new DevHttpError(404, "job versions not found");
  const list = entry.versions;
  let diffs: JsonObject[] | null = null;
  if (boolParam(req, "diffs")) {
    const newer = deps.has("diffVersion");
    const tag = newer ? (req.query.get("diff_tag") ?? "") : "";
    const dv = newer ? intParam(req, "diff_version") : undefined;
    let compare: JsonObject | undefined;
    if (tag !== "") {
      compare = list.find((v) => str(obj(v, "VersionTag"), "Name") === tag);
      if (compare === undefined) throw new DevHttpError(500, `tag ${JSON.stringify(tag)} not found`);
    } else if (dv !== undefined) {
      compare = list.find((v) => num(v, "Version") === dv);
      if (compare === undefined) throw new DevHttpError(500, `version ${dv} not found`);
    }
    diffs = [];
    for (let i = 0; i < list.length; i++) {
      const later = list[i] as JsonObject;
      const older = compare ?? list[i + 1];
      if (older === undefined) break;
      diffs.push(jobDiff(older, later, true) as unknown as JsonObject);
    }
  }
  return {
    json: { Versions: list, Diffs: diffs, Index: index, LastContact: 0, KnownLeader: true, NextToken: "" },
    headers: ctx.queryMeta(index),
  };
}

function plan(deps: RouteDeps, req: DevRequest): DevResponse {
  // Even with ACLs off the real plan handler looks the token up, and a token that is not a UUID fails
  // there (register and reads accept it): why a client must never send a placeholder token.
  const token = req.headers[deps.ctx.headerNames.token.toLowerCase()];
  if (!deps.ctx.aclEnabled && typeof token === "string" && token !== "" && token.length !== 36) {
    throw new DevHttpError(500, "acl token lookup failed: index error: UUID must be 36 characters");
  }
  const body = bodyObject(req);
  const raw = requestJob(body, "Job must have a valid ID");
  if (str(raw, "ID") !== jobIdParam(req)) throw new DevHttpError(400, "Job ID does not match");
  const ns = namespaceFor(req, body, raw);
  req.requireCapability(SUBMIT, ns);
  if (body.PolicyOverride === true) req.requireCapability(OVERRIDE, ns);
  const job = admitJob(raw, admission(deps, req, body));
  refuseWildcardNamespace(ns, job);
  const out = planJob(deps.engine, job, body.Diff === true, "");
  return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
}

function revert(deps: RouteDeps, req: DevRequest): DevResponse {
  const body = bodyObject(req);
  if (str(body, "JobID") === "") throw new DevHttpError(400, "JobID must be specified");
  if (str(body, "JobID") !== jobIdParam(req)) throw new DevHttpError(400, "Job ID does not match");
  if (str(body, "TaggedVersion") !== "" && num(body, "JobVersion") !== 0) {
    throw new DevHttpError(400, "JobVersion and TaggedVersion are mutually exclusive: specify only one");
  }
  const out = deps.ops.revert(req.namespace, jobIdParam(req), body, req.token?.accessor);
  return { json: out as unknown as JsonObject, headers: writeHeaders(deps, out.Index) };
}

function stable(deps: RouteDeps, req: DevRequest): DevResponse {
  const body = bodyObject(req);
  if (str(body, "JobID") === "") throw new DevHttpError(400, "JobID must be specified");
  if (str(body, "JobID") !== jobIdParam(req)) throw new DevHttpError(400, "Job ID does not match");
  const index = deps.ops.stable(req.namespace, jobIdParam(req), num(body, "JobVersion"), body.Stable === true);
  return { json: { JobModifyIndex: index, Index: index }, headers: writeHeaders(deps, index) };
}

function evaluate(deps: RouteDeps, req: DevRequest): DevResponse {
  const body = bodyObject(req);
  if (req.raw.length > 0) {
    if (str(body, "JobID") === "") throw new DevHttpError(400, "Job ID must be specified");
    if (str(body, "JobID") !== jobIdParam(req)) throw new DevHttpError(400, "JobID not same as job name");
  }
  const options = isObject(body.EvalOptions) ? body.EvalOptions : {};
  const out = deps.ops.evaluate(req.namespace, jobIdParam(req), options.ForceReschedule === true);
  return { json: out as unknown as JsonObject, headers: writeHeaders(deps, out.Index) };
}

function tagVersion(deps: RouteDeps, req: DevRequest): DevResponse {
  if (!deps.has("versionTags")) throw registerHandlerRefusal(req.raw);
  const out = deps.ops.tag(req.namespace, jobIdParam(req), req.params.tag ?? "", bodyObject(req));
  return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
}

function untagVersion(deps: RouteDeps, req: DevRequest): DevResponse {
  if (!deps.has("versionTags")) return { json: deregisterNothing(), headers: writeHeaders(deps, 0) };
  const out = deps.ops.untag(req.namespace, jobIdParam(req), req.params.tag ?? "");
  return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
}

/** Routes of one job, its sub-resources first and the bare job routes last. */
export const JOB_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/job/*job_id/submission", handler: submission, capability: READ_JOB },
  { method: "GET", path: "/v1/job/*job_id/versions", handler: versions, capability: READ_JOB },
  ...JOB_WORK_ROUTES,
  { method: "POST", path: "/v1/job/*job_id/plan", handler: plan },
  { method: "POST", path: "/v1/job/*job_id/revert", handler: revert, capability: [SUBMIT, "namespace:revert-job"] },
  { method: "POST", path: "/v1/job/*job_id/stable", handler: stable, capability: SUBMIT },
  { method: "POST", path: "/v1/job/*job_id/evaluate", handler: evaluate, capability: SUBMIT },
  { method: "POST", path: "/v1/job/:job_id/versions/:tag/tag", handler: tagVersion, capability: TAG },
  { method: "DELETE", path: "/v1/job/:job_id/versions/:tag/tag", handler: untagVersion, capability: TAG },
  { method: "GET", path: "/v1/job/*job_id", handler: readJob, capability: READ_JOB },
  { method: "POST", path: "/v1/job/*job_id", handler: updateJob },
  { method: "DELETE", path: "/v1/job/*job_id", handler: stopJob, capability: SUBMIT },
];
