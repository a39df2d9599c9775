// Scaling a task group (scheduler-jobs-api.md, "Changing a job", the scale endpoint), with the real server's
// rules and error texts; every request is recorded as a scaling event.
import { DevHttpError } from "../../core";
import { bool, isObject, num, obj, objs, str, strMap, nowNanos, type Json, type JsonObject } from "../state/json";
import { isTemplateJob } from "../state/spec";
import type { JobEntry } from "../state/store";
import { ACTIVE_DEPLOYMENT } from "../state/types";
import { ENFORCE_PREFIX, err500 } from "./rules";
import type { JobWriter, WriteResult } from "./writer";

/**
 * Scales one task group (scheduler-jobs-api.md, "Changing a job", the scale endpoint): a count change is a
 * new job version with a `job-scaling` evaluation, refused while a deployment of the job is active; every
 * request is recorded as a scaling event shown by the scale status. Error texts are the real server's.
 */
export function scaleGroup(w: JobWriter, ns: string, id: string, body: JsonObject): WriteResult {
  const target = strMap(body, "Target");
  if ((target.Namespace ?? "") !== "" && target.Namespace !== ns)
    throw new DevHttpError(400, "namespace in payload did not match header");
  if ((target.Job ?? "") !== "" && target.Job !== id)
    throw new DevHttpError(400, "job ID in payload did not match URL");
  const groupName = target.Group ?? "";
  if (groupName === "") throw new DevHttpError(400, "missing task group name for scaling action");
  const message = str(body, "Message");
  const errorValue = body.Error;
  const isError = errorValue === true || (typeof errorValue === "string" && errorValue !== "");
  if ((message !== "") === isError)
    throw new DevHttpError(400, "exactly one of Message or Error must be set for a scaling action");
  const count = typeof body.Count === "number" ? body.Count : undefined;
  if (count !== undefined) {
    if (count < 0) throw new DevHttpError(400, "scaling action count can't be negative");
    if (isError) throw new DevHttpError(400, "scaling action should not contain count if error is true");
  }
  const entry = w.store.getJob(ns, id);
  if (entry === undefined) throw new DevHttpError(404, `job ${JSON.stringify(id)} not found`);
  const job = entry.job;
  if (str(job, "Type") === "system") throw new DevHttpError(400, 'cannot scale jobs of type "system"');
  const group = objs(job, "TaskGroups").find((g) => str(g, "Name") === groupName);
  if (group === undefined)
    throw new DevHttpError(400, `task group ${JSON.stringify(groupName)} specified for scaling does not exist in job`);
  const previous = num(group, "Count", 1);
  const event: JsonObject = {
    Time: nowNanos(),
    Count: count ?? null,
    PreviousCount: previous,
    Message: message || (typeof errorValue === "string" ? errorValue : ""),
    Error: isError,
    Meta: (isObject(body.Meta) ? body.Meta : null) as Json,
    EvalID: null,
    CreateIndex: 0,
  };
  const result: WriteResult = {
    EvalID: "",
    EvalCreateIndex: 0,
    JobModifyIndex: num(job, "ModifyIndex"),
    Warnings: "",
    Index: 0,
  };
  if (count !== undefined) {
    const scaling = obj(group, "Scaling");
    if (scaling !== undefined) {
      if (count < num(scaling, "Min"))
        throw new DevHttpError(
          400,
          `group count was less than scaling policy minimum: ${count} < ${num(scaling, "Min")}`,
        );
      if (scaling.Max !== undefined && scaling.Max !== null && num(scaling, "Max") < count) {
        throw new DevHttpError(
          400,
          `group count was greater than scaling policy maximum: ${count} > ${num(scaling, "Max")}`,
        );
      }
    }
    const latest = w.store.latestDeployment(ns, id);
    if (
      latest !== undefined &&
      ACTIVE_DEPLOYMENT.has(latest.Status) &&
      latest.JobCreateIndex === num(job, "CreateIndex")
    ) {
      throw new DevHttpError(400, "job scaling blocked due to active deployment");
    }
    if (bool(body, "EnforceIndex") && num(body, "JobModifyIndex") !== num(job, "JobModifyIndex")) {
      throw err500(
        `${ENFORCE_PREFIX} ${num(body, "JobModifyIndex")}: job exists with conflicting job modify index: ${num(job, "JobModifyIndex")}`,
      );
    }
    const next: JsonObject = {
      ...job,
      SubmitTime: nowNanos(),
      TaskGroups: objs(job, "TaskGroups").map((g) => (str(g, "Name") === groupName ? { ...g, Count: count } : g)),
    };
    const withEval = !isTemplateJob(job);
    const index = w.store.write(
      "jobs",
      "job_version",
      "job_summary",
      "scaling_event",
      ...(withEval ? (["evals"] as const) : []),
    );
    w.storeVersion(ns, id, next, index, undefined);
    result.JobModifyIndex = index;
    if (withEval) {
      const e = w.engine.createEval(index, {
        namespace: ns,
        jobId: id,
        type: str(job, "Type"),
        priority: num(job, "Priority", 50),
        triggeredBy: "job-scaling",
        jobModifyIndex: index,
      });
      result.EvalID = e.ID;
      result.EvalCreateIndex = index;
      event.EvalID = e.ID;
    }
    const fresh = w.store.getJob(ns, id);
    if (fresh) w.engine.refreshStatus(fresh, index);
  }
  const index = w.store.write("scaling_event", "jobs");
  event.CreateIndex = index;
  const current = w.store.getJob(ns, id) as JobEntry;
  current.scalingEvents[groupName] = [event, ...(current.scalingEvents[groupName] ?? [])].slice(0, 20);
  result.Index = index;
  return result;
}
