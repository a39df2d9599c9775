/**
 * Conformance of the scheduler client's launching and record operations over real HTTP: dispatch,
 * periodic force, evaluate, scale and the job's allocations, evaluations, deployments and services. Runs
 * against the devserver by default and against a real cluster with CONFORMANCE_TARGET=env (which needs a
 * client node that runs the fixtures: datacenter dc1, docker or CONFORMANCE_DRIVER=raw_exec); job IDs are unique to the run and purged
 * afterwards. Query strings are read from the client's hooks, so their checks run on any target.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Job } from "../../provider/schemas/scheduler";
import {
  batchJob,
  newerOrSkip,
  rejection,
  schedulerSide,
  serviceJob,
  until,
  withLogLevel,
  type SchedulerSide,
} from "./scheduler-fixture";
import { openTarget, type ConformanceTarget } from "./target";

let target: ConformanceTarget;
let f: SchedulerSide;
beforeAll(async () => {
  target = await openTarget();
  f = schedulerSide(target);
});
afterAll(() => target?.close());

describe("Jobs.dispatch", () => {
  const parent = (id: string): Job =>
    batchJob(id, { ParameterizedJob: { Payload: "optional", MetaRequired: ["customer"], MetaOptional: ["note"] } });

  it("dispatches a parameterized job with meta and a payload the child carries base64-encoded", async () => {
    const id = target.name("report");
    await f.register({ Job: parent(id) });
    const payload = Buffer.from([0, 1, 2, 250, 251, 252]);
    const { value: d } = await f.client.jobs.dispatch(id, { Payload: payload, Meta: { customer: "acme" } });
    f.purgeLater(d.DispatchedJobID ?? "");
    expect(d.DispatchedJobID).toMatch(new RegExp(`^${id}/dispatch-`));
    const { value: child } = await f.client.jobs.info(d.DispatchedJobID ?? "");
    expect(child.Payload).toBe(payload.toString("base64"));
    expect(child.Meta).toMatchObject({ customer: "acme" });
    expect(child.ParentID).toBe(id);
  });

  it("dispatches with a raw body through dispatch/payload", async (t) => {
    const id = target.name("report-raw");
    await f.register({ Job: batchJob(id, { ParameterizedJob: { Payload: "required" } }) });
    const { value: d } = await newerOrSkip(t, f.client.jobs.dispatchPayload(id, "hello payload"));
    f.purgeLater(d.DispatchedJobID ?? "");
    const { value: child } = await f.client.jobs.info(d.DispatchedJobID ?? "");
    expect(Buffer.from(child.Payload ?? "", "base64").toString()).toBe("hello payload");
  });

  it("dispatches once per idempotency token", async () => {
    const id = target.name("report-idem");
    await f.register({ Job: parent(id) });
    const a = await f.client.jobs.dispatch(id, { Meta: { customer: "x" } }, { idempotencyToken: "run-42" });
    f.purgeLater(a.value.DispatchedJobID ?? "");
    const b = await f.client.jobs.dispatch(id, { Meta: { customer: "x" } }, { idempotencyToken: "run-42" });
    f.purgeLater(b.value.DispatchedJobID ?? "");
    expect(b.value.DispatchedJobID).toBe(a.value.DispatchedJobID);
    const children = await f.client.jobs.listAll({ prefix: `${id}/` });
    expect(children).toHaveLength(1);
  });

  it("reports a missing required meta key as a server error with its text", async () => {
    const id = target.name("report-meta");
    await f.register({ Job: parent(id) });
    const e = await rejection(f.client.jobs.dispatch(id, {}));
    expect(e.message).toMatch(/customer/);
  });
});

describe("Jobs.forcePeriodic, evaluate and scale", () => {
  it("forces a periodic launch that creates a child job", async () => {
    const id = target.name("cron");
    await f.register({
      Job: batchJob(id, { Periodic: { Enabled: true, Spec: "0 0 1 1 *", SpecType: "cron", ProhibitOverlap: true } }),
    });
    const { value } = await f.client.jobs.forcePeriodic(id);
    expect(value.EvalID).toBeTruthy();
    const children = await f.client.jobs.listAll({ prefix: `${id}/periodic-` });
    for (const c of children) f.purgeLater(c.ID ?? "");
    expect(children).toHaveLength(1);
  });

  it("forces an evaluation that shows up among the job's evaluations", async () => {
    const id = target.name("eval-1");
    await f.register({ Job: serviceJob(id) });
    const { value } = await f.client.jobs.evaluate(id, { forceReschedule: true });
    expect(value.EvalID).toBeTruthy();
    const { value: evals } = await f.client.records.evaluations(id);
    expect(evals.map((e) => e.ID)).toContain(value.EvalID);
  });

  it("scales a task group and reports the new count in the scale status", async () => {
    const id = target.name("scale-1");
    // A real server's default update block waits 10 s of health (min_healthy_time) before a rollout ends.
    await f.register({
      Job: serviceJob(id, { Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 0 } }),
    });
    // Scaling is refused while a deployment runs; wait until the first rollout has started (it is created
    // after the register returns, so "none yet" is not "ended") and ended.
    await until(
      async () => {
        const d = (await f.client.records.latestDeployment(id)).value;
        return d !== null &&
          !["running", "pending", "initializing", "paused", "blocked", "unblocking"].includes(d.Status ?? "")
          ? true
          : undefined;
      },
      "the first deployment to end",
      25_000,
    );
    await f.client.jobs.scale(id, { Target: { Group: "web" }, Count: 3, Message: "more traffic" });
    const { value: job } = await f.client.jobs.info(id);
    expect(job.TaskGroups?.[0]?.Count).toBe(3);
    const { value: status } = await f.client.records.scaleStatus(id);
    expect(status.TaskGroups?.web?.Desired).toBe(3);
  });
  it("refuses to scale while a deployment is active, as bad_request with the server's text", async () => {
    const id = target.name("scale-2");
    const job = serviceJob(id, {
      Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 60_000_000_000 },
    });
    await f.register({ Job: job });
    await f.client.jobs.register({ Job: withLogLevel(job, "debug") });
    await until(async () => {
      const d = (await f.client.records.latestDeployment(id)).value;
      return d?.JobVersion === 1 && d.Status === "running" ? true : undefined;
    }, "the version 1 deployment to run");
    const e = await rejection(f.client.jobs.scale(id, { Target: { Group: "web" }, Count: 2, Message: "m" }));
    expect(e.code).toBe("bad_request");
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/active deployment/);
  });
});

describe("JobRecords", () => {
  let rec1: string;
  beforeAll(() => {
    rec1 = target.name("rec-1");
  });

  it("reads allocations, evaluations, summary, deployments and the latest deployment of a job", async () => {
    const job = serviceJob(rec1, {
      Update: {
        MaxParallel: 1,
        HealthCheck: "task_states",
        MinHealthyTime: 0,
        HealthyDeadline: 300_000_000_000,
        ProgressDeadline: 600_000_000_000,
      },
    });
    const { value: reg } = await f.register({ Job: job });
    const allocs = await until(async () => {
      const { value } = await f.client.records.allocations(rec1);
      return value.length > 0 ? value : undefined;
    }, "allocations");
    expect(allocs[0]).toMatchObject({ JobID: rec1, TaskGroup: "web" });
    const { value: evals } = await f.client.records.evaluations(rec1);
    expect(evals.map((e) => e.ID)).toContain(reg.EvalID);
    const { value: summary } = await f.client.records.summary(rec1);
    expect(summary.JobID).toBe(rec1);
    expect(summary.Summary?.web).toBeDefined();
    const latest = await until(
      async () => (await f.client.records.latestDeployment(rec1)).value ?? undefined,
      "a deployment",
    );
    expect(latest.JobID).toBe(rec1);
    const { value: deployments } = await f.client.records.deployments(rec1);
    expect(deployments.map((d) => d.ID)).toContain(latest.ID);
  });

  it("asks for the records of earlier registrations with all=true", async () => {
    f.record.clear();
    await f.client.records.allocations(rec1, { all: true });
    await f.client.records.deployments(rec1, { all: true });
    const queries = f.record.requests
      .filter((e) => e.path.startsWith(`/v1/job/${rec1}/`))
      .map((e) => [e.path, new URLSearchParams(e.query).get("all")]);
    expect(queries).toEqual([
      [`/v1/job/${rec1}/allocations`, "true"],
      [`/v1/job/${rec1}/deployments`, "true"],
    ]);
  });

  it("lists the services registered for a job's running allocations", async () => {
    const id = target.name("svc-1");
    const job = serviceJob(id);
    job.TaskGroups = [
      {
        ...job.TaskGroups![0]!,
        Services: [{ Name: "svc-one", PortLabel: "http", Provider: "nomad", Tags: ["a"] }],
        Networks: [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }],
      },
    ];
    await f.register({ Job: job });
    const services = await until(async () => {
      const { value } = await f.client.records.services(id);
      return value.length > 0 ? value : undefined;
    }, "service registrations");
    expect(services[0]).toMatchObject({ ServiceName: "svc-one", JobID: id });
  });
});
