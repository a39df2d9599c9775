/**
 * The Job resource's error texts and notes, as pure functions: a failed deployment (with what was rolled back
 * and what runs now), a refused check-and-set, an existing job, a refused replacement, and the note of an
 * update over a job only scaled outside Pulumi.
 */
import type { DeploymentGroupState } from "../../schemas/scheduler";
import type { Preserve } from "./inputs";
import type { ReplaceReason } from "./identity";
import { count } from "./text";

/** What happened after a rollout failed. */
export type Rollback =
  /** The server's auto_revert registered version `toVersion` again, as `newVersion`. */
  | { kind: "auto"; toVersion: number; newVersion?: number; deploymentId?: string; deploymentStatus?: string }
  /** This provider reverted to the version that ran before the update (or to the one carrying version tag `tag`). */
  | {
      kind: "pulumi";
      toVersion: number;
      tag?: string;
      newVersion?: number;
      deploymentId?: string;
      deploymentStatus?: string;
    }
  /** A revert was wanted but the server refused it (usually: someone else changed the job meanwhile), or the tag was not found. */
  | { kind: "refused"; toVersion?: number; tag?: string; reason: string }
  /** Nothing was rolled back. */
  | { kind: "none"; reason: "fail-mode" | "no-prior-version" | "timeout" | "server-declined"; detail?: string };

/** Facts of a failed rollout, for {@link formatRolloutFailure}. */
export interface RolloutFailure {
  jobId: string;
  namespace: string;
  /** The version that failed to roll out. */
  failedVersion?: number;
  deploymentId?: string;
  deploymentStatus?: string;
  statusDescription?: string;
  groups?: Record<string, DeploymentGroupState> | null;
  /** Placement failures of the evaluation (when the scheduler could not place the new allocations). */
  evalId?: string;
  placementFailure?: string;
  timedOutAfterMs?: number;
  /** Status of the evaluation last seen, when the wait timed out before a deployment was known. */
  evaluationStatus?: string;
  rollback: Rollback;
  /** Version the job is on now (after any rollback). */
  runningVersion?: number;
}

/** Returns the message of a failed rollout: the deployment, its description, the failed groups, the rollback, the running version. */
export function formatRolloutFailure(f: RolloutFailure): string {
  const job = `job "${f.jobId}" in namespace "${f.namespace}"`;
  const version = f.failedVersion !== undefined ? ` version ${f.failedVersion}` : "";
  const parts: string[] = [];
  if (f.timedOutAfterMs !== undefined) {
    const what = f.deploymentId ? `deployment ${f.deploymentId}` : `evaluation ${f.evalId ?? "(none)"}`;
    const state = f.deploymentStatus
      ? ` (status ${f.deploymentStatus}${f.statusDescription ? `: ${f.statusDescription}` : ""})`
      : "";
    parts.push(`Timed out after ${formatMs(f.timedOutAfterMs)} waiting for ${what} of ${job}${version}${state}.`);
  } else if (f.placementFailure !== undefined) {
    parts.push(
      `The scheduler could not place ${version !== "" ? `${version.trim()} of ` : ""}${job} (evaluation ${f.evalId ?? "(none)"}` +
        `${f.deploymentId ? `, deployment ${f.deploymentId}` : ""}): ${f.placementFailure}.`,
    );
  } else {
    parts.push(
      `Deployment ${f.deploymentId ?? "(none)"} of ${job}${version} ${f.deploymentStatus ?? "failed"}: ` +
        `${f.statusDescription && f.statusDescription !== "" ? f.statusDescription : "no description"}.`,
    );
  }
  if (f.timedOutAfterMs !== undefined) {
    // Nothing failed: say what had not finished yet.
    parts.push(inProgressSentence(f));
  } else {
    const groups = failedGroups(f.groups);
    if (groups !== "") parts.push(`Failed groups: ${groups}.`);
  }
  parts.push(rollbackSentence(f.rollback));
  if (f.runningVersion !== undefined) parts.push(`Version now running: ${f.runningVersion}.`);
  parts.push("State records what the scheduler runs now, so the next preview shows the change again.");
  return parts.join(" ");
}

function rollbackSentence(r: Rollback): string {
  switch (r.kind) {
    case "auto":
      return (
        `The scheduler's auto_revert rolled the job back to version ${r.toVersion}` +
        `${r.newVersion !== undefined ? ` (now registered as version ${r.newVersion})` : ""}` +
        `${r.deploymentId ? `; rollback deployment ${r.deploymentId} is ${r.deploymentStatus ?? "unknown"}` : ""}.`
      );
    case "pulumi":
      return (
        `Pulumi reverted the job to version ${r.toVersion}${r.tag !== undefined ? `, tagged "${r.tag}"` : ""}` +
        `${r.newVersion !== undefined ? ` (now registered as version ${r.newVersion})` : ""}` +
        `${r.deploymentId ? `; revert deployment ${r.deploymentId} is ${r.deploymentStatus ?? "unknown"}` : ""}.`
      );
    case "refused":
      return `Pulumi did not revert to ${r.tag !== undefined ? `the version tagged "${r.tag}"` : `version ${r.toVersion ?? "?"}`}: ${r.reason}.`;
    case "none":
      switch (r.reason) {
        case "fail-mode":
          return 'The job was left on the failed version (onDeploymentFailure is "fail").';
        case "no-prior-version":
          return "There is no earlier version to revert to.";
        case "timeout":
          return "Nothing was rolled back.";
        case "server-declined":
          return `The scheduler did not roll back${r.detail ? ` (${r.detail})` : ""}.`;
      }
  }
  return "";
}

