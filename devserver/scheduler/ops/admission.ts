// What the server does to a job submitted as JSON before storing or planning it: the client library's
// canonical defaults (the same code the parse endpoint's Canonicalize flag runs), then the server-side
// conversion and admission (job-level update reduced to stagger/max_parallel, datacenters default "*",
// node pool "default", submitted tokens cleared, the caller's token accessor recorded), then validation.
import { DevHttpError } from "../../core";
import { canonicalizeJob } from "../hcl";
import { isObject, num, obj, objs, str, toJson, type JsonObject } from "../state/json";
import { MASKED_SPEC_FIELDS } from "../state/spec";

/**
 * Fields the server sets itself; a submitted value is ignored: those a registration's change test masks, and
 * the caller's token accessor (VersionTag is deliberately not among them).
 */
const SERVER_FIELDS: readonly string[] = [...MASKED_SPEC_FIELDS, "SvcTokenID"];

const JOB_TYPES = new Set(["service", "batch", "system", "sysbatch"]);

/** Where namespace and region come from: the query wins over the request body, which wins over the job. */
export interface AdmissionContext {
  readonly queryNamespace: string;
  readonly bodyNamespace: string;
  readonly queryRegion: string;
  readonly bodyRegion: string;
  /** Accessor of the caller's token (recorded as SvcTokenID), if any. */
  readonly tokenAccessor?: string | undefined;
  /** Region of this devserver (default "global"). */
  readonly agentRegion: string;
}

/** Formats errors the way the server's multi-error renders them. */
function multiError(errors: readonly string[]): string {
  const head = errors.length === 1 ? "1 error occurred:" : `${errors.length} errors occurred:`;
  return `${head}\n${errors.map((e) => `\t* ${e}`).join("\n")}\n\n`;
}

function validate(job: JsonObject): string[] {
  const errors: string[] = [];
  if (str(job, "ID") === "") errors.push("Missing job ID");
  else if (/\s/.test(str(job, "ID"))) errors.push("Job ID contains a space");
  if (str(job, "Name") === "") errors.push("Missing job name");
  if (!JOB_TYPES.has(str(job, "Type"))) errors.push(`Invalid job type: ${JSON.stringify(str(job, "Type"))}`);
  const priority = num(job, "Priority");
  if (priority < 1 || priority > 100) errors.push("Job priority must be between [1, 100]");
  const groups = objs(job, "TaskGroups");
  if (groups.length === 0) errors.push("Missing job task groups");
  const seen = new Map<string, number>();
  groups.forEach((g, i) => {
    const name = str(g, "Name");
    if (name === "") {
      errors.push(`Job task group ${i + 1} missing name`);
      return;
    }
    const prev = seen.get(name);
    if (prev !== undefined) errors.push(`Job task group ${i + 1} redefines '${name}' from group ${prev + 1}`);
    seen.set(name, i);
    const groupErrors: string[] = [];
    if (num(g, "Count") < 0) groupErrors.push("Task group count can't be negative");
    const tasks = objs(g, "Tasks");
    if (tasks.length === 0) groupErrors.push("Missing tasks for task group");
    const taskNames = new Set<string>();
    tasks.forEach((t, j) => {
      const tn = str(t, "Name");
      if (tn === "") groupErrors.push(`Task ${j + 1} missing name`);
      else if (taskNames.has(tn)) groupErrors.push(`Task ${j + 1} redefines '${tn}' from task`);
      taskNames.add(tn);
      if (str(t, "Driver") === "") groupErrors.push(`Task ${tn} validation failed: Missing task driver`);
    });
    for (const e of groupErrors) errors.push(`Task group ${name} validation failed: ${e}`);
  });
  return errors;
}

/**
 * Turns a submitted job into the stored form and validates it; throws the server's 500 validation error.
 * `raw` is the request's `Job` object.
 */
export function admitJob(raw: JsonObject, ctx: AdmissionContext): JsonObject {
  const input: JsonObject = { ...raw };
  for (const k of SERVER_FIELDS) delete input[k];
  const job = toJson(canonicalizeJob(input)) as JsonObject;
  for (const k of SERVER_FIELDS) delete job[k];

  job.Namespace = ctx.queryNamespace || ctx.bodyNamespace || str(raw, "Namespace") || "default";
  let region = ctx.queryRegion || ctx.bodyRegion || str(raw, "Region");
  if (region === "" || region === "global") region = ctx.agentRegion;
  job.Region = region;

  const update = obj(job, "Update");
  const maxParallel = num(update, "MaxParallel");
  job.Update = {
    Stagger: maxParallel > 0 ? num(update, "Stagger") : 0,
    MaxParallel: maxParallel > 0 ? maxParallel : 0,
    HealthCheck: "",
    MinHealthyTime: 0,
    HealthyDeadline: 0,
    ProgressDeadline: 0,
    AutoRevert: false,
    AutoPromote: false,
    Canary: 0,
  };
  const dcs = job.Datacenters;
  if (!Array.isArray(dcs) || dcs.length === 0) job.Datacenters = ["*"];
  if (str(job, "NodePool") === "") job.NodePool = "default";
  job.SecretsToken = "";
  job.DiscoveryToken = "";
  if (ctx.tokenAccessor !== undefined) job.SvcTokenID = ctx.tokenAccessor;
  if (job.Dispatched === undefined) job.Dispatched = false;

  const errors = validate(job);
  if (errors.length > 0) throw new DevHttpError(500, multiError(errors));
  return job;
}

/** Returns the `Job` object of a register or plan body, with the endpoint's 400 texts when it is missing. */
export function requestJob(body: unknown, missingIdText: string): JsonObject {
  const job = isObject(body) ? body.Job : undefined;
  if (!isObject(job)) throw new DevHttpError(400, "Job must be specified");
  if (typeof job.ID !== "string") throw new DevHttpError(400, missingIdText);
  return job;
}
