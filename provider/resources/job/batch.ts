/**
 * Batch jobs (issue 21): `waitForCompletion` follows a batch/sysbatch registration until its allocations
 * finished and fails naming the failed ones; `runOnce` keeps a finished job the scheduler garbage-collected
 * in the stack as done (no re-run); `triggers` runs the job again when the map changes (its hash goes into
 * the job's meta, so the scheduler sees a new version and places the work again: it never re-runs a
 * finished batch version whose spec did not change).
 */
import { createHash } from "node:crypto";
import type { SchedulerClient } from "../../clients/scheduler";
import type { Allocation, Job } from "../../schemas/scheduler";
import { canonicalJson } from "../common";
import type { JobInputs } from "./inputs";
import type { JobIdentity, JobObject } from "./normalize";
import { count } from "./text";
import { followRollout, type Deadline, type JobRef } from "./follow";
import { NO_DEPLOYMENT, buildOutputs, type JobOutputs } from "./state";

/** The job meta key that carries the hash of `triggers`. */
export const TRIGGERS_META = "pulumi-triggers";

/** Returns the problem with batch-only settings on a job of this identity, or undefined when there is none. */
export function batchSettingsProblem(
  identity: JobIdentity,
  inputs: Pick<JobInputs, "waitForCompletion" | "runOnce">,
): string | undefined {
  const used = (["waitForCompletion", "runOnce"] as const).filter((k) => inputs[k] === true);
  if (used.length === 0) return undefined;
  const batch = identity.type === "batch" || identity.type === "sysbatch";
  if (batch && !identity.periodic && !identity.parameterized) return undefined;
  const kind = identity.periodic
    ? `periodic ${identity.type}`
    : identity.parameterized
      ? `parameterized ${identity.type}`
      : identity.type;
  return (
    `Job "${identity.id}": ${used.join(" and ")} apply only to batch and sysbatch jobs that run themselves, not to a ${kind} job` +
    (identity.periodic || identity.parameterized ? " (its runs are child jobs the scheduler launches)" : "") +
    "."
  );
}

/** Throws the problem of {@link batchSettingsProblem}, if any. */
export function assertBatchSettings(identity: JobIdentity, inputs: JobInputs): void {
  const problem = batchSettingsProblem(identity, inputs);
  if (problem !== undefined) throw new Error(problem);
}

/** Returns the job with the hash of `triggers` in its meta (unchanged when there are no triggers). */
export function withTriggers(job: JobObject, triggers: Record<string, string> | undefined): JobObject {
  if (triggers === undefined || Object.keys(triggers).length === 0) return job;
  const hash = createHash("sha256").update(canonicalJson(triggers)).digest("hex").slice(0, 16);
  const meta =
    job.Meta !== null && typeof job.Meta === "object" && !Array.isArray(job.Meta)
      ? (job.Meta as Record<string, unknown>)
      : {};
  return { ...job, Meta: { ...meta, [TRIGGERS_META]: hash } };
}

/** How waiting for a batch job ended. */
export type CompletionResult = { ok: true; note: string } | { ok: false; message: string };

const TERMINAL = new Set(["complete", "failed", "lost"]);

function terminal(a: Allocation): boolean {
  return TERMINAL.has(a.ClientStatus ?? "") || (a.DesiredStatus ?? "run") !== "run";
}

/** A failed allocation whose replacement the scheduler still has to place (reschedule policy). */
function awaitingReschedule(a: Allocation): boolean {
  const followup = (a as Record<string, unknown>).FollowupEvalID;
  return (
    a.ClientStatus === "failed" && (a.NextAllocation ?? "") === "" && typeof followup === "string" && followup !== ""
  );
}

/**
 * Follows the registration's evaluation (placement failures end the wait at once), then the job's
 * allocations of the registered version with blocking reads until all finished; fails naming each failed
 * allocation that was not replaced: its ID prefix, group, failed tasks and their last events' messages.
 */
