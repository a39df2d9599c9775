// The job collection (scheduler-jobs-api.md, "Listing and registration"): list, register, parse.
import { DevHttpError, type DevRequest, type DevResponse, type RouteRow } from "../../core";
import { JobspecError, parseJobspec } from "../hcl";
import { FilterError, evalFilter, parseFilter } from "./filter";
import { bodyObject, boolParam, intParam, type RouteDeps } from "./http";
import { str, toJson, type JsonObject } from "../state/json";
import type { JobEntry } from "../state/store";
import { registerJob, SUBMIT } from "./submit";
import { jobStub } from "./views";

function tokenOf(entry: JobEntry): string {
  return `${entry.namespace}.${entry.id}`;
}

function atOrAfter(entry: JobEntry, token: string): boolean {
  const dot = token.indexOf(".");
  const [ns, id] = dot < 0 ? [token, ""] : [token.slice(0, dot), token.slice(dot + 1)];
  return entry.namespace > ns || (entry.namespace === ns && entry.id >= id);
}

/** `GET /v1/jobs`: one page of job stubs (every namespace the token may list with `namespace=*`). */
async function listJobs(deps: RouteDeps, req: DevRequest): Promise<DevResponse> {
  const { ctx, store } = deps;
  const index = await ctx.blockingQuery(req, () => Math.max(store.tables.jobs, store.tables.job_summary));
  const all = req.namespace === "*";
  const prefix = req.query.get("prefix") ?? "";
  const filterText = req.query.get("filter") ?? "";
  let filter;
  try {
    filter = filterText === "" ? undefined : parseFilter(filterText);
  } catch (e) {
    throw new DevHttpError(
      400,
      `failed to create result paginator: failed to read filter expression: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const perPage = intParam(req, "per_page") ?? 0;
  const nextToken = req.query.get("next_token") ?? "";
  const withMeta = boolParam(req, "meta");
  const page: JsonObject[] = [];
  let next = "";
  for (const entry of store.sortedJobs()) {
    if (!all && entry.namespace !== req.namespace) continue;
    if (all && !req.can("namespace:list-jobs", entry.namespace)) continue;
    if (!entry.id.startsWith(prefix)) continue;
    if (nextToken !== "" && !atOrAfter(entry, nextToken)) continue;
    if (filter !== undefined) {
      try {
        if (!evalFilter(filter, entry.job)) continue;
      } catch (e) {
        if (e instanceof FilterError) throw new DevHttpError(400, `failed to read result page: ${e.message}`);
        throw e;
      }
    }
    if (perPage > 0 && page.length === perPage) {
      next = tokenOf(entry);
      break;
    }
    page.push(jobStub(store, entry, withMeta));
  }
  return { json: page, headers: ctx.queryMeta(index, next) };
}

/** `POST /v1/jobs/parse`: HCL to the job's JSON. */
function parseJob(_deps: RouteDeps, req: DevRequest): DevResponse {
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
}

/** Routes of the job collection. */
export const JOBS_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/jobs", handler: listJobs, capability: "namespace:list-jobs" },
  { method: "POST", path: "/v1/jobs", handler: (deps, req) => registerJob(deps, req, undefined) },
  { method: "POST", path: "/v1/jobs/parse", handler: parseJob, capability: ["namespace:parse-job", SUBMIT] },
];
