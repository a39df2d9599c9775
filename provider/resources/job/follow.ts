/**
 * Following a registration to its end: the evaluation (and the chain of follow-up evaluations) to its
 * deployment, then the deployment to a final status, always with blocking queries (the server answers when
 * something changed), never with sleeps. Placement failures end the wait at once. Canaries are promoted on
 * the way by the `promotion` policy (./canaries.ts); a failed rollout is recovered from in ./recovery.ts, and
 * a batch job is followed to the end of its allocations in ./completion.ts.
 */
import type { ReadOptions, Result } from "../../clients/scheduler/base";
import type { Deployment, Evaluation } from "../../schemas/scheduler";
import { CanaryPromoter, canariesHealthy, manualPromotionNote, unpromotedCanaryGroups } from "./canaries";
import { placeOf, type JobAt, type JobRef } from "./state";
import { summarizeFailedPlacements } from "./text";

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

/** How a rollout is followed. */
export interface Follow {
  /** Shared by every blocking read of the wait. */
  deadline: Deadline;
  /** The job version the registration produced: it finds the deployment when an evaluation does not name it. */
  version?: number;
  /** Promotes canaries waiting for promotion (promotion "auto" or a soak); without it they are left to a person. */
  promoter?: CanaryPromoter;
  /** Called with one line of progress whenever what is waited on changes (never called with the same line twice). */
  progress?: (line: string) => void | Promise<void>;
}

/**
 * Blocking reads of one of the job's lists until `deadline`: the first read answers at once, each next one
 * waits on the index the last returned (never on 0, where the server would answer at once), for what is
 * left of the deadline, capped by `cap()` when it gives a shorter wait. Yields every answer, changed or
 * not, so the caller can act on time (a soak) as well as on change; ends once the deadline has passed
 * after the first read.
 */
export async function* blockingReads<T>(
  read: (opts: ReadOptions) => Promise<Result<T>>,
  ref: JobRef,
  deadline: Deadline,
  cap: () => number | undefined = () => undefined,
): AsyncGenerator<T, void, undefined> {
  const opts = placeOf(ref);
  let index: number | undefined;
  for (;;) {
    if (index !== undefined && deadline.remaining() === 0) return;
    const waitMs = Math.max(1, Math.min(deadline.waitMs(), cap() ?? Infinity));
    const res = await read(index === undefined ? opts : { ...opts, waitIndex: index, waitMs });
    index = Math.max(res.meta.lastIndex ?? 1, 1);
    yield res.value;
  }
}

/** Follows evaluation `evalId` to its deployment and that deployment to a final status. */
export async function followRollout(
  { client, ref }: JobAt,
  evalId: string,
  { deadline, version, promoter, progress }: Follow,
): Promise<RolloutResult> {
  const watchFrom = (deploymentId: string) =>
    watchDeployment({ client, ref }, evalId, deploymentId, { deadline, promoter, progress });
  let current = evalId;
  let seen: Evaluation | undefined;
  for await (const evals of blockingReads((o) => client.records.evaluations(ref.jobId, o), ref, deadline)) {
    const ev = evals.find((e) => e.ID === current);
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
    const deploymentId = nonEmpty(ev.DeploymentID);
    if (deploymentId !== undefined) return watchFrom(deploymentId);
    if (nonEmpty(ev.NextEval) !== undefined) {
      current = ev.NextEval as string;
      continue;
    }
    // Some servers do not name the deployment on the evaluation: look for one of this version.
    const latest = (await client.records.latestDeployment(ref.jobId, placeOf(ref))).value;
    if (latest && version !== undefined && latest.JobVersion === version) return watchFrom(latest.ID ?? "");
    return { ok: true, evalId };
  }
  return { ok: false, kind: "timeout", evalId, evaluation: seen, timeoutMs: deadline.ms };
}

/**
 * Watches one deployment until it is successful, failed or cancelled, or until every canary waiting for a
 * person's promotion is placed and healthy. With a `promoter` (promotion "auto" or a soak), canaries
 * waiting for promotion are promoted by it instead. Every decision is made from the deployment's status and
 * its groups' counts, never from its description (the real scheduler says "requires manual promotion" from
 * the moment it creates a canary deployment, before any canary runs).
 */
