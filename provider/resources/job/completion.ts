/**
 * Batch jobs: `waitForCompletion` follows a batch/sysbatch registration until its allocations
 * finished and fails naming the failed ones; `runOnce` keeps a finished job the scheduler garbage-collected
 * in the stack as done (no re-run); `triggers` runs the job again when the map changes (its hash goes into
 * the job's meta, so the scheduler sees a new version and places the work again: it never re-runs a
 * finished batch version whose spec did not change). The wait is here; `runOnce` is `keptAsCollected` in
 * state.ts, `triggers` is `withTriggers` in hashes.ts.
 */
import type { Allocation, Job } from "../../schemas/scheduler";
import { blockingReads, changedLines, followRollout, type Deadline, type Follow } from "./follow";
import { placeOf, type JobAt } from "./state";
import { count } from "./text";

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
