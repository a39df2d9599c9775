/**
 * A register whose outcome may be unknown. Registers carry check-and-set (`EnforceIndex`), so repeating one is
 * safe: if the first was applied, the second is refused. Between attempts the job is read back: a job that
 * moved past the sent index and holds what was sent (the scheduler's plan of it shows no change) is this
 * register's doing; an unmoved job means it was not applied and the register goes again.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { ApiError, isApiError, isOutcomeUnknown, outcomeUnknown } from "../../errors";
import type { Job, WriteResult } from "../../schemas/scheduler";
import { backoff } from "../common";
import type { DesiredJob } from "./spec";
import type { JobInputs } from "./inputs";
import type { JobRef } from "./follow";

/** A register the server applied. */
export interface Registered {
  evalId: string;
  /** The job's JobModifyIndex after the register. */
  jobModifyIndex: number;
}

/** True when the server holds what `d` describes: its plan of `d` shows no change. Throws when it cannot tell. */
export async function holdsDesired(
  client: SchedulerClient,
  ref: JobRef,
  d: DesiredJob,
  inputs: JobInputs,
): Promise<boolean> {
  const { value } = await client.jobs.plan(
    ref.jobId,
    { Job: d.job, Diff: true, ...(inputs.policyOverride ? { PolicyOverride: true } : {}) },
    { namespace: ref.namespace, region: ref.region },
  );
  return value.Diff?.Type === "None";
}

/** Returns the evaluation a register at `jobModifyIndex` created ("" when none is listed). */
export async function evalOfRegister(client: SchedulerClient, ref: JobRef, jobModifyIndex: number): Promise<string> {
  const { value } = await client.records.evaluations(ref.jobId, { namespace: ref.namespace, region: ref.region });
  const mine = value
    .filter((e) => e.JobModifyIndex === jobModifyIndex && (e.TriggeredBy ?? "job-register") === "job-register")
    .sort((a, b) => (a.CreateIndex ?? 0) - (b.CreateIndex ?? 0))[0];
  return mine?.ID ?? "";
}

/** What reading the job back after an unanswered register showed. */
type ReadBack = { applied: true; job: Job } | { applied: false; moved: boolean };

async function readBack(
  client: SchedulerClient,
  ref: JobRef,
  d: DesiredJob,
  inputs: JobInputs,
  index: number,
): Promise<ReadBack> {
  const job = (await client.jobs.find(ref.jobId, { namespace: ref.namespace, region: ref.region }))?.value;
  if (job === undefined) return { applied: false, moved: false };
  const moved = index === 0 ? true : (job.JobModifyIndex ?? 0) !== index;
  if (!moved) return { applied: false, moved: false };
  // Moved: by this register only when the server now holds exactly what it sent.
  if (await holdsDesired(client, ref, d, inputs)) return { applied: true, job };
  return { applied: false, moved: true };
}

/**
 * Sends a check-and-set register through `send`, retrying when its outcome is unknown (a reset, a timeout,
 * a 5xx) with a read-back in between. Resolves once the server applied it (confirmed by its answer or by
 * reading). Throws the server's refusal as is (a conflict the caller words), an ApiError when it was surely
 * not applied, or an `outcome_unknown` {@link ResourceError} when the read-back failed too.
 */
export async function registerWithReadBack(
  client: SchedulerClient,
  ref: JobRef,
  d: DesiredJob,
  inputs: JobInputs,
  index: number,
  send: () => Promise<WriteResult>,
): Promise<Registered> {
  const policy = client.core.connection.retry;
  const attempts = Math.max(1, policy.maxAttempts);
  for (let attempt = 1; ; attempt++) {
    let failure: ApiError;
    try {
      const res = await send();
      return { evalId: res.EvalID ?? "", jobModifyIndex: res.JobModifyIndex ?? 0 };
    } catch (e) {
      // A refusal on the first attempt is the server's word; after an unanswered attempt a check-and-set
      // refusal may be that attempt's own success, which the read-back tells.
      if (!isOutcomeUnknown(e) && !(attempt > 1 && isApiError(e, "conflict"))) throw e;
      failure = e as ApiError;
    }
    let seen: ReadBack;
    try {
      seen = await readBack(client, ref, d, inputs, index);
    } catch (readError) {
      throw outcomeUnknown(`register job "${ref.jobId}"`, failure, readError);
    }
    if (seen.applied) {
      const jobModifyIndex = seen.job.JobModifyIndex ?? 0;
      let evalId = "";
      try {
        evalId = await evalOfRegister(client, ref, jobModifyIndex);
      } catch {
        // The evaluation only lets the rollout be followed; the register itself is confirmed.
      }
      return { evalId, jobModifyIndex };
    }
    // Someone else's write moved the job: the check-and-set refusal is what the caller reports.
    if (seen.moved) throw failure.code === "conflict" ? failure : failure.with({ code: "conflict" });
    if (failure.code === "conflict" || attempt >= attempts) throw failure;
    await backoff(policy, attempt);
  }
}
