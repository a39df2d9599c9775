/**
 * Writing a job: plans (what preview shows, and the check right before a register), check-and-set
 * registers that survive an unknown outcome, what an earlier unfinished `up` left, scaled jobs kept as
 * scaled, and following a register to the outputs (or to an init error that keeps the job in state).
 */
import { ResourceError, isApiError, isOutcomeUnknown, outcomeUnknown, type ApiError } from "../../errors";
import { show, showOnce } from "../../log";
import type { Job, PlanResponse, WriteResult } from "../../schemas/scheduler";
import { ResourceInitError, backoff } from "../common";
import { JOB_DEFAULTS, deploymentTimeoutMs, preserveOf, promotionPolicy } from "./inputs";
import { CanaryPromoter } from "./canaries";
import { waitForCompletion } from "./completion";
import { Deadline, followRollout } from "./follow";
import { recoverFromFailure } from "./recovery";
import { maskText } from "./mask-text";
import { inputsHashMatches } from "./hashes";
import { hasNoDeployment } from "./identity";
import { parseStoredJob, serverJobText } from "./normal-form";
import { withServerScale, desiredWithServerScale } from "./scale";
import type { DesiredJob } from "./spec";
import {
  NO_DEPLOYMENT,
  buildOutputs,
  followsDeployments,
  jobResourceId,
  placeOf,
  readServerState,
  refreshed,
  type JobAt,
  type JobOp,
  type JobRef,
  type JobOutputs,
  type Kept,
} from "./state";
import { alreadyExistsMessage, changedOutsideMessage, formatRolloutFailure, type Rollback } from "./messages";
import { describeShown, formatPlan, planDrift, planFacts } from "./text";
import { shownPlanOf } from "./memo";

/** A register the server applied. */
export interface Registered {
  evalId: string;
  /** The job's JobModifyIndex after the register. */
  jobModifyIndex: number;
}

/** True when the server holds the desired job: its plan of it shows no change. Throws when it cannot tell. */
export async function holdsDesired({ client, ref, desired, inputs }: JobOp): Promise<boolean> {
  const { value } = await client.jobs.plan(
    ref.jobId,
    { Job: desired.job, Diff: true, ...(inputs.policyOverride ? { PolicyOverride: true } : {}) },
    placeOf(ref),
  );
  return value.Diff?.Type === "None";
}

/** Returns the evaluation a register at `jobModifyIndex` created ("" when none is listed). */
export async function evalOfRegister({ client, ref }: JobAt, jobModifyIndex: number): Promise<string> {
  const { value } = await client.records.evaluations(ref.jobId, placeOf(ref));
  const mine = value
    .filter((e) => e.JobModifyIndex === jobModifyIndex && (e.TriggeredBy ?? "job-register") === "job-register")
    .sort((a, b) => (a.CreateIndex ?? 0) - (b.CreateIndex ?? 0))[0];
  return mine?.ID ?? "";
}

/** What reading the job back after an unanswered register showed. */
type ReadBack = { applied: true; job: Job } | { applied: false; moved: boolean };

async function readBack(op: JobOp, index: number): Promise<ReadBack> {
  const { client, ref } = op;
  const job = (await client.jobs.find(ref.jobId, placeOf(ref)))?.value;
  if (job === undefined) return { applied: false, moved: false };
  const moved = index === 0 ? true : (job.JobModifyIndex ?? 0) !== index;
  if (!moved) return { applied: false, moved: false };
  // Moved: by this register only when the server now holds exactly what it sent.
  if (await holdsDesired(op)) return { applied: true, job };
  return { applied: false, moved: true };
}

/**
 * Sends a check-and-set register through `send`, retrying when its outcome is unknown (a reset, a timeout,
 * a 5xx) with a read-back in between. Resolves once the server applied it (confirmed by its answer or by
 * reading). Throws the server's refusal as is (a conflict the caller words), an ApiError when it was surely
 * not applied, or an `outcome_unknown` {@link ResourceError} when the read-back failed too.
 */
