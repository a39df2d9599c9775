/**
 * Jobs: list, register, update, parse, read, plan, evaluate, force a periodic launch, dispatch, stop and
 * scale. Versions and tags live in versions.ts; allocations, evaluations and deployments in records.ts.
 */
import { z } from "zod";
import { ApiError, UsageError, isApiError } from "../../errors";
import { encodePath } from "../../http/core";
import type { QueryValue } from "../../http/request";
import {
  DispatchResultSchema,
  JobSchema,
  JobStubSchema,
  PeriodicForceResultSchema,
  PlanResponseSchema,
  WriteResultSchema,
  type DispatchResult,
  type Job,
  type JobStub,
  type PeriodicForceResult,
  type PlanResponse,
  type WriteResult,
} from "../../schemas/scheduler";
import {
  checkEnforceIndex,
  requireId,
  type ReadOptions,
  type Result,
  type SchedulerRequester,
  type WriteOptions,
} from "./base";
import {
  MAX_DISPATCH_PAYLOAD_BYTES,
  type DispatchJobRequest,
  type ListJobsOptions,
  type ParseJobRequest,
  type PlanJobRequest,
  type RegisterJobRequest,
  type ScaleJobRequest,
  type StopJobOptions,
} from "./job-requests";
import { dispatchPayloadError } from "./releases";
import { stopJob } from "./stop";

const JobListSchema = z
  .array(JobStubSchema)
  .nullable()
  .transform((v) => v ?? []);
/**
 * The job list with each stub's ID checked alone (`Jobs.listLoosePage`), each stub kept as the server sent
 * it. The list holds the whole namespace (a refresh of 2,000 Jobs beside others' jobs parses thousands of
 * stubs to use its own): a schema per stub (a loose object copies every field) cost 124-188 ms of CPU for
 * 4,400 stubs, one check of the whole list 2 ms.
 */
const LooseJobListSchema = z
  .custom<{ ID: string }[] | null>(
    (v) => v === null || (Array.isArray(v) && v.every(isListedStub)),
    "must be a list of jobs, each an object with a string ID",
  )
  .transform((v) => v ?? []);

function isListedStub(v: unknown): boolean {
  return typeof v === "object" && v !== null && !Array.isArray(v) && typeof (v as { ID?: unknown }).ID === "string";
}

/**
 * The top-level job fields the server manages: the one list (the Job resource's normal form leaves all of
 * them out, so none ever shows as a change). Sending them back creates spurious versions or duplicate
 * tags; the indexes belong to check-and-set only.
 */
export const SERVER_MANAGED_JOB_FIELDS = Object.freeze([
  "Status",
  "StatusDescription",
  "Stable",
  "Version",
  "VersionTag",
  "SubmitTime",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "Dispatched",
] as const);

/** A field of {@link SERVER_MANAGED_JOB_FIELDS}. */
export type ServerManagedJobField = (typeof SERVER_MANAGED_JOB_FIELDS)[number];

/**
 * The server-managed fields a register refuses instead of overwriting ("job can't be submitted with
 * 'Dispatched' set"): only a dispatch makes a dispatched job. {@link stripServerManagedFields} keeps them,
 * so a dispatched child job sent back is refused by name instead of being registered as a job of its own.
 */
export const REGISTER_REFUSED_JOB_FIELDS: readonly ServerManagedJobField[] = Object.freeze(["Dispatched"]);

/** Returns a copy of `job` without the server-managed fields the server overwrites, ready to register or plan. */
export function stripServerManagedFields(job: Job): Job {
  const copy: Record<string, unknown> = { ...job };
  for (const k of SERVER_MANAGED_JOB_FIELDS) if (!REGISTER_REFUSED_JOB_FIELDS.includes(k)) delete copy[k];
  return copy as Job;
}

/** The query of a job list: filters and paging (`perPage` checked). */
function listQuery(opts: ListJobsOptions): Record<string, QueryValue> {
  if (opts.perPage !== undefined && (!Number.isInteger(opts.perPage) || opts.perPage < 0)) {
    throw new UsageError(`list jobs: perPage must be a non-negative integer, got ${String(opts.perPage)}.`);
  }
  return {
    prefix: opts.prefix || undefined,
    filter: opts.filter || undefined,
    meta: opts.meta ? true : undefined,
    per_page: opts.perPage || undefined,
    next_token: opts.nextToken || undefined,
  };
}

/** Job operations, reached as `client.jobs`. */
export class Jobs {
  constructor(private readonly http: SchedulerRequester) {}

  /** Lists jobs page by page, following the next-page token; yields job stubs. Namespace `*` lists all. */
  async *list(opts: ListJobsOptions = {}): AsyncGenerator<JobStub, void, undefined> {
    let token = opts.nextToken;
    const seen = new Set<string>();
    for (;;) {
      const page = await this.listPage({ ...opts, nextToken: token });
      yield* page.value;
      token = page.meta.nextToken;
      if (token === undefined || token === "") return;
      // A server that hands out a token twice would page forever.
      if (seen.has(token)) {
        throw new ApiError({
          code: "bad_response",
          service: "scheduler",
          operation: "list jobs",
          method: "GET",
          path: "/v1/jobs",
          hint: `the server repeated the page token "${token}"`,
        });
      }
      seen.add(token);
    }
  }

