// In-memory tables of the scheduler: jobs with their versions and submissions, evaluations, allocations
// and deployments, plus per-table indexes for blocking queries (the real server answers a blocking read
// with the index of the table it read, not of the record).
import { ignoreWarnings, migrateLayout, type RestoreWarn } from "../../core/migrate";
import { isObject, num, str, type JsonObject } from "./json";
import { SCHEDULER_LAYOUT } from "./layout";
import { allocTerminal, type Allocation, type Deployment, type Evaluation } from "./types";

/** Table names whose last-write index blocking reads report. */
export type Table =
  "jobs" | "job_version" | "job_summary" | "evals" | "allocs" | "deployment" | "scaling_event" | "job_submission";

/** One registered job: the current record plus its retained versions (newest first). */
export interface JobEntry {
  readonly namespace: string;
  readonly id: string;
  /** Current job (latest version, with live Status/ModifyIndex/Stable). Treated as immutable per version. */
  job: JsonObject;
  /** Retained versions, newest first. The newest is a separate object from `job` (its status is not updated). */
  versions: JsonObject[];
  /** Stored submissions by job version. */
  submissions: Map<number, JsonObject>;
  /** Scaling events per task group, newest first. */
  scalingEvents: Record<string, JsonObject[]>;
  /** Index of the last change to this job's summary (allocations, evaluations or the job). */
  summaryIndex: number;
}

/** An allocation and the job version it runs (the wire record embeds the job only in the full form). */
export interface AllocRecord {
  alloc: Allocation;
  job: JsonObject;
}

/** Returns the map key of a namespaced job. */
export function jobKey(namespace: string, id: string): string {
  return `${namespace}\u0000${id}`;
}

/**
 * Records by ID, also indexed by the job they belong to. A job's allocations, evaluations and deployments are
 * read for every job of a list (its summary) and for every evaluation processed; a scan of the whole table
 * per job made a list of thousands of jobs, or a register or deregister of each of them, cost time growing
 * with the square of their number. A record's namespace and job never change, so the index follows `set`,
 * `delete` and `clear`. (Made empty only: Map's constructor would `set` its entries before the index exists.)
 */
class JobIndexedTable<T> extends Map<string, T> {
  private readonly byJob = new Map<string, Set<T>>();
  private readonly held = new Set<T>();

  /** `owner` names the namespace and job ID of a record; `state`, the state `holding()` reads. */
  constructor(
    private readonly owner: (record: T) => readonly [namespace: string, jobId: string],
    private readonly state: HeldState<T> = { holds: () => false },
  ) {
    super();
  }

  override set(id: string, record: T): this {
    this.unindex(id);
    super.set(id, record);
    const key = jobKey(...this.owner(record));
    let records = this.byJob.get(key);
    if (records === undefined) this.byJob.set(key, (records = new Set()));
    records.add(record);
    if (this.state.holds(record)) {
      this.held.add(record);
      this.state.enter?.(record);
    }
    return this;
  }

  override delete(id: string): boolean {
    this.unindex(id);
    return super.delete(id);
  }

  override clear(): void {
    this.byJob.clear();
    for (const r of this.held) this.state.leave?.(r);
    this.held.clear();
    super.clear();
  }

  /** The records of one job, in no particular order. */
  ofJob(namespace: string, id: string): Iterable<T> {
    return this.byJob.get(jobKey(namespace, id)) ?? [];
  }

  /**
   * The records in the `holds` state, in no particular order. A record found out of it is dropped for
   * good, so this reads the records still in it and those that left it since the last call, not the table.
   * (A plain pass and the set itself: a generator made a placement among 2,000 live allocations slower.)
   */
  holding(): ReadonlySet<T> {
    for (const r of this.held) if (!this.state.holds(r)) this.release(r);
    return this.held;
  }

  private unindex(id: string): void {
    const old = super.get(id);
    if (old === undefined) return;
    const key = jobKey(...this.owner(old));
    const records = this.byJob.get(key);
    records?.delete(old);
    if (records?.size === 0) this.byJob.delete(key);
    if (this.held.has(old)) this.release(old);
  }

  private release(record: T): void {
    this.held.delete(record);
    this.state.leave?.(record);
  }
}

/**
 * A state a record may be set in and leave, but never enter again once set (an allocation that stopped or
 * ended never runs again; an evaluation leaves "blocked" for good).
 */
interface HeldState<T> {
  holds(record: T): boolean;
  /** Called as a record set in the state is held. */
  enter?(record: T): void;
  /** Called as a held record is let go: found out of the state, replaced, deleted or cleared. */
  leave?(record: T): void;
}

