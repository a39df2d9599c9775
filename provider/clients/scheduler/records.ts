/**
 * What the scheduler did with a job: allocations, evaluations, deployments, summary, registered services
 * and scale status. All are blocking reads (pass `waitIndex` / `waitMs`, or use `watch`).
 */
import { z } from "zod";
import { encodePath } from "../../http/core";
import {
  AllocationSchema,
  DeploymentSchema,
  EvaluationSchema,
  JobSummarySchema,
  ScaleStatusSchema,
  ServiceRegistrationSchema,
  type Allocation,
  type Deployment,
  type Evaluation,
  type JobSummary,
  type ScaleStatus,
  type ServiceRegistration,
} from "../../schemas/scheduler";
import { requireId, type ReadOptions, type Result, type SchedulerRequester } from "./base";

/** Options of the allocation and deployment lists. */
export interface AllReadOptions extends ReadOptions {
  /** Include records of an earlier registration of the same job ID. */
  all?: boolean;
}

const AllocationListSchema = z
  .array(AllocationSchema)
  .nullable()
  .transform((v) => v ?? []);
const EvaluationListSchema = z
  .array(EvaluationSchema)
  .nullable()
  .transform((v) => v ?? []);
const DeploymentListSchema = z
  .array(DeploymentSchema)
  .nullable()
  .transform((v) => v ?? []);
const ServiceListSchema = z
  .array(ServiceRegistrationSchema)
  .nullable()
  .transform((v) => v ?? []);
/** The real scheduler answers `null` when the job has no deployment yet. */
const LatestDeploymentSchema = DeploymentSchema.nullable();

/** Reads of a job's allocations, evaluations, deployments and status, reached as `client.records`. */
export class JobRecords {
  constructor(private readonly http: SchedulerRequester) {}

  /** Lists a job's allocations. */
  async allocations(jobId: string, opts: AllReadOptions = {}): Promise<Result<Allocation[]>> {
    const id = requireId("list job allocations", "jobId", jobId);
    return this.http.read(
      {
        operation: "list job allocations",
        path: encodePath("/v1/job", id, "allocations"),
        schema: AllocationListSchema,
        query: { all: opts.all ? true : undefined },
      },
      opts,
    );
  }

  /** Lists a job's evaluations. */
  async evaluations(jobId: string, opts: ReadOptions = {}): Promise<Result<Evaluation[]>> {
    const id = requireId("list job evaluations", "jobId", jobId);
    return this.http.read(
      {
        operation: "list job evaluations",
        path: encodePath("/v1/job", id, "evaluations"),
        schema: EvaluationListSchema,
      },
      opts,
    );
  }

  /** Lists a job's deployments. */
  async deployments(jobId: string, opts: AllReadOptions = {}): Promise<Result<Deployment[]>> {
    const id = requireId("list job deployments", "jobId", jobId);
    return this.http.read(
      {
        operation: "list job deployments",
        path: encodePath("/v1/job", id, "deployments"),
        schema: DeploymentListSchema,
        query: { all: opts.all ? true : undefined },
      },
      opts,
    );
  }

  /** Reads a job's most recent deployment; `null` when it has none. */
  async latestDeployment(jobId: string, opts: ReadOptions = {}): Promise<Result<Deployment | null>> {
    const id = requireId("read latest job deployment", "jobId", jobId);
    return this.http.read(
      {
        operation: "read latest job deployment",
        path: encodePath("/v1/job", id, "deployment"),
        schema: LatestDeploymentSchema,
      },
      opts,
    );
  }

  /** Reads a job's allocation counts per task group. */
  async summary(jobId: string, opts: ReadOptions = {}): Promise<Result<JobSummary>> {
    const id = requireId("read job summary", "jobId", jobId);
    return this.http.read(
      { operation: "read job summary", path: encodePath("/v1/job", id, "summary"), schema: JobSummarySchema },
      opts,
    );
  }

  /** Lists the service instances registered for a job's allocations. */
  async services(jobId: string, opts: ReadOptions = {}): Promise<Result<ServiceRegistration[]>> {
    const id = requireId("list job services", "jobId", jobId);
    return this.http.read(
      { operation: "list job services", path: encodePath("/v1/job", id, "services"), schema: ServiceListSchema },
      opts,
    );
  }

  /** Reads the scaling state of a job's task groups. */
  async scaleStatus(jobId: string, opts: ReadOptions = {}): Promise<Result<ScaleStatus>> {
    const id = requireId("read job scale status", "jobId", jobId);
    return this.http.read(
      { operation: "read job scale status", path: encodePath("/v1/job", id, "scale"), schema: ScaleStatusSchema },
      opts,
    );
  }
}
