// Write operations on jobs with the real server's rules and error texts (reference/scheduler.md §3.2-3.8, checked
// against the server's job endpoint): versioning only on spec changes, check-and-set, transitions,
// submissions, revert, stability, version tags, stop/purge, scaling, dispatch and periodic force.
import { randomBytes } from "node:crypto";
import { DevHttpError } from "../../core";
import type { Engine } from "../sim/engine";
import { bool, isObject, num, obj, objs, str, strMap, strs, nowNanos, type Json, type JsonObject } from "../state/json";
import {
  DISPATCH_PAYLOAD_LIMIT,
  ENFORCE_PREFIX,
  err500,
  humanBytes,
  isParameterized,
  isPeriodic,
  mergeWarnings,
  validateJobUpdate,
} from "./rules";
import { isTemplateJob, specChanged } from "../state/spec";
import { jobKey, type JobEntry, type Store } from "../state/store";
import { ACTIVE_DEPLOYMENT, DEPLOYMENT_DESC } from "../state/types";

/** Limits of the job store (options `trackedVersions`, `maxSourceBytes`). */
export interface OpsLimits {
  /** Versions kept per job; tagged versions are never dropped (real default 6). */
  readonly trackedVersions: number;
  /** Largest stored submission (source + variables), in bytes (real default 1 MB). */
  readonly maxSourceBytes: number;
}

/** Input of `register`: the job must already be admitted (canonicalized, namespace and region set). */
export interface RegisterInput {
  readonly job: JsonObject;
  readonly submission?: JsonObject | undefined;
  readonly enforceIndex?: boolean;
  readonly jobModifyIndex?: number;
  readonly evalPriority?: number;
  readonly preserveCounts?: boolean;
  readonly tokenAccessor?: string | undefined;
  readonly triggeredBy?: string;
  readonly warnings?: readonly string[];
}

/** Common write result (scheduler-jobs-api.md, "Common write result"). */
export interface WriteResult {
  EvalID: string;
  EvalCreateIndex: number;
  JobModifyIndex: number;
  Warnings: string;
  Index: number;
}

/** Implements the job write operations over the store and the simulation engine. */
export class JobOps {
  constructor(
    readonly store: Store,
    readonly engine: Engine,
    readonly limits: OpsLimits,
  ) {
    engine.rollback = (entry, version) => {
      const copy: JsonObject = { ...version };
      delete copy.VersionTag;
      this.register({
        job: copy,
        submission: entry.submissions.get(num(version, "Version")),
        triggeredBy: "deployment-watcher",
      });
    };
  }

