// Read routes of the job API (kept in sync with scheduler-jobs-api.md, "Listing and registration" and "Reading a job").
// Every read answers with the index / known-leader / last-contact headers and honours `index`/`wait`
// where the spec marks the endpoint blocking; the index is that of the table read, as the real server does.
import { DevHttpError, type DevRequest, type Router } from "../../core";
import { jobDiff } from "../ops/diff";
import { FilterError, evalFilter, parseFilter } from "./filter";
import { boolParam, intParam, jobIdParam, type RouteDeps } from "./http";
import { num, obj, str, type JsonObject } from "../state/json";
import type { JobEntry } from "../state/store";
import { allocFull, allocStub, jobActions, jobStub, jobSummary, scaleStatus, serviceRegistrations } from "./views";

const READ_JOB = "namespace:read-job";

function requireJob(deps: RouteDeps, req: DevRequest): JobEntry {
  const entry = deps.store.getJob(req.namespace, jobIdParam(req));
  if (entry === undefined) throw new DevHttpError(404, "job not found");
  return entry;
}

function paginationKey(namespace: string, id: string): [string, string] {
  return [namespace, id];
}

function tokenOf(entry: JobEntry): string {
  return `${entry.namespace}.${entry.id}`;
}

function atOrAfter(entry: JobEntry, token: string): boolean {
  const dot = token.indexOf(".");
  const [ns, id] = dot < 0 ? [token, ""] : [token.slice(0, dot), token.slice(dot + 1)];
  const [ens, eid] = paginationKey(entry.namespace, entry.id);
  return ens > ns || (ens === ns && eid >= id);
}

/** Registers the read routes. */
export function readRoutes(r: Router, deps: RouteDeps): void {
  const { ctx, store } = deps;

  r.get(
    "/v1/jobs",
    async (req) => {
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
    },
    { capability: "namespace:list-jobs" },
  );

  r.get(
    "/v1/job/*job_id/submission",
    async (req) => {
      const raw = req.query.get("version") ?? "";
      if (!/^[0-9]+$/.test(raw)) throw new DevHttpError(400, "Unable to parse job submission version parameter");
      const version = Number(raw);
      const find = (): JsonObject | undefined => store.getJob(req.namespace, jobIdParam(req))?.submissions.get(version);
      const index = await ctx.blockingQuery(req, () => num(find(), "JobIndex"));
      const sub = find();
      if (sub === undefined) throw new DevHttpError(404, "job source not found");
      return { json: sub, headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/versions",
    async (req) => {
      const versionsIndex = (): number => {
        const e = store.getJob(req.namespace, jobIdParam(req));
        return e ? Math.max(...e.versions.map((v) => num(v, "ModifyIndex"))) : store.tables.job_version;
      };
      const index = await ctx.blockingQuery(req, versionsIndex);
      const entry = store.getJob(req.namespace, jobIdParam(req));
      if (entry === undefined || entry.versions.length === 0) throw new DevHttpError(404, "job versions not found");
      const versions = entry.versions;
      let diffs: JsonObject[] | null = null;
      if (boolParam(req, "diffs")) {
        const newer = deps.has("diffVersion");
        const tag = newer ? (req.query.get("diff_tag") ?? "") : "";
        const dv = newer ? intParam(req, "diff_version") : undefined;
        let compare: JsonObject | undefined;
        if (tag !== "") {
          compare = versions.find((v) => str(obj(v, "VersionTag"), "Name") === tag);
          if (compare === undefined) throw new DevHttpError(500, `tag ${JSON.stringify(tag)} not found`);
        } else if (dv !== undefined) {
          compare = versions.find((v) => num(v, "Version") === dv);
          if (compare === undefined) throw new DevHttpError(500, `version ${dv} not found`);
        }
        diffs = [];
        for (let i = 0; i < versions.length; i++) {
          const newer = versions[i] as JsonObject;
          const older = compare ?? versions[i + 1];
          if (older === undefined) break;
          diffs.push(jobDiff(older, newer, true) as unknown as JsonObject);
        }
      }
      return {
        json: { Versions: versions, Diffs: diffs, Index: index, LastContact: 0, KnownLeader: true, NextToken: "" },
        headers: ctx.queryMeta(index),
      };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/allocations",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => store.tables.allocs);
      const all = boolParam(req, "all");
      const list = store.jobAllocs(req.namespace, jobIdParam(req), all).map((x) => allocStub(x.alloc));
      return { json: list, headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/evaluations",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => store.tables.evals);
      return { json: store.jobEvals(req.namespace, jobIdParam(req)), headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/deployments",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => store.tables.deployment);
      return {
        json: store.jobDeployments(req.namespace, jobIdParam(req), boolParam(req, "all")),
        headers: ctx.queryMeta(index),
      };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/deployment",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => store.tables.deployment);
      const latest = store.jobDeployments(req.namespace, jobIdParam(req))[0] ?? null;
      return { json: latest, headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/summary",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => {
        const e = store.getJob(req.namespace, jobIdParam(req));
        return e ? Math.max(e.summaryIndex, num(e.job, "CreateIndex")) : store.tables.job_summary;
      });
      return { json: jobSummary(store, requireJob(deps, req), false), headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/services",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => store.tables.allocs);
      const entry = requireJob(deps, req);
      return {
        json: serviceRegistrations(store, entry, deps.engine.settings.nodes, deps.serviceProviders),
        headers: ctx.queryMeta(index),
      };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/actions",
    (req) => {
      if (!deps.has("jobActions")) throw new DevHttpError(404, "job not found");
      const entry = requireJob(deps, req);
      return { json: jobActions(entry.job), headers: ctx.queryMeta(num(entry.job, "ModifyIndex")) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/job/*job_id/scale",
    async (req) => {
      const index = await ctx.blockingQuery(req, () => {
        const e = store.getJob(req.namespace, jobIdParam(req));
        return e ? Math.max(num(e.job, "ModifyIndex"), store.tables.scaling_event, store.tables.allocs) : ctx.index();
      });
      return { json: scaleStatus(store, requireJob(deps, req)), headers: ctx.queryMeta(index) };
    },
    { capability: ["namespace:read-job-scaling", READ_JOB] },
  );

  r.get(
    "/v1/evaluation/:eval_id",
    async (req) => {
      const index = await ctx.blockingQuery(
        req,
        () => store.evals.get(req.params.eval_id ?? "")?.ModifyIndex ?? store.tables.evals,
      );
      const e = store.evals.get(req.params.eval_id ?? "");
      if (e === undefined || e.Namespace !== req.namespace) throw new DevHttpError(404, "eval not found");
      return { json: e, headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/deployment/:deployment_id",
    async (req) => {
      const index = await ctx.blockingQuery(
        req,
        () => store.deployments.get(req.params.deployment_id ?? "")?.ModifyIndex ?? store.tables.deployment,
      );
      const d = store.deployments.get(req.params.deployment_id ?? "");
      if (d === undefined || d.Namespace !== req.namespace) throw new DevHttpError(404, "deployment not found");
      return { json: d, headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );

  r.get(
    "/v1/allocation/:alloc_id",
    async (req) => {
      const index = await ctx.blockingQuery(
        req,
        () => store.allocs.get(req.params.alloc_id ?? "")?.alloc.ModifyIndex ?? store.tables.allocs,
      );
      const a = store.allocs.get(req.params.alloc_id ?? "");
      if (a === undefined || a.alloc.Namespace !== req.namespace) throw new DevHttpError(404, "alloc not found");
      return { json: allocFull(a), headers: ctx.queryMeta(index) };
    },
    { capability: READ_JOB },
  );
}
