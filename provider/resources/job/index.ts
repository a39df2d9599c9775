/**
 * The Job resource: a scheduler job registered from a jobspec or a job object, compared in normal form,
 * previewed through the scheduler's plan, written with check-and-set, followed to the end of its
 * deployment and rolled back when that deployment fails.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { schedulerClient as newClient } from "../scheduler-client";
import { ResourceError, isApiError } from "../../errors";
import type { PlanResponse, WriteResult } from "../../schemas/scheduler";
import { ResourceInitError, canonicalJson, containsUnknown, type ProviderImpl } from "../common";
import { inputsHashMatches, parseStoredJob, resolveDesired, serverJobText, type DesiredJob } from "./spec";
import { withIdentity, userInputs } from "./identity";
import { JOB_DEFAULTS, checkJobInputs, deploymentTimeoutMs, type JobInputs } from "./inputs";
import {
  alreadyExistsMessage,
  changedOutsideMessage,
  formatRolloutFailure,
  replaceNeededMessage,
  type Rollback,
} from "./messages";
import { hasNoDeployment, identityOf, replaceReasons, type JobIdentity, type ReplaceReason } from "./normalize";
import { show, showOnce } from "../../log";
import { formatPlan } from "./text";
import { SECRET_SHOWN, maskError, maskText, secretMaskOf, type SecretMask } from "./secrets";
import { CanaryPromoter, promotionPolicy } from "./promotion";
import { describeShown, planDrift, planFacts, rememberShownPlan, shownPlanOf } from "./plan-drift";
import { recoverFromFailure } from "./recover";
import { Deadline, followRollout, type JobRef } from "./follow";
import {
  NO_DEPLOYMENT,
  buildOutputs,
  jobResourceId,
  readServerState,
  refOf,
  type JobOutputs,
  type Kept,
} from "./state";
import { evalOfRegister, holdsDesired, registerWithReadBack, type Registered } from "./apply";
import { preserveOf, scaleBase, scaledNote } from "./scale";
import { assertBatchSettings, collectedOutputs, keptAsCollected, waitForCompletion } from "./batch";

const SETTINGS = [
  "policyOverride",
  "preserveCounts",
  "evalPriority",
  "waitForDeployment",
  "deploymentTimeout",
  "onDeploymentFailure",
  "promotion",
  "allowPlanDrift",
  "purgeOnDestroy",
  "adopt",
] as const;
/** Settings of issue 21 items 3 and 4 (batch completion, run once, triggers, kept resources). */
const BATCH_SCALE_SETTINGS = ["preserveResources", "waitForCompletion", "runOnce", "triggers"] as const;
const SOURCES = ["jobspec", "job", "variables", "namespace", "region"] as const;

