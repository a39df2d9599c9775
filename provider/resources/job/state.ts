/**
 * The Job resource's outputs: the settings inputs, what the server reports about the job (version, indexes,
 * status, latest deployment) and the normal form the next diff compares with.
 *
 * What a refresh reads: the job, and (for a resource that follows deployments) the latest deployment only
 * when it can have changed (see `readServerState`). Allocations and per-group counts are not outputs: they
 * change whenever the scheduler places, reschedules or finishes work, so every refresh would report a
 * change no Pulumi program made, and two more requests per job would be sent for it (Terraform's Nomad
 * provider stopped reading allocation IDs into its job resource for the same reason). Scripts that need
 * them read them live with the typed client (`clients`).
 */
import type { SchedulerClient } from "../../clients/scheduler";
import { ResourceError, isApiError } from "../../errors";
import type { Deployment, Job, JobStub } from "../../schemas/scheduler";
import { definedDeep } from "../common";
import type { OutputsOf } from "../definition";
import type { jobDefinition } from "../definitions/job";
import { SCHEMA_VERSION } from "../migrate";
import { JOB_DEFAULTS, SETTING_KEYS, type JobInputs } from "./inputs";
import { storedRecordOf, type SecretMask, type SecretRecord } from "./secrets";
import type { DesiredJob } from "./spec";
import type { JobRef } from "./ref";

export { refOf, type JobRef } from "./ref";

/** Where the requests about one job go: the client, and the job's ID, namespace and region. */
export interface JobAt {
  readonly client: SchedulerClient;
  readonly ref: JobRef;
}

/**
 * One operation on one job, built once per `diff`, `create` or `update` and passed down: where the job is,
 * what the user wrote, the job those inputs describe, and what of it is secret.
 */
export interface JobOp extends JobAt {
  readonly inputs: JobInputs;
  readonly desired: DesiredJob;
  readonly mask: SecretMask;
  /** What state keeps as `secretMask` once it holds the desired job (undefined: nothing secret). */
  readonly record?: SecretRecord;
  /** The same with what the job state held came from secrets: kept when state may hold either job (a failure). */
  readonly recordWithOld?: SecretRecord;
}

/**
 * Outputs of a Job (each field's doc is in its definition, ../definitions/job.ts): its settings inputs plus
 * what the server reports (never its sources), the namespace and region the job lives in.
 */
export type JobOutputs = Omit<
  OutputsOf<typeof jobDefinition>,
  "namespace" | "region" | "jobspec" | "job" | "variables"
> & {
  namespace: string;
  region: string;
};

/** What state keeps besides the server's report: the normal form and where it came from. */
export interface Kept {
  evalId: string;
  normalizedJob: string;
  inputsHash: string;
  incomplete?: "register" | "rollout";
  /** Which values of `normalizedJob` came from secrets (./secrets.ts, `SecretRecord`). */
  secretMask?: SecretRecord;
}

/** The job's latest deployment as outputs show it ("" everywhere when it has none). */
export interface DeploymentView {
  deploymentId: string;
  deploymentStatus: string;
  deploymentStatusDescription: string;
}

/** The view of a job with no deployment (or none read yet). */
export const NO_DEPLOYMENT: DeploymentView = Object.freeze({
  deploymentId: "",
  deploymentStatus: "",
  deploymentStatusDescription: "",
});

/** The request options that place a request at the job: its namespace and region. */
export function placeOf(ref: JobRef): { namespace: string; region: string } {
  return { namespace: ref.namespace, region: ref.region };
}

/** What the server reports about a job. */
export interface JobServerState {
  job: Job;
  deployment: DeploymentView;
}

/** A deployment in one of these states never changes again. */
const FINISHED_DEPLOYMENT = new Set(["successful", "failed", "cancelled"]);

/** How `readServerState` treats the job's latest deployment. */
export interface DeploymentRead {
  /** The resource follows deployments (`waitForDeployment`, the default): without it none is read. */
  follow: boolean;
  /** A refresh: the deployment state last recorded, read again only when it may have changed. */
  kept?: Partial<JobOutputs>;
}

