/**
 * The Job resource: a scheduler job registered from a jobspec or a job object, compared in normal form,
 * previewed through the scheduler's plan, written with check-and-set, followed to the end of its
 * deployment and rolled back when that deployment fails. This file holds the provider's six methods; each
 * builds one operation context (`JobOp`: client, job, inputs, desired job, secret mask) and passes it down.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { ResourceError } from "../../errors";
import { show, showOnce } from "../../log";
import type { Job, PlanResponse } from "../../schemas/scheduler";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { ResourceInitError, type ProviderImpl } from "../common";
import { schedulerClient as newClient } from "../scheduler-client";
import {
  evalOfRegister,
  finishIncomplete,
  holdsDesired,
  planChange,
  refuseOnPlanDrift,
  register,
  rolloutOrInitError,
  scaleBase,
  unfinishedMessage,
  type Registered,
} from "./apply";
import { checkJobInputs, preserveOf, type JobInputs } from "./inputs";
import { SECRET_SHOWN, maskText } from "./mask-text";
import {
  NO_SECRETS,
  masksAnything,
  mergeMasks,
  mergeRecords,
  recordOf,
  secretMaskOf,
  storedMaskOf,
  storedRecordOf,
  type SecretMask,
  type SecretRecord,
} from "./secrets";
import { userInputs, withIdentity } from "./checked";
import { inputsHashMatches, triggersKeyOf } from "./hashes";
import { assertBatchSettings, identityOf, replaceReasons, type ReplaceReason } from "./identity";
import { parseStoredJob, serverJobText } from "./normal-form";
import { jobMask, resolveDesired, type DesiredJob } from "./spec";
import {
  NO_DEPLOYMENT,
  buildOutputs,
  collectedOutputs,
  followsDeployments,
  jobResourceId,
  placeOf,
  keptAsCollected,
  listedServerState,
  readServerState,
  refOf,
  refreshed,
  type JobOp,
  type JobOutputs,
  type JobRef,
  type Kept,
} from "./state";
import type { Listed } from "./listing";
import { changeMask, diffWithoutJob, noteAfterFailure, readFromList, settingsChanged, storedIdentity } from "./refresh";
import { rememberShownPlan } from "./memo";
import { deleteJob } from "./destroy";
import { currentMask, masked } from "./masking";
import { alreadyExistsMessage, replaceNeededMessage, scaledNote } from "./messages";
import { shownPlan } from "./text";

/** The Job provider but its `delete` (./destroy.ts), before secret values are masked out of its errors. */
const jobImpl: Omit<ProviderImpl<JobInputs, JobOutputs>, "delete"> = {
  async check(olds, news) {
    const res = checkJobInputs(news);
    if (res.inputs === undefined || (res.failures ?? []).length > 0) return res;
    // The identity joins the inputs so that previews know the outputs it makes (see `withIdentity` in checked.ts).
    let client: SchedulerClient;
    try {
      client = newClient(res.inputs.connection);
    } catch {
      return res; // no connection settings: `create` says what is missing
    }
    return { ...res, inputs: await withIdentity(client, olds, res.inputs) };
  },

  async diff(_id, olds, checked) {
    return (await diffWithoutJob(olds, checked)) ?? diffJob(olds, checked);
  },

  async create(checked) {
    const inputs = userInputs(checked);
    const client = newClient(inputs.connection);
    const d = await resolveDesired(client, inputs, false, triggersKeyOf(inputs));
    assertBatchSettings(d.identity, inputs);
    const op = await opOf(client, inputs, d);
    const { ref } = op;
    const opts = placeOf(ref);
    // A register with check-and-set index 0 is refused when the job exists: no lookup before it. Only a
    // refusal looks the job up (a stopped job, adopt, an earlier unconfirmed create, someone else's job).
    let existing: Job | undefined;
    let index = 0;
    let priorVersion: number | undefined;
    let reg = await registerOrInitError(op, 0, undefined, "already_exists");
    if (reg === undefined) {
      existing = (await client.jobs.find(ref.jobId, opts))?.value;
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
          const found = { evalId: await evalOfRegister(op, jobModifyIndex), jobModifyIndex };
          return { id: jobResourceId(ref), outs: await rolloutOrInitError(op, found) };
        } else {
          throw new ResourceError("already_exists", alreadyExistsMessage(ref.jobId, ref.namespace));
        }
      }
      // Over the stopped or adopted job at its index; anew when the job is gone since the refusal.
      reg = (await registerOrInitError(op, index, existing)) as Registered;
    } else if (
      !followsDeployments(inputs) &&
      inputs.waitForCompletion !== true &&
      !d.identity.periodic &&
      !d.identity.parameterized
    ) {
      // A new job nothing is followed for: the register's answer says what state needs (version 0, its
      // index; pending until placed, as a refresh then reports), so nothing is read back.
      const job: Job = {
        ID: ref.jobId,
        Namespace: ref.namespace,
        Region: ref.region,
        Type: d.identity.type,
        Version: 0,
        JobModifyIndex: reg.jobModifyIndex,
        ModifyIndex: reg.jobModifyIndex,
        Status: "pending",
        StatusDescription: "",
      };
      const kept = { evalId: reg.evalId, normalizedJob: d.text, inputsHash: d.inputsHash, secretMask: op.record };
      return { id: jobResourceId(ref), outs: buildOutputs(inputs, ref, { job, deployment: NO_DEPLOYMENT }, kept) };
    }
    const outs = await rolloutOrInitError(op, reg, { priorVersion });
    return { id: jobResourceId(ref), outs };
  },

  async read(id, props) {
    const first = await readFromList(id, props);
    return "done" in first ? first.done : readJob(id, props, first.listed);
  },

  async update(id, olds, checked) {
    const news = userInputs(checked);
    const client = newClient(news.connection);
    const ref = refOf(id, olds);
    // The same job: what state knew came from secrets, and what the inputs say is secret now (marking a
    // value secret is no change, so its values are recorded here; what the job computed from it is recorded
    // once the job changes).
    const kept: Kept = {
      evalId: olds.evalId ?? "",
      normalizedJob: olds.normalizedJob ?? "",
      inputsHash: olds.inputsHash ?? "",
      secretMask: mergeRecords(storedRecordOf(olds), recordOf(secretMaskOf(news))),
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
    const resolved = await resolveDesired(client, news, false, triggersKeyOf(news, olds));
    assertBatchSettings(resolved.identity, news);
    const resolvedOp: JobOp = {
      client,
      ref,
      inputs: news,
      desired: resolved,
      ...(await maskOf(client, news, resolved, olds)),
    };
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
    const same = { ...kept, normalizedJob: d.text, inputsHash: d.inputsHash, secretMask: op.record };
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
      const secretMask = op.recordWithOld;
      throw new ResourceInitError(unfinishedMessage(ref, e), id, {
        ...olds,
        incomplete: "register",
        ...(secretMask !== undefined ? { secretMask } : {}),
      });
    }
    const previous = {
      normalizedJob: kept.normalizedJob,
      inputsHash: kept.inputsHash,
    };
    return { outs: await rolloutOrInitError(op, reg, { priorVersion: base.priorVersion, previous }) };
  },
};