/** CPU (MHz) and memory (MB): what an allocation asks of its node, or what a node's allocations use. */
export interface Resources {
  cpu: number;
  memoryMB: number;
}

/** CPU and memory use per node ID. */
export type Usage = Map<string, Resources>;

/** What one allocation asks of its node (null: nothing the devserver counts). */
export type AllocAsk = (record: AllocRecord) => Resources | null;

/** Holds every record of the scheduler. Mutators take the write index from the caller. */
export class Store {
  readonly jobs = new Map<string, JobEntry>();
  /** Blocked evaluations are re-queued whenever capacity frees up. */
  readonly evals = new JobIndexedTable<Evaluation>((e) => [e.Namespace, e.JobID], {
    holds: (e) => e.Status === "blocked",
  });
  /** What the live allocations use is kept as they start and stop: every placement starts from it. */
  readonly allocs = new JobIndexedTable<AllocRecord>((r) => [r.alloc.Namespace, r.alloc.JobID], {
    holds: (r) => !allocTerminal(r.alloc),
    enter: (r) => this.count(r, 1),
    leave: (r) => this.count(r, -1),
  });
  readonly deployments = new JobIndexedTable<Deployment>((d) => [d.Namespace, d.JobID]);
  readonly tables: Record<Table, number> = {
    jobs: 0,
    job_version: 0,
    job_summary: 0,
    evals: 0,
    allocs: 0,
    deployment: 0,
    scaling_event: 0,
    job_submission: 0,
  };

  private readonly used: Usage = new Map();
  /** Each live allocation's ask as it was counted, so it is taken back as counted. */
  private readonly counted = new Map<AllocRecord, Resources>();

  /** `ask` tells what an allocation uses (the tests of the tables alone leave it out: nothing counted). */
  constructor(
    private readonly nextIndex: () => number,
    private readonly ask: AllocAsk = () => null,
  ) {}

  /**
   * CPU and memory the live allocations use per node, leaving out the given allocations (being stopped or
   * replaced): a fresh map the caller may change. Summing every live allocation at every placement made a
   * register of thousands of jobs cost time growing with the square of their number.
   */
  usage(skip: ReadonlySet<string>): Usage {
    this.allocs.holding(); // lets go of the allocations that stopped since
    const out: Usage = new Map();
    for (const [node, u] of this.used) out.set(node, { ...u });
    for (const id of skip) {
      const r = this.allocs.get(id);
      const c = r && this.counted.get(r);
      const u = r && out.get(r.alloc.NodeID);
      if (c === undefined || u === undefined) continue;
      u.cpu -= c.cpu;
      u.memoryMB -= c.memoryMB;
    }
    return out;
  }

  private count(r: AllocRecord, sign: 1 | -1): void {
    const c = sign === 1 ? this.ask(r) : this.counted.get(r);
    if (c === null || c === undefined) return;
    if (sign === 1) this.counted.set(r, c);
    else this.counted.delete(r);
    const node = r.alloc.NodeID;
    const u = this.used.get(node) ?? { cpu: 0, memoryMB: 0 };
    u.cpu += sign * c.cpu;
    u.memoryMB += sign * c.memoryMB;
    if (u.cpu === 0 && u.memoryMB === 0) this.used.delete(node);
    else this.used.set(node, u);
  }

  /** Advances the index once and stamps the given tables with it; returns the index. */
  write(...tables: readonly Table[]): number {
    const index = this.nextIndex();
    for (const t of tables) this.tables[t] = index;
    return index;
  }

  /** Stamps tables with an index already taken in this write. */
  stamp(index: number, ...tables: readonly Table[]): void {
    for (const t of tables) this.tables[t] = Math.max(this.tables[t], index);
  }

  getJob(namespace: string, id: string): JobEntry | undefined {
    return this.jobs.get(jobKey(namespace, id));
  }

  /** Returns jobs sorted by namespace then ID (the list order of the real server). */
  sortedJobs(): JobEntry[] {
    return [...this.jobs.values()].sort((a, b) =>
      a.namespace === b.namespace ? (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) : a.namespace < b.namespace ? -1 : 1,
    );
  }

  /**
   * Returns the allocations of a job, oldest first. Without `all`, only those of the current registration
   * (same job CreateIndex); when the job is gone, all of them.
   */
  jobAllocs(namespace: string, id: string, all = false): AllocRecord[] {
    const entry = this.getJob(namespace, id);
    const createIndex = entry ? num(entry.job, "CreateIndex") : undefined;
    const out: AllocRecord[] = [];
    for (const r of this.allocs.ofJob(namespace, id)) {
      if (!all && createIndex !== undefined && num(r.job, "CreateIndex") !== createIndex) continue;
      out.push(r);
    }
    return out.sort((a, b) => a.alloc.CreateIndex - b.alloc.CreateIndex);
  }

