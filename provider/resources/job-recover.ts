/**
 * What to do once a rollout failed: notice that the server's auto_revert already rolled back (and wait for
 * that rollback), or revert to the version that ran before, guarded so a concurrent writer is never
 * overwritten.
 */
import type { SchedulerClient } from "../clients/scheduler";
import { isApiError } from "../errors";
import { autoRevertTarget, type Rollback } from "./job-messages";
import { Deadline, followRollout, waitForVersionDeployment, type JobRef, type RolloutResult } from "./job-rollout";

/** What recovery needs besides the failure. */
export interface RecoverContext {
  /** The version the failed registration produced. */
  failedVersion?: number;
  /** The version that ran before the registration; undefined for a new job. */
  priorVersion?: number;
  mode: "revert" | "fail";
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
      const d = await waitForVersionDeployment(client, ref, after, failure.deployment.ID ?? "", new Deadline(ctx.timeoutMs));
      const job = await client.jobs.find(ref.jobId, { namespace: ref.namespace, region: ref.region });
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
  if (ctx.priorVersion === undefined || failedVersion === undefined) {
    return declined !== undefined ? { kind: "none", reason: "server-declined", detail: declined } : { kind: "none", reason: "no-prior-version" };
  }
  let evalId: string;
  try {
    // EnforcePriorVersion: revert only while the failed version is still current, so a concurrent
    // writer's newer version is never replaced.
    const res = await client.versions.revert(
      ref.jobId,
      { JobVersion: ctx.priorVersion, EnforcePriorVersion: failedVersion },
      { namespace: ref.namespace, region: ref.region },
    );
    evalId = res.value.EvalID ?? "";
  } catch (e) {
    if (!isApiError(e)) throw e;
    const reason = e.serverErrors.length > 0 ? e.serverErrors.join("; ") : e.message;
    return { kind: "refused", toVersion: ctx.priorVersion, reason };
  }
  let deploymentId: string | undefined;
  let deploymentStatus: string | undefined;
  if (evalId !== "") {
    const r = await followRollout(client, ref, evalId, undefined, new Deadline(ctx.timeoutMs));
    const d = r.ok || r.kind === "deployment" || r.kind === "timeout" ? r.deployment : undefined;
    deploymentId = d?.ID ?? undefined;
    deploymentStatus = d?.Status ?? (r.ok ? undefined : r.kind === "placement" ? "not placed" : r.kind === "timeout" ? "still running" : undefined);
  }
  const job = await client.jobs.find(ref.jobId, { namespace: ref.namespace, region: ref.region });
  return { kind: "pulumi", toVersion: ctx.priorVersion, newVersion: job?.value.Version ?? undefined, deploymentId, deploymentStatus };
}