/**
 * Reads a job and, for a resource that follows deployments, its latest deployment; resolves to undefined
 * when the job does not exist (purged or collected). The deployment outputs describe the deployment the
 * last create or update followed, as Terraform's Nomad provider does (without `waitForDeployment` they stay
 * empty). A refresh reads it again only when it may have changed: the job changed or was stopped since (a
 * spec change makes a new deployment), or the deployment state knows of had not finished. So refreshing a
 * settled job sends one request; when both are needed they are read at once (one round trip).
 */
export async function readServerState(
  { client, ref }: JobAt,
  how: DeploymentRead,
): Promise<JobServerState | undefined> {
  const opts = placeOf(ref);
  const latest = () => latestDeployment({ client, ref });
  const kept = how.kept;
  if (how.follow && (kept === undefined || !deploymentSettled(kept))) {
    const [found, deployment] = await Promise.all([client.jobs.find(ref.jobId, opts), latest()]);
    return found === undefined ? undefined : { job: found.value, deployment };
  }
  const found = await client.jobs.find(ref.jobId, opts);
  if (found === undefined) return undefined;
  const job = found.value;
  if (!how.follow || kept === undefined) return { job, deployment: NO_DEPLOYMENT };
  if ((job.JobModifyIndex ?? 0) !== kept.jobModifyIndex || (job.Stop === true) !== (kept.stopped === true))
    return { job, deployment: await latest() };
  return { job, deployment: keptDeployment(kept) };
}

/** The job's latest deployment, or none when the server has none. */
function latestDeployment({ client, ref }: JobAt): Promise<DeploymentView> {
  return client.records.latestDeployment(ref.jobId, placeOf(ref)).then((r) => viewOf(r.value), goneAs(NO_DEPLOYMENT));
}

/** The deployment state last recorded, as a view. */
export function keptDeployment(kept: Partial<JobOutputs>): DeploymentView {
  return viewOf({
    ID: kept.deploymentId,
    Status: kept.deploymentStatus,
    StatusDescription: kept.deploymentStatusDescription,
  });
}

/** The fields of a job's list entry (its stub) that a refresh reads. */
export type ListedStub = Pick<
  JobStub,
  "Type" | "Status" | "StatusDescription" | "Stop" | "ModifyIndex" | "JobModifyIndex"
>;

/**
 * The job a list entry shows unchanged since state was written (the same JobModifyIndex, not stopped, as
 * state has it), made from the entry and state without reading the job; undefined when the job must be read
 * in full. A spec change, a stop, a revert or a scale moves JobModifyIndex, and the version with it, so
 * state's version still holds.
 */
export function listedJobOf(ref: JobRef, stub: ListedStub, kept: Partial<JobOutputs>): Job | undefined {
  const index = stub.JobModifyIndex ?? undefined;
  if (index === undefined || index !== kept.jobModifyIndex || stub.Stop === true || kept.stopped === true)
    return undefined;
  if (kept.version === undefined || kept.normalizedJob === undefined || kept.normalizedJob === "") return undefined;
  return {
    ID: ref.jobId,
    Namespace: ref.namespace,
    Region: ref.region,
    Type: stub.Type ?? kept.type,
    Version: kept.version,
    JobModifyIndex: index,
    ModifyIndex: stub.ModifyIndex ?? kept.modifyIndex,
    Status: stub.Status ?? "",
    StatusDescription: stub.StatusDescription ?? "",
    Stop: false,
  };
}

/**
 * The server state of a job the job list shows unchanged (see {@link listedJobOf}); undefined when the job
 * must be read in full. The deployment is read as `readServerState` would.
 */
export async function listedServerState(
  { client, ref }: JobAt,
  stub: ListedStub,
  kept: Partial<JobOutputs>,
  follow: boolean,
): Promise<JobServerState | undefined> {
  const job = listedJobOf(ref, stub, kept);
  if (job === undefined) return undefined;
  if (!follow) return { job, deployment: NO_DEPLOYMENT };
  return { job, deployment: deploymentSettled(kept) ? keptDeployment(kept) : await latestDeployment({ client, ref }) };
}

