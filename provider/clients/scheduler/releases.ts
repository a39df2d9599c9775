/**
 * Features newer than the connected scheduler. A release that lacks a route does not say so: its router
 * hands the request to another handler, whose answer means nothing to the caller (the tag route reaches the
 * job register handler and answers 400 "Job must be specified"). These helpers recognise such an answer from
 * the one response already received (never with a second request just to find out) and turn it into an
 * ApiError of code `unsupported` that names the release the feature needs.
 */
import { ApiError, isApiError } from "../../errors";
import type { Result } from "./base";

/** The first release of the scheduler that has each feature this client uses. */
export const FEATURE_RELEASES = Object.freeze({
  /** Version tags: `POST|DELETE /v1/job/:id/versions/:name/tag`. */
  versionTags: "1.9",
  /** `diff_version` on the versions list. */
  diffVersion: "1.9",
  /** `POST /v1/job/:id/dispatch/payload` (the raw body becomes the payload). */
  dispatchPayload: "1.10",
  /** Job actions (`GET /v1/job/:id/actions` and the action WebSocket). */
  jobActions: "1.7",
});

/**
 * What the job register handler answers a body that is no job: older releases route unknown job sub-paths
 * there, so a 400 with one of these texts on another route means that route does not exist.
 */
const REGISTER_HANDLER_400 =
  /^(Job must be specified|Job ID hasn't been provided|Job ID does not match name|Request body is empty|(unexpected )?EOF)$|looking for beginning of value|^invalid character|^json: cannot unmarshal/;

/** True when `e` is the register handler's 400 for a request sent to another route. */
function reachedRegisterHandler(e: unknown): e is ApiError {
  return (
    isApiError(e, "bad_request") && e.status === 400 && e.serverErrors.some((m) => REGISTER_HANDLER_400.test(m.trim()))
  );
}

/** Builds the `unsupported` error: the feature, the release it needs, and what the server did instead. */
function unsupported(
  from: Pick<ApiError, "operation" | "method" | "path" | "status" | "attempts">,
  what: string,
  release: string,
  instead: string,
  advice?: string,
): ApiError {
  return new ApiError({
    code: "unsupported",
    service: "scheduler",
    operation: from.operation,
    method: from.method,
    path: from.path,
    ...(from.status !== undefined ? { status: from.status } : {}),
    attempts: from.attempts,
    hint: `${what} need a scheduler of release ${release} or newer; this scheduler ${instead}, as older releases do${advice ? `. ${advice}` : ""}`,
  });
}

/** Rethrows the answer of an older release to a version-tag request as `unsupported`; other errors as they are. */
export function tagRouteError(e: unknown): never {
  if (reachedRegisterHandler(e)) {
    throw unsupported(
      e,
      "version tags",
      FEATURE_RELEASES.versionTags,
      `handled the tag request as a job registration ("${e.serverErrors.join("; ")}")`,
    );
  }
  throw e;
}

/**
 * Checks an untag answer: a release without tags routes the DELETE to job deregistration of a job named
 * `<id>/versions/<name>/tag`, which does not exist, so nothing is written and the answer's index is 0. A
 * real untag always writes (index above 0) or fails.
 */
export function checkUntagAnswer<
  T extends { Index?: number | null; EvalID?: string | null; JobModifyIndex?: number | null },
>(res: Result<T>, call: { operation: string; method: string; path: string }): Result<T> {
  const v = res.value;
  const nothingWritten =
    (v.Index ?? 0) === 0 && (res.meta.lastIndex ?? 0) === 0 && (v.JobModifyIndex ?? 0) === 0 && (v.EvalID ?? "") === "";
  if (nothingWritten && "EvalID" in (v as object)) {
    throw unsupported(
      { ...call, status: res.meta.status, attempts: res.meta.attempts },
      "version tags",
      FEATURE_RELEASES.versionTags,
      "handled the untag request as stopping a job that does not exist (nothing was written)",
    );
  }
  return res;
}

/**
 * Checks a versions list asked for with `diff_version`: a release that honours it returns one diff per
 * version (each against the chosen one); an older one ignores it and returns one diff fewer (each version
 * against the one before it).
 */
export function checkDiffVersionAnswer<T extends { Versions?: unknown[] | null; Diffs?: unknown[] | null }>(
  res: Result<T>,
  call: { operation: string; method: string; path: string },
): Result<T> {
  const versions = res.value.Versions?.length ?? 0;
  const diffs = res.value.Diffs?.length ?? 0;
  if (versions > 0 && diffs === versions - 1) {
    throw unsupported(
      { ...call, status: res.meta.status, attempts: res.meta.attempts },
      "diffs against a chosen version (diffVersion)",
      FEATURE_RELEASES.diffVersion,
      "ignored diff_version and compared each version with the one before it",
    );
  }
  return res;
}

/** Rethrows the answer of an older release to a raw-body dispatch as `unsupported`; other errors as they are. */
export function dispatchPayloadError(e: unknown): never {
  if (reachedRegisterHandler(e)) {
    throw unsupported(
      e,
      "raw-body dispatches (dispatchPayload)",
      FEATURE_RELEASES.dispatchPayload,
      `handled the dispatch as a job registration ("${e.serverErrors.join("; ")}")`,
      "Use jobs.dispatch with Payload instead",
    );
  }
  throw e;
}
