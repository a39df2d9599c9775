// Write routes of the job API (kept in sync with scheduler-jobs-api.md, "Changing a job", "Version tags" and the
// register and parse endpoints), plus the deployment promote/fail endpoints of the real server used to steer
// simulated rollouts. ACL checks run in the namespace the job ends up in (query, then body, then job).
import { DevHttpError, type DevRequest, type Router } from "../../core";
import { admitJob, requestJob, type AdmissionContext } from "../ops/admission";
import { JobspecError, parseJobspec } from "../hcl";
import { bodyObject, boolParam, checkEvalPriority, intParam, jobIdParam, writeHeaders, type RouteDeps } from "./http";
import { isObject, num, str, strMap, toJson, type JsonObject } from "../state/json";
import { planJob } from "../ops/plan";
import { deregisterNothing, registerHandlerRefusal } from "./release";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESC } from "../state/types";

const SUBMIT = "namespace:submit-job";
const OVERRIDE = "namespace:policy-override";

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

function namespaceFor(req: DevRequest, body: JsonObject, job: JsonObject): string {
  return req.query.get("namespace") || str(body, "Namespace") || str(job, "Namespace") || "default";
}

/**
 * `*` names every namespace only when reading; a job can never be in it. The real server's check passes
 * (any namespace granting the capability will do) and the write fails where the job is stored.
 */
function refuseWildcardNamespace(ns: string, job: JsonObject): void {
  if (ns === "*")
    throw new DevHttpError(
      500,
      `job ${JSON.stringify(str(job, "ID"))} is in nonexistent namespace ${JSON.stringify(ns)}`,
    );
}

function admission(deps: RouteDeps, req: DevRequest, body: JsonObject): AdmissionContext {
  return {
    queryNamespace: req.query.get("namespace") ?? "",
    bodyNamespace: str(body, "Namespace"),
    queryRegion: req.query.get("region") ?? "",
    bodyRegion: str(body, "Region"),
    tokenAccessor: req.token?.accessor,
    agentRegion: deps.region,
  };
}

function decodePayload(text: string): Buffer {
  const clean = text.replace(/\s/g, "");
  const bad = clean.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0 || clean.length % 4 === 1)
    throw new DevHttpError(400, `illegal base64 data at input byte ${bad >= 0 ? bad : clean.length - 1}`);
  return Buffer.from(clean, "base64");
}