/**
 * Lists the groups of a deployment that did not become healthy, with their counts.
 */
function failedGroups(groups: Record<string, DeploymentGroupState> | null | undefined): string {
  const out: string[] = [];
  for (const [name, g] of Object.entries(groups ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const unhealthy = g.UnhealthyAllocs ?? 0;
    const healthy = g.HealthyAllocs ?? 0;
    const desired = g.DesiredTotal ?? 0;
    if (unhealthy > 0 || healthy < desired) {
      out.push(
        `"${name}" (${unhealthy} unhealthy, ${healthy} healthy of ${desired} desired, ${count(g.PlacedAllocs ?? 0, "placed allocation")})`,
      );
    }
  }
  return out.join(", ");
}

/** Says what was still in progress when a wait timed out: the groups not yet healthy, or the evaluation. */
function inProgressSentence(f: RolloutFailure): string {
  if (f.deploymentId === undefined) {
    return `No deployment had started yet${f.evaluationStatus ? ` (the evaluation was ${f.evaluationStatus})` : ""}.`;
  }
  const pending = inProgressGroups(f.groups);
  if (pending !== "") return `Still in progress: ${pending}.`;
  return "Every group had all its allocations healthy; the deployment had not been marked successful yet.";
}

/** Lists the groups of a running deployment that are not yet complete, with their progress. */
function inProgressGroups(groups: Record<string, DeploymentGroupState> | null | undefined): string {
  const out: string[] = [];
  for (const [name, g] of Object.entries(groups ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const healthy = g.HealthyAllocs ?? 0;
    const desired = g.DesiredTotal ?? 0;
    const canaries = g.DesiredCanaries ?? 0;
    const awaitingPromotion = canaries > 0 && g.Promoted !== true;
    if (healthy >= desired && !awaitingPromotion) continue;
    const facts = [`${healthy} of ${desired} healthy`, count(g.PlacedAllocs ?? 0, "placed allocation")];
    if ((g.UnhealthyAllocs ?? 0) > 0) facts.push(`${g.UnhealthyAllocs ?? 0} unhealthy`);
    if (awaitingPromotion) facts.push(`${g.PlacedCanaries?.length ?? 0} of ${canaries} canaries placed, not promoted`);
    out.push(`"${name}" (${facts.join(", ")})`);
  }
  return out.join(", ");
}

/** Returns the auto_revert target of a failed deployment's description, when the server rolled back. */
export function autoRevertTarget(description: string | null | undefined): number | undefined {
  const m = / - rolling back to job version (\d+)\s*$/.exec(description ?? "");
  return m ? Number(m[1]) : undefined;
}

/** Returns the message of an update refused by check-and-set. */
export function changedOutsideMessage(
  jobId: string,
  namespace: string,
  stateIndex: number | undefined,
  detail: string,
): string {
  return (
    `Job "${jobId}" in namespace "${namespace}" was changed outside Pulumi: its JobModifyIndex is no longer ` +
    `${stateIndex ?? "the one in state"} (${detail}). Run \`pulumi refresh\` to see the change, then \`pulumi up\` again.`
  );
}

/** Returns the message of a create that found a live job with the same ID. */
export function alreadyExistsMessage(jobId: string, namespace: string): string {
  return (
    `Job "${jobId}" already exists in namespace "${namespace}" and is not managed by this stack; it was left untouched. ` +
    "Set `adopt: true` to take it over, or choose another job ID."
  );
}

/** Returns the message of an update that would need a replacement (decided at preview; seen here only if state is stale). */
export function replaceNeededMessage(jobId: string, reasons: ReplaceReason[]): string {
  const what = reasons.map((r) => `${r.field} "${r.old}" -> "${r.new}"`).join(", ");
  return `Job "${jobId}" cannot be updated in place (${what}); run \`pulumi preview\` again so the job is replaced.`;
}

function formatMs(ms: number): string {
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** The note shown when an update goes on over a job that was only scaled outside Pulumi. */
export function scaledNote(jobId: string, how: Preserve, from: { stateIndex: number; serverIndex: number }): string {
  const what = how.counts && how.resources ? "counts and task resources" : how.counts ? "counts" : "task resources";
  return (
    `Job "${jobId}" was scaled outside Pulumi (JobModifyIndex ${from.stateIndex} -> ${from.serverIndex}); only its ${what} changed, ` +
    `which preserve${how.counts && how.resources ? "Counts/preserveResources keep" : how.counts ? "Counts keeps" : "Resources keeps"}: the update keeps them and registers on index ${from.serverIndex}.`
  );
}