/** The Job provider, before secret values are masked out of its errors. */
const jobImpl: ProviderImpl<JobInputs, JobOutputs> = {
  async check(olds, news) {
    const res = checkJobInputs(news);
    if (res.inputs === undefined || (res.failures ?? []).length > 0) return res;
    // The identity joins the inputs so that previews know the outputs it makes (see job-identity.ts).
    let client: SchedulerClient;
    try {
      client = newClient();
    } catch {
      return res; // no connection settings: `create` says what is missing
    }
    return { ...res, inputs: await withIdentity(client, olds, res.inputs) };
  },

  async diff(_id, olds, checked) {
    // An earlier create or update did not finish (its register unconfirmed, or its rollout not followed to
    // the end): the next `up` must run update to finish it.
    if (olds.incomplete !== undefined) return { changes: true };
    const news = userInputs(checked);
    // Canonical text: a map setting (triggers) may come back from state with its keys in another order.
    const settingsChanged = [...SETTINGS, ...BATCH_SCALE_SETTINGS].some(
      (k) => canonicalJson(olds[k] ?? null) !== canonicalJson(news[k] ?? null),
    );
    // Unknown sources: the engine asks again with the real values during `up`.
    if (SOURCES.some((k) => containsUnknown(news[k]))) return { changes: true };
    const client = newClient();
    const stored = parseStoredJob(olds.normalizedJob);
    if (stored !== undefined && inputsHashMatches(olds.inputsHash, news, client)) {
      // Same job: a batch-only setting turned on for a job of another kind is refused here (no request).
      if (settingsChanged) assertBatchSettings(storedIdentity(olds, stored), news);
      return noteAfterFailure(olds, { changes: settingsChanged });
    }
    const desired = await resolveDesired(client, news);
    assertBatchSettings(desired.identity, news);
    const reasons = replaceReasons(storedIdentity(olds, stored), desired.identity);
    if (reasons.length > 0) {
      const mask = secretMaskOf(news);
      const what = reasons
        .map((r) => `${r.field} ${mask.everything ? SECRET_SHOWN : r.old} -> ${mask.everything ? SECRET_SHOWN : r.new}`)
        .join(", ");
      await show(maskText(`Job "${olds.jobId}" will be replaced (stopped, then registered anew): ${what}.`, mask));
      return { changes: true, replaces: replacedProperties(reasons, news), deleteBeforeReplace: true };
    }
    if (desired.text === olds.normalizedJob) return noteAfterFailure(olds, { changes: settingsChanged });
    const ref = refOfDesired(desired);
    const base = await scaleBase(client, ref, olds, news, desired);
    const how = preserveOf(news);
    if (base.scaledFrom !== undefined && how !== undefined) await showOnce(scaledNote(ref.jobId, how, base.scaledFrom));
    if (base.desired.text === olds.normalizedJob) return noteAfterFailure(olds, { changes: settingsChanged });
    const planned = await planChange(client, ref, base.desired, news, base.index, true, (shown) =>
      rememberShownPlan(ref, base.desired.text, shown),
    );
    return { changes: planned !== "none" || settingsChanged };
  },

  async create(checked) {
    const inputs = userInputs(checked);
    const client = newClient();
    const d = await resolveDesired(client, inputs);
    assertBatchSettings(d.identity, inputs);
    const ref = refOfDesired(d);
    const opts = { namespace: ref.namespace, region: ref.region };
    const existing = (await client.jobs.find(ref.jobId, opts))?.value;
    let index = 0;
    let priorVersion: number | undefined;
    if (existing !== undefined) {
      const clash = replaceReasons(identityOf(existing), d.identity).filter(
        (r) => r.field === "type" || r.field === "periodic" || r.field === "parameterized",
      );
      if (existing.Stop === true) {
        // A stopped job runs nothing (this is also what a delete-before-replace leaves behind). The server
        // refuses to change its type or periodic/parameterized nature, so such a job is purged first.
        if (clash.length > 0) await client.jobs.deregister(ref.jobId, { ...opts, purge: true });
        else index = existing.JobModifyIndex ?? 0;
      } else if (inputs.adopt === true) {
        if (clash.length > 0)
          throw new ResourceError(
            "replace_needed",
            `${replaceNeededMessage(ref.jobId, clash)} It cannot be adopted; stop and purge it first.`,
          );
        index = existing.JobModifyIndex ?? 0;
        priorVersion = existing.Version ?? undefined;
      } else if ((existing.Version ?? 0) === 0 && clash.length === 0 && (await holdsDesired(client, ref, d, inputs))) {
        // Exactly what this resource sends, registered once and never changed: the job an earlier run's
        // create registered before its answer was lost. Anything else stays someone else's job.
        await show(
          `Job "${ref.jobId}": continuing with the job an earlier, unconfirmed create of this resource registered (version 0, same spec).`,
        );
        const jobModifyIndex = existing.JobModifyIndex ?? 0;
        const reg = { evalId: await evalOfRegister(client, ref, jobModifyIndex), jobModifyIndex };
        return {
          id: jobResourceId(ref),
          outs: await rolloutOrInitError(client, ref, inputs, d, reg, undefined, undefined),
        };
      } else {
        throw new ResourceError("already_exists", alreadyExistsMessage(ref.jobId, ref.namespace));
      }
    }
    let reg: Registered;
    try {
      reg = await register(client, ref, d, inputs, index);
    } catch (e) {
      if (!ResourceError.is(e, "outcome_unknown")) throw e;
      // The job may exist now: state keeps its ID, marked so that the next `up` finds out and finishes.
      const job = {
        ID: ref.jobId,
        Namespace: ref.namespace,
        Region: ref.region,
        Type: d.identity.type,
        JobModifyIndex: index,
        ...(existing?.Version != null ? { Version: existing.Version } : {}),
      };
      const outs = buildOutputs(
        inputs,
        ref,
        { job, deployment: NO_DEPLOYMENT },
        { evalId: "", normalizedJob: "", inputsHash: "", incomplete: "register" },
      );
      throw new ResourceInitError(unfinishedMessage(ref, e), jobResourceId(ref), { ...outs });
    }
    const outs = await rolloutOrInitError(client, ref, inputs, d, reg, priorVersion, undefined);
    return { id: jobResourceId(ref), outs };
  },

  async read(id, props) {
    const client = newClient();
    const ref = refOf(id, props);
    const server = await readServerState(client, ref, { follow: followsDeployments(props), kept: props });
    // A blank ID tells the engine the job is gone (purged or collected): refresh drops it from state,
    // unless runOnce keeps a finished batch job as done (job-batch.ts).
    if (server === undefined)
      return keptAsCollected(props) ? { id, props: collectedOutputs(props as JobInputs, ref, props) } : { id: "" };
    let kept: Kept = {
      evalId: props.evalId ?? "",
      normalizedJob: props.normalizedJob ?? "",
      inputsHash: props.inputsHash ?? "",
      incomplete: props.incomplete,
    };
    const moved = (server.job.JobModifyIndex ?? 0) !== props.jobModifyIndex;
    // Only a spec change made elsewhere (a new JobModifyIndex, or a stop) replaces the kept normal form:
    // the server's own additions to a job must never look like drift. (The server's normal form is only
    // computed then: a refresh that finds nothing moved skips that work.)
    if (moved || server.job.Stop === true || kept.normalizedJob === "") {
      const serverText = serverJobText(server.job);
      if (serverText !== kept.normalizedJob) kept = { ...kept, normalizedJob: serverText, inputsHash: "" };
    }
    return { id, props: buildOutputs(props, ref, server, kept) };
  },

  async update(id, olds, checked) {
    const news = userInputs(checked);
    const client = newClient();
    const ref = refOf(id, olds);
    const kept = {
      evalId: olds.evalId ?? "",
      normalizedJob: olds.normalizedJob ?? "",
      inputsHash: olds.inputsHash ?? "",
    };
    // runOnce: a finished batch job the scheduler collected (seen by a refresh, or gone now) stays done
    // while its spec does not change; when it changes, it is registered anew.
    const runsOnce = keptAsCollected({ ...olds, runOnce: news.runOnce });
    const collected = (k: Kept): JobOutputs | undefined =>
      runsOnce ? collectedOutputs(news, ref, { ...olds, ...k }) : undefined;
    if (olds.incomplete === undefined && inputsHashMatches(olds.inputsHash, news, client)) {
      if (runsOnce && olds.collected === true) return { outs: collectedOutputs(news, ref, olds) };
      return { outs: await refreshed(client, ref, news, kept, collected) };
    }
    const resolved = await resolveDesired(client, news);
    assertBatchSettings(resolved.identity, news);
    if (olds.incomplete !== undefined) {
      const finished = await finishIncomplete(client, ref, olds, news, resolved);
      if (finished !== undefined) return { outs: finished };
    }
    const reasons = replaceReasons(storedIdentity(olds, parseStoredJob(olds.normalizedJob)), resolved.identity);
    if (reasons.length > 0) throw new ResourceError("replace_needed", replaceNeededMessage(ref.jobId, reasons));
    // preserveCounts/preserveResources: the running counts/resources are kept, and a job moved only by
    // scaling is registered over on its current index (job-scale.ts).
    const base = await scaleBase(client, ref, olds, news, resolved);
    const d = base.desired;
    const how = preserveOf(news);
    if (base.scaledFrom !== undefined && how !== undefined) await showOnce(scaledNote(ref.jobId, how, base.scaledFrom));
    const same = { ...kept, normalizedJob: d.text, inputsHash: d.inputsHash };
    if (d.text === olds.normalizedJob) return { outs: await refreshed(client, ref, news, same, collected) };
    // Texts can differ while the specs do not (a default spelled out, or a kept form that came from the
    // server with its own additions): the scheduler decides, so a register is only sent for a real change.
    let before: PlanResponse | undefined;
    if ((await planChange(client, ref, d, news, base.index, false, (p) => (before = p?.value))) === "none") {
      return { outs: await refreshed(client, ref, news, same, collected) };
    }
    // Apply matches preview: refuse what the plan right before the register has beyond what diff showed.
    if (before !== undefined && olds.incomplete === undefined && news.allowPlanDrift !== true) {
      await refuseOnPlanDrift(ref, d, before, base.index, secretMaskOf(news));
    }
    const gone =
      runsOnce &&
      (olds.collected === true ||
        (await client.jobs.find(ref.jobId, { namespace: ref.namespace, region: ref.region })) === undefined);
    let reg: Registered;
    try {
      // A runOnce job the scheduler collected is registered anew (it runs again: its spec or triggers changed).
      reg = await register(client, ref, d, news, gone ? 0 : base.index);
    } catch (e) {
      if (!ResourceError.is(e, "outcome_unknown")) throw e;
      // State keeps what it knew (the index before this register), marked so the next `up` reads what the
      // server holds and finishes, instead of diffing equal inputs to "no changes".
      throw new ResourceInitError(unfinishedMessage(ref, e), id, { ...olds, incomplete: "register" });
    }
    const previous = {
      inputs: sourceInputsOf(olds, news),
      normalizedJob: kept.normalizedJob,
      inputsHash: kept.inputsHash,
    };
    return { outs: await rolloutOrInitError(client, ref, news, d, reg, base.priorVersion, previous) };
  },

  async delete(id, props) {
    const client = newClient();
    const ref = refOf(id, props);
    try {
      await client.jobs.deregister(ref.jobId, {
        namespace: ref.namespace,
        region: ref.region,
        purge: props.purgeOnDestroy === true,
      });
    } catch (e) {
      if (isApiError(e, "not_found")) return;
      throw e;
    }
  },
};