  /** Reads one page of jobs; `meta.nextToken` is set when there are more. */
  async listPage(opts: ListJobsOptions = {}): Promise<Result<JobStub[]>> {
    return this.http.read(
      {
        operation: "list jobs",
        path: "/v1/jobs",
        schema: JobListSchema,
        query: listQuery(opts),
      },
      opts,
    );
  }

  /**
   * Reads one page of jobs with only each stub's `ID` checked: for a caller that uses a few stubs of a long
   * list and checks those with `JobStubSchema` itself. `meta.nextToken` is set when there are more.
   */
  async listLoosePage(opts: ListJobsOptions = {}): Promise<Result<{ ID: string }[]>> {
    return this.http.read(
      {
        operation: "list jobs",
        path: "/v1/jobs",
        schema: LooseJobListSchema,
        query: listQuery(opts),
      },
      opts,
    );
  }

  /** Lists every job (all pages) into one array. */
  async listAll(opts: ListJobsOptions = {}): Promise<JobStub[]> {
    const out: JobStub[] = [];
    for await (const stub of this.list(opts)) out.push(stub);
    return out;
  }

  /**
   * Registers a job (create or update); resolves to the evaluation ID and the JobModifyIndex. The namespace
   * is the option's, else the job's own `Namespace`, else the connection's (the query beats the body).
   */
  async register(req: RegisterJobRequest, opts: WriteOptions = {}): Promise<Result<WriteResult>> {
    checkRegister("register job", req);
    return this.http.write(
      {
        operation: "register job",
        method: "POST",
        path: "/v1/jobs",
        body: req,
        schema: WriteResultSchema,
        idempotent: false,
        checkAndSet: req.EnforceIndex === true,
        namespaceFallback: req.Job.Namespace,
      },
      opts,
    );
  }

  /** Registers a job through its own path (`/v1/job/:id`); the same semantics as register. */
  async update(jobId: string, req: RegisterJobRequest, opts: WriteOptions = {}): Promise<Result<WriteResult>> {
    const id = requireId("update job", "jobId", jobId);
    checkRegister("update job", req);
    return this.http.write(
      {
        operation: "update job",
        method: "POST",
        path: encodePath("/v1/job", id),
        body: req,
        schema: WriteResultSchema,
        idempotent: false,
        checkAndSet: req.EnforceIndex === true,
        namespaceFallback: req.Job.Namespace,
      },
      opts,
    );
  }

  /** Parses an HCL2 jobspec on the server; resolves to the job definition. */
  async parse(req: ParseJobRequest, opts: WriteOptions = {}): Promise<Result<Job>> {
    if (typeof req.JobHCL !== "string" || req.JobHCL.trim() === "")
      throw new UsageError("parse job: JobHCL must be non-empty jobspec text.");
    return this.http.write(
      {
        operation: "parse job",
        method: "POST",
        path: "/v1/jobs/parse",
        body: req,
        schema: JobSchema,
        idempotent: true,
        mutates: false,
      },
      opts,
    );
  }

  /** Reads a job; throws ApiError `not_found` when it does not exist (see {@link find}). */
  async info(jobId: string, opts: ReadOptions = {}): Promise<Result<Job>> {
    const id = requireId("read job", "jobId", jobId);
    return this.http.read({ operation: "read job", path: encodePath("/v1/job", id), schema: JobSchema }, opts);
  }

  /** Reads a job; resolves to undefined when it does not exist. */
  async find(jobId: string, opts: ReadOptions = {}): Promise<Result<Job> | undefined> {
    try {
      return await this.info(jobId, opts);
    } catch (e) {
      if (isApiError(e, "not_found")) return undefined;
      throw e;
    }
  }

  /** Plans a job (dry run, nothing stored); resolves to the diff, annotations and placement failures. */
  async plan(jobId: string, req: PlanJobRequest, opts: WriteOptions = {}): Promise<Result<PlanResponse>> {
    const id = requireId("plan job", "jobId", jobId);
    if (req.Job === undefined || req.Job === null) throw new UsageError("plan job: Job is required.");
    return this.http.write(
      {
        operation: "plan job",
        method: "POST",
        path: encodePath("/v1/job", id, "plan"),
        body: req,
        schema: PlanResponseSchema,
        idempotent: true,
        mutates: false,
        namespaceFallback: req.Job.Namespace,
      },
      opts,
    );
  }

  /** Forces a new evaluation; `forceReschedule` reschedules failed allocations at once. */
  async evaluate(
    jobId: string,
    evalOptions: { forceReschedule?: boolean } = {},
    opts: WriteOptions = {},
  ): Promise<Result<WriteResult>> {
    const id = requireId("evaluate job", "jobId", jobId);
    const body = { JobID: id, EvalOptions: { ForceReschedule: evalOptions.forceReschedule === true } };
    return this.http.write(
      {
        operation: "evaluate job",
        method: "POST",
        path: encodePath("/v1/job", id, "evaluate"),
        body,
        schema: WriteResultSchema,
        idempotent: false,
      },
      opts,
    );
  }