async function watchDeployment(
  { client, ref }: JobAt,
  evalId: string,
  deploymentId: string,
  { deadline, promoter, progress }: Follow,
): Promise<RolloutResult> {
  const report = changedLines(progress);
  let last: Deployment | undefined;
  // A soak's next check: one read waits no longer than that, changed or not.
  let capMs: number | undefined;
  const takeCap = () => {
    const c = capMs;
    capMs = undefined;
    return c;
  };
  for await (const list of blockingReads((o) => client.records.deployments(ref.jobId, o), ref, deadline, takeCap)) {
    const d = list.find((x) => x.ID === deploymentId);
    if (d === undefined) continue;
    last = d;
    const status = d.Status ?? "";
    const waiting = status === "running" ? unpromotedCanaryGroups(d) : [];
    const promoting = waiting.length > 0 && promoter !== undefined;
    // A promoter reports after its step, so a soak that just began shows the time it has left.
    if (!promoting) await report(deploymentProgress(d));
    if (status === "successful") return { ok: true, evalId, deployment: d };
    if (DEPLOYMENT_DONE.has(status)) return { ok: false, kind: "deployment", evalId, deployment: d };
    if (promoting) {
      const next = await promoter.step(d);
      if (next.kind !== "fail") await report(deploymentProgress(d, promoter.soakLeftMs()));
      if (next.kind === "done") return { ok: true, evalId, deployment: d, note: next.note };
      if (next.kind === "fail")
        return { ok: false, kind: "deployment", evalId, deployment: next.deployment ?? d, reason: next.reason };
      capMs = next.waitMs;
      continue;
    }
    if (waiting.length > 0 && waiting.every(([, g]) => canariesHealthy(g))) {
      // Promotion is a human decision (promotion "manual"); waiting for it would only end in the timeout.
      // Until the canaries are healthy the wait goes on: one that fails fails the deployment (server side).
      const groups = waiting.map(([n]) => n);
      return { ok: true, evalId, deployment: d, note: manualPromotionNote(d, groups, 'promotion is "manual"') };
    }
  }
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

/**
 * Waits for the deployment of job version `version` or a later one (the one the server's auto_revert
 * started) to end; resolves to it, or to the last seen when the deadline passed first.
 */
export async function waitForVersionDeployment(
  { client, ref }: JobAt,
  version: number,
  skipId: string,
  deadline: Deadline,
): Promise<Deployment | undefined> {
  let last: Deployment | undefined;
  for await (const list of blockingReads((o) => client.records.deployments(ref.jobId, o), ref, deadline)) {
    const d = list
      .filter((x) => x.ID !== skipId && (x.JobVersion ?? -1) >= version)
      .sort((a, b) => (b.CreateIndex ?? 0) - (a.CreateIndex ?? 0))[0];
    if (d === undefined) continue;
    last = d;
    if (DEPLOYMENT_DONE.has(d.Status ?? "")) return d;
  }
  return last;
}

/**
 * Wraps a progress callback so that it sees a line only when it differs from the last one (a blocking
 * read that answers with nothing new prints nothing).
 */
export function changedLines(progress: Follow["progress"]): (line: string) => Promise<void> {
  let last = "";
  return async (line) => {
    if (progress === undefined || line === last) return;
    last = line;
    await progress(line);
  };
}

/**
 * One line of a deployment's progress, as the scheduler's own `deployment status` shows it per group:
 * `deployment 1a2b3c4d running: "web" 1/2 placed, 1 healthy, 0 unhealthy, canaries 1/1; soak 42s left`.
 */
function deploymentProgress(d: Deployment, soakLeftMs?: number): string {
  const groups = Object.entries(d.TaskGroups ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, g]) => {
      const parts = [
        `${g.PlacedAllocs ?? 0}/${g.DesiredTotal ?? 0} placed`,
        `${g.HealthyAllocs ?? 0} healthy`,
        `${g.UnhealthyAllocs ?? 0} unhealthy`,
      ];
      const want = g.DesiredCanaries ?? 0;
      if (want > 0)
        parts.push(`canaries ${g.PlacedCanaries?.length ?? 0}/${want}${g.Promoted === true ? " promoted" : ""}`);
      return `"${name}" ${parts.join(", ")}`;
    });
  const soak = soakLeftMs !== undefined ? `; soak ${Math.ceil(soakLeftMs / 1000)}s left` : "";
  return `deployment ${(d.ID ?? "").slice(0, 8)} ${d.Status ?? "unknown"}: ${groups.join("; ")}${soak}`;
}

function placementSummary(ev: Evaluation): string {
  const failed = summarizeFailedPlacements(ev.FailedTGAllocs);
  if (failed !== "") return failed;
  return `evaluation ${ev.ID ?? ""} is blocked${ev.StatusDescription ? `: ${ev.StatusDescription}` : ""}`;
}

function nonEmpty(s: string | null | undefined): string | undefined {
  return s === undefined || s === null || s === "" ? undefined : s;
}