/**
 * A Job's read the job list did not answer (./refresh.ts, `readFromList`): the job read in full, unless the
 * list's entry (`listed`) shows it unchanged and only its deployment is to be read.
 * @public required by name: ./entry.ts loads this module on first use and takes its `readJob`.
 */
export async function readJob(id: string, props: JobOutputs, listed: Listed): Promise<dynamic.ReadResult<JobOutputs>> {
  const client = newClient(props.connection);
  const ref = refOf(id, props);
  const follow = followsDeployments(props);
  const server =
    (typeof listed === "object" ? await listedServerState({ client, ref }, listed, props, follow) : undefined) ??
    (await readServerState({ client, ref }, { follow, kept: props }));
  // A blank ID tells the engine the job is gone (purged or collected): refresh drops it from state,
  // unless runOnce keeps a finished batch job as done (`keptAsCollected` in state.ts).
  if (server === undefined)
    return keptAsCollected(props) ? { id, props: collectedOutputs(props as JobInputs, ref, props) } : { id: "" };
  let kept: Kept = {
    evalId: props.evalId ?? "",
    normalizedJob: props.normalizedJob ?? "",
    inputsHash: props.inputsHash ?? "",
    incomplete: props.incomplete,
    secretMask: storedRecordOf(props),
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
}

/**
 * A Job's diff once ./refresh.ts (`diffWithoutJob`) found the job itself must be compared (the inputs' hash
 * differs, or state keeps none): the desired job against the one state holds, then the scheduler's plan.
 * @public required by name: ./entry.ts loads this module on first use and takes its `diffJob`.
 */
export async function diffJob(olds: Partial<JobOutputs>, checked: JobInputs): Promise<dynamic.DiffResult> {
  const news = userInputs(checked);
  const changed = settingsChanged(olds, news);
  const client = newClient(news.connection);
  const stored = parseStoredJob(olds.normalizedJob);
  const desired = await resolveDesired(client, news, false, triggersKeyOf(news, olds));
  assertBatchSettings(desired.identity, news);
  const op = await opOf(client, news, desired, olds);
  const reasons = replaceReasons(storedIdentity(olds, stored), desired.identity);
  if (reasons.length > 0) {
    const { mask } = op;
    const what = reasons
      .map((r) => `${r.field} ${mask.everything ? SECRET_SHOWN : r.old} -> ${mask.everything ? SECRET_SHOWN : r.new}`)
      .join(", ");
    await show(maskText(`Job "${olds.jobId}" will be replaced (stopped, then registered anew): ${what}.`, mask));
    return { changes: true, replaces: replacedProperties(reasons, news), deleteBeforeReplace: true };
  }
  if (desired.text === olds.normalizedJob) return noteAfterFailure(olds, { changes: changed });
  const base = await scaleBase(op, olds);
  const how = preserveOf(news);
  if (base.scaledFrom !== undefined && how !== undefined)
    await showOnce(scaledNote(op.ref.jobId, how, base.scaledFrom));
  if (base.desired.text === olds.normalizedJob) return noteAfterFailure(olds, { changes: changed });
  const planned = await planChange({ ...op, desired: base.desired }, base.index, true, (shown) =>
    rememberShownPlan(op.ref, base.desired.text, shownPlan(shown)),
  );
  return { changes: planned !== "none" || changed };
}

/**
 * The Job provider. No error it throws holds a secret value or anything computed from one (secrets.ts): the
 * engine prints errors, and the host prints the stacks of failed `check`s and `diff`s. An init error (the job
 * exists but its create or update did not finish) is kept by Pulumi as the resource's `initErrors`, in
 * plaintext state: when anything is secret, it carries a generic message, and its detail, masked, is printed.
 * @public required by name: ./entry.ts loads this module on first use and takes its `job`.
 */
export const job: ProviderImpl<JobInputs, JobOutputs> = {
  check: (olds, news) => masked(secretMaskOf(news as Partial<JobInputs>), () => jobImpl.check(olds, news)),
  diff: (id, olds, news) => masked(changeMask(olds, news), () => jobImpl.diff(id, olds, news)),
  create: (inputs) => masked(secretMaskOf(inputs), () => jobImpl.create(inputs)),
  read: (id, props) => masked(storedMaskOf(props), () => jobImpl.read(id, props)),
  update: (id, olds, news) => masked(changeMask(olds, news), () => jobImpl.update(id, olds, news)),
  delete: (id, props) => deleteJob(id, props),
};

/**
 * Returns the full mask of an operation on the job `desired` describes (and on the job state holds, `olds`),
 * and makes it the one errors get; with what state is to keep of it (`record`, `recordWithOld`).
 */
async function maskOf(
  client: SchedulerClient,
  inputs: JobInputs,
  desired: DesiredJob,
  olds?: Partial<JobOutputs>,
): Promise<{ mask: SecretMask; record?: SecretRecord; recordWithOld?: SecretRecord }> {
  const scope = currentMask.getStore();
  // The key of a secret trigger's hash is kept whatever else is (an empty trigger value masks nothing).
  const key: SecretRecord | undefined = desired.triggersKey !== undefined ? { key: desired.triggersKey } : undefined;
  if (scope === undefined || !masksAnything(scope.mask)) return { mask: NO_SECRETS, record: key, recordWithOld: key };
  const older = olds === undefined ? [] : [parseStoredJob(olds.normalizedJob)].filter((j) => j !== undefined);
  const { own, older: olderTexts } = await jobMask(client, inputs, desired, secretMaskOf(inputs), older);
  const fromOlder: SecretMask = { everything: false, sensitiveFields: false, values: olderTexts };
  scope.mask = mergeMasks(mergeMasks(own, storedMaskOf(olds)), fromOlder);
  const record = mergeRecords(recordOf(own), key);
  return {
    mask: scope.mask,
    record,
    recordWithOld: mergeRecords(mergeRecords(record, storedRecordOf(olds)), recordOf(fromOlder)),
  };
}

/**
 * Registers a new job with check-and-set on `index`; resolves to undefined when the server refuses it with
 * `refusal` (the caller looks the job up). A register whose outcome is unknown becomes an init error that
 * keeps the job in state, marked so the next `up` finds out what the server holds and finishes.
 */
async function registerOrInitError(
  op: JobOp,
  index: number,
  existing: Job | undefined,
  refusal?: "already_exists",
): Promise<Registered | undefined> {
  const { ref, inputs, desired: d } = op;
  try {
    return await register(op, index);
  } catch (e) {
    if (refusal !== undefined && ResourceError.is(e, refusal)) return undefined;
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
      { evalId: "", normalizedJob: "", inputsHash: "", incomplete: "register", secretMask: op.recordWithOld },
    );
    throw new ResourceInitError(unfinishedMessage(ref, e as Error), jobResourceId(ref), { ...outs });
  }
}

/** The context of one operation on the job `desired` describes. */
async function opOf(
  client: SchedulerClient,
  inputs: JobInputs,
  desired: DesiredJob,
  olds?: Partial<JobOutputs>,
): Promise<JobOp> {
  const ref: JobRef = {
    jobId: desired.identity.id,
    namespace: desired.identity.namespace,
    region: desired.identity.region,
  };
  return { client, ref, inputs, desired, ...(await maskOf(client, inputs, desired, olds)) };
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