  /** Launches a periodic job now, even against its prohibit-overlap setting. */
  async forcePeriodic(jobId: string, opts: WriteOptions = {}): Promise<Result<PeriodicForceResult>> {
    const id = requireId("force periodic job", "jobId", jobId);
    return this.http.write(
      {
        operation: "force periodic job",
        method: "POST",
        path: encodePath("/v1/job", id, "periodic", "force"),
        schema: PeriodicForceResultSchema,
        idempotent: false,
      },
      opts,
    );
  }

  /** Dispatches a parameterized job; resolves to the child job ID and its evaluation. */
  async dispatch(
    jobId: string,
    req: DispatchJobRequest = {},
    opts: WriteOptions = {},
  ): Promise<Result<DispatchResult>> {
    const id = requireId("dispatch job", "jobId", jobId);
    const payload = req.Payload === undefined ? undefined : checkPayload("dispatch job", req.Payload);
    const body = {
      ...(payload !== undefined ? { Payload: payload.toString("base64") } : {}),
      ...(req.Meta !== undefined ? { Meta: req.Meta } : {}),
      ...(req.IdPrefixTemplate !== undefined ? { IdPrefixTemplate: req.IdPrefixTemplate } : {}),
    };
    return this.http.write(
      {
        operation: "dispatch job",
        method: "POST",
        path: encodePath("/v1/job", id, "dispatch"),
        body,
        schema: DispatchResultSchema,
        idempotent: false,
      },
      opts,
    );
  }

  /**
   * Dispatches a parameterized job with the raw bytes (or UTF-8 text) as its payload. Schedulers older than
   * 1.10 have no such route: that fails with ApiError `unsupported` (use {@link dispatch} with `Payload`).
   */
  async dispatchPayload(
    jobId: string,
    payload: Uint8Array | string,
    opts: WriteOptions = {},
  ): Promise<Result<DispatchResult>> {
    const id = requireId("dispatch job", "jobId", jobId);
    const bytes = checkPayload("dispatch job", payload);
    return this.http
      .write(
        {
          operation: "dispatch job",
          method: "POST",
          path: encodePath("/v1/job", id, "dispatch", "payload"),
          rawBody: bytes,
          schema: DispatchResultSchema,
          idempotent: false,
        },
        opts,
      )
      .catch(dispatchPayloadError);
  }

  /** Stops (deregisters) a job; with `purge` it is deleted at once. Stopping a missing job is not an error on the real scheduler. */
  async deregister(jobId: string, opts: StopJobOptions = {}): Promise<Result<WriteResult>> {
    return stopJob(this.http, jobId, opts);
  }

  /** Stops a job: the same as {@link deregister}. */
  async stop(jobId: string, opts: StopJobOptions = {}): Promise<Result<WriteResult>> {
    return this.deregister(jobId, opts);
  }

  /** Scales one task group; fails with 400 while the job has an active deployment. */
  async scale(jobId: string, req: ScaleJobRequest, opts: WriteOptions = {}): Promise<Result<WriteResult>> {
    const id = requireId("scale job", "jobId", jobId);
    const group = (req.Target as { Group?: unknown } | undefined)?.Group;
    if (typeof group !== "string" || group === "") {
      throw new UsageError("scale job: Target.Group must name the task group to scale.");
    }
    if ((req.Message === undefined) === (req.Error === undefined)) {
      throw new UsageError(
        "scale job: give exactly one of Message or Error (Error marks an error state that prevents scaling).",
      );
    }
    if (req.Count !== undefined && (!Number.isInteger(req.Count) || req.Count < 0)) {
      throw new UsageError(`scale job: Count must be a non-negative integer, got ${String(req.Count)}.`);
    }
    checkEnforceIndex("scale job", req);
    return this.http.write(
      {
        operation: "scale job",
        method: "POST",
        path: encodePath("/v1/job", id, "scale"),
        body: req,
        schema: WriteResultSchema,
        idempotent: false,
        checkAndSet: req.EnforceIndex === true,
      },
      opts,
    );
  }
}

function checkRegister(operation: string, req: RegisterJobRequest): void {
  if (req === undefined || req === null || req.Job === undefined || req.Job === null || typeof req.Job !== "object") {
    throw new UsageError(`${operation}: Job is required.`);
  }
  checkEnforceIndex(operation, req);
}

function checkPayload(operation: string, payload: Uint8Array | string): Buffer {
  const bytes =
    typeof payload === "string"
      ? Buffer.from(payload, "utf8")
      : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  if (bytes.byteLength > MAX_DISPATCH_PAYLOAD_BYTES) {
    throw new UsageError(
      `${operation}: the payload is ${bytes.byteLength} bytes; the scheduler accepts at most ${MAX_DISPATCH_PAYLOAD_BYTES} bytes.`,
    );
  }
  return bytes;
}