  /** Registers a job (create or update); reference/scheduler.md §3.2 says when a version is created. */
  register(input: RegisterInput): WriteResult {
    const job: JsonObject = { ...input.job };
    const ns = str(job, "Namespace") || "default";
    const id = str(job, "ID");
    const entry = this.store.getJob(ns, id);
    const existing = entry?.job;
    if (input.enforceIndex === true) {
      const jmi = input.jobModifyIndex ?? 0;
      if (existing !== undefined) {
        if (jmi === 0) throw err500(`${ENFORCE_PREFIX} 0: job already exists`);
        if (jmi !== num(existing, "JobModifyIndex")) {
          throw err500(
            `${ENFORCE_PREFIX} ${jmi}: job exists with conflicting job modify index: ${num(existing, "JobModifyIndex")}`,
          );
        }
      } else if (jmi !== 0) {
        throw err500(`${ENFORCE_PREFIX} ${jmi}: job does not exist`);
      }
    }
    validateJobUpdate(existing, job);
    const warnings = [...(input.warnings ?? [])];
    let submission = input.submission;
    if (submission !== undefined) {
      const size =
        str(submission, "Source").length +
        str(submission, "Variables").length +
        Object.entries(strMap(submission, "VariableFlags")).reduce((n, [k, v]) => n + k.length + v.length, 0);
      if (size > this.limits.maxSourceBytes) {
        warnings.push(
          `job source size of ${humanBytes(size)} exceeds maximum of ${humanBytes(this.limits.maxSourceBytes)} and will be discarded`,
        );
        submission = undefined;
      }
    }
    job.SecretsToken = "";
    job.DiscoveryToken = "";
    if (input.tokenAccessor !== undefined) job.SvcTokenID = input.tokenAccessor;
    if (existing !== undefined && input.preserveCounts === true) {
      const counts = new Map(objs(existing, "TaskGroups").map((g) => [str(g, "Name"), g.Count ?? null]));
      job.TaskGroups = objs(job, "TaskGroups").map((g) =>
        counts.has(str(g, "Name")) ? { ...g, Count: counts.get(str(g, "Name")) ?? null } : g,
      );
    }
    job.SubmitTime = nowNanos();
    const withEval = !isTemplateJob(job);
    const priority = (input.evalPriority ?? 0) > 0 ? (input.evalPriority as number) : num(job, "Priority", 50);
    const triggeredBy = input.triggeredBy ?? "job-register";
    const result: WriteResult = {
      EvalID: "",
      EvalCreateIndex: 0,
      JobModifyIndex: 0,
      Warnings: mergeWarnings(warnings),
      Index: 0,
    };

    if (existing === undefined || specChanged(existing, job)) {
      const index = this.store.write(
        "jobs",
        "job_version",
        "job_summary",
        ...(withEval ? (["evals"] as const) : []),
        ...(submission ? (["job_submission"] as const) : []),
      );
      const stored = this.storeVersion(ns, id, job, index, submission);
      if (withEval) {
        const e = this.engine.createEval(index, {
          namespace: ns,
          jobId: id,
          type: str(stored, "Type"),
          priority,
          triggeredBy,
          jobModifyIndex: index,
        });
        result.EvalID = e.ID;
        result.EvalCreateIndex = index;
      }
      result.JobModifyIndex = index;
      result.Index = index;
      const fresh = this.store.getJob(ns, id);
      if (fresh) this.engine.refreshStatus(fresh, index);
      return result;
    }
    result.JobModifyIndex = num(existing, "JobModifyIndex");
    if (withEval && entry !== undefined) {
      const index = this.store.write("evals", "job_summary");
      const e = this.engine.createEval(index, {
        namespace: ns,
        jobId: id,
        type: str(existing, "Type"),
        priority,
        triggeredBy,
        jobModifyIndex: result.JobModifyIndex,
      });
      result.EvalID = e.ID;
      result.EvalCreateIndex = index;
      result.Index = index;
      entry.summaryIndex = index;
      this.engine.refreshStatus(entry, index);
    }
    return result;
  }

  /** Stores a new version of a job at `index` (creating the job entry when needed); returns the stored job. */
  storeVersion(ns: string, id: string, job: JsonObject, index: number, submission: JsonObject | undefined): JsonObject {
    let entry = this.store.getJob(ns, id);
    const version = entry ? num(entry.job, "Version") + 1 : 0;
    const stored: JsonObject = {
      ...job,
      Namespace: ns,
      Version: version,
      Stable: false,
      Status: "pending",
      StatusDescription: "",
      CreateIndex: entry ? num(entry.job, "CreateIndex") : index,
      ModifyIndex: index,
      JobModifyIndex: index,
    };
    if (entry === undefined) {
      entry = {
        namespace: ns,
        id,
        job: stored,
        versions: [],
        submissions: new Map(),
        scalingEvents: {},
        summaryIndex: index,
      };
      this.store.jobs.set(jobKey(ns, id), entry);
    }
    entry.job = stored;
    entry.summaryIndex = index;
    entry.versions.unshift({ ...stored });
    if (submission !== undefined) {
      entry.submissions.set(version, {
        JobID: id,
        Namespace: ns,
        Version: version,
        JobIndex: index,
        Source: str(submission, "Source"),
        Format: str(submission, "Format") || "hcl2",
        VariableFlags: strMap(submission, "VariableFlags"),
        Variables: str(submission, "Variables"),
      });
    }
    this.prune(entry);
    return stored;
  }

  /** Drops the oldest untagged versions (and their submissions) beyond the tracked limit. */
  prune(entry: JobEntry): void {
    while (entry.versions.length > this.limits.trackedVersions) {
      let victim = -1;
      for (let i = entry.versions.length - 1; i > 0; i--) {
        if (obj(entry.versions[i], "VersionTag") === undefined) {
          victim = i;
          break;
        }
      }
      if (victim < 0) break;
      const [gone] = entry.versions.splice(victim, 1);
      if (gone) entry.submissions.delete(num(gone, "Version"));
    }
  }