/** True when state holds no deployment to chase: none was recorded, or the one recorded has finished. */
export function deploymentSettled(kept: Partial<JobOutputs>): boolean {
  if (kept.deploymentId === undefined || kept.deploymentStatus === undefined) return false; // none recorded
  return kept.deploymentId === "" || FINISHED_DEPLOYMENT.has(kept.deploymentStatus);
}

function viewOf(d: Deployment | null | undefined): DeploymentView {
  return d == null
    ? NO_DEPLOYMENT
    : {
        deploymentId: d.ID ?? "",
        deploymentStatus: d.Status ?? "",
        deploymentStatusDescription: d.StatusDescription ?? "",
      };
}

/** A rejection handler: the job vanished between two reads (a concurrent purge) gives `value`; anything else rethrows. */
function goneAs<T>(value: T): (e: unknown) => T {
  return (e) => {
    if (isApiError(e, "not_found")) return value;
    throw e;
  };
}

/*
 * The settings inputs (SETTING_KEYS) are echoed into outputs: diff compares them, delete reads
 * `purgeOnDestroy`. The sources (`jobspec`, `job`, `variables`) are not echoed: no operation reads them back
 * (`inputsHash` and `normalizedJob` stand for them), the engine keeps the inputs in state anyway, and
 * echoing them made the source the largest part of every Job's outputs.
 */

/** Builds the outputs from the inputs, the server's report and the normal form to keep. */
export function buildOutputs(inputs: JobInputs, ref: JobRef, server: JobServerState, kept: Kept): JobOutputs {
  const job = server.job;
  const echoed: Record<string, unknown> = {};
  for (const k of SETTING_KEYS) if (inputs[k] !== undefined) echoed[k] = inputs[k];
  const out: JobOutputs = {
    ...(echoed as Partial<JobInputs>),
    jobId: ref.jobId,
    namespace: ref.namespace,
    region: job.Region ?? ref.region,
    type: job.Type ?? "service",
    version: job.Version ?? 0,
    jobModifyIndex: job.JobModifyIndex ?? 0,
    modifyIndex: job.ModifyIndex ?? 0,
    status: job.Status ?? "",
    statusDescription: job.StatusDescription ?? "",
    stopped: job.Stop === true,
    evalId: kept.evalId,
    ...server.deployment,
    normalizedJob: kept.normalizedJob,
    inputsHash: kept.inputsHash,
    ...(kept.secretMask !== undefined ? { secretMask: kept.secretMask } : {}),
    ...(kept.incomplete !== undefined ? { incomplete: kept.incomplete } : {}),
    schemaVersion: SCHEMA_VERSION,
  };
  return definedDeep(out);
}

/** Returns the resource ID of a job: `<jobId>@<namespace>` (the form imports use). */
export function jobResourceId(ref: JobRef): string {
  return `${ref.jobId}@${ref.namespace}`;
}

/** True when the resource follows its deployments (`waitForDeployment`, the default). */
export function followsDeployments(inputs: Partial<JobInputs>): boolean {
  return inputs.waitForDeployment ?? JOB_DEFAULTS.waitForDeployment;
}

export async function refreshed(
  { client, ref, inputs }: JobAt & { readonly inputs: JobInputs },
  kept: Kept,
  whenGone?: (k: Kept) => JobOutputs | undefined,
): Promise<JobOutputs> {
  const server = await readServerState({ client, ref }, { follow: followsDeployments(inputs) });
  const instead = server === undefined ? whenGone?.(kept) : undefined;
  if (instead !== undefined) return instead;
  if (server === undefined)
    throw new ResourceError(
      "gone",
      `Job "${ref.jobId}" in namespace "${ref.namespace}" no longer exists; run \`pulumi refresh\`.`,
    );
  return buildOutputs(inputs, ref, server, kept);
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
  const kept: Kept = {
    evalId: props.evalId ?? "",
    normalizedJob: props.normalizedJob ?? "",
    inputsHash: props.inputsHash ?? "",
    secretMask: storedRecordOf(props),
  };
  return { ...buildOutputs(inputs, ref, { job, deployment: NO_DEPLOYMENT }, kept), collected: true };
}
