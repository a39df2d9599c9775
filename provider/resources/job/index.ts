/**
 * The Job resource: a scheduler job registered from a jobspec or a job object, compared in normal form,
 * previewed through the scheduler's plan, written with check-and-set, followed to the end of its
 * deployment and rolled back when that deployment fails. This file holds the provider's six methods; each
 * builds one operation context (`JobOp`: client, job, inputs, desired job, secret mask) and passes it down.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { ResourceError, isApiError } from "../../errors";
import { show, showOnce } from "../../log";
import type { PlanResponse } from "../../schemas/scheduler";
import { ResourceInitError, canonicalJson, containsUnknown, type ProviderImpl } from "../common";
import { schedulerClient as newClient } from "../scheduler-client";
import { MOVED, connectionChange } from "../connection";
import {
  evalOfRegister,
  finishIncomplete,
  holdsDesired,
  planChange,
  refuseOnPlanDrift,
  register,
  rolloutOrInitError,
  scaleBase,
  sourceInputsOf,
  unfinishedMessage,
  type Registered,
} from "./apply";
import { SETTING_KEYS, SOURCE_KEYS, assertBatchSettings, checkJobInputs, preserveOf, type JobInputs } from "./inputs";
import { SECRET_SHOWN, maskError, maskText, secretMaskOf, type SecretMask } from "./secrets";
import {
  identityOf,
  inputsHashMatches,
  parseStoredJob,
  replaceReasons,
  resolveDesired,
  serverJobText,
  userInputs,
  withIdentity,
  type DesiredJob,
  type JobIdentity,
  type ReplaceReason,
} from "./spec";
import {
  NO_DEPLOYMENT,
  buildOutputs,
  collectedOutputs,
  followsDeployments,
  jobResourceId,
  placeOf,
  keptAsCollected,
  readServerState,
  refOf,
  refreshed,
  type JobOp,
  type JobOutputs,
  type JobRef,
  type Kept,
} from "./state";
import { alreadyExistsMessage, rememberShownPlan, replaceNeededMessage, scaledNote } from "./text";

/** The Job provider, before secret values are masked out of its errors. */
const jobImpl: ProviderImpl<JobInputs, JobOutputs> = {
  async check(olds, news) {
    const res = checkJobInputs(news);
    if (res.inputs === undefined || (res.failures ?? []).length > 0) return res;
    // The identity joins the inputs so that previews know the outputs it makes (see `withIdentity` in spec.ts).
    let client: SchedulerClient;
    try {
      client = newClient(res.inputs.connection);
    } catch {
      return res; // no connection settings: `create` says what is missing
    }
    return { ...res, inputs: await withIdentity(client, olds, res.inputs) };
  },

  async diff(_id, olds, checked) {
    // Another cluster: the job is registered there, then deregistered here (never an update of the wrong one).
    const connection = connectionChange("scheduler", olds.connection, checked.connection);
    if (connection === "moved") return MOVED;
    // An earlier create or update did not finish (its register unconfirmed, or its rollout not followed to
    // the end): the next `up` must run update to finish it.
    if (olds.incomplete !== undefined) return { changes: true };
    const news = userInputs(checked);
    // Canonical text: a map setting (triggers) may come back from state with its keys in another order.
    const settingsChanged = SETTING_KEYS.some((k) => canonicalJson(olds[k] ?? null) !== canonicalJson(news[k] ?? null));
    // Unknown sources: the engine asks again with the real values during `up`.
    if (SOURCE_KEYS.some((k) => containsUnknown(news[k])) || containsUnknown(news.connection)) return { changes: true };
    const client = newClient(news.connection);
    const stored = parseStoredJob(olds.normalizedJob);
    if (stored !== undefined && inputsHashMatches(olds.inputsHash, news, client)) {
      // Same job: a batch-only setting turned on for a job of another kind is refused here (no request).
      if (settingsChanged) assertBatchSettings(storedIdentity(olds, stored), news);
      return noteAfterFailure(olds, { changes: settingsChanged });
    }
    const desired = await resolveDesired(client, news);
    assertBatchSettings(desired.identity, news);
    const op = opOf(client, news, desired);
    const reasons = replaceReasons(storedIdentity(olds, stored), desired.identity);
    if (reasons.length > 0) {
      const { mask } = op;
      const what = reasons
        .map((r) => `${r.field} ${mask.everything ? SECRET_SHOWN : r.old} -> ${mask.everything ? SECRET_SHOWN : r.new}`)
        .join(", ");
      await show(maskText(`Job "${olds.jobId}" will be replaced (stopped, then registered anew): ${what}.`, mask));
      return { changes: true, replaces: replacedProperties(reasons, news), deleteBeforeReplace: true };
    }
    if (desired.text === olds.normalizedJob) return noteAfterFailure(olds, { changes: settingsChanged });
    const base = await scaleBase(op, olds);
    const how = preserveOf(news);
    if (base.scaledFrom !== undefined && how !== undefined)
      await showOnce(scaledNote(op.ref.jobId, how, base.scaledFrom));
    if (base.desired.text === olds.normalizedJob) return noteAfterFailure(olds, { changes: settingsChanged });
    const planned = await planChange({ ...op, desired: base.desired }, base.index, true, (shown) =>
      rememberShownPlan(op.ref, base.desired.text, shown),
    );
    return { changes: planned !== "none" || settingsChanged };
  },

  async create(checked) {
    const inputs = userInputs(checked);
    const client = newClient(inputs.connection);
    const d = await resolveDesired(client, inputs);
    assertBatchSettings(d.identity, inputs);
    const op = opOf(client, inputs, d);
    const { ref } = op;
    const opts = placeOf(ref);
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
      } else if ((existing.Version ?? 0) === 0 && clash.length === 0 && (await holdsDesired(op))) {
        // Exactly what this resource sends, registered once and never changed: the job an earlier run's
        // create registered before its answer was lost. Anything else stays someone else's job.
        await show(
          `Job "${ref.jobId}": continuing with the job an earlier, unconfirmed create of this resource registered (version 0, same spec).`,
        );
        const jobModifyIndex = existing.JobModifyIndex ?? 0;
        const reg = { evalId: await evalOfRegister(op, jobModifyIndex), jobModifyIndex };
        return { id: jobResourceId(ref), outs: await rolloutOrInitError(op, reg) };
      } else {
        throw new ResourceError("already_exists", alreadyExistsMessage(ref.jobId, ref.namespace));
      }
    }
    let reg: Registered;
    try {
      reg = await register(op, index);
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
    const outs = await rolloutOrInitError(op, reg, { priorVersion });
    return { id: jobResourceId(ref), outs };
  },

  async read(id, props) {
    const client = newClient(props.connection);
    const ref = refOf(id, props);
    const server = await readServerState({ client, ref }, { follow: followsDeployments(props), kept: props });
    // A blank ID tells the engine the job is gone (purged or collected): refresh drops it from state,
    // unless runOnce keeps a finished batch job as done (`keptAsCollected` in state.ts).
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
    const client = newClient(news.connection);
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
      return { outs: await refreshed({ client, ref, inputs: news }, kept, collected) };
    }
    const resolved = await resolveDesired(client, news);
    assertBatchSettings(resolved.identity, news);
    const resolvedOp: JobOp = { client, ref, inputs: news, desired: resolved, mask: secretMaskOf(news) };
    if (olds.incomplete !== undefined) {
      const finished = await finishIncomplete(resolvedOp, olds);
      if (finished !== undefined) return { outs: finished };
    }
    const reasons = replaceReasons(storedIdentity(olds, parseStoredJob(olds.normalizedJob)), resolved.identity);
    if (reasons.length > 0) throw new ResourceError("replace_needed", replaceNeededMessage(ref.jobId, reasons));
    // preserveCounts/preserveResources: the running counts/resources are kept, and a job moved only by
    // scaling is registered over on its current index (`scaleBase` in apply.ts).
    const base = await scaleBase(resolvedOp, olds);
    const op: JobOp = { ...resolvedOp, desired: base.desired };
    const d = op.desired;
    const how = preserveOf(news);
    if (base.scaledFrom !== undefined && how !== undefined) await showOnce(scaledNote(ref.jobId, how, base.scaledFrom));
    const same = { ...kept, normalizedJob: d.text, inputsHash: d.inputsHash };
    if (d.text === olds.normalizedJob) return { outs: await refreshed(op, same, collected) };
    // Texts can differ while the specs do not (a default spelled out, or a kept form that came from the
    // server with its own additions): the scheduler decides, so a register is only sent for a real change.
    let before: PlanResponse | undefined;
    if ((await planChange(op, base.index, false, (p) => (before = p?.value))) === "none") {
      return { outs: await refreshed(op, same, collected) };
    }
    // Apply matches preview: refuse what the plan right before the register has beyond what diff showed.
    if (before !== undefined && olds.incomplete === undefined && news.allowPlanDrift !== true) {
      await refuseOnPlanDrift(op, before, base.index);
    }
    const gone =
      runsOnce && (olds.collected === true || (await client.jobs.find(ref.jobId, placeOf(ref))) === undefined);
    let reg: Registered;
    try {
      // A runOnce job the scheduler collected is registered anew (it runs again: its spec or triggers changed).
      reg = await register(op, gone ? 0 : base.index);
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
    return { outs: await rolloutOrInitError(op, reg, { priorVersion: base.priorVersion, previous }) };
  },

  async delete(id, props) {
    const client = newClient(props.connection);
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
 * The Job provider. No error it throws holds a secret variable's value (secrets.ts): the engine prints
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

/** The context of one operation on the job `desired` describes. */
function opOf(client: SchedulerClient, inputs: JobInputs, desired: DesiredJob): JobOp {
  const ref: JobRef = {
    jobId: desired.identity.id,
    namespace: desired.identity.namespace,
    region: desired.identity.region,
  };
  return { client, ref, inputs, desired, mask: secretMaskOf(inputs) };
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
