// The scheduler's garbage collector, as the real server's core scheduler runs it (reference/scheduler.md §3.6;
// the real server's `job_gc_threshold`, `eval_gc_threshold`, `batch_eval_gc_threshold` and
// `deployment_gc_threshold`): finished evaluations go with their finished allocations, finished jobs (stopped,
// or batch jobs that ended) with all their evaluations and allocations, finished deployments that no live
// allocation uses. A purged job's records go the same way: the job left at once, its evaluations and
// allocations wait for the evaluation threshold. Ages are measured in write indexes: a table of (index, time)
// pairs, noted at every run, maps "older than the threshold" to "written at or before this index", as the
// real server maps times to Raft indexes. `PUT /v1/system/gc` collects everything eligible whatever its age.
import { num, obj, objs, str, type JsonObject } from "../state/json";
import { isTemplateJob } from "../state/spec";
import { jobKey, type AllocRecord, type JobEntry, type Store, type Table } from "../state/store";
import { ACTIVE_DEPLOYMENT, allocTerminal, evalTerminal, type Evaluation } from "../state/types";

/** How old finished records must be before a periodic run collects them, and how often it runs (all in ms). */
export interface GcOptions {
  /** A finished job, from its creation (real default 4 h). */
  readonly jobThresholdMs?: number;
  /** A finished evaluation and its allocations, from their last change (real default 1 h). */
  readonly evalThresholdMs?: number;
  /** The same for the evaluations of batch jobs (real default 24 h). */
  readonly batchEvalThresholdMs?: number;
  /** A finished deployment, from its last change (real default 1 h). */
  readonly deploymentThresholdMs?: number;
  /** Time between two periodic runs (real default 5 min for each kind). */
  readonly intervalMs?: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** The real server's defaults. */
const GC_DEFAULTS: Required<GcOptions> = {
  jobThresholdMs: 4 * HOUR,
  evalThresholdMs: HOUR,
  batchEvalThresholdMs: 24 * HOUR,
  deploymentThresholdMs: HOUR,
  intervalMs: 5 * MINUTE,
};

/** The options over the defaults; throws a RangeError naming a value that is not a number of ms. */
export function gcSettings(options: GcOptions = {}): Required<GcOptions> {
  const s = { ...GC_DEFAULTS };
  for (const k of Object.keys(s) as (keyof GcOptions)[]) {
    const v = options[k];
    if (v === undefined) continue;
    if (!Number.isFinite(v) || v < 0) throw new RangeError(`gc.${k} must be a non-negative number of milliseconds`);
    s[k] = v;
  }
  if (s.intervalMs === 0) throw new RangeError("gc.intervalMs must be more than 0");
  return s;
}

/** What one run removed. */
export interface GcResult {
  jobs: number;
  evals: number;
  allocs: number;
  deployments: number;
}

/** Write indexes at or below which records count as old enough, per kind (Infinity: any age). */
interface Cutoffs {
  job: number;
  eval: number;
  batchEval: number;
  deployment: number;
}

/** Collects the store's finished records; `now` is the clock the thresholds are measured with. */
export class GarbageCollector {
  /** (write index, time) pairs, oldest first, at least `spacing` apart. */
  private readonly times: { index: number; at: number }[] = [];

  constructor(
    private readonly store: Store,
    readonly settings: Required<GcOptions> = GC_DEFAULTS,
    private readonly now: () => number = Date.now,
  ) {}

  /** A periodic run: what is finished and older than its threshold. */
  run(): GcResult {
    this.witness();
    const s = this.settings;
    return this.collect({
      job: this.indexAt(s.jobThresholdMs),
      eval: this.indexAt(s.evalThresholdMs),
      batchEval: this.indexAt(s.batchEvalThresholdMs),
      deployment: this.indexAt(s.deploymentThresholdMs),
    });
  }

  /** A forced run (`PUT /v1/system/gc`): everything finished, whatever its age. */
  force(): GcResult {
    return this.collect({ job: Infinity, eval: Infinity, batchEval: Infinity, deployment: Infinity });
  }