/**
 * The Job provider. No error it throws holds a secret variable's value (job-secrets.ts): the engine prints
 * errors, and the host prints the stacks of failed `check`s and `diff`s.
 */
export const job: ProviderImpl<JobInputs, JobOutputs> = {
  check: (olds, news) => masked(jobImpl.check(olds, news), secretMaskOf(news as Partial<JobInputs>)),
  diff: (id, olds, news) => masked(jobImpl.diff(id, olds, news), secretMaskOf(news)),
  create: (inputs) => masked(jobImpl.create(inputs), secretMaskOf(inputs)),
  read: (id, props) => masked(jobImpl.read(id, props), secretMaskOf(props)),
  update: (id, olds, news) => masked(jobImpl.update(id, olds, news), secretMaskOf(news)),
  delete: (id, props) => masked(jobImpl.delete(id, props), secretMaskOf(props)),
};

function masked<T>(p: Promise<T>, mask: SecretMask): Promise<T> {
  return p.catch((e: unknown) => Promise.reject(maskError(e, mask)));
}

/**
 * After a failed rollout the engine keeps the failure as the resource's init errors, and it plans an update
 * for such a resource even when `diff` finds no change: the preview shows `~ Job (update)` with no changed
 * property. Says why, when that is the case; the update only reads the job back (nothing is registered).
 */