async function registerWithReadBack(op: JobOp, index: number, send: () => Promise<WriteResult>): Promise<Registered> {
  const { client, ref } = op;
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
      seen = await readBack(op, index);
    } catch (readError) {
      throw outcomeUnknown(`register job "${ref.jobId}"`, failure, readError);
    }
    if (seen.applied) {
      const jobModifyIndex = seen.job.JobModifyIndex ?? 0;
      let evalId = "";
      try {
        evalId = await evalOfRegister(op, jobModifyIndex);
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

/**
 * Plans the desired job (showing the plan at preview); resolves to "none" when the scheduler sees no change.
 * `seen` gets the plan and its text (undefined when the scheduler could not be asked).
 */
export async function planChange(
  op: JobOp,
  stateIndex: number | undefined,
  preview = true,
  seen?: (plan: { value: PlanResponse; text: string } | undefined) => void,
): Promise<"none" | "some"> {
  const { client, ref, inputs, mask } = op;
  try {
    const { value } = await client.jobs.plan(
      ref.jobId,
      { Job: op.desired.job, Diff: true, ...(inputs.policyOverride ? { PolicyOverride: true } : {}) },
      placeOf(ref),
    );
    const text = formatPlan(value, {
      jobId: ref.jobId,
      namespace: ref.namespace,
      stateJobModifyIndex: stateIndex,
      mask,
    });
    if (preview) await showOnce(text);
    seen?.({ value, text });
    return value.Diff?.Type === "None" ? "none" : "some";
  } catch (e) {
    // An invalid job fails the preview with the server's reason; an unreachable server only loses the plan.
    if (!isApiError(e) || e.code === "bad_request" || e.code === "permission_denied") throw e;
    if (preview) await show(maskText(`Could not plan job "${ref.jobId}" (${e.message}); showing it as changed.`, mask));
    seen?.(undefined);
    return "some";
  }
}

/**
 * Throws when the plan taken right before the register (`now`) has destructive updates or failed
 * placements beyond those of the plan this `up`'s diff showed for the same desired spec; prints both plans.
 */
export async function refuseOnPlanDrift(
  { ref, desired, mask }: JobOp,
  now: PlanResponse,
  stateIndex: number | undefined,
): Promise<void> {
  const before = shownPlanOf(ref, desired.text);
  const drift = planDrift(before, planFacts(now));
  if (drift.length === 0) return;
  const nowText = formatPlan(now, {
    jobId: ref.jobId,
    namespace: ref.namespace,
    stateJobModifyIndex: stateIndex,
    mask,
  });
  await show(
    `Job "${ref.jobId}": the scheduler's plan changed since this \`up\` showed it; nothing was registered.\n` +
      `Plan shown by this \`up\`:\n${before?.planned === true ? before.text : "(none)\n"}Plan right before the register:\n${nowText}`,
  );
  throw new ResourceError(
    "plan_changed",
    `Job "${ref.jobId}" in namespace "${ref.namespace}" was not updated: right before the register the scheduler's plan has ` +
      `${drift.join("; ")}, which this \`up\` did not show (${describeShown(before)}). Nothing was registered. Run \`pulumi preview\` ` +
      "to see the plan as it is now, then `pulumi up` again; or set `allowPlanDrift: true` to register anyway.",
  );
}

/**
 * Registers with check-and-set on `index` (0: the job must be new); resolves to the evaluation ID. A
 * check-and-set refusal becomes the message that says what happened: the job exists already (create), or
 * it was changed outside Pulumi (update).
 */
export async function register(op: JobOp, index: number): Promise<Registered> {
  const { ref } = op;
  try {
    return await registerWithReadBack(op, index, () => registerOnce(op, index));
  } catch (e) {
    if (!isApiError(e, "conflict")) throw e;
    if (index === 0)
      throw new ResourceError("already_exists", alreadyExistsMessage(ref.jobId, ref.namespace), { cause: e });
    const message = changedOutsideMessage(ref.jobId, ref.namespace, index, e.serverErrors.join("; "));
    throw new ResourceError("changed_outside", message, { cause: e });
  }
}

async function registerOnce({ client, ref, desired, inputs }: JobOp, index: number): Promise<WriteResult> {
  const { value } = await client.jobs.register(
    {
      Job: desired.job,
      ...(desired.submission !== undefined ? { Submission: desired.submission } : {}),
      EnforceIndex: true,
      JobModifyIndex: index,
      ...(inputs.policyOverride ? { PolicyOverride: true } : {}),
      ...(inputs.preserveCounts ? { PreserveCounts: true } : {}),
      ...(inputs.evalPriority !== undefined ? { EvalPriority: inputs.evalPriority } : {}),
    },
    placeOf(ref),
  );
  return value;
}

/** The message of a create or update whose register's outcome is unknown. */
export function unfinishedMessage(ref: JobRef, e: Error): string {
  return `${e.message}. Job "${ref.jobId}" is kept in the stack as unfinished; run \`pulumi up\` again to find out what the scheduler holds and finish.`;
}

/**
 * Follows a register the server applied; any failure that is not already an init error (a read running
 * out of attempts) becomes one, carrying the ID and the state read back, so the job is never orphaned and
 * state holds the index the server really has.
 */
export async function rolloutOrInitError(op: JobOp, reg: Registered, before: Before = {}): Promise<JobOutputs> {
  const { ref, inputs, desired: d } = op;
  try {
    return await rollout(op, reg.evalId, before);
  } catch (e) {
    if (e instanceof ResourceInitError) throw e;
    const kept: Kept = {
      evalId: reg.evalId,
      normalizedJob: d.text,
      inputsHash: d.inputsHash,
      incomplete: "rollout",
      secretMask: op.recordWithOld,
    };
    let server = await readServerState(op, { follow: followsDeployments(inputs) }).catch(() => undefined);
    if (server === undefined || (server.job.JobModifyIndex ?? 0) < reg.jobModifyIndex) {
      // Reading failed too: what the register's answer said is what state can know.
      server = {
        job: {
          ID: ref.jobId,
          Namespace: ref.namespace,
          Region: ref.region,
          Type: d.identity.type,
          JobModifyIndex: reg.jobModifyIndex,
        },
        deployment: NO_DEPLOYMENT,
      };
    }
    const message =
      `Job "${ref.jobId}" was registered (job modify index ${reg.jobModifyIndex}), but following it failed: ${(e as Error).message}. ` +
      "It is kept in the stack; run `pulumi up` again to finish.";
    throw new ResourceInitError(message, jobResourceId(ref), { ...buildOutputs(inputs, ref, server, kept) });
  }
}

/**
 * Finishes what an earlier create or update left unfinished; resolves to the outputs, or undefined when the
 * normal update path should run (the earlier register was not applied, or the inputs changed since).
 */
export async function finishIncomplete(op: JobOp, olds: JobOutputs): Promise<JobOutputs | undefined> {
  const { client, ref, inputs: news } = op;
  const opts = placeOf(ref);
  const job = (await client.jobs.find(ref.jobId, opts))?.value;
  const stateIndex = olds.jobModifyIndex ?? 0;
  if (olds.incomplete === "rollout") {
    // The register was applied and state has its index: follow it again unless something changed since.
    if (
      job === undefined ||
      (job.JobModifyIndex ?? 0) !== stateIndex ||
      !inputsHashMatches(olds.inputsHash, news, client)
    )
      return undefined;
    return rolloutOrInitError(op, { evalId: olds.evalId ?? "", jobModifyIndex: stateIndex });
  }
  if (job === undefined) {
    // The unconfirmed register never made the job: register it now, as a create would.
    return rolloutOrInitError(op, await register(op, 0));
  }
  if ((job.JobModifyIndex ?? 0) === stateIndex) return undefined;
  if (!(await holdsDesired(op))) {
    throw new ResourceError(
      "changed_outside",
      changedOutsideMessage(
        ref.jobId,
        ref.namespace,
        stateIndex,
        `the job is at job modify index ${job.JobModifyIndex ?? 0} and differs from this resource's`,
      ),
    );
  }
  // The job moved to exactly what this resource sends: the earlier register was applied.
  const jobModifyIndex = job.JobModifyIndex ?? 0;
  return rolloutOrInitError(op, { evalId: await evalOfRegister(op, jobModifyIndex), jobModifyIndex });
}

/** What state held before an update: restored when the update is rolled back to that version. */
interface Previous {
  normalizedJob: string;
  inputsHash: string;
}

/** What a register went over: the version a failed rollout goes back to, and what state held before. */
export interface Before {
  priorVersion?: number;
  previous?: Previous;
}

/** Follows the registration (when asked and when the job kind has deployments) and builds the outputs. */
async function rollout(op: JobOp, evalId: string, { priorVersion, previous }: Before): Promise<JobOutputs> {
  const { client, ref, inputs, desired: d, mask } = op;
  // Progress while waiting: group names can come from a secret job, so lines are masked like any text.
  const shower = (line: string) => show(maskText(`Job "${ref.jobId}": ${line}`, mask));
  if (followsDeployments(inputs) && evalId !== "" && !hasNoDeployment(d.identity)) {
    const timeoutMs = deploymentTimeoutMs(inputs);
    const registered = (await client.jobs.find(ref.jobId, placeOf(ref)))?.value.Version ?? undefined;
    const policy = promotionPolicy(inputs);
    const promoter = policy.mode === "auto" ? new CanaryPromoter(op, policy) : undefined;
    const result = await followRollout(op, evalId, {
      deadline: new Deadline(timeoutMs),
      version: registered,
      promoter,
      progress: shower,
    });
    if (result.ok && result.note) await show(maskText(`Job "${ref.jobId}": ${result.note}.`, mask));
    if (!result.ok) {
      const mode = inputs.onDeploymentFailure ?? JOB_DEFAULTS.onDeploymentFailure;
      const rollback = await recoverFromFailure(client, ref, result, {
        failedVersion: registered,
        priorVersion,
        mode,
        timeoutMs,
      });
      const server = await readServerState(op, { follow: true });
      const dep = result.kind === "deployment" || result.kind === "timeout" ? result.deployment : undefined;
      const message = formatRolloutFailure({
        jobId: ref.jobId,
        namespace: ref.namespace,
        failedVersion: registered,
        deploymentId: dep?.ID ?? (result.kind === "placement" ? result.deploymentId : undefined),
        deploymentStatus: dep?.Status ?? undefined,
        statusDescription: withNote(
          dep?.StatusDescription ??
            (result.kind === "evaluation"
              ? `evaluation ${result.evaluation.Status ?? ""}: ${result.evaluation.StatusDescription ?? ""}`
              : undefined),
          result.kind === "deployment" ? result.reason : result.kind === "timeout" ? result.note : undefined,
        ),
        groups: dep?.TaskGroups,
        evalId: result.evalId,
        placementFailure: result.kind === "placement" ? result.summary : undefined,
        timedOutAfterMs: result.kind === "timeout" ? result.timeoutMs : undefined,
        evaluationStatus: result.kind === "timeout" ? (result.evaluation?.Status ?? undefined) : undefined,
        rollback,
        runningVersion: server?.job.Version ?? undefined,
      });
      if (server === undefined) throw new ResourceError("gone", message);
      const keep = keptAfterFailure(rollback, { priorVersion, previous }, d, server.job);
      const props: JobOutputs = {
        ...buildOutputs(inputs, ref, server, { evalId, ...keep.kept, secretMask: op.recordWithOld }),
        rolloutFailed: true,
      };
      throw new ResourceInitError(message, jobResourceId(ref), { ...props });
    }
  }
  if (inputs.waitForCompletion === true && evalId !== "") {
    const done = await waitForCompletion(op, evalId, new Deadline(deploymentTimeoutMs(inputs)), shower);
    if (done.ok) await show(maskText(`Job "${ref.jobId}": ${done.note}.`, mask));
    else {
      const server = await readServerState(op, { follow: false });
      if (server === undefined) throw new ResourceError("gone", done.message);
      const props: JobOutputs = {
        ...buildOutputs(inputs, ref, server, {
          evalId,
          normalizedJob: d.text,
          inputsHash: d.inputsHash,
          secretMask: op.recordWithOld,
        }),
        rolloutFailed: true,
      };
      throw new ResourceInitError(done.message, jobResourceId(ref), { ...props });
    }
  }
  return refreshed(op, { evalId, normalizedJob: d.text, inputsHash: d.inputsHash, secretMask: op.record });
}

/** Appends what this provider saw (a canary failing its soak, how far a soak got) to a status description. */
function withNote(description: string | undefined, note: string | undefined): string | undefined {
  if (note === undefined || note === "") return description;
  return description !== undefined && description !== "" ? `${description} (${note})` : note;
}

/**
 * Returns what state keeps after a failed rollout: the spec that runs now. Back on the prior version, that
 * is the prior state (so the next preview shows the change again); anything else is the server's copy.
 */
function keptAfterFailure(
  rollback: Rollback,
  { priorVersion, previous }: Before,
  d: DesiredJob,
  serverJob: Parameters<typeof serverJobText>[0],
): { kept: { normalizedJob: string; inputsHash: string } } {
  const backOnPrior = (rollback.kind === "pulumi" || rollback.kind === "auto") && rollback.toVersion === priorVersion;
  if (backOnPrior && previous !== undefined)
    return { kept: { normalizedJob: previous.normalizedJob, inputsHash: previous.inputsHash } };
  if (rollback.kind === "none") return { kept: { normalizedJob: d.text, inputsHash: d.inputsHash } };
  return { kept: { normalizedJob: serverJobText(serverJob), inputsHash: "" } };
}

/*
 * Autoscaler-safe updates: with `preserveCounts` and/or `preserveResources`, the task group counts
 * and task resources the scheduler runs now are kept over the spec's, and a job whose JobModifyIndex moved
 * only because of such changes (`POST /v1/job/:id/scale`, an autoscaler, a register that changed only
 * counts or resources) is not treated as changed outside Pulumi: the update registers with check-and-set on
 * the server's current index instead of failing. (The job with the server's values is `desiredWithServerScale`
 * in scale.ts.)
 */

/** What an update of a job that keeps scaled values registers against. */
export interface ScaleBase {
  /** The desired job with the server's counts/resources. */
  desired: DesiredJob;
  /** The check-and-set index to register on. */
  index: number;
  /** The version a failed rollout goes back to. */
  priorVersion: number | undefined;
  /** Set when the job moved only by scaling since state was written: the index it moved from and to. */
  scaledFrom?: { stateIndex: number; serverIndex: number };
}

/**
 * Settles what an update registers when the inputs keep scaled values: reads the job (one request), keeps
 * its counts/resources in the desired job, and, when its JobModifyIndex moved since state, asks the
 * scheduler (one plan) whether the job state recorded, with the server's counts/resources, is what runs:
 * then only scaling moved it and the register goes on the current index. Anything else keeps state's
 * index, so the register is refused as a change made outside Pulumi. Without those inputs, no request.
 */
export async function scaleBase(
  { client, ref, inputs, desired: d }: JobOp,
  olds: { jobModifyIndex?: number; version?: number; normalizedJob?: string },
): Promise<ScaleBase> {
  const base: ScaleBase = { desired: d, index: olds.jobModifyIndex ?? 0, priorVersion: olds.version };
  const how = preserveOf(inputs);
  if (how === undefined) return base;
  const opts = placeOf(ref);
  const server = (await client.jobs.find(ref.jobId, opts))?.value;
  if (server === undefined) return base;
  const desired = desiredWithServerScale(d, server, how);
  const serverIndex = server.JobModifyIndex ?? 0;
  if (serverIndex === base.index || server.Stop === true) return { ...base, desired };
  const stored = parseStoredJob(olds.normalizedJob);
  if (stored === undefined) return { ...base, desired };
  const recorded = withServerScale(stored, server, how);
  const { value } = await client.jobs.plan(ref.jobId, { Job: recorded as Job, Diff: true }, opts);
  if (value.Diff?.Type !== "None") return { ...base, desired };
  return {
    desired,
    index: serverIndex,
    priorVersion: server.Version ?? undefined,
    scaledFrom: { stateIndex: base.index, serverIndex },
  };
}