  /** Notes the latest write index with the time now; keeps the table to what the longest threshold needs. */
  private witness(): void {
    const at = this.now();
    const s = this.settings;
    const thresholds = [s.jobThresholdMs, s.evalThresholdMs, s.batchEvalThresholdMs, s.deploymentThresholdMs];
    // Entries 5 minutes apart as on the real server, or a quarter of the shortest threshold when shorter (a
    // record is collected at most that late); never more than about 1,000 of them however often it runs.
    const spacing = Math.max(Math.min(5 * MINUTE, Math.min(...thresholds) / 4), Math.max(...thresholds) / 1000);
    const last = this.times.at(-1);
    if (last === undefined || at - last.at >= spacing) this.times.push({ index: this.latestIndex(), at });
    const horizon = at - Math.max(...thresholds);
    // Keep the newest entry at or before the horizon: it answers the longest threshold.
    while (this.times.length > 1 && (this.times[1]?.at ?? Infinity) <= horizon) this.times.shift();
  }

  /** The newest noted write index at least `thresholdMs` old (0 when none is). */
  private indexAt(thresholdMs: number): number {
    const cutoff = this.now() - thresholdMs;
    let index = 0;
    for (const t of this.times) {
      if (t.at > cutoff) break;
      index = t.index;
    }
    return index;
  }

  private latestIndex(): number {
    return Math.max(...Object.values(this.store.tables));
  }

  private collect(c: Cutoffs): GcResult {
    const out: GcResult = { jobs: 0, evals: 0, allocs: 0, deployments: 0 };
    this.collectJobs(c.job, out);
    this.collectEvals(c, out);
    this.collectDeployments(c.deployment, out);
    return out;
  }

  /** Finished jobs created at or before `cutoff` whose evaluations are all collectable go with them. */
  private collectJobs(cutoff: number, out: GcResult): void {
    const jobs: JobEntry[] = [];
    const evals: string[] = [];
    const allocs: string[] = [];
    for (const entry of this.store.jobs.values()) {
      if (!jobCollectable(entry.job) || num(entry.job, "CreateIndex") > cutoff) continue;
      const jobEvals: string[] = [];
      const jobAllocs: string[] = [];
      let all = true;
      for (const e of this.store.evals.ofJob(entry.namespace, entry.id)) {
        const verdict = this.evalVerdict(e, cutoff, true);
        if (!verdict.collect) {
          all = false;
          break;
        }
        jobEvals.push(e.ID);
        jobAllocs.push(...verdict.allocs);
      }
      if (!all) continue;
      jobs.push(entry);
      evals.push(...jobEvals);
      allocs.push(...jobAllocs);
    }
    if (jobs.length === 0 && evals.length === 0 && allocs.length === 0) return;
    this.reap(evals, allocs, out);
    this.store.write("jobs", "job_version", "job_summary", "job_submission");
    for (const entry of jobs) this.store.jobs.delete(jobKey(entry.namespace, entry.id));
    out.jobs += jobs.length;
  }

  /** Finished evaluations whose allocations are all collectable, and the collectable allocations of the rest. */
  private collectEvals(c: Cutoffs, out: GcResult): void {
    const evals: string[] = [];
    const allocs: string[] = [];
    for (const e of this.store.evals.values()) {
      const verdict = this.evalVerdict(e, e.Type === "batch" ? c.batchEval : c.eval, false);
      if (verdict.collect) evals.push(e.ID);
      allocs.push(...verdict.allocs);
    }
    this.reap(evals, allocs, out);
  }

  /** Finished deployments last changed at or before `cutoff` that no live allocation belongs to. */
  private collectDeployments(cutoff: number, out: GcResult): void {
    const gone: string[] = [];
    for (const d of this.store.deployments.values()) {
      if (ACTIVE_DEPLOYMENT.has(d.Status) || d.ModifyIndex > cutoff) continue;
      let used = false;
      for (const r of this.store.allocs.ofJob(d.Namespace, d.JobID)) {
        if (r.alloc.DeploymentID === d.ID && !allocTerminal(r.alloc)) used = true;
      }
      if (!used) gone.push(d.ID);
    }
    if (gone.length === 0) return;
    this.store.write("deployment");
    for (const id of gone) this.store.deployments.delete(id);
    out.deployments += gone.length;
  }

