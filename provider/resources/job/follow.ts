/**
 * Following a registration to its end: the evaluation (and the chain of follow-up evaluations) to its
 * deployment, then the deployment to a final status, always with blocking queries (the server answers when
 * something changed), never with sleeps. Placement failures end the wait at once.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import type { Deployment, Evaluation } from "../../schemas/scheduler";
import { summarizeFailedPlacements } from "./text";
import { manualPromotionNote, unpromotedCanaryGroups, type CanaryPromoter } from "./promotion";

/** Where a job lives, for every request. */
export interface JobRef {
  jobId: string;
  namespace: string;
  region: string;
}

/** How a rollout ended. */
export type RolloutResult =
  | { ok: true; evalId: string; deployment?: Deployment; note?: string }
  | { ok: false; kind: "deployment"; evalId: string; deployment: Deployment; reason?: string }
  | { ok: false; kind: "placement"; evalId: string; evaluation: Evaluation; summary: string; deploymentId?: string }
  | { ok: false; kind: "evaluation"; evalId: string; evaluation: Evaluation }
  | {
      ok: false;
      kind: "timeout";
      evalId: string;
      deployment?: Deployment;
      evaluation?: Evaluation;
      timeoutMs: number;
      note?: string;
    };

const MAX_WAIT_MS = 300_000;
const DEPLOYMENT_DONE = new Set(["successful", "failed", "cancelled", "canceled"]);

/** A deadline shared by every blocking read of one wait. */
export class Deadline {
  readonly at: number;
  constructor(readonly ms: number) {
    this.at = Date.now() + ms;
  }
  /** Milliseconds left (0 when past). */
  remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  /** The wait of the next blocking read: what is left, capped by the server's limit, at least 1 ms. */
  waitMs(): number {
    return Math.max(1, Math.min(this.remaining(), MAX_WAIT_MS));
  }
}

/**
 * Follows evaluation `evalId` to its deployment and that deployment to a final status. `version` is the
 * job version the registration produced: it finds the deployment when an evaluation does not name it.
 */
export async function followRollout(
  client: SchedulerClient,
  ref: JobRef,
  evalId: string,
  version: number | undefined,
  deadline: Deadline,
  promoter?: CanaryPromoter,
): Promise<RolloutResult> {
  const opts = { namespace: ref.namespace, region: ref.region };
  let current = evalId;
  let index: number | undefined;
  let deploymentId: string | undefined;
  let seen: Evaluation | undefined;
  for (;;) {
    if (index !== undefined && deadline.remaining() === 0)
      return { ok: false, kind: "timeout", evalId, evaluation: seen, timeoutMs: deadline.ms };
    const res = await client.records.evaluations(
      ref.jobId,
      index === undefined ? opts : { ...opts, waitIndex: index, waitMs: deadline.waitMs() },
    );
    index = Math.max(res.meta.lastIndex ?? 1, 1);
    const ev = res.value.find((e) => e.ID === current);
    if (ev === undefined) continue;
    seen = ev;
    const failed = ev.FailedTGAllocs ?? {};
    if (Object.keys(failed).length > 0 || ev.Status === "blocked") {
      return {
        ok: false,
        kind: "placement",
        evalId: current,
        evaluation: ev,
        summary: placementSummary(ev),
        deploymentId: nonEmpty(ev.DeploymentID),
      };
    }
    if (ev.Status === "failed" || ev.Status === "canceled" || ev.Status === "cancelled") {
      return { ok: false, kind: "evaluation", evalId: current, evaluation: ev };
    }
    if (ev.Status !== "complete") continue;
    deploymentId = nonEmpty(ev.DeploymentID);
    if (deploymentId !== undefined) break;
    if (nonEmpty(ev.NextEval) !== undefined) {
      current = ev.NextEval as string;
      continue;
    }
    // Some servers do not name the deployment on the evaluation: look for one of this version.
    const latest = (await client.records.latestDeployment(ref.jobId, opts)).value;
    if (latest && version !== undefined && latest.JobVersion === version) {
      deploymentId = latest.ID ?? undefined;
      break;
    }
    return { ok: true, evalId };
  }
  return watchDeployment(client, ref, evalId, deploymentId ?? "", deadline, promoter);
}