async function noteAfterFailure(
  olds: Partial<JobOutputs>,
  result: { changes: boolean },
): Promise<{ changes: boolean }> {
  if (!result.changes && olds.rolloutFailed === true) {
    await show(
      `Job "${olds.jobId ?? ""}": its last update failed (the rollout was reported, and reverted where asked), so Pulumi shows ` +
        "an update although nothing changed: Pulumi retries a resource whose last operation failed. That update only " +
        "reads the job back and registers nothing; `pulumi refresh` clears the failure too.",
    );
  }
  return result;
}

function refOfDesired(d: DesiredJob): JobRef {
  return { jobId: d.identity.id, namespace: d.identity.namespace, region: d.identity.region };
}

function storedIdentity(olds: Partial<JobOutputs>, stored: Record<string, unknown> | undefined): JobIdentity {
  return identityOf(stored ?? { ID: olds.jobId, Namespace: olds.namespace, Region: olds.region, Type: olds.type });
}

function replacedProperties(reasons: ReplaceReason[], news: JobInputs): string[] {
  const source = news.jobspec !== undefined ? "jobspec" : "job";
  const props = new Set<string>();
  for (const r of reasons) {
    if (r.field === "namespace" && news.namespace !== undefined) props.add("namespace");
    else if (r.field === "region" && news.region !== undefined) props.add("region");
    else props.add(source);
  }
  return [...props];
}