  private reap(evals: readonly string[], allocs: readonly string[], out: GcResult): void {
    if (evals.length === 0 && allocs.length === 0) return;
    const tables: Table[] = [];
    if (evals.length > 0) tables.push("evals");
    if (allocs.length > 0) tables.push("allocs");
    this.store.write(...tables);
    for (const id of allocs) if (this.store.allocs.delete(id)) out.allocs += 1;
    for (const id of evals) if (this.store.evals.delete(id)) out.evals += 1;
  }

  /**
   * Whether an evaluation may go (finished, last changed at or before `cutoff`, every allocation it placed
   * collectable) and which of its allocations may. A batch job still registered keeps the allocations of its
   * current version, so that the scheduler does not run finished work again (unless `allowBatch` and the job
   * ended: the job goes too).
   */
  private evalVerdict(e: Evaluation, cutoff: number, allowBatch: boolean): { collect: boolean; allocs: string[] } {
    if (!evalTerminal(e) || e.ModifyIndex > cutoff) return { collect: false, allocs: [] };
    const job = this.store.getJob(e.Namespace, e.JobID)?.job;
    const records: AllocRecord[] = [];
    for (const r of this.store.allocs.ofJob(e.Namespace, e.JobID)) if (r.alloc.EvalID === e.ID) records.push(r);
    if (e.Type === "batch" && job !== undefined) {
      const ended = str(job, "Status") === "dead" && (job.Stop === true || allowBatch);
      if (!ended) {
        const jmi = num(job, "JobModifyIndex");
        const older = records.filter(
          (r) => r.alloc.CreateIndex < jmi && r.alloc.ModifyIndex < cutoff && allocTerminal(r.alloc),
        );
        return { collect: older.length === records.length, allocs: older.map((r) => r.alloc.ID) };
      }
    }
    let collect = true;
    const allocs: string[] = [];
    for (const r of records) {
      if (allocCollectable(r, job, cutoff, this.now())) allocs.push(r.alloc.ID);
      else collect = false;
    }
    return { collect, allocs };
  }
}

/**
 * Whether a job is finished for the collector: a periodic or parameterized template once stopped; any other
 * job once dead and stopped, or dead on its own when batch work. A job whose current version is tagged stays.
 */
function jobCollectable(job: JsonObject): boolean {
  if (obj(job, "VersionTag") !== undefined) return false;
  if (isTemplateJob(job)) return job.Stop === true;
  if (str(job, "Status") !== "dead") return false;
  if (job.Stop === true) return true;
  const type = str(job, "Type");
  return type === "batch" || type === "sysbatch";
}

/**
 * Whether an allocation may go: finished and last changed at or before `cutoff`, and, while its job is
 * registered and running, not a failed allocation its reschedule policy may still replace.
 */
function allocCollectable(r: AllocRecord, job: JsonObject | undefined, cutoff: number, nowMs: number): boolean {
  const a = r.alloc;
  if (!allocTerminal(a) || a.ModifyIndex > cutoff) return false;
  if (a.ClientStatus === "running") return false;
  if (job === undefined) return true;
  const group = objs(job, "TaskGroups").find((g) => str(g, "Name") === a.TaskGroup);
  if (group === undefined) return true;
  if (job.Stop === true || str(job, "Status") === "dead") return true;
  if (a.DesiredStatus === "stop") return true;
  if (a.ClientStatus !== "failed") return true;
  const policy = obj(group, "ReschedulePolicy");
  const unlimited = policy?.Unlimited === true;
  if (policy === undefined || (!unlimited && num(policy, "Attempts") === 0)) return true;
  if (a.NextAllocation !== "") return true;
  if (unlimited) return false;
  const events = objs(a.RescheduleTracker ?? undefined, "Events");
  const lastEvent = events.at(-1);
  if (lastEvent === undefined) return false;
  const sinceNs = nowMs * 1e6 - num(lastEvent, "RescheduleTime");
  return sinceNs > num(policy, "Interval");
}
