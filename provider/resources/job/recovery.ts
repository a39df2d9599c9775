/**
 * What to do once a rollout failed: notice that the server's auto_revert already rolled back (and wait for
 * that rollback), or revert to the version that ran before, guarded so a concurrent writer is never
 * overwritten.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { FEATURE_RELEASES } from "../../clients/scheduler/releases";
import { isApiError } from "../../errors";
import { Deadline, followRollout, waitForVersionDeployment, type RolloutResult } from "./follow";
import { placeOf, type JobAt, type JobRef } from "./state";
import { autoRevertTarget, type Rollback } from "./messages";

/** What recovery needs besides the failure. */
export interface RecoverContext {
  /** The version the failed registration produced. */
  failedVersion?: number;
  /** The version that ran before the registration; undefined for a new job. */
  priorVersion?: number;
  /** `onDeploymentFailure`: revert to the prior version, leave the failed one, or revert to a tagged version. */
  mode: "revert" | "fail" | { revertTo: string };
  /** Budget of each wait for a rollback's own rollout. */
  timeoutMs: number;
}

/** Handles a failed rollout; resolves to what was rolled back (never throws for a refused revert). */
export async function recoverFromFailure(
  client: SchedulerClient,
  ref: JobRef,
  failure: Exclude<RolloutResult, { ok: true }>,
  ctx: RecoverContext,
): Promise<Rollback> {
  if (failure.kind === "timeout") return { kind: "none", reason: "timeout" };
  const deployedVersion = failure.kind === "deployment" ? failure.deployment.JobVersion : undefined;
  const failedVersion = typeof deployedVersion === "number" ? deployedVersion : ctx.failedVersion;
  let declined: string | undefined;
  if (failure.kind === "deployment") {
    const description = failure.deployment.StatusDescription ?? "";
    const target = autoRevertTarget(description);
    if (target !== undefined) {
      // The server re-registers the stable version as a new version and deploys it: wait for that.
      const after = (failedVersion ?? -1) + 1;
      const d = await waitForVersionDeployment(
        { client, ref },
        after,
        failure.deployment.ID ?? "",
        new Deadline(ctx.timeoutMs),
      );
      const job = await client.jobs.find(ref.jobId, placeOf(ref));
      return {
        kind: "auto",
        toVersion: target,
        newVersion: job?.value.Version ?? undefined,
        deploymentId: d?.ID ?? undefined,
        deploymentStatus: d?.Status ?? undefined,
      };
    }
    const m = / - ((?:not rolling back|no stable job version)[\s\S]*)$/.exec(description);
    if (m) declined = m[1];
  }
  if (ctx.mode === "fail") return { kind: "none", reason: "fail-mode" };
  if (typeof ctx.mode === "object")
    return revertToTag({ client, ref }, ctx.mode.revertTo, failedVersion, ctx.timeoutMs);
  if (ctx.priorVersion === undefined || failedVersion === undefined) {
    return declined !== undefined
      ? { kind: "none", reason: "server-declined", detail: declined }
      : { kind: "none", reason: "no-prior-version" };
  }
  let evalId: string;
  try {
    // EnforcePriorVersion: revert only while the failed version is still current, so a concurrent
    // writer's newer version is never replaced.
    const res = await client.versions.revert(
      ref.jobId,
      { JobVersion: ctx.priorVersion, EnforcePriorVersion: failedVersion },
      placeOf(ref),
    );
    evalId = res.value.EvalID ?? "";
  } catch (e) {
    if (!isApiError(e)) throw e;
    const reason = e.serverErrors.length > 0 ? e.serverErrors.join("; ") : e.message;
    return { kind: "refused", toVersion: ctx.priorVersion, reason };
  }
  return {
    kind: "pulumi",
    toVersion: ctx.priorVersion,
    ...(await followRevert({ client, ref }, evalId, ctx.timeoutMs)),
  };
}

/** Follows the rollout of a revert's evaluation; resolves to the version it registered and its deployment. */
async function followRevert(
  at: JobAt,
  evalId: string,
  timeoutMs: number,
): Promise<{ newVersion?: number; deploymentId?: string; deploymentStatus?: string }> {
  let deploymentId: string | undefined;
  let deploymentStatus: string | undefined;
  if (evalId !== "") {
    const r = await followRollout(at, evalId, { deadline: new Deadline(timeoutMs) });
    const d = r.ok || r.kind === "deployment" || r.kind === "timeout" ? r.deployment : undefined;
    deploymentId = d?.ID ?? undefined;
    deploymentStatus =
      d?.Status ??
      (r.ok ? undefined : r.kind === "placement" ? "not placed" : r.kind === "timeout" ? "still running" : undefined);
  }
  const { client, ref } = at;
  const job = await client.jobs.find(ref.jobId, placeOf(ref));
  return { newVersion: job?.value.Version ?? undefined, deploymentId, deploymentStatus };
}

/**
 * Reverts to the version carrying version tag `tag` (`onDeploymentFailure: { revertTo }`). The tag is
 * resolved from the versions list, as the scheduler's own CLI does (its revert endpoint takes a version
 * number), and the revert keeps check-and-set: it applies only while the failed version is still current.
 */
async function revertToTag(
  at: JobAt,
  tag: string,
  failedVersion: number | undefined,
  timeoutMs: number,
): Promise<Rollback> {
  const { client, ref } = at;
  let evalId: string;
  let toVersion: number;
  try {
    const res = await client.versions.revertToTag(
      ref.jobId,
      tag,
      failedVersion !== undefined ? { enforcePriorVersion: failedVersion } : {},
      placeOf(ref),
    );
    evalId = res.value.EvalID ?? "";
    toVersion = res.revertedTo;
  } catch (e) {
    if (!isApiError(e)) throw e;
    const found = e.code !== "not_found";
    const reason = found
      ? e.serverErrors.length > 0
        ? e.serverErrors.join("; ")
        : e.message
      : `no version of job "${ref.jobId}" carries the tag "${tag}" (version tags need scheduler release ${FEATURE_RELEASES.versionTags} or newer; ` +
        "an older scheduler has none, and fails with `unsupported` when a tag is set)";
    return { kind: "refused", toVersion: undefined, tag, reason };
  }
  return { kind: "pulumi", toVersion, tag, ...(await followRevert(at, evalId, timeoutMs)) };
}