export async function waitForCompletion(
  client: SchedulerClient,
  ref: JobRef,
  evalId: string,
  deadline: Deadline,
): Promise<CompletionResult> {
  const opts = { namespace: ref.namespace, region: ref.region };
  const where = `Job "${ref.jobId}" in namespace "${ref.namespace}"`;
  const job: Job | undefined = (await client.jobs.find(ref.jobId, opts))?.value;
  if (job === undefined) return { ok: false, message: `${where} no longer exists while waiting for it to complete.` };
  const version = job.Version ?? 0;
  const followed = await followRollout(client, ref, evalId, version, deadline);
  if (!followed.ok) {
    if (followed.kind === "placement")
      return { ok: false, message: `${where} version ${version} could not be placed: ${followed.summary}.` };
    if (followed.kind === "evaluation")
      return {
        ok: false,
        message: `${where} version ${version}: evaluation ${followed.evalId} ended ${followed.evaluation.Status ?? ""}${followed.evaluation.StatusDescription ? `: ${followed.evaluation.StatusDescription}` : ""}.`,
      };
    if (followed.kind === "timeout")
      return {
        ok: false,
        message: `${where} version ${version} did not finish within ${Math.round(deadline.ms / 1000)}s (its evaluation is still ${followed.evaluation?.Status ?? "pending"}).`,
      };
    return {
      ok: false,
      message: `${where} version ${version}: deployment ${followed.deployment.ID ?? ""} ${followed.deployment.Status ?? ""}.`,
    };
  }
  let index: number | undefined;
  let mine: Allocation[] = [];
  for (;;) {
    if (index !== undefined && deadline.remaining() === 0) {
      const running = mine.filter((a) => !terminal(a)).length;
      return {
        ok: false,
        message: `${where} version ${version} did not finish within ${Math.round(deadline.ms / 1000)}s: ${count(running, "allocation")} still running.`,
      };
    }
    const res = await client.records.allocations(
      ref.jobId,
      index === undefined ? opts : { ...opts, waitIndex: index, waitMs: deadline.waitMs() },
    );
    index = Math.max(res.meta.lastIndex ?? 1, 1);
    mine = res.value.filter((a) => (a.JobVersion ?? -1) === version);
    if (mine.some((a) => !terminal(a) || awaitingReschedule(a))) continue;
    const failed = mine.filter(
      (a) => (a.ClientStatus === "failed" || a.ClientStatus === "lost") && (a.NextAllocation ?? "") === "",
    );
    if (failed.length > 0) {
      return {
        ok: false,
        message: `${where} version ${version}: ${count(failed.length, "allocation")} of ${mine.length} failed: ${failed.map(describeFailure).join("; ")}.`,
      };
    }
    return { ok: true, note: `version ${version} completed (${count(mine.length, "allocation")})` };
  }
}

/** "allocation 1a2b3c4d (group "work", task "run": Exit Code: 1, Exceeded allowed attempts ...)". */
export function describeFailure(a: Allocation): string {
  const tasks: string[] = [];
  for (const [name, st] of Object.entries(a.TaskStates ?? {}).sort(([x], [y]) => x.localeCompare(y))) {
    if (st.Failed !== true) continue;
    const events = st.Events ?? [];
    const texts: string[] = [];
    const add = (t: string | null | undefined): void => {
      const s = (t ?? "").trim();
      if (s !== "" && !texts.includes(s)) texts.push(s);
    };
    const lastOf = (pred: (e: (typeof events)[number]) => boolean) => [...events].reverse().find(pred);
    const ended = lastOf(
      (e) =>
        e.Type === "Terminated" ||
        e.Type === "Driver Failure" ||
        e.Type === "Setup Failure" ||
        e.Type === "Failed Validation",
    );
    if (ended)
      add(ended.DisplayMessage || ended.DriverError || ended.SetupError || ended.ValidationError || ended.Message);
    const fatal = lastOf((e) => e.FailsTask === true);
    if (fatal) add(fatal.DisplayMessage || fatal.Message || fatal.Type);
    if (texts.length === 0) add(events[events.length - 1]?.DisplayMessage);
    tasks.push(`task "${name}"${texts.length > 0 ? `: ${texts.join(", ")}` : ""}`);
  }
  const what =
    tasks.length > 0
      ? tasks.join("; ")
      : `${a.ClientStatus ?? "failed"}${a.ClientDescription ? `: ${a.ClientDescription}` : ""}`;
  return `allocation ${(a.ID ?? "").slice(0, 8)} (group "${a.TaskGroup ?? ""}", ${what})`;
}

/** True when a job gone from the scheduler stays in the stack as done (runOnce on a batch/sysbatch job). */
export function keptAsCollected(props: Partial<JobOutputs>): boolean {
  return props.runOnce === true && (props.type === "batch" || props.type === "sysbatch") && props.stopped !== true;
}

/**
 * The outputs of a runOnce job the scheduler garbage-collected after it finished: what state knew, with
 * the settings of `inputs` echoed, status `dead` and `collected` set.
 */
export function collectedOutputs(inputs: JobInputs, ref: JobRef, props: Partial<JobOutputs>): JobOutputs {
  const job: Job = {
    ID: ref.jobId,
    Namespace: ref.namespace,
    Region: props.region ?? ref.region,
    Type: props.type ?? "batch",
    Version: props.version ?? 0,
    JobModifyIndex: props.jobModifyIndex ?? 0,
    ModifyIndex: props.modifyIndex ?? 0,
    Status: "dead",
    StatusDescription: "finished and garbage-collected by the scheduler (runOnce keeps it as done)",
  };
  const kept = {
    evalId: props.evalId ?? "",
    normalizedJob: props.normalizedJob ?? "",
    inputsHash: props.inputsHash ?? "",
  };
  return { ...buildOutputs(inputs, ref, { job, deployment: NO_DEPLOYMENT }, kept), collected: true };
}