/** Registers the write routes (job-specific patterns first; the bare job routes come from `jobRoutes`). */
export function writeRoutes(r: Router, deps: RouteDeps): void {
  const { store, ops } = deps;

  r.post("/v1/jobs", (req) => registerJob(deps, req, undefined));

  r.post(
    "/v1/jobs/parse",
    (req) => {
      const body = bodyObject(req);
      const hcl = typeof body.JobHCL === "string" ? body.JobHCL : "";
      if (hcl === "") throw new DevHttpError(400, "Job spec is empty");
      try {
        const job = parseJobspec(hcl, { variables: str(body, "Variables"), canonicalize: body.Canonicalize === true });
        return { json: toJson(job) };
      } catch (e) {
        if (e instanceof JobspecError) throw new DevHttpError(400, e.message);
        throw e;
      }
    },
    { capability: ["namespace:parse-job", SUBMIT] },
  );

  r.post("/v1/job/*job_id/plan", (req) => {
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
  });

  r.post(
    "/v1/job/*job_id/revert",
    (req) => {
      const body = bodyObject(req);
      if (str(body, "JobID") === "") throw new DevHttpError(400, "JobID must be specified");
      if (str(body, "JobID") !== jobIdParam(req)) throw new DevHttpError(400, "Job ID does not match");
      if (str(body, "TaggedVersion") !== "" && num(body, "JobVersion") !== 0) {
        throw new DevHttpError(400, "JobVersion and TaggedVersion are mutually exclusive: specify only one");
      }
      const out = ops.revert(req.namespace, jobIdParam(req), body, req.token?.accessor);
      return { json: out as unknown as JsonObject, headers: writeHeaders(deps, out.Index) };
    },
    { capability: [SUBMIT, "namespace:revert-job"] },
  );

  r.post(
    "/v1/job/*job_id/stable",
    (req) => {
      const body = bodyObject(req);
      if (str(body, "JobID") === "") throw new DevHttpError(400, "JobID must be specified");
      if (str(body, "JobID") !== jobIdParam(req)) throw new DevHttpError(400, "Job ID does not match");
      const index = ops.stable(req.namespace, jobIdParam(req), num(body, "JobVersion"), body.Stable === true);
      return { json: { JobModifyIndex: index, Index: index }, headers: writeHeaders(deps, index) };
    },
    { capability: SUBMIT },
  );

  r.post(
    "/v1/job/*job_id/evaluate",
    (req) => {
      const body = bodyObject(req);
      if (req.raw.length > 0) {
        if (str(body, "JobID") === "") throw new DevHttpError(400, "Job ID must be specified");
        if (str(body, "JobID") !== jobIdParam(req)) throw new DevHttpError(400, "JobID not same as job name");
      }
      const options = isObject(body.EvalOptions) ? body.EvalOptions : {};
      const out = ops.evaluate(req.namespace, jobIdParam(req), options.ForceReschedule === true);
      return { json: out as unknown as JsonObject, headers: writeHeaders(deps, out.Index) };
    },
    { capability: SUBMIT },
  );

  const dispatch = (
    req: DevRequest,
    payload: Buffer,
    body: JsonObject,
  ): { json: JsonObject; headers: Record<string, string> } => {
    if (str(body, "JobID") !== "" && str(body, "JobID") !== jobIdParam(req))
      throw new DevHttpError(400, "Job ID does not match");
    const out = ops.dispatch(
      req.namespace,
      jobIdParam(req),
      payload,
      strMap(body, "Meta"),
      str(body, "IdPrefixTemplate"),
      req.query.get("idempotency_token") ?? "",
    );
    return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
  };
  r.post(
    "/v1/job/*job_id/dispatch/payload",
    (req) => {
      if (!deps.has("dispatchPayload")) throw registerHandlerRefusal(req.raw);
      return dispatch(req, req.raw, {});
    },
    { capability: "namespace:dispatch-job", rawBody: true },
  );
  r.post(
    "/v1/job/*job_id/dispatch",
    (req) => {
      const body = bodyObject(req);
      const payload = typeof body.Payload === "string" ? decodePayload(body.Payload) : Buffer.alloc(0);
      return dispatch(req, payload, body);
    },
    { capability: "namespace:dispatch-job" },
  );

  r.post(
    "/v1/job/*job_id/periodic/force",
    (req) => {
      const out = ops.periodicForce(req.namespace, jobIdParam(req));
      return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
    },
    { capability: ["namespace:dispatch-job", SUBMIT] },
  );

  r.post(
    "/v1/job/*job_id/scale",
    (req) => {
      const body = bodyObject(req);
      if (body.PolicyOverride === true) req.requireCapability(OVERRIDE);
      const out = ops.scale(req.namespace, jobIdParam(req), body);
      return { json: out as unknown as JsonObject, headers: writeHeaders(deps, out.Index) };
    },
    { capability: ["namespace:scale-job", SUBMIT] },
  );

  r.post(
    "/v1/job/:job_id/versions/:tag/tag",
    (req) => {
      if (!deps.has("versionTags")) throw registerHandlerRefusal(req.raw);
      const out = ops.tag(req.namespace, jobIdParam(req), req.params.tag ?? "", bodyObject(req));
      return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
    },
    { capability: [SUBMIT, "namespace:tag-job-version"] },
  );

  r.delete(
    "/v1/job/:job_id/versions/:tag/tag",
    (req) => {
      if (!deps.has("versionTags")) return { json: deregisterNothing(), headers: writeHeaders(deps, 0) };
      const out = ops.untag(req.namespace, jobIdParam(req), req.params.tag ?? "");
      return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
    },
    { capability: [SUBMIT, "namespace:tag-job-version"] },
  );

  // The real server's forced garbage collection (management tokens only): every finished record, whatever
  // its age. (The real one queues it and answers at once; this one has collected when it answers.)
  r.post(
    "/v1/system/gc",
    () => {
      deps.gc.force();
      return { text: "", headers: writeHeaders(deps, store.tables.jobs) };
    },
    { capability: "management" },
  );

  r.post(
    "/v1/deployment/fail/:deployment_id",
    (req) => {
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
    },
    { capability: SUBMIT },
  );

  r.post(
    "/v1/deployment/promote/:deployment_id",
    (req) => {
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
    },
    { capability: SUBMIT },
  );
}

/** Registers the bare job routes (read, update, stop); must come after every `/v1/job/*job_id/...` route. */
export function jobRoutes(r: Router, deps: RouteDeps): void {
  const { ctx, store, ops } = deps;
  // A sub-resource path reached with a method it does not support lands here; answer like the real router.
  const wrongMethod = (id: string): void => {
    if (SUB_RESOURCES.some((s) => id.endsWith(s))) throw new DevHttpError(405, "Invalid method");
  };

  r.get(
    "/v1/job/*job_id",
    async (req) => {
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
    },
    { capability: "namespace:read-job" },
  );

  r.post("/v1/job/*job_id", (req) => {
    const id = jobIdParam(req);
    const raw = requestJob(bodyObject(req), "Job ID hasn't been provided");
    if (str(raw, "ID") !== id) wrongMethod(id);
    return registerJob(deps, req, id);
  });

  r.delete(
    "/v1/job/*job_id",
    (req) => {
      const purge = boolParam(req, "purge");
      boolParam(req, "global");
      boolParam(req, "no_shutdown_delay");
      const evalPriority = intParam(req, "eval_priority") ?? 0;
      if (evalPriority > 0) checkEvalPriority(evalPriority);
      const out = ops.deregister(req.namespace, jobIdParam(req), { purge, evalPriority });
      return { json: out, headers: writeHeaders(deps, num(out, "Index")) };
    },
    { capability: SUBMIT },
  );
}

/** Handles a register request (`POST /v1/jobs`, or `POST /v1/job/:job_id` with the path ID in `pathId`). */
function registerJob(
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