  /** Stops a job (new version with Stop=true) or purges it; an unknown job answers with an empty evaluation. */
  deregister(ns: string, id: string, o: { purge: boolean; evalPriority: number }): JsonObject {
    const entry = this.store.getJob(ns, id);
    const out: JsonObject = {
      EvalID: "",
      EvalCreateIndex: 0,
      JobModifyIndex: 0,
      VolumeEvalID: "",
      VolumeEvalIndex: 0,
      Index: 0,
    };
    if (entry === undefined) return out;
    const job = entry.job;
    const withEval = !isTemplateJob(job);
    const index = this.store.write("jobs", "job_version", "job_summary", ...(withEval ? (["evals"] as const) : []));
    for (const d of this.store.jobDeployments(ns, id, true)) {
      if (ACTIVE_DEPLOYMENT.has(d.Status))
        this.engine.deployments.end(d, "cancelled", DEPLOYMENT_DESC.stoppedJob, index);
    }
    if (o.purge) {
      this.store.jobs.delete(jobKey(ns, id));
    } else {
      const stopped: JsonObject = {
        ...job,
        Stop: true,
        SubmitTime: nowNanos(),
        TaskGroups: objs(job, "TaskGroups").map((g) =>
          isObject(g.Scaling) ? { ...g, Scaling: { ...g.Scaling, Enabled: false } } : g,
        ),
      };
      const sub = entry.submissions.get(num(job, "Version"));
      this.storeVersion(ns, id, stopped, index, sub);
    }
    if (withEval) {
      const priority = o.evalPriority > 0 ? o.evalPriority : num(job, "Priority", 50);
      const e = this.engine.createEval(index, {
        namespace: ns,
        jobId: id,
        type: "service",
        priority,
        triggeredBy: "job-deregister",
        jobModifyIndex: index,
      });
      out.EvalID = e.ID;
    }
    out.EvalCreateIndex = index;
    out.JobModifyIndex = index;
    out.Index = index;
    const still = this.store.getJob(ns, id);
    if (still) this.engine.refreshStatus(still, index);
    return out;
  }

  /** Reverts a job to an earlier version (by number or tag name), as a new version (reference/scheduler.md §3.4). */
  revert(ns: string, id: string, body: JsonObject, tokenAccessor: string | undefined): WriteResult {
    const entry = this.store.getJob(ns, id);
    if (entry === undefined) throw err500(`job ${JSON.stringify(id)} not found`);
    const cur = entry.job;
    const tag = str(body, "TaggedVersion");
    let target: JsonObject | undefined;
    let version: number;
    if (tag !== "") {
      target = entry.versions.find((v) => str(obj(v, "VersionTag"), "Name") === tag);
      if (target === undefined) throw err500(`tag ${JSON.stringify(tag)} not found on job ${JSON.stringify(id)}`);
      version = num(target, "Version");
    } else {
      version = num(body, "JobVersion");
    }
    if (version === num(cur, "Version")) throw err500("can't revert to current version");
    target = target ?? entry.versions.find((v) => num(v, "Version") === version);
    if (target === undefined)
      throw err500(`job ${JSON.stringify(id)} in namespace ${JSON.stringify(ns)} at version ${version} not found`);
    const copy: JsonObject = {
      ...target,
      SecretsToken: str(body, "SecretsToken"),
      DiscoveryToken: str(body, "ConsulToken") || str(body, "DiscoveryToken"),
    };
    delete copy.VersionTag;
    let enforce = false;
    const prior = body.EnforcePriorVersion;
    if (typeof prior === "number") {
      if (num(cur, "Version") !== prior)
        throw err500(`Current job has version ${num(cur, "Version")}; enforcing version ${prior}`);
      enforce = true;
    }
    return this.register({
      job: copy,
      submission: entry.submissions.get(version),
      enforceIndex: enforce,
      jobModifyIndex: num(cur, "JobModifyIndex"),
      tokenAccessor,
    });
  }

  /** Sets or clears the stable flag of a job version; returns the write index. */
  stable(ns: string, id: string, version: number, stable: boolean): number {
    const entry = this.store.getJob(ns, id);
    if (entry === undefined || !entry.versions.some((v) => num(v, "Version") === version)) {
      throw err500(`job ${JSON.stringify(id)} in namespace ${JSON.stringify(ns)} at version ${version} not found`);
    }
    const index = this.store.write("jobs", "job_version");
    this.engine.deployments.markStable(entry, version, index, stable);
    return index;
  }