/**
 * Plans the desired job (showing the plan at preview); resolves to "none" when the scheduler sees no change.
 * `seen` gets the plan and its text (undefined when the scheduler could not be asked).
 */
async function planChange(
  client: SchedulerClient,
  ref: JobRef,
  d: DesiredJob,
  inputs: JobInputs,
  stateIndex: number | undefined,
  preview = true,
  seen?: (plan: { value: PlanResponse; text: string } | undefined) => void,
): Promise<"none" | "some"> {
  try {
    const { value } = await client.jobs.plan(
      ref.jobId,
      { Job: d.job, Diff: true, ...(inputs.policyOverride ? { PolicyOverride: true } : {}) },
      { namespace: ref.namespace, region: ref.region },
    );
    const text = formatPlan(value, {
      jobId: ref.jobId,
      namespace: ref.namespace,
      stateJobModifyIndex: stateIndex,
      mask: secretMaskOf(inputs),
    });
    if (preview) await showOnce(text);
    seen?.({ value, text });
    return value.Diff?.Type === "None" ? "none" : "some";
  } catch (e) {
    // An invalid job fails the preview with the server's reason; an unreachable server only loses the plan.
    if (!isApiError(e) || e.code === "bad_request" || e.code === "permission_denied") throw e;
    if (preview)
      await show(
        maskText(`Could not plan job "${ref.jobId}" (${e.message}); showing it as changed.`, secretMaskOf(inputs)),
      );
    seen?.(undefined);
    return "some";
  }
}

/**
 * Throws when the plan taken right before the register (`now`) has destructive updates or failed
 * placements beyond those of the plan this `up`'s diff showed for the same desired spec; prints both plans.
 */
