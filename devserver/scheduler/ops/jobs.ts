// Write operations on jobs with the real server's rules and error texts (reference/scheduler.md §3.2-3.8, checked
// against the server's job endpoint): versioning only on spec changes, check-and-set, transitions,
// submissions, revert, stability, stop/purge. Version tags (./version-tags.ts), scaling (./scale.ts), dispatch
// and periodic force (./children.ts) are written in their own files over the same store and engine.
import type { Engine } from "../sim/engine";
import { isObject, num, obj, objs, str, strMap, nowNanos, type JsonObject } from "../state/json";
import {
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
import { dispatchChild, forcePeriodic } from "./children";
import { scaleGroup } from "./scale";
import { tagVersion, untagVersion } from "./version-tags";
import type { JobWriter, WriteResult } from "./writer";

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

/** Implements the job write operations over the store and the simulation engine. */
export class JobOps implements JobWriter {
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

  /** Applies or updates a version tag (./version-tags.ts). */
  tag(ns: string, id: string, name: string, body: JsonObject): JsonObject {
    return tagVersion(this, ns, id, name, body);
  }

  /** Removes a version tag (./version-tags.ts). */
  untag(ns: string, id: string, name: string): JsonObject {
    return untagVersion(this, ns, id, name);
  }

  /** Scales one task group (./scale.ts). */
  scale(ns: string, id: string, body: JsonObject): WriteResult {
    return scaleGroup(this, ns, id, body);
  }

  /** Dispatches an instance of a parameterized job (./children.ts). */
  dispatch(
    ns: string,
    id: string,
    payload: Buffer,
    meta: Record<string, string>,
    idPrefixTemplate: string,
    idempotencyToken: string,
  ): JsonObject {
    return dispatchChild(this, ns, id, payload, meta, idPrefixTemplate, idempotencyToken);
  }

  /** Launches a periodic job's instance now (./children.ts). */
  periodicForce(ns: string, id: string): JsonObject {
    return forcePeriodic(this, ns, id);
  }
}