  /** Forces a new evaluation; ForceReschedule marks failed allocations for immediate replacement. */
  evaluate(ns: string, id: string, forceReschedule: boolean): WriteResult {
    const entry = this.store.getJob(ns, id);
    if (entry === undefined) throw err500("job not found");
    const job = entry.job;
    if (isPeriodic(job)) throw err500("can't evaluate periodic job");
    if (isParameterized(job)) throw err500("can't evaluate parameterized job");
    const index = this.store.write("evals", "allocs", "job_summary");
    if (forceReschedule) {
      for (const r of this.store.jobAllocs(ns, id)) {
        if (r.alloc.ClientStatus === "failed" && r.alloc.NextAllocation === "") {
          r.alloc.DesiredTransition = { ...r.alloc.DesiredTransition, ForceReschedule: true };
          r.alloc.ModifyIndex = index;
        }
      }
    }
    const e = this.engine.createEval(index, {
      namespace: ns,
      jobId: id,
      type: str(job, "Type"),
      priority: num(job, "Priority", 50),
      triggeredBy: "job-register",
      jobModifyIndex: num(job, "ModifyIndex"),
    });
    entry.summaryIndex = index;
    this.engine.refreshStatus(entry, index);
    return {
      EvalID: e.ID,
      EvalCreateIndex: index,
      JobModifyIndex: num(job, "ModifyIndex"),
      Warnings: "",
      Index: index,
    };
  }

  /**
   * Applies or updates a version tag (reference/scheduler.md §3.5): names are unique per job, re-tagging the
   * same version updates the description, tagging the latest version bumps the job's ModifyIndex (never its
   * Version or JobModifyIndex), and tagged versions are exempt from the retention limit.
   */
  tag(ns: string, id: string, name: string, body: JsonObject): JsonObject {
    const description = str(body, "Description");
    if (description.length >= 1000) throw err500("description must be under 1000 characters");
    const latest = bool(body, "Latest");
    const requested = num(body, "Version");
    if (latest && requested !== 0) throw err500(`version must be zero when tagging latest, got: ${requested}`);
    const entry = this.store.getJob(ns, id);
    const version = latest && entry ? num(entry.job, "Version") : requested;
    const i = entry ? entry.versions.findIndex((v) => num(v, "Version") === version) : -1;
    if (entry === undefined || i < 0) throw err500(`job ${JSON.stringify(id)} version ${version} not found`);
    const elsewhere = entry.versions.find(
      (v) => num(v, "Version") !== version && str(obj(v, "VersionTag"), "Name") === name,
    );
    if (elsewhere !== undefined)
      throw err500(`tag ${JSON.stringify(name)} already exists on a different version of job ${JSON.stringify(id)}`);
    const index = this.store.write("jobs", "job_version");
    const tagged = { Name: name, Description: description, TaggedTime: nowNanos() };
    setVersionTag(entry, i, tagged, index);
    return { ...tagged, Index: index, LastContact: 0, KnownLeader: true, NextToken: "" };
  }

  /** Removes a version tag; the version becomes subject to the retention limit again. */
  untag(ns: string, id: string, name: string): JsonObject {
    const entry = this.store.getJob(ns, id);
    const i = entry ? entry.versions.findIndex((v) => str(obj(v, "VersionTag"), "Name") === name) : -1;
    if (entry === undefined || i < 0)
      throw err500(`tag ${JSON.stringify(name)} not found on job ${JSON.stringify(id)}`);
    const index = this.store.write("jobs", "job_version");
    setVersionTag(entry, i, null, index);
    this.prune(entry);
    return {
      EvalID: "",
      EvalCreateIndex: 0,
      JobModifyIndex: 0,
      VolumeEvalID: "",
      VolumeEvalIndex: 0,
      Index: index,
      LastContact: 0,
      KnownLeader: true,
      NextToken: "",
    };
  }

