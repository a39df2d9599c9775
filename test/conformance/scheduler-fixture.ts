/**
 * Shared set-up of the scheduler conformance tests: clients of the target whose requests are recorded by
 * their hooks, registration that schedules the job's purge (real clusters are shared), and the job
 * fixtures of the provider-side tests.
 */
import type { TestContext } from "vitest";
import {
  SchedulerClient,
  type RegisterJobRequest,
  type Result,
  type WriteOptions,
} from "../../provider/clients/scheduler";
import { isApiError, type ApiError } from "../../provider/errors";
import type { ConnectionOptions } from "../../provider/http/settings";
import type { Job, WriteResult } from "../../provider/schemas/scheduler";
import { serviceJob as baseServiceJob } from "../provider/clients/scheduler/fixture";
import { requestRecord, type ConformanceTarget, type RequestRecord } from "./target";

export { batchJob, until, withLogLevel } from "../provider/clients/scheduler/fixture";

/** Task drivers the service job fixtures can use. */
const DRIVERS = ["docker", "raw_exec"] as const;
export type FixtureDriver = (typeof DRIVERS)[number];

/**
 * The task driver of the service job fixtures, from CONFORMANCE_DRIVER: `docker` (default; runs an nginx
 * image) or `raw_exec` (runs a harmless long-lived `sleep`, for client nodes without docker).
 */
export function fixtureDriver(): FixtureDriver {
  const v = process.env.CONFORMANCE_DRIVER || "docker";
  if (!(DRIVERS as readonly string[]).includes(v))
    throw new TypeError(`CONFORMANCE_DRIVER must be "docker" or "raw_exec", got "${v}"`);
  return v as FixtureDriver;
}

/** A small service job (group `web`, task `app`) on the fixture driver; `overrides` replace top-level fields. */
export function serviceJob(id: string, overrides: Partial<Job> = {}): Job {
  const job = baseServiceJob(id, overrides);
  if (fixtureDriver() === "docker") return job;
  return {
    ...job,
    TaskGroups: job.TaskGroups?.map((tg) => ({
      ...tg,
      Tasks: tg.Tasks?.map((t) =>
        t.Driver === "docker" ? { ...t, Driver: "raw_exec", Config: { command: "/bin/sleep", args: ["86400"] } } : t,
      ),
    })),
  };
}

/**
 * Awaits a call that needs a newer scheduler; when the library says the target is an older release (ApiError
 * `unsupported`), skips the test with the library's own reason. Other failures fail the test.
 */
export async function newerOrSkip<T>(t: Pick<TestContext, "skip">, p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (e) {
    if (isApiError(e, "unsupported")) t.skip(`skipped on this older scheduler: ${e.hint ?? e.message}`);
    throw e;
  }
}

/** A root-token client of the target's scheduler and what it sent. */
export interface SchedulerSide {
  client: SchedulerClient;
  /** Requests of `client` (not of clients made by `clientWith`). */
  record: RequestRecord;
  /** The namespace the connection writes to when a call names none (`default` unless configured). */
  namespace: string;
  /** Creates another client of the same scheduler (another token, namespace...), without recording. */
  clientWith(extra: ConnectionOptions): SchedulerClient;
  /** Registers a job through `client` and schedules its purge at the end of the run. */
  register(req: RegisterJobRequest, opts?: WriteOptions): Promise<Result<WriteResult>>;
  /** Schedules the purge of a job created another way (dispatched or periodic children). */
  purgeLater(jobId: string, namespace?: string): void;
}

/** Returns the scheduler side of a target. Single attempts, so counted requests are exact. */
export function schedulerSide(target: ConformanceTarget): SchedulerSide {
  const record = requestRecord();
  const clientWith = (extra: ConnectionOptions) =>
    new SchedulerClient({ ...target.scheduler, retry: { maxAttempts: 1 }, ...extra });
  const client = clientWith({ hooks: record.hooks });
  const scheduled = new Set<string>();
  const purgeLater = (jobId: string, namespace?: string): void => {
    const key = `${namespace ?? ""}\u0000${jobId}`;
    if (scheduled.has(key)) return;
    scheduled.add(key);
    target.cleanup(() =>
      client.jobs.deregister(jobId, { purge: true, ...(namespace !== undefined ? { namespace } : {}) }),
    );
  };
  return {
    client,
    record,
    namespace: client.core.connection.namespace ?? "default",
    clientWith,
    purgeLater,
    register: async (req, opts = {}) => {
      const id = req.Job.ID;
      if (typeof id === "string") purgeLater(id, opts.namespace);
      return client.jobs.register(req, opts);
    },
  };
}

/** Resolves to the ApiError `p` rejects with; fails when it resolves or rejects with something else. */
export async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isApiError(e)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}