async function refuseOnPlanDrift(
  ref: JobRef,
  d: DesiredJob,
  now: PlanResponse,
  stateIndex: number | undefined,
  mask: SecretMask,
): Promise<void> {
  const before = shownPlanOf(ref, d.text);
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
  throw new Error(
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
async function register(
  client: SchedulerClient,
  ref: JobRef,
  d: DesiredJob,
  inputs: JobInputs,
  index: number,
): Promise<Registered> {
  try {
    return await registerWithReadBack(client, ref, d, inputs, index, () => registerOnce(client, ref, d, inputs, index));
  } catch (e) {
    if (!isApiError(e, "conflict")) throw e;
    if (index === 0)
      throw new ResourceError("already_exists", alreadyExistsMessage(ref.jobId, ref.namespace), { cause: e });
    const message = changedOutsideMessage(ref.jobId, ref.namespace, index, e.serverErrors.join("; "));
    throw new ResourceError("changed_outside", message, { cause: e });
  }
}

async function registerOnce(
  client: SchedulerClient,
  ref: JobRef,
  d: DesiredJob,
  inputs: JobInputs,
  index: number,
): Promise<WriteResult> {
  const { value } = await client.jobs.register(
    {
      Job: d.job,
      Submission: d.submission,
      EnforceIndex: true,
      JobModifyIndex: index,
      ...(inputs.policyOverride ? { PolicyOverride: true } : {}),
      ...(inputs.preserveCounts ? { PreserveCounts: true } : {}),
      ...(inputs.evalPriority !== undefined ? { EvalPriority: inputs.evalPriority } : {}),
    },
    { namespace: ref.namespace, region: ref.region },
  );
  return value;
}

/** The message of a create or update whose register's outcome is unknown. */
function unfinishedMessage(ref: JobRef, e: Error): string {
  return `${e.message}. Job "${ref.jobId}" is kept in the stack as unfinished; run \`pulumi up\` again to find out what the scheduler holds and finish.`;
}

/**
 * Follows a register the server applied; any failure that is not already an init error (a read running
 * out of attempts) becomes one, carrying the ID and the state read back, so the job is never orphaned and
 * state holds the index the server really has.
 */
async function rolloutOrInitError(
  client: SchedulerClient,
  ref: JobRef,
  inputs: JobInputs,
  d: DesiredJob,
  reg: Registered,
  priorVersion: number | undefined,
  previous: Previous | undefined,
): Promise<JobOutputs> {
  try {
    return await rollout(client, ref, inputs, d, reg.evalId, priorVersion, previous);
  } catch (e) {
    if (e instanceof ResourceInitError) throw e;
    const kept: Kept = { evalId: reg.evalId, normalizedJob: d.text, inputsHash: d.inputsHash, incomplete: "rollout" };
    let server = await readServerState(client, ref, { follow: followsDeployments(inputs) }).catch(() => undefined);
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
async function finishIncomplete(
  client: SchedulerClient,
  ref: JobRef,
  olds: JobOutputs,
  news: JobInputs,
  d: DesiredJob,
): Promise<JobOutputs | undefined> {
  const opts = { namespace: ref.namespace, region: ref.region };
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
    return rolloutOrInitError(
      client,
      ref,
      news,
      d,
      { evalId: olds.evalId ?? "", jobModifyIndex: stateIndex },
      undefined,
      undefined,
    );
  }
  if (job === undefined) {
    // The unconfirmed register never made the job: register it now, as a create would.
    const reg = await register(client, ref, d, news, 0);
    return rolloutOrInitError(client, ref, news, d, reg, undefined, undefined);
  }
  if ((job.JobModifyIndex ?? 0) === stateIndex) return undefined;
  if (!(await holdsDesired(client, ref, d, news))) {
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
  return rolloutOrInitError(
    client,
    ref,
    news,
    d,
    { evalId: await evalOfRegister(client, ref, jobModifyIndex), jobModifyIndex },
    undefined,
    undefined,
  );
}

/** True when the resource follows its deployments (`waitForDeployment`, the default). */
function followsDeployments(inputs: Partial<JobInputs>): boolean {
  return inputs.waitForDeployment ?? JOB_DEFAULTS.waitForDeployment;
}

async function refreshed(
  client: SchedulerClient,
  ref: JobRef,
  inputs: JobInputs,
  kept: Kept,
  whenGone?: (k: Kept) => JobOutputs | undefined,
): Promise<JobOutputs> {
  const server = await readServerState(client, ref, { follow: followsDeployments(inputs) });
  const instead = server === undefined ? whenGone?.(kept) : undefined;
  if (instead !== undefined) return instead;
  if (server === undefined)
    throw new Error(`Job "${ref.jobId}" in namespace "${ref.namespace}" no longer exists; run \`pulumi refresh\`.`);
  return buildOutputs(inputs, ref, server, kept);
}

/** What state held before an update: restored when the update is rolled back to that version. */
interface Previous {
  inputs: JobInputs;
  normalizedJob: string;
  inputsHash: string;
}

/** Follows the registration (when asked and when the job kind has deployments) and builds the outputs. */
async function rollout(
  client: SchedulerClient,
  ref: JobRef,
  inputs: JobInputs,
  d: DesiredJob,
  evalId: string,
  priorVersion: number | undefined,
  previous: Previous | undefined,
): Promise<JobOutputs> {
  if (followsDeployments(inputs) && evalId !== "" && !hasNoDeployment(d.identity)) {
    const timeoutMs = deploymentTimeoutMs(inputs);
    const registered =
      (await client.jobs.find(ref.jobId, { namespace: ref.namespace, region: ref.region }))?.value.Version ?? undefined;
    const policy = promotionPolicy(inputs);
    const promoter = policy.mode === "auto" ? new CanaryPromoter(client, ref, policy) : undefined;
    const result = await followRollout(client, ref, evalId, registered, new Deadline(timeoutMs), promoter);
    if (result.ok && result.note) await show(maskText(`Job "${ref.jobId}": ${result.note}.`, secretMaskOf(inputs)));
    if (!result.ok) {
      const mode = inputs.onDeploymentFailure ?? JOB_DEFAULTS.onDeploymentFailure;
      const rollback = await recoverFromFailure(client, ref, result, {
        failedVersion: registered,
        priorVersion,
        mode,
        timeoutMs,
      });
      const server = await readServerState(client, ref, { follow: true });
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
      if (server === undefined) throw new Error(message);
      const keep = keptAfterFailure(rollback, priorVersion, previous, d, server.job);
      const props: JobOutputs = {
        ...buildOutputs(keep.inputs ?? inputs, ref, server, { evalId, ...keep.kept }),
        rolloutFailed: true,
      };
      throw new ResourceInitError(message, jobResourceId(ref), { ...props });
    }
  }
  if (inputs.waitForCompletion === true && evalId !== "") {
    const done = await waitForCompletion(client, ref, evalId, new Deadline(deploymentTimeoutMs(inputs)));
    if (done.ok) await show(maskText(`Job "${ref.jobId}": ${done.note}.`, secretMaskOf(inputs)));
    else {
      const server = await readServerState(client, ref, { follow: false });
      if (server === undefined) throw new Error(done.message);
      const props: JobOutputs = {
        ...buildOutputs(inputs, ref, server, { evalId, normalizedJob: d.text, inputsHash: d.inputsHash }),
        rolloutFailed: true,
      };
      throw new ResourceInitError(done.message, jobResourceId(ref), { ...props });
    }
  }
  return refreshed(client, ref, inputs, { evalId, normalizedJob: d.text, inputsHash: d.inputsHash });
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
  priorVersion: number | undefined,
  previous: Previous | undefined,
  d: DesiredJob,
  serverJob: Parameters<typeof serverJobText>[0],
): { inputs?: JobInputs; kept: { normalizedJob: string; inputsHash: string } } {
  const backOnPrior = (rollback.kind === "pulumi" || rollback.kind === "auto") && rollback.toVersion === priorVersion;
  if (backOnPrior && previous !== undefined)
    return {
      inputs: previous.inputs,
      kept: { normalizedJob: previous.normalizedJob, inputsHash: previous.inputsHash },
    };
  if (rollback.kind === "none") return { kept: { normalizedJob: d.text, inputsHash: d.inputsHash } };
  return { kept: { normalizedJob: serverJobText(serverJob), inputsHash: "" } };
}

/** The inputs of the old state, with the new settings: what an update rolled back to is described by. */
function sourceInputsOf(olds: JobOutputs, news: JobInputs): JobInputs {
  const out: JobInputs = { ...news };
  delete out.jobspec;
  delete out.job;
  delete out.variables;
  if (olds.jobspec !== undefined) out.jobspec = olds.jobspec;
  if (olds.job !== undefined) out.job = olds.job;
  if (olds.variables !== undefined) out.variables = olds.variables;
  return out;
}
