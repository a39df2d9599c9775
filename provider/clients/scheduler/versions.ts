/**
 * Versions of a job: list with diffs, the original job file, revert (by number, by tag as the spec
 * sends it, or by tag resolved here as the real CLI does), stable, and version tags.
 */
import { z } from "zod";
import { ApiError, UsageError } from "../../errors";
import { encodePath } from "../../http/core";
import { segmentProblem } from "../../http/path";
import {
  JobSubmissionSchema,
  JobVersionsResponseSchema,
  StableResultSchema,
  VersionTagSchema,
  WriteResultSchema,
  type JobSubmission,
  type JobVersionsResponse,
  type StableResult,
  type VersionTag,
  type WriteResult,
} from "../../schemas/scheduler";
import { requireId, type ReadOptions, type Result, type SchedulerRequester, type WriteOptions } from "./base";
import { checkDiffVersionAnswer, checkUntagAnswer, tagRouteError } from "./releases";

/** Options of the versions list. */
export interface VersionsOptions extends ReadOptions {
  /** Fill `Diffs` with the diff of each version against the one before it. */
  diffs?: boolean;
  /** With `diffs`: compare against this version instead. */
  diffVersion?: number;
}

/** Body of revert: give `JobVersion` or `TaggedVersion`, never both. */
export interface RevertJobRequest {
  JobVersion?: number;
  /** Name of a version tag (the spec's form; see {@link JobVersions.revertToTag} for real servers). */
  TaggedVersion?: string;
  /** Check-and-set: revert only if the job's current version is this. */
  EnforcePriorVersion?: number;
  /** Discovery-service token for the reverted job. */
  ConsulToken?: string;
  /** Secrets-service token for the reverted job. */
  SecretsToken?: string;
}

/** Body of tagging a version. */
export interface TagVersionRequest {
  /** Version to tag; when unset the client reads the job and sends its current version explicitly. */
  Version?: number;
  /** Under 1000 characters. */
  Description?: string;
}

const UntagResultSchema = WriteResultSchema;

/** Version operations, reached as `client.versions`. */
export class JobVersions {
  constructor(private readonly http: SchedulerRequester) {}

  /**
   * Lists the versions of a job, newest first, with diffs when asked. With `diffVersion`, a scheduler older
   * than 1.9 (which ignores it) fails with ApiError `unsupported` rather than returning the wrong diffs.
   */
  async versions(jobId: string, opts: VersionsOptions = {}): Promise<Result<JobVersionsResponse>> {
    const id = requireId("list job versions", "jobId", jobId);
    if (opts.diffVersion !== undefined && !opts.diffs)
      throw new UsageError("list job versions: diffVersion needs diffs: true.");
    const path = encodePath("/v1/job", id, "versions");
    const res = await this.http.read(
      {
        operation: "list job versions",
        path,
        schema: JobVersionsResponseSchema,
        query: { diffs: opts.diffs ? true : undefined, diff_version: opts.diffVersion },
      },
      opts,
    );
    return opts.diffVersion === undefined
      ? res
      : checkDiffVersionAnswer(res, { operation: "list job versions", method: "GET", path });
  }

  /** Reads the job file a version was registered from; ApiError `not_found` when none was stored. */
  async submission(jobId: string, version: number, opts: ReadOptions = {}): Promise<Result<JobSubmission>> {
    const id = requireId("read job submission", "jobId", jobId);
    checkVersion("read job submission", "version", version);
    return this.http.read(
      {
        operation: "read job submission",
        path: encodePath("/v1/job", id, "submission"),
        schema: JobSubmissionSchema,
        query: { version },
      },
      opts,
    );
  }

  /** Reverts a job to an earlier version (a new version equal to it); body as the spec defines it. */
  async revert(jobId: string, req: RevertJobRequest, opts: WriteOptions = {}): Promise<Result<WriteResult>> {
    const op = "revert job";
    const id = requireId(op, "jobId", jobId);
    const hasVersion = req.JobVersion !== undefined && req.JobVersion !== null;
    const hasTag = req.TaggedVersion !== undefined && req.TaggedVersion !== null && req.TaggedVersion !== "";
    if (hasVersion && hasTag) throw new UsageError(`${op}: give JobVersion or TaggedVersion, not both.`);
    if (!hasVersion && !hasTag) throw new UsageError(`${op}: give JobVersion or TaggedVersion.`);
    if (hasVersion) checkVersion(op, "JobVersion", req.JobVersion);
    if (req.EnforcePriorVersion !== undefined) checkVersion(op, "EnforcePriorVersion", req.EnforcePriorVersion);
    const body = {
      JobID: id,
      ...(hasVersion ? { JobVersion: req.JobVersion } : {}),
      ...(hasTag ? { TaggedVersion: req.TaggedVersion } : {}),
      ...(req.EnforcePriorVersion !== undefined ? { EnforcePriorVersion: req.EnforcePriorVersion } : {}),
      ...(req.ConsulToken ? { ConsulToken: req.ConsulToken } : {}),
      ...(req.SecretsToken ? { SecretsToken: req.SecretsToken } : {}),
    };
    return this.http.write(
      {
        operation: op,
        method: "POST",
        path: encodePath("/v1/job", id, "revert"),
        body,
        schema: WriteResultSchema,
        idempotent: false,
        checkAndSet: req.EnforcePriorVersion !== undefined,
        secrets: [req.ConsulToken, req.SecretsToken],
      },
      opts,
    );
  }

