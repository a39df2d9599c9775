/**
 * Rollout scenarios driven through the scheduler's job API, the same way against a real agent (to record
 * what it answers) and against the devserver (to check it answers the same). Each scenario returns a
 * transcript: the server's answers at fixed milestones (a deployment when first seen, once its canaries are
 * healthy, once it ended; an evaluation once it is done; allocations once they finished), reduced to
 * statuses, descriptions and counts. IDs, times and indexes are left out, so two servers' transcripts
 * compare as they are.
 *
 * The jobs run `/bin/sh` with the raw_exec driver on a real agent; the devserver runs nothing and takes its
 * `devserver.fail_*` meta keys instead (a real agent ignores those).
 */
import type { SchedulerClient } from "../../provider/clients/scheduler";
import type { Allocation, Deployment, Evaluation, Job } from "../../provider/schemas/scheduler";

/** One scenario's record. */
export interface Transcript {
  scenario: string;
  steps: { step: string; [k: string]: unknown }[];
}

/** What a scenario needs. */
export interface ScenarioContext {
  client: SchedulerClient;
  /** Job IDs unique to the run (a real agent is shared between runs). */
  name(label: string): string;
  /** How long one milestone may take before the scenario fails. */
  timeoutMs: number;
}

type Obj = Record<string, unknown>;

const UPDATE = {
  MaxParallel: 1,
  Canary: 1,
  MinHealthyTime: 1e9,
  HealthyDeadline: 20e9,
  ProgressDeadline: 30e9,
  AutoRevert: false,
  AutoPromote: false,
  HealthCheck: "task_states",
  Stagger: 1e9,
};

/** A service job of one group running `script`; `fail` makes the devserver fail its deployment. */
function serviceJob(id: string, script: string, opts: { update?: Obj; count?: number; fail?: boolean } = {}): Obj {
  return {
    ID: id,
    Name: id,
    Type: "service",
    Datacenters: ["dc1"],
    ...(opts.fail ? { Meta: { "devserver.fail_deployment": "true" } } : {}),
    TaskGroups: [
      {
        Name: "web",
        Count: opts.count ?? 1,
        Update: { ...UPDATE, ...opts.update },
        RestartPolicy: { Attempts: 0, Interval: 60e9, Delay: 1e9, Mode: "fail" },
        ReschedulePolicy: { Attempts: 0, Interval: 0, Unlimited: false },
        Tasks: [
          {
            Name: "app",
            Driver: "raw_exec",
            Config: { command: "/bin/sh", args: ["-c", script] },
            Resources: { CPU: 50, MemoryMB: 32 },
          },
        ],
      },
    ],
  };
}

/** A batch job of one group running `script`; `fail` makes the devserver's task exit 1. */
function batchJob(id: string, script: string, fail: boolean): Obj {
  return {
    ID: id,
    Name: id,
    Type: "batch",
    Datacenters: ["dc1"],
    ...(fail ? { Meta: { "devserver.fail_batch": "true" } } : {}),
    TaskGroups: [
      {
        Name: "work",
        Count: 1,
        RestartPolicy: { Attempts: 0, Interval: 60e9, Delay: 1e9, Mode: "fail" },
        ReschedulePolicy: { Attempts: 0, Interval: 0, Unlimited: false },
        Tasks: [
          {
            Name: "run",
            Driver: "raw_exec",
            Config: { command: "/bin/sh", args: ["-c", script] },
            Resources: { CPU: 50, MemoryMB: 32 },
          },
        ],
      },
    ],
  };
}

