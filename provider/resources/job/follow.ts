/**
 * Following a registration to its end: the evaluation (and the chain of follow-up evaluations) to its
 * deployment, then the deployment to a final status, always with blocking queries (the server answers when
 * something changed), never with sleeps. Placement failures end the wait at once. Canaries are promoted by
 * the `promotion` policy on the way; a failed rollout is recovered from (a revert); a batch job is followed
 * to the end of its allocations.
 */
import type { SchedulerClient } from "../../clients/scheduler";
import type { ReadOptions, Result } from "../../clients/scheduler/base";
import { FEATURE_RELEASES } from "../../clients/scheduler/releases";
import { isApiError } from "../../errors";
import type { Allocation, Deployment, DeploymentGroupState, Evaluation, Job } from "../../schemas/scheduler";
import type { PromotionPolicy } from "./inputs";
import { placeOf, type JobAt, type JobRef } from "./state";
import { autoRevertTarget, count, summarizeFailedPlacements, type Rollback } from "./text";

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
/** Longest wait of one read during a soak: how often the soak's time left is shown. */
const SOAK_TICK_MS = 30_000;
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
async function* blockingReads<T>(
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
async function waitForVersionDeployment(
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
function changedLines(progress: Follow["progress"]): (line: string) => Promise<void> {
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

/** One line of a batch run's progress: its allocations per group by client status. */
function batchProgress(version: number, allocs: readonly Allocation[]): string {
  const byGroup = new Map<string, { running: number; complete: number; failed: number; pending: number }>();
  for (const a of allocs) {
    const name = a.TaskGroup ?? "";
    const c = byGroup.get(name) ?? { running: 0, complete: 0, failed: 0, pending: 0 };
    const st = a.ClientStatus ?? "pending";
    if (st === "running") c.running += 1;
    else if (st === "complete") c.complete += 1;
    else if (st === "failed" || st === "lost") c.failed += 1;
    else c.pending += 1;
    byGroup.set(name, c);
  }
  const groups = [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([name, c]) =>
        `"${name}" ${c.pending > 0 ? `${c.pending} pending, ` : ""}${c.running} running, ${c.complete} complete, ${c.failed} failed`,
    );
  return `version ${version} allocations: ${groups.join("; ")}`;
}

function placementSummary(ev: Evaluation): string {
  const failed = summarizeFailedPlacements(ev.FailedTGAllocs);
  if (failed !== "") return failed;
  return `evaluation ${ev.ID ?? ""} is blocked${ev.StatusDescription ? `: ${ev.StatusDescription}` : ""}`;
}

function nonEmpty(s: string | null | undefined): string | undefined {
  return s === undefined || s === null || s === "" ? undefined : s;
}

/*
 * Canary promotion (input `promotion`): what to do with a running deployment whose canaries wait for
 * promotion. "manual" leaves that to a person (the `up` ends and says so); "auto" promotes once every
 * canary is healthy; `{ soak, groups? }` promotes once the canaries (of the named groups) have stayed
 * healthy and running for the soak. A canary that fails during the soak fails the deployment, so the
 * update fails and goes through `onDeploymentFailure` like any failed deployment.
 */

/** What the watch of a deployment does next. */
export type CanaryStep =
  /** Read the deployment again (after at most `waitMs`, when given). */
  | { kind: "wait"; waitMs?: number }
  /** Stop watching: the rest is a person's decision. */
  | { kind: "done"; note: string }
  /** A canary failed: the deployment was marked failed (the deployment as read after that). */
  | { kind: "fail"; reason: string; deployment?: Deployment };

/** Whether all the canaries a group wants are placed and healthy, and none of its allocations is unhealthy. */
function canariesHealthy(g: DeploymentGroupState): boolean {
  const want = g.DesiredCanaries ?? 0;
  return (g.UnhealthyAllocs ?? 0) === 0 && (g.HealthyAllocs ?? 0) >= want && (g.PlacedCanaries?.length ?? 0) >= want;
}

/** The groups of a deployment whose canaries are not promoted yet. */
function unpromotedCanaryGroups(d: Deployment): [string, DeploymentGroupState][] {
  return Object.entries(d.TaskGroups ?? {})
    .filter(([, g]) => (g.DesiredCanaries ?? 0) > 0 && g.Promoted !== true)
    .sort(([a], [b]) => a.localeCompare(b));
}

/** The note of an `up` that ends with canaries waiting for manual promotion. */
function manualPromotionNote(d: Deployment, groups: readonly string[], why: string): string {
  const id = d.ID ?? "";
  return (
    `version ${d.JobVersion ?? "?"} is deployed as canaries only: deployment ${id} is running and waits for manual promotion of ` +
    `${groups.map((g) => `"${g}"`).join(", ")} (${why}). \`pulumi up\` does not wait for that: promote with ` +
    `\`nomad deployment promote ${id}\` (or PUT /v1/deployment/promote/${id}), or fail it with \`nomad deployment fail ${id}\``
  );
}

/** Promotes the canaries of one deployment by the policy; one per watched rollout. */
export class CanaryPromoter {
  private healthySince: number | undefined;
  private readonly promoted: string[] = [];

  private readonly client: SchedulerClient;
  private readonly ref: JobRef;

  constructor(
    at: JobAt,
    private readonly policy: Extract<PromotionPolicy, { mode: "auto" }>,
    private readonly now: () => number = Date.now,
  ) {
    this.client = at.client;
    this.ref = at.ref;
  }

  /** Milliseconds left of a running soak (undefined when no soak is running). */
  soakLeftMs(): number | undefined {
    if (this.policy.soakMs === 0 || this.healthySince === undefined) return undefined;
    return Math.max(0, this.healthySince + this.policy.soakMs - this.now());
  }

  /** What the soak had reached, for a timeout message ("" when no soak was running). */
  progress(): string {
    if (this.policy.soakMs === 0 || this.healthySince === undefined) return "";
    const seconds = Math.floor((this.now() - this.healthySince) / 1000);
    return `the canaries had been healthy for ${seconds}s of the ${Math.round(this.policy.soakMs / 1000)}s soak`;
  }

  /** Decides on a read of a running deployment that has canaries waiting for promotion. */
  async step(d: Deployment): Promise<CanaryStep> {
    const waiting = unpromotedCanaryGroups(d);
    const wanted = this.policy.groups;
    const targets = waiting.filter(([name]) => wanted === undefined || wanted.includes(name));
    if (targets.length === 0) {
      // The groups left to a person: the `up` ends once their canaries are healthy, as with "manual".
      if (waiting.length === 0 || !waiting.every(([, g]) => canariesHealthy(g))) return { kind: "wait" };
      const done = this.promoted.length > 0 ? `promoted ${this.promoted.map((g) => `"${g}"`).join(", ")}; ` : "";
      return {
        kind: "done",
        note: `${done}${manualPromotionNote(
          d,
          waiting.map(([n]) => n),
          "not named in promotion.groups",
        )}`,
      };
    }
    if (!targets.every(([, g]) => canariesHealthy(g))) {
      // Not healthy yet, or unhealthy: the server fails the deployment by its own deadlines.
      this.healthySince = undefined;
      return { kind: "wait" };
    }
    if (this.policy.soakMs > 0) {
      this.healthySince ??= this.now();
      const left = this.healthySince + this.policy.soakMs - this.now();
      // Read again by the soak's end at the latest, and every SOAK_TICK_MS so its progress line moves on.
      if (left > 0) return { kind: "wait", waitMs: Math.min(left, SOAK_TICK_MS) };
      const broken = await this.failedCanaries(
        d,
        targets.map(([n]) => n),
      );
      if (broken !== "") {
        const reason = `canaries failed during the ${Math.round(this.policy.soakMs / 1000)}s soak: ${broken}`;
        return { kind: "fail", reason, deployment: await this.markFailed(d) };
      }
    }
    const names = targets.map(([n]) => n);
    const all = wanted === undefined;
    await this.client.deployments.promote(d.ID ?? "", all ? { All: true } : { Groups: names }, placeOf(this.ref));
    this.promoted.push(...names);
    return { kind: "wait" };
  }

  /** Lists the canaries of the groups that are no longer running ("" when all run). */
  private async failedCanaries(d: Deployment, groups: readonly string[]): Promise<string> {
    const { value } = await this.client.records.allocations(this.ref.jobId, placeOf(this.ref));
    const bad = value.filter(
      (a) =>
        a.DeploymentID === d.ID &&
        groups.includes(a.TaskGroup ?? "") &&
        (a.DeploymentStatus?.Healthy === false || ["failed", "lost"].includes(a.ClientStatus ?? "")),
    );
    return bad
      .map(
        (a) => `group "${a.TaskGroup ?? ""}" allocation ${(a.ID ?? "").slice(0, 8)} is ${a.ClientStatus ?? "unknown"}`,
      )
      .sort()
      .join(", ");
  }

  /** Marks the deployment failed (the server's auto_revert then applies) and reads it back. */
  private async markFailed(d: Deployment): Promise<Deployment | undefined> {
    const opts = placeOf(this.ref);
    await this.client.deployments.fail(d.ID ?? "", opts);
    const { value } = await this.client.records.deployments(this.ref.jobId, opts);
    return value.find((x) => x.ID === d.ID);
  }
}

/*
 * What to do once a rollout failed: notice that the server's auto_revert already rolled back (and wait for
 * that rollback), or revert to the version that ran before, guarded so a concurrent writer is never
 * overwritten.
 */

/** What recovery needs besides the failure. */
export interface RecoverContext {
  /** The version the failed registration produced. */
  failedVersion?: number;
  /** The version that ran before the registration; undefined for a new job. */
  priorVersion?: number;
  /** `onDeploymentFailure`: revert to the prior version, leave the failed one, or revert to a tagged version. */
  mode: "revert" | "fail" | { revertTo: string };
  /** Budget of each wait for a rollback's own rollout. */
  timeoutMs: number;
}

/** Handles a failed rollout; resolves to what was rolled back (never throws for a refused revert). */
export async function recoverFromFailure(
  client: SchedulerClient,
  ref: JobRef,
  failure: Exclude<RolloutResult, { ok: true }>,
  ctx: RecoverContext,
): Promise<Rollback> {
  if (failure.kind === "timeout") return { kind: "none", reason: "timeout" };
  const deployedVersion = failure.kind === "deployment" ? failure.deployment.JobVersion : undefined;
  const failedVersion = typeof deployedVersion === "number" ? deployedVersion : ctx.failedVersion;
  let declined: string | undefined;
  if (failure.kind === "deployment") {
    const description = failure.deployment.StatusDescription ?? "";
    const target = autoRevertTarget(description);
    if (target !== undefined) {
      // The server re-registers the stable version as a new version and deploys it: wait for that.
      const after = (failedVersion ?? -1) + 1;
      const d = await waitForVersionDeployment(
        { client, ref },
        after,
        failure.deployment.ID ?? "",
        new Deadline(ctx.timeoutMs),
      );
      const job = await client.jobs.find(ref.jobId, placeOf(ref));
      return {
        kind: "auto",
        toVersion: target,
        newVersion: job?.value.Version ?? undefined,
        deploymentId: d?.ID ?? undefined,
        deploymentStatus: d?.Status ?? undefined,
      };
    }
    const m = / - ((?:not rolling back|no stable job version)[\s\S]*)$/.exec(description);
    if (m) declined = m[1];
  }
  if (ctx.mode === "fail") return { kind: "none", reason: "fail-mode" };
  if (typeof ctx.mode === "object")
    return revertToTag({ client, ref }, ctx.mode.revertTo, failedVersion, ctx.timeoutMs);
  if (ctx.priorVersion === undefined || failedVersion === undefined) {
    return declined !== undefined
      ? { kind: "none", reason: "server-declined", detail: declined }
      : { kind: "none", reason: "no-prior-version" };
  }
  let evalId: string;
  try {
    // EnforcePriorVersion: revert only while the failed version is still current, so a concurrent
    // writer's newer version is never replaced.
    const res = await client.versions.revert(
      ref.jobId,
      { JobVersion: ctx.priorVersion, EnforcePriorVersion: failedVersion },
      placeOf(ref),
    );
    evalId = res.value.EvalID ?? "";
  } catch (e) {
    if (!isApiError(e)) throw e;
    const reason = e.serverErrors.length > 0 ? e.serverErrors.join("; ") : e.message;
    return { kind: "refused", toVersion: ctx.priorVersion, reason };
  }
  return {
    kind: "pulumi",
    toVersion: ctx.priorVersion,
    ...(await followRevert({ client, ref }, evalId, ctx.timeoutMs)),
  };
}

/** Follows the rollout of a revert's evaluation; resolves to the version it registered and its deployment. */
async function followRevert(
  at: JobAt,
  evalId: string,
  timeoutMs: number,
): Promise<{ newVersion?: number; deploymentId?: string; deploymentStatus?: string }> {
  let deploymentId: string | undefined;
  let deploymentStatus: string | undefined;
  if (evalId !== "") {
    const r = await followRollout(at, evalId, { deadline: new Deadline(timeoutMs) });
    const d = r.ok || r.kind === "deployment" || r.kind === "timeout" ? r.deployment : undefined;
    deploymentId = d?.ID ?? undefined;
    deploymentStatus =
      d?.Status ??
      (r.ok ? undefined : r.kind === "placement" ? "not placed" : r.kind === "timeout" ? "still running" : undefined);
  }
  const { client, ref } = at;
  const job = await client.jobs.find(ref.jobId, placeOf(ref));
  return { newVersion: job?.value.Version ?? undefined, deploymentId, deploymentStatus };
}

/**
 * Reverts to the version carrying version tag `tag` (`onDeploymentFailure: { revertTo }`). The tag is
 * resolved from the versions list, as the scheduler's own CLI does (its revert endpoint takes a version
 * number), and the revert keeps check-and-set: it applies only while the failed version is still current.
 */
async function revertToTag(
  at: JobAt,
  tag: string,
  failedVersion: number | undefined,
  timeoutMs: number,
): Promise<Rollback> {
  const { client, ref } = at;
  let evalId: string;
  let toVersion: number;
  try {
    const res = await client.versions.revertToTag(
      ref.jobId,
      tag,
      failedVersion !== undefined ? { enforcePriorVersion: failedVersion } : {},
      placeOf(ref),
    );
    evalId = res.value.EvalID ?? "";
    toVersion = res.revertedTo;
  } catch (e) {
    if (!isApiError(e)) throw e;
    const found = e.code !== "not_found";
    const reason = found
      ? e.serverErrors.length > 0
        ? e.serverErrors.join("; ")
        : e.message
      : `no version of job "${ref.jobId}" carries the tag "${tag}" (version tags need scheduler release ${FEATURE_RELEASES.versionTags} or newer; ` +
        "an older scheduler has none, and fails with `unsupported` when a tag is set)";
    return { kind: "refused", toVersion: undefined, tag, reason };
  }
  return { kind: "pulumi", toVersion, tag, ...(await followRevert(at, evalId, timeoutMs)) };
}

/*
 * Batch jobs: `waitForCompletion` follows a batch/sysbatch registration until its allocations
 * finished and fails naming the failed ones; `runOnce` keeps a finished job the scheduler garbage-collected
 * in the stack as done (no re-run); `triggers` runs the job again when the map changes (its hash goes into
 * the job's meta, so the scheduler sees a new version and places the work again: it never re-runs a
 * finished batch version whose spec did not change). The wait is here; `runOnce` is `keptAsCollected` in
 * state.ts, `triggers` is `withTriggers` in spec.ts.
 */

/** How waiting for a batch job ended. */
export type CompletionResult = { ok: true; note: string } | { ok: false; message: string };

const TERMINAL = new Set(["complete", "failed", "lost"]);

function terminal(a: Allocation): boolean {
  return TERMINAL.has(a.ClientStatus ?? "") || (a.DesiredStatus ?? "run") !== "run";
}

/** A failed allocation whose replacement the scheduler still has to place (reschedule policy). */
function awaitingReschedule(a: Allocation): boolean {
  const followup = (a as Record<string, unknown>).FollowupEvalID;
  return (
    a.ClientStatus === "failed" && (a.NextAllocation ?? "") === "" && typeof followup === "string" && followup !== ""
  );
}

/**
 * Follows the registration's evaluation (placement failures end the wait at once), then the job's
 * allocations of the registered version with blocking reads until all finished; fails naming each failed
 * allocation that was not replaced: its ID prefix, group, failed tasks and their last events' messages.
 */
export async function waitForCompletion(
  at: JobAt,
  evalId: string,
  deadline: Deadline,
  progress?: Follow["progress"],
): Promise<CompletionResult> {
  const { client, ref } = at;
  const report = changedLines(progress);
  const opts = placeOf(ref);
  const where = `Job "${ref.jobId}" in namespace "${ref.namespace}"`;
  const job: Job | undefined = (await client.jobs.find(ref.jobId, opts))?.value;
  if (job === undefined) return { ok: false, message: `${where} no longer exists while waiting for it to complete.` };
  const version = job.Version ?? 0;
  const followed = await followRollout(at, evalId, { deadline, version });
  if (!followed.ok) {
    if (followed.kind === "placement")
      return { ok: false, message: `${where} version ${version} could not be placed: ${followed.summary}.` };
    if (followed.kind === "evaluation")
      return {
        ok: false,
        message: `${where} version ${version}: evaluation ${followed.evalId} ended ${followed.evaluation.Status ?? ""}${followed.evaluation.StatusDescription ? `: ${followed.evaluation.StatusDescription}` : ""}.`,
      };
    if (followed.kind === "timeout")
      return {
        ok: false,
        message: `${where} version ${version} did not finish within ${Math.round(deadline.ms / 1000)}s (its evaluation is still ${followed.evaluation?.Status ?? "pending"}).`,
      };
    return {
      ok: false,
      message: `${where} version ${version}: deployment ${followed.deployment.ID ?? ""} ${followed.deployment.Status ?? ""}.`,
    };
  }
  let mine: Allocation[] = [];
  for await (const allocs of blockingReads((o) => client.records.allocations(ref.jobId, o), ref, deadline)) {
    mine = allocs.filter((a) => (a.JobVersion ?? -1) === version);
    if (mine.length > 0) await report(batchProgress(version, mine));
    if (mine.some((a) => !terminal(a) || awaitingReschedule(a))) continue;
    const failed = mine.filter(
      (a) => (a.ClientStatus === "failed" || a.ClientStatus === "lost") && (a.NextAllocation ?? "") === "",
    );
    if (failed.length > 0) {
      return {
        ok: false,
        message: `${where} version ${version}: ${count(failed.length, "allocation")} of ${mine.length} failed: ${failed.map(describeFailure).join("; ")}.`,
      };
    }
    return { ok: true, note: `version ${version} completed (${count(mine.length, "allocation")})` };
  }
  const running = mine.filter((a) => !terminal(a)).length;
  return {
    ok: false,
    message: `${where} version ${version} did not finish within ${Math.round(deadline.ms / 1000)}s: ${count(running, "allocation")} still running.`,
  };
}

/** "allocation 1a2b3c4d (group "work", task "run": Exit Code: 1, Exceeded allowed attempts ...)". */
function describeFailure(a: Allocation): string {
  const tasks: string[] = [];
  for (const [name, st] of Object.entries(a.TaskStates ?? {}).sort(([x], [y]) => x.localeCompare(y))) {
    if (st.Failed !== true) continue;
    const events = st.Events ?? [];
    const texts: string[] = [];
    const add = (t: string | null | undefined): void => {
      const s = (t ?? "").trim();
      if (s !== "" && !texts.includes(s)) texts.push(s);
    };
    const lastOf = (pred: (e: (typeof events)[number]) => boolean) => [...events].reverse().find(pred);
    const ended = lastOf(
      (e) =>
        e.Type === "Terminated" ||
        e.Type === "Driver Failure" ||
        e.Type === "Setup Failure" ||
        e.Type === "Failed Validation",
    );
    if (ended)
      add(ended.DisplayMessage || ended.DriverError || ended.SetupError || ended.ValidationError || ended.Message);
    const fatal = lastOf((e) => e.FailsTask === true);
    if (fatal) add(fatal.DisplayMessage || fatal.Message || fatal.Type);
    if (texts.length === 0) add(events[events.length - 1]?.DisplayMessage);
    tasks.push(`task "${name}"${texts.length > 0 ? `: ${texts.join(", ")}` : ""}`);
  }
  const what =
    tasks.length > 0
      ? tasks.join("; ")
      : `${a.ClientStatus ?? "failed"}${a.ClientDescription ? `: ${a.ClientDescription}` : ""}`;
  return `allocation ${(a.ID ?? "").slice(0, 8)} (group "${a.TaskGroup ?? ""}", ${what})`;
}
