/**
 * A job's identity (ID, namespace, region, type, periodic, parameterized) and the rules that follow from it:
 * what needs a replacement instead of an update, which jobs get no deployment, where batch-only settings apply.
 */
import { UsageError } from "../../errors";
import { isRecord } from "../common";
import type { JobInputs } from "./inputs";
import type { JobObject } from "./normal-form";

/** What makes a job a different job, or one the server refuses to turn into the other. */
export interface JobIdentity {
  id: string;
  namespace: string;
  region: string;
  type: string;
  periodic: boolean;
  parameterized: boolean;
}

/** Returns a job's identity; the server's defaults fill what the job leaves out. */
export function identityOf(job: JobObject): JobIdentity {
  return {
    id: typeof job.ID === "string" ? job.ID : "",
    namespace: typeof job.Namespace === "string" && job.Namespace !== "" ? job.Namespace : "default",
    region: typeof job.Region === "string" && job.Region !== "" ? job.Region : "global",
    type: typeof job.Type === "string" && job.Type !== "" ? job.Type : "service",
    periodic: isRecord(job.Periodic),
    parameterized: isRecord(job.ParameterizedJob),
  };
}

/** Returns the problem with batch-only settings on a job of this identity, or undefined when there is none. */
function batchSettingsProblem(
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
  if (problem !== undefined) throw new UsageError(problem);
}

/** One reason why a change needs a new job instead of an update. */
export interface ReplaceReason {
  field: keyof JobIdentity;
  old: string;
  new: string;
}

/**
 * Lists why going from one job to another needs a replacement. A different ID, namespace or region is a
 * different job (an update would leave the old one running); the server refuses to change a job's type or
 * to switch periodic or parameterized on or off, so those must be decided at preview, never at apply.
 */
export function replaceReasons(olds: JobIdentity, news: JobIdentity): ReplaceReason[] {
  const out: ReplaceReason[] = [];
  const fields: Array<keyof JobIdentity> = ["id", "namespace", "region", "type", "periodic", "parameterized"];
  for (const f of fields) {
    if (olds[f] !== news[f]) out.push({ field: f, old: String(olds[f]), new: String(news[f]) });
  }
  return out;
}

/**
 * True when the server runs no deployment for jobs of this kind, so there is nothing to wait for
 * (periodic and parameterized jobs do not even get an evaluation until they launch).
 */
export function hasNoDeployment(identity: JobIdentity): boolean {
  return identity.periodic || identity.parameterized || identity.type === "batch" || identity.type === "sysbatch";
}