/**
 * Watches one deployment until it is successful, failed or cancelled, or waits for manual promotion. With
 * a `promoter` (promotion "auto" or a soak), canaries waiting for promotion are promoted by it instead.
 */
export async function watchDeployment(
  client: SchedulerClient,
  ref: JobRef,
  evalId: string,
  deploymentId: string,
  deadline: Deadline,
  promoter?: CanaryPromoter,
): Promise<RolloutResult> {
  const opts = { namespace: ref.namespace, region: ref.region };
  let index: number | undefined;
  let last: Deployment | undefined;
  let capMs: number | undefined;
  for (;;) {
    if (index !== undefined && deadline.remaining() === 0) {
      const soak = promoter?.progress() ?? "";
      return {
        ok: false,
        kind: "timeout",
        evalId,
        deployment: last,
        timeoutMs: deadline.ms,
        ...(soak !== "" ? { note: soak } : {}),
      };
    }
    const waitMs = Math.max(1, Math.min(deadline.waitMs(), capMs ?? Infinity));
    capMs = undefined;
    const res = await client.records.deployments(
      ref.jobId,
      index === undefined ? opts : { ...opts, waitIndex: index, waitMs },
    );
    index = Math.max(res.meta.lastIndex ?? 1, 1);
    const d = res.value.find((x) => x.ID === deploymentId);
    if (d === undefined) continue;
    last = d;
    const status = d.Status ?? "";
    if (status === "successful") return { ok: true, evalId, deployment: d };
    if (DEPLOYMENT_DONE.has(status)) return { ok: false, kind: "deployment", evalId, deployment: d };
    if (status === "running" && promoter !== undefined && unpromotedCanaryGroups(d).length > 0) {
      const next = await promoter.step(d);
      if (next.kind === "done") return { ok: true, evalId, deployment: d, note: next.note };
      if (next.kind === "fail")
        return { ok: false, kind: "deployment", evalId, deployment: next.deployment ?? d, reason: next.reason };
      capMs = next.waitMs;
      continue;
    }
    if (status === "running" && /requires manual promotion/i.test(d.StatusDescription ?? "")) {
      // Promotion is a human decision (promotion "manual"); waiting for it would only end in the timeout.
      const groups = unpromotedCanaryGroups(d).map(([n]) => n);
      return { ok: true, evalId, deployment: d, note: manualPromotionNote(d, groups, 'promotion is "manual"') };
    }
  }
}

/**
 * Waits for the deployment of job version `version` or a later one (the one the server's auto_revert
 * started) to end; resolves to it, or to the last seen when the deadline passed first.
 */
export async function waitForVersionDeployment(
  client: SchedulerClient,
  ref: JobRef,
  version: number,
  skipId: string,
  deadline: Deadline,
): Promise<Deployment | undefined> {
  const opts = { namespace: ref.namespace, region: ref.region };
  let index: number | undefined;
  let last: Deployment | undefined;
  for (;;) {
    if (index !== undefined && deadline.remaining() === 0) return last;
    const res = await client.records.deployments(
      ref.jobId,
      index === undefined ? opts : { ...opts, waitIndex: index, waitMs: deadline.waitMs() },
    );
    index = Math.max(res.meta.lastIndex ?? 1, 1);
    const d = res.value
      .filter((x) => x.ID !== skipId && (x.JobVersion ?? -1) >= version)
      .sort((a, b) => (b.CreateIndex ?? 0) - (a.CreateIndex ?? 0))[0];
    if (d === undefined) continue;
    last = d;
    if (DEPLOYMENT_DONE.has(d.Status ?? "")) return d;
  }
}

function placementSummary(ev: Evaluation): string {
  const failed = summarizeFailedPlacements(ev.FailedTGAllocs);
  if (failed !== "") return failed;
  return `evaluation ${ev.ID ?? ""} is blocked${ev.StatusDescription ? `: ${ev.StatusDescription}` : ""}`;
}

function nonEmpty(s: string | null | undefined): string | undefined {
  return s === undefined || s === null || s === "" ? undefined : s;
}