/** A deployment reduced to what the transcripts compare. */
export function deploymentFacts(d: Deployment): Obj {
  const groups: Obj = {};
  for (const [name, g] of Object.entries(d.TaskGroups ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    groups[name] = {
      AutoRevert: g.AutoRevert ?? false,
      AutoPromote: g.AutoPromote ?? false,
      Promoted: g.Promoted ?? false,
      DesiredCanaries: g.DesiredCanaries ?? 0,
      DesiredTotal: g.DesiredTotal ?? 0,
      PlacedCanaries: g.PlacedCanaries?.length ?? 0,
      PlacedAllocs: g.PlacedAllocs ?? 0,
      HealthyAllocs: g.HealthyAllocs ?? 0,
      UnhealthyAllocs: g.UnhealthyAllocs ?? 0,
    };
  }
  return {
    JobVersion: d.JobVersion,
    Status: d.Status,
    StatusDescription: d.StatusDescription,
    RequiresPromotion: Object.values(d.TaskGroups ?? {}).some((g) => (g.DesiredCanaries ?? 0) > 0 && !g.Promoted),
    TaskGroups: groups,
  };
}

function allocFacts(allocs: Allocation[]): Obj[] {
  return allocs
    .map((a) => ({
      JobVersion: a.JobVersion,
      TaskGroup: a.TaskGroup,
      DesiredStatus: a.DesiredStatus,
      ClientStatus: a.ClientStatus,
      Canary: a.DeploymentStatus?.Canary ?? false,
      Healthy: a.DeploymentStatus?.Healthy ?? null,
    }))
    .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
}

function evalFacts(e: Evaluation): Obj {
  const failed: Obj = {};
  for (const [g, m] of Object.entries(e.FailedTGAllocs ?? {})) {
    failed[g] = {
      NodesEvaluated: m.NodesEvaluated,
      NodesFiltered: m.NodesFiltered,
      NodesExhausted: m.NodesExhausted,
      ConstraintFiltered: m.ConstraintFiltered ?? null,
      ClassFiltered: m.ClassFiltered ?? null,
      DimensionExhausted: m.DimensionExhausted ?? null,
      CoalescedFailures: m.CoalescedFailures,
    };
  }
  return {
    Status: e.Status,
    TriggeredBy: e.TriggeredBy,
    StatusDescription: e.StatusDescription ?? "",
    FailedTGAllocs: failed,
    QueuedAllocations: e.QueuedAllocations ?? null,
    Blocked: (e.BlockedEval ?? "") !== "",
  };
}

function jobFacts(j: Job): Obj {
  return {
    Version: j.Version,
    Status: j.Status,
    Stable: j.Stable,
    Counts: Object.fromEntries((j.TaskGroups ?? []).map((g) => [g.Name, g.Count])),
  };
}

/** Reads `read` every 100 ms until `done` accepts its value; fails after the context's timeout. */
async function until<T>(ctx: ScenarioContext, what: string, read: () => Promise<T>, done: (v: T) => boolean) {
  const end = Date.now() + ctx.timeoutMs;
  for (;;) {
    const v = await read();
    if (done(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const ENDED = new Set(["successful", "failed", "cancelled"]);

/** The deployment of job version `version`, once there is one. */
async function deploymentOf(ctx: ScenarioContext, id: string, version: number, ok: (d: Deployment) => boolean) {
  const list = await until(
    ctx,
    `deployment of ${id} version ${version}`,
    async () => (await ctx.client.records.deployments(id)).value,
    (l) => l.some((d) => d.JobVersion === version && ok(d)),
  );
  return list.find((d) => d.JobVersion === version && ok(d)) as Deployment;
}

/** Registers version 0 and waits for its deployment to succeed. */
async function firstVersion(ctx: ScenarioContext, id: string, job: Obj): Promise<void> {
  await ctx.client.jobs.register({ Job: job } as never);
  await deploymentOf(ctx, id, 0, (d) => d.Status === "successful");
}

const RUN = "sleep 3600";

/** Canary update: `mode` says what happens once the canary is healthy. */
async function canary(
  ctx: ScenarioContext,
  scenario: string,
  mode: "manual" | "auto" | "soak" | "server-auto" | "failing",
): Promise<Transcript> {
  const id = ctx.name(scenario);
  const steps: Transcript["steps"] = [];
  const update = mode === "server-auto" ? { AutoPromote: true } : mode === "failing" ? { AutoRevert: true } : {};
  try {
    await firstVersion(ctx, id, serviceJob(id, RUN, { update }));
    const next =
      mode === "failing"
        ? // The task exits before the canary could count as healthy (min_healthy_time 5s).
          serviceJob(id, "sleep 1; exit 1", { update: { ...update, MinHealthyTime: 5e9 }, fail: true })
        : serviceJob(id, `${RUN} # v1`, { update });
    await ctx.client.jobs.register({ Job: next } as never);
    const first = await deploymentOf(ctx, id, 1, () => true);
    steps.push({ step: "deployment first seen", ...deploymentFacts(first) });
    if (mode === "failing" || mode === "server-auto") {
      const end = await deploymentOf(ctx, id, 1, (d) => ENDED.has(d.Status ?? ""));
      steps.push({ step: "deployment ended", ...deploymentFacts(end) });
      if (mode === "failing") {
        // auto_revert registers version 0 again as version 2; wait for that to settle.
        await deploymentOf(ctx, id, 2, (d) => ENDED.has(d.Status ?? ""));
        steps.push({ step: "job after auto-revert", ...jobFacts((await ctx.client.jobs.info(id)).value) });
      }
      return { scenario, steps };
    }
    const healthy = await deploymentOf(
      ctx,
      id,
      1,
      (d) => ENDED.has(d.Status ?? "") || (d.TaskGroups?.web?.HealthyAllocs ?? 0) >= 1,
    );
    steps.push({ step: "canary healthy", ...deploymentFacts(healthy) });
    if (mode === "manual") {
      const allocs = (await ctx.client.records.allocations(id)).value.filter((a) => a.DesiredStatus === "run");
      steps.push({ step: "allocations while waiting for promotion", allocations: allocFacts(allocs) });
      return { scenario, steps };
    }
    if (mode === "soak") {
      await new Promise((r) => setTimeout(r, 2000));
      const soaked = await deploymentOf(ctx, id, 1, () => true);
      steps.push({ step: "after a 2s soak", ...deploymentFacts(soaked) });
    }
    await ctx.client.deployments.promote(healthy.ID ?? "", { All: true });
    const end = await deploymentOf(ctx, id, 1, (d) => ENDED.has(d.Status ?? ""));
    steps.push({ step: "deployment ended", ...deploymentFacts(end) });
    steps.push({ step: "job", ...jobFacts((await ctx.client.jobs.info(id)).value) });
    return { scenario, steps };
  } finally {
    await ctx.client.jobs.stop(id, { purge: true }).catch(() => undefined);
  }
}

async function batch(ctx: ScenarioContext, scenario: string, fail: boolean): Promise<Transcript> {
  const id = ctx.name(scenario);
  const steps: Transcript["steps"] = [];
  try {
    const r = await ctx.client.jobs.register({
      Job: batchJob(id, fail ? "sleep 1; exit 1" : "sleep 1", fail),
    } as never);
    const evalId = r.value.EvalID ?? "";
    const ev = await until(
      ctx,
      "evaluation",
      async () => (await ctx.client.records.evaluations(id)).value.find((e) => e.ID === evalId),
      (e) => e !== undefined && e.Status !== "pending",
    );
    steps.push({ step: "evaluation done", ...evalFacts(ev as Evaluation) });
    const allocs = await until(
      ctx,
      "allocations to finish",
      async () => (await ctx.client.records.allocations(id)).value,
      (l) => l.length > 0 && l.every((a) => ["complete", "failed", "lost"].includes(a.ClientStatus ?? "")),
    );
    steps.push({ step: "allocations finished", allocations: allocFacts(allocs) });
    const job = await until(
      ctx,
      "job to be dead",
      async () => (await ctx.client.jobs.info(id)).value,
      (j) => j.Status === "dead",
    );
    steps.push({ step: "job", ...jobFacts(job) });
    steps.push({ step: "deployments", count: (await ctx.client.records.deployments(id)).value.length });
    return { scenario, steps };
  } finally {
    await ctx.client.jobs.stop(id, { purge: true }).catch(() => undefined);
  }
}

/** Registers count 1, scales to 2 through the API, then registers the count-1 job again. */
async function scale(ctx: ScenarioContext): Promise<Transcript> {
  const scenario = "scale-between-registers";
  const id = ctx.name(scenario);
  const steps: Transcript["steps"] = [];
  const job = serviceJob(id, RUN, { update: { Canary: 0 } });
  try {
    await firstVersion(ctx, id, job);
    steps.push({ step: "registered", ...jobFacts((await ctx.client.jobs.info(id)).value) });
    await ctx.client.jobs.scale(id, { Target: { Group: "web" }, Count: 2, Message: "scale" } as never);
    const scaled = await until(
      ctx,
      "scaled allocations",
      async () => (await ctx.client.records.allocations(id)).value.filter((a) => a.DesiredStatus === "run"),
      (l) => l.length === 2 && l.every((a) => a.ClientStatus === "running"),
    );
    // The scale's own deployment (of the version the scale registered) ends before the job is read.
    const scaleDeployment = await deploymentOf(ctx, id, 1, (d) => ENDED.has(d.Status ?? ""));
    steps.push({ step: "scale deployment ended", ...deploymentFacts(scaleDeployment) });
    steps.push({ step: "scaled", ...jobFacts((await ctx.client.jobs.info(id)).value) });
    const after = (await ctx.client.records.allocations(id)).value.filter((a) => a.DesiredStatus === "run");
    steps.push({ step: "allocations after scale", allocations: allocFacts(after.length > 0 ? after : scaled) });
    const deps = (await ctx.client.records.deployments(id)).value;
    steps.push({
      step: "deployments after scale",
      deployments: deps
        .map((d) => ({ JobVersion: d.JobVersion }))
        .sort((a, b) => (a.JobVersion ?? 0) - (b.JobVersion ?? 0)),
    });
    await ctx.client.jobs.register({ Job: job } as never);
    const back = await until(
      ctx,
      "count back to 1",
      async () => (await ctx.client.records.allocations(id)).value.filter((a) => a.DesiredStatus === "run"),
      (l) => l.length === 1,
    );
    steps.push({ step: "registered again", ...jobFacts((await ctx.client.jobs.info(id)).value) });
    steps.push({ step: "allocations after register", allocations: allocFacts(back) });
    return { scenario, steps };
  } finally {
    await ctx.client.jobs.stop(id, { purge: true }).catch(() => undefined);
  }
}

/** A job whose only blocker is a constraint no node meets: the plan, then the register's evaluation. */
async function failedPlacement(ctx: ScenarioContext): Promise<Transcript> {
  const scenario = "failed-placement";
  const id = ctx.name(scenario);
  const steps: Transcript["steps"] = [];
  const job = {
    ...serviceJob(id, RUN, { update: { Canary: 0 } }),
    Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "no-such-kernel", Operand: "=" }],
  };
  try {
    const plan = (await ctx.client.jobs.plan(id, { Job: job, Diff: false } as never)).value;
    const failed: Obj = {};
    for (const [g, m] of Object.entries(plan.FailedTGAllocs ?? {}))
      failed[g] = {
        NodesEvaluated: m.NodesEvaluated,
        NodesFiltered: m.NodesFiltered,
        ConstraintFiltered: m.ConstraintFiltered ?? null,
      };
    steps.push({ step: "plan", FailedTGAllocs: failed });
    const r = await ctx.client.jobs.register({ Job: job } as never);
    const evalId = r.value.EvalID ?? "";
    const ev = await until(
      ctx,
      "evaluation",
      async () => (await ctx.client.records.evaluations(id)).value.find((e) => e.ID === evalId),
      (e) => e !== undefined && e.Status !== "pending",
    );
    steps.push({ step: "evaluation done", ...evalFacts(ev as Evaluation) });
    const all = (await ctx.client.records.evaluations(id)).value;
    steps.push({ step: "evaluations", statuses: all.map((e) => e.Status).sort() });
    return { scenario, steps };
  } finally {
    await ctx.client.jobs.stop(id, { purge: true }).catch(() => undefined);
  }
}

/**
 * A destructive update whose allocation never turns healthy while the deployment has a progress deadline
 * (and auto_revert): the task exits 1 and restarts forever (restart mode delay), so it never fails and is
 * never rescheduled, and its group may be rescheduled, so nothing fails the deployment early; the progress
 * deadline (6s after the placement; 1.6.5 wants it longer than the healthy deadline and the task's 5s kill
 * timeout) fails it, which reverts the job to version 0. Nomad 1.6.5 had not counted the allocation
 * unhealthy by then, though its healthy deadline (3s) had passed.
 */
async function progressDeadline(ctx: ScenarioContext): Promise<Transcript> {
  const scenario = "progress-deadline";
  const id = ctx.name(scenario);
  const steps: Transcript["steps"] = [];
  const update = { Canary: 0, AutoRevert: true, MinHealthyTime: 1e9, HealthyDeadline: 3e9, ProgressDeadline: 6e9 };
  const withPolicies = (job: Obj, stall: boolean): Obj => {
    const [group] = job.TaskGroups as Obj[];
    return {
      ...job,
      ...(stall ? { Meta: { "devserver.never_healthy": "true" } } : {}),
      TaskGroups: [
        {
          ...group,
          RestartPolicy: { Attempts: 1, Interval: 3600e9, Delay: 1e9, Mode: "delay" },
          ReschedulePolicy: { Attempts: 0, Interval: 0, Delay: 3600e9, DelayFunction: "constant", Unlimited: true },
        },
      ],
    };
  };
  try {
    await firstVersion(ctx, id, withPolicies(serviceJob(id, RUN, { update }), false));
    await ctx.client.jobs.register({
      Job: withPolicies(serviceJob(id, "sleep 0.2; exit 1", { update }), true),
    } as never);
    const first = await deploymentOf(ctx, id, 1, () => true);
    steps.push({ step: "deployment first seen", ...deploymentFacts(first) });
    const end = await deploymentOf(ctx, id, 1, (d) => ENDED.has(d.Status ?? ""));
    steps.push({ step: "deployment ended", ...deploymentFacts(end) });
    await deploymentOf(ctx, id, 2, (d) => ENDED.has(d.Status ?? ""));
    steps.push({ step: "job after auto-revert", ...jobFacts((await ctx.client.jobs.info(id)).value) });
    return { scenario, steps };
  } finally {
    await ctx.client.jobs.stop(id, { purge: true }).catch(() => undefined);
  }
}

/** Every scenario, by name. */
export const SCENARIOS: Record<string, (ctx: ScenarioContext) => Promise<Transcript>> = {
  "canary-manual": (c) => canary(c, "canary-manual", "manual"),
  "canary-auto": (c) => canary(c, "canary-auto", "auto"),
  "canary-soak": (c) => canary(c, "canary-soak", "soak"),
  "canary-server-auto-promote": (c) => canary(c, "canary-server-auto-promote", "server-auto"),
  "canary-failing": (c) => canary(c, "canary-failing", "failing"),
  "batch-complete": (c) => batch(c, "batch-complete", false),
  "batch-failing": (c) => batch(c, "batch-failing", true),
  "scale-between-registers": scale,
  "failed-placement": failedPlacement,
  "progress-deadline": progressDeadline,
};