  /** Returns the evaluations of a job, newest first. */
  jobEvals(namespace: string, id: string): Evaluation[] {
    return [...this.evals.ofJob(namespace, id)].sort((a, b) => b.CreateIndex - a.CreateIndex || (a.ID < b.ID ? -1 : 1));
  }

  /** Returns the deployments of a job, newest first; without `all`, only those of the current registration. */
  jobDeployments(namespace: string, id: string, all = false): Deployment[] {
    const entry = this.getJob(namespace, id);
    const createIndex = entry ? num(entry.job, "CreateIndex") : undefined;
    return [...this.deployments.ofJob(namespace, id)]
      .filter((d) => all || createIndex === undefined || d.JobCreateIndex === createIndex)
      .sort((a, b) => b.CreateIndex - a.CreateIndex);
  }

  /** Returns the newest deployment of a job (any registration, like the real lookup), or undefined. */
  latestDeployment(namespace: string, id: string): Deployment | undefined {
    return this.jobDeployments(namespace, id, true)[0];
  }

  /** Returns the job children (dispatched or periodic instances) of a parent job. */
  children(namespace: string, parentId: string): JobEntry[] {
    return [...this.jobs.values()].filter((e) => e.namespace === namespace && str(e.job, "ParentID") === parentId);
  }

  /** Returns the JSON-serialisable state (allocations carry the job version they run, as the real records do). */
  snapshot(): JsonObject {
    const jobs: JsonObject[] = [];
    for (const e of this.jobs.values()) {
      jobs.push({
        namespace: e.namespace,
        id: e.id,
        job: e.job,
        versions: e.versions,
        submissions: [...e.submissions.values()],
        scalingEvents: e.scalingEvents,
        summaryIndex: e.summaryIndex,
      });
    }
    const allocs: JsonObject[] = [];
    for (const r of this.allocs.values()) {
      allocs.push({ alloc: r.alloc as unknown as JsonObject, job: r.job });
    }
    return {
      version: SCHEDULER_LAYOUT.version,
      jobs,
      evals: [...this.evals.values()] as unknown as JsonObject[],
      allocs,
      deployments: [...this.deployments.values()] as unknown as JsonObject[],
      tables: this.tables,
    };
  }

  /**
   * Replaces the state from `snapshot()` output of this or an older layout (migrated first; data without a
   * version is of layout 1; a newer one throws); skips malformed entries.
   */
  restore(persisted: unknown, warn: RestoreWarn = ignoreWarnings): void {
    const data = migrateLayout(SCHEDULER_LAYOUT, persisted, warn, 1);
    this.jobs.clear();
    this.evals.clear();
    this.allocs.clear();
    this.deployments.clear();
    for (const raw of Array.isArray(data.jobs) ? data.jobs : []) {
      if (!isObject(raw) || !isObject(raw.job) || typeof raw.namespace !== "string" || typeof raw.id !== "string")
        continue;
      const submissions = new Map<number, JsonObject>();
      for (const s of Array.isArray(raw.submissions) ? raw.submissions : []) {
        if (isObject(s)) submissions.set(num(s, "Version"), s);
      }
      const versions = (Array.isArray(raw.versions) ? raw.versions : []).filter(isObject);
      this.jobs.set(jobKey(raw.namespace, raw.id), {
        namespace: raw.namespace,
        id: raw.id,
        job: raw.job,
        versions: versions.length > 0 ? versions : [raw.job],
        submissions,
        scalingEvents: isObject(raw.scalingEvents)
          ? (raw.scalingEvents as unknown as Record<string, JsonObject[]>)
          : {},
        summaryIndex: num(raw, "summaryIndex"),
      });
    }
    for (const e of Array.isArray(data.evals) ? data.evals : []) {
      if (isObject(e) && typeof e.ID === "string") this.evals.set(e.ID, e as unknown as Evaluation);
    }
    for (const r of Array.isArray(data.allocs) ? data.allocs : []) {
      if (isObject(r) && isObject(r.alloc) && isObject(r.job) && typeof r.alloc.ID === "string") {
        this.allocs.set(r.alloc.ID, { alloc: r.alloc as unknown as Allocation, job: r.job });
      }
    }
    for (const d of Array.isArray(data.deployments) ? data.deployments : []) {
      if (isObject(d) && typeof d.ID === "string") this.deployments.set(d.ID, d as unknown as Deployment);
    }
    if (isObject(data.tables)) {
      for (const k of Object.keys(this.tables) as Table[]) this.tables[k] = num(data.tables, k);
    }
  }
}