  /**
   * Reverts a job to the version carrying tag `tagName`, resolved here from the versions list (as the real
   * CLI does), sent as JobVersion with EnforcePriorVersion = the current version unless `enforcePriorVersion`
   * says otherwise (`false` to skip the check). ApiError `not_found` when no version carries the tag.
   */
  async revertToTag(
    jobId: string,
    tagName: string,
    options: { enforcePriorVersion?: number | false } & Pick<RevertJobRequest, "ConsulToken" | "SecretsToken"> = {},
    opts: WriteOptions = {},
  ): Promise<Result<WriteResult> & { revertedTo: number }> {
    const op = "revert job to tag";
    const id = requireId(op, "jobId", jobId);
    checkTagName(op, tagName);
    const readOpts: ReadOptions = { namespace: opts.namespace, region: opts.region, signal: opts.signal };
    const { value } = await this.versions(id, readOpts);
    const versions = value.Versions ?? [];
    const tagged = versions.find((v) => v.VersionTag?.Name === tagName);
    if (tagged === undefined || typeof tagged.Version !== "number") {
      throw new ApiError({
        code: "not_found",
        service: "scheduler",
        operation: op,
        method: "GET",
        path: encodePath("/v1/job", id, "versions"),
        hint: `no version of job "${id}" carries the tag "${tagName}"`,
      });
    }
    const current = versions.reduce((max, v) => Math.max(max, v.Version ?? -1), -1);
    const enforce = options.enforcePriorVersion === false ? undefined : (options.enforcePriorVersion ?? current);
    const res = await this.revert(
      id,
      {
        JobVersion: tagged.Version,
        EnforcePriorVersion: enforce,
        ConsulToken: options.ConsulToken,
        SecretsToken: options.SecretsToken,
      },
      opts,
    );
    return { ...res, revertedTo: tagged.Version };
  }

  /** Marks a version stable or not stable. */
  async setStable(
    jobId: string,
    version: number,
    stable: boolean,
    opts: WriteOptions = {},
  ): Promise<Result<StableResult>> {
    const id = requireId("set job stability", "jobId", jobId);
    checkVersion("set job stability", "version", version);
    return this.http.write(
      {
        operation: "set job stability",
        method: "POST",
        path: encodePath("/v1/job", id, "stable"),
        body: { JobID: id, JobVersion: version, Stable: stable },
        schema: StableResultSchema,
        idempotent: true,
      },
      opts,
    );
  }

  /**
   * Tags a version (or updates the description of an existing tag). `Version` is always sent: when unset,
   * the job's current version is read first, because real servers tag version 0 without it. On a scheduler
   * older than 1.9 (no version tags) it fails with ApiError `unsupported`.
   */
  async tagVersion(
    jobId: string,
    tagName: string,
    req: TagVersionRequest = {},
    opts: WriteOptions = {},
  ): Promise<Result<VersionTag>> {
    const op = "tag job version";
    const id = requireId(op, "jobId", jobId);
    checkTagJobId(op, id);
    checkTagName(op, tagName);
    let version = req.Version;
    if (version === undefined) {
      const job = await this.http.read(
        { operation: op, path: encodePath("/v1/job", id), schema: z.looseObject({ Version: z.number().nullish() }) },
        { namespace: opts.namespace, region: opts.region, signal: opts.signal },
      );
      version = job.value.Version ?? 0;
    }
    checkVersion(op, "Version", version);
    const body = { Version: version, ...(req.Description !== undefined ? { Description: req.Description } : {}) };
    return this.http
      .write(
        {
          operation: op,
          method: "POST",
          path: encodePath("/v1/job", id, "versions", tagName, "tag"),
          body,
          schema: VersionTagSchema,
          idempotent: true,
        },
        opts,
      )
      .catch(tagRouteError);
  }

  /** Removes a version tag; ApiError `unsupported` on a scheduler older than 1.9 (no version tags). */
  async untagVersion(jobId: string, tagName: string, opts: WriteOptions = {}): Promise<Result<WriteResult>> {
    const op = "untag job version";
    const id = requireId(op, "jobId", jobId);
    checkTagJobId(op, id);
    checkTagName(op, tagName);
    const path = encodePath("/v1/job", id, "versions", tagName, "tag");
    const res = await this.http.write(
      { operation: op, method: "DELETE", path, schema: UntagResultSchema, idempotent: true },
      opts,
    );
    return checkUntagAnswer(res, { operation: op, method: "DELETE", path });
  }
}

function checkVersion(operation: string, what: string, v: unknown): void {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0)
    throw new UsageError(`${operation}: ${what} must be a non-negative integer, got ${String(v)}.`);
}

/** Tag names become one path segment; the real server splits the path on `/`, so a `/` can never work. */
function checkTagName(operation: string, name: unknown): void {
  if (typeof name !== "string" || name === "")
    throw new UsageError(`${operation}: the tag name must be a non-empty string.`);
  if (name.includes("/"))
    throw new UsageError(
      `${operation}: the tag name contains "/", which the scheduler cannot route; choose a name without "/".`,
    );
  const problem = segmentProblem(name);
  if (problem !== undefined) throw new UsageError(`${operation}: the tag name ${problem}.`);
}

/** The tag endpoints split the decoded path on `/` (real server: 404 "invalid job tag endpoint"). */
function checkTagJobId(operation: string, jobId: string): void {
  if (jobId.includes("/"))
    throw new UsageError(`${operation}: the job ID contains "/", which the scheduler's tag endpoint cannot route.`);
}
