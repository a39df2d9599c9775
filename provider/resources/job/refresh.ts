/**
 * What a refresh of Jobs calls, on its own: a `read` the job list answers (the job shows unchanged) and a
 * `diff` that finds the inputs' hash unchanged. Neither needs the rest of the Job code (./index.ts: the
 * register, plan and rollout code) nor the scheduler client's other areas (actions, deployments, versions,
 * records), so the provider host loads this and the job requests only, as a `destroy` loads ./destroy.ts
 * only. Whatever these cannot answer goes on in ./index.ts, given what was found here (the list's entry is
 * taken once per read: the list serves each job's read once).
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { SchedulerRequester } from "../../clients/scheduler/base";
import { Jobs } from "../../clients/scheduler/jobs";
import type { HttpCore } from "../../http/core";
import { show } from "../../log";
import { canonicalJson, containsUnknown } from "../common";
import { MOVED, connectionChange } from "../connection";
import { schedulerCore } from "../scheduler-core";
import { SETTING_KEYS, SOURCE_KEYS, type JobInputs } from "./inputs";
import { listedJob, type JobLister, type Listed } from "./listing";
import { mergeMasks, secretMaskOf, storedMaskOf, storedRecordOf, type SecretMask } from "./secrets";
import { userInputs } from "./checked";
import { inputsHashMatches } from "./hashes";
import { assertBatchSettings, identityOf, type JobIdentity } from "./identity";
import { parseStoredJob, storedObjectText } from "./normal-form";
import {
  NO_DEPLOYMENT,
  buildOutputs,
  deploymentSettled,
  followsDeployments,
  keptDeployment,
  listedJobOf,
  refOf,
  type JobOutputs,
} from "./state";

/** The job requests of a connection's HTTP core, with the core: what the list needs (one per core). */
const listers = new WeakMap<HttpCore, JobLister>();

function listerOf(core: HttpCore): JobLister {
  let lister = listers.get(core);
  if (lister === undefined) listers.set(core, (lister = { core, jobs: new Jobs(new SchedulerRequester(core)) }));
  return lister;
}

/** A read the list answered (`done`), or what the list said of the job, for the full read (./index.ts). */
export type FromList = { done: dynamic.ReadResult<JobOutputs> } | { listed: Listed };

/**
 * A Job's read as far as the job list answers it: when the list shows the job unchanged since state was
 * written (and no deployment is to be read), the outputs are state's with what the list reports (status,
 * ModifyIndex), and nothing else is sent or computed.
 */
export async function readFromList(id: string, props: JobOutputs): Promise<FromList> {
  const ref = refOf(id, props);
  const listed = await listedJob(listerOf(schedulerCore(props.connection)), ref);
  if (typeof listed !== "object") return { listed };
  const follow = followsDeployments(props);
  if (follow && !deploymentSettled(props)) return { listed };
  const job = listedJobOf(ref, listed, props);
  if (job === undefined) return { listed };
  // The same JobModifyIndex, not stopped, and a kept normal form (listedJobOf): state's normal form holds.
  const kept = {
    evalId: props.evalId ?? "",
    normalizedJob: props.normalizedJob ?? "",
    inputsHash: props.inputsHash ?? "",
    incomplete: props.incomplete,
    secretMask: storedRecordOf(props),
  };
  const deployment = follow ? keptDeployment(props) : NO_DEPLOYMENT;
  return { done: { id, props: buildOutputs(props, ref, { job, deployment }, kept) } };
}

/**
 * A Job's diff when it finds no change to the job itself, without a request: another cluster, an unfinished
 * earlier operation, unknown sources, or the same inputs' hash (only the settings may differ). Undefined when
 * the job must be compared (./index.ts goes on).
 */
export async function diffWithoutJob(
  olds: Partial<JobOutputs>,
  checked: JobInputs,
): Promise<dynamic.DiffResult | undefined> {
  // Another cluster: the job is registered there, then deregistered here (never an update of the wrong one).
  const connection = connectionChange("scheduler", olds.connection, checked.connection);
  if (connection === "moved") return MOVED;
  // An earlier create or update did not finish (its register unconfirmed, or its rollout not followed to
  // the end): the next `up` must run update to finish it.
  if (olds.incomplete !== undefined) return { changes: true };
  const news = userInputs(checked);
  // Unknown sources: the engine asks again with the real values during `up`.
  if (SOURCE_KEYS.some((k) => containsUnknown(news[k])) || containsUnknown(news.connection)) return { changes: true };
  const core = schedulerCore(news.connection);
  // The stored text is parsed only where it is read: an unchanged job needs its hash alone.
  if (!storedObjectText(olds.normalizedJob) || !inputsHashMatches(olds.inputsHash, news, { core })) return undefined;
  const changes = settingsChanged(olds, news);
  // Same job: a batch-only setting turned on for a job of another kind is refused here (no request).
  if (changes) assertBatchSettings(storedIdentity(olds, parseStoredJob(olds.normalizedJob)), news);
  return noteAfterFailure(olds, { changes });
}

/** True when a setting (SETTING_KEYS) differs from state's, compared as canonical text (a map's keys may come back in another order). */
export function settingsChanged(olds: Partial<JobOutputs>, news: JobInputs): boolean {
  for (const k of SETTING_KEYS) {
    const before = olds[k] ?? null;
    const after = news[k] ?? null;
    // Equal values have equal text: most settings are unset or the same primitive, and each diff of a
    // refresh compares every one (at 2,000 Jobs the texts were a sixth of the diffs' CPU).
    if (before !== after && canonicalJson(before) !== canonicalJson(after)) return true;
  }
  return false;
}

/**
 * What a change from `olds` to `news` shows: the old values next to the new ones, so the secrets of both
 * (those of the job state holds as its `secretMask` says, even when the new inputs hold no secret).
 */
export function changeMask(olds: Partial<JobOutputs>, news: Partial<JobInputs>): SecretMask {
  return mergeMasks(secretMaskOf(news), storedMaskOf(olds));
}

/** The identity of the job state holds: from its stored normal form, else from the outputs. */
export function storedIdentity(olds: Partial<JobOutputs>, stored: Record<string, unknown> | undefined): JobIdentity {
  return identityOf(stored ?? { ID: olds.jobId, Namespace: olds.namespace, Region: olds.region, Type: olds.type });
}

/**
 * After a failed rollout the engine keeps the failure as the resource's init errors, and it plans an update
 * for such a resource even when `diff` finds no change: the preview shows `~ Job (update)` with no changed
 * property. Says why, when that is the case; the update only reads the job back (nothing is registered).
 */
export async function noteAfterFailure(
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