  /**
   * Scales one task group (scheduler-jobs-api.md, "Changing a job", the scale endpoint): a count change is a
   * new job version with a `job-scaling` evaluation, refused while a deployment of the job is active; every
   * request is recorded as a scaling event shown by the scale status. Error texts are the real server's.
   */
  scale(ns: string, id: string, body: JsonObject): WriteResult {
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
    const entry = this.store.getJob(ns, id);
    if (entry === undefined) throw new DevHttpError(404, `job ${JSON.stringify(id)} not found`);
    const job = entry.job;
    if (str(job, "Type") === "system") throw new DevHttpError(400, 'cannot scale jobs of type "system"');
    const group = objs(job, "TaskGroups").find((g) => str(g, "Name") === groupName);
    if (group === undefined)
      throw new DevHttpError(
        400,
        `task group ${JSON.stringify(groupName)} specified for scaling does not exist in job`,
      );
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
      const latest = this.store.latestDeployment(ns, id);
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
      const index = this.store.write(
        "jobs",
        "job_version",
        "job_summary",
        "scaling_event",
        ...(withEval ? (["evals"] as const) : []),
      );
      this.storeVersion(ns, id, next, index, undefined);
      result.JobModifyIndex = index;
      if (withEval) {
        const e = this.engine.createEval(index, {
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
      const fresh = this.store.getJob(ns, id);
      if (fresh) this.engine.refreshStatus(fresh, index);
    }
    const index = this.store.write("scaling_event", "jobs");
    event.CreateIndex = index;
    const current = this.store.getJob(ns, id) as JobEntry;
    current.scalingEvents[groupName] = [event, ...(current.scalingEvents[groupName] ?? [])].slice(0, 20);
    result.Index = index;
    return result;
  }

  /**
   * Dispatches an instance of a parameterized job as `<parent>/dispatch-<ts>-<8 hex>` with the meta and
   * payload rules and the idempotency token (reference/scheduler.md §3.8).
   */
  dispatch(
    ns: string,
    id: string,
    payload: Buffer,
    meta: Record<string, string>,
    idPrefixTemplate: string,
    idempotencyToken: string,
  ): JsonObject {
    const entry = this.store.getJob(ns, id);
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
      const same = this.store.children(ns, id).find((c) => str(c.job, "DispatchIdempotencyToken") === idempotencyToken);
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
    return this.launchChild(ns, child, "job-register");
  }

  /** Launches a periodic job's instance now as `<parent>/periodic-<ts>` (reference/scheduler.md §3.8). */
  periodicForce(ns: string, id: string): JsonObject {
    const entry = this.store.getJob(ns, id);
    if (entry === undefined) throw err500("job not found");
    const parent = entry.job;
    const periodic = obj(parent, "Periodic");
    if (periodic === undefined || periodic.Enabled === false || parent.Stop === true || isParameterized(parent)) {
      throw err500("can't force launch non-periodic job");
    }
    let ts = Math.floor(Date.now() / 1000);
    while (this.store.getJob(ns, `${id}/periodic-${ts}`) !== undefined) ts++;
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
    const out = this.launchChild(ns, child, "periodic-job");
    return { EvalID: out.EvalID ?? "", EvalCreateIndex: out.EvalCreateIndex ?? 0, Index: out.Index ?? 0 };
  }

  /** Stores a dispatched or periodic child job as its first version and evaluates it. */
  private launchChild(ns: string, child: JsonObject, triggeredBy: string): JsonObject {
    const withEval = !isTemplateJob(child);
    const index = this.store.write("jobs", "job_version", "job_summary", ...(withEval ? (["evals"] as const) : []));
    const stored = this.storeVersion(ns, str(child, "ID"), child, index, undefined);
    const out: JsonObject = {
      Index: index,
      JobCreateIndex: index,
      EvalCreateIndex: 0,
      EvalID: "",
      DispatchedJobID: str(child, "ID"),
    };
    if (withEval) {
      const e = this.engine.createEval(index, {
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
    const entry = this.store.getJob(ns, str(child, "ID"));
    if (entry) this.engine.refreshStatus(entry, index);
    const parent = this.store.getJob(ns, str(child, "ParentID"));
    if (parent) parent.summaryIndex = index;
    return out;
  }
}

/** Sets (or, with null, clears) the tag of the version at `i`, and of the job when it is that version. */
function setVersionTag(entry: JobEntry, i: number, tag: JsonObject | null, index: number): void {
  const v = entry.versions[i] as JsonObject;
  const next: JsonObject = { ...v, ModifyIndex: index };
  if (tag === null) delete next.VersionTag;
  else next.VersionTag = tag;
  entry.versions[i] = next;
  if (num(entry.job, "Version") === num(v, "Version")) {
    const cur: JsonObject = { ...entry.job, ModifyIndex: index };
    if (tag === null) delete cur.VersionTag;
    else cur.VersionTag = tag;
    entry.job = cur;
  }
}
