/**
 * The scheduler client's job operations over real HTTP against the devserver: register, read, paging,
 * blocking queries, plan, parse, dispatch, periodic force, evaluate, scale, stop and the job's records.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watch } from "../../../provider/clients/scheduler";
import { ApiError, isApiError } from "../../../provider/errors";
import type { Job } from "../../../provider/schemas/scheduler";
import { batchJob, serviceJob, startScheduler, until, withLogLevel, type SchedulerFixture } from "./client-fixture";

let f: SchedulerFixture;
beforeAll(async () => {
  f = await startScheduler();
});
afterAll(async () => {
  await f.server.close();
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isApiError(e)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}

describe("Jobs.register and Jobs.info", () => {
  it("registers a job and reads it back with version 0 and the write's JobModifyIndex", async () => {
    const { value: res } = await f.client.jobs.register({ Job: serviceJob("reg-1") });
    expect(res.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    const { value: job, meta } = await f.client.jobs.info("reg-1");
    expect(job.ID).toBe("reg-1");
    expect(job.Version).toBe(0);
    expect(job.JobModifyIndex).toBe(res.JobModifyIndex);
    expect(job.Namespace).toBe("default");
    expect(meta.lastIndex).toBeGreaterThan(0);
  });

  it("throws not_found from info and returns undefined from find for a missing job", async () => {
    const e = await rejection(f.client.jobs.info("no-such-job"));
    expect(e.code).toBe("not_found");
    expect(e.status).toBe(404);
    expect(e.message).toMatch(/^read job: GET \/v1\/job\/no-such-job returned 404/);
    expect(await f.client.jobs.find("no-such-job")).toBeUndefined();
  });

  it("encodes a job ID with '/' and '?' as one path segment", async () => {
    await f.client.jobs.register({ Job: serviceJob("team-a/web?x") });
    f.sent.length = 0;
    const { value } = await f.client.jobs.info("team-a/web?x");
    expect(value.ID).toBe("team-a/web?x");
    expect(f.sent).toEqual(["GET /v1/job/team-a%2Fweb%3Fx"]);
  });

  it("updates through /v1/job/:id, creating version 1 only when the spec changes", async () => {
    const job = serviceJob("upd-1");
    await f.client.jobs.register({ Job: job });
    const { value: same } = await f.client.jobs.update("upd-1", { Job: job });
    expect((await f.client.jobs.info("upd-1")).value.Version).toBe(0);
    const { value: changed } = await f.client.jobs.update("upd-1", { Job: withLogLevel(job, "debug") });
    const { value: now } = await f.client.jobs.info("upd-1");
    expect(now.Version).toBe(1);
    expect(now.JobModifyIndex).toBe(changed.JobModifyIndex);
    expect(changed.JobModifyIndex).toBeGreaterThan(same.JobModifyIndex ?? 0);
  });

  it("refuses check-and-set registers with a conflict carrying the server's text", async () => {
    const { value: first } = await f.client.jobs.register({ Job: serviceJob("cas-1"), EnforceIndex: true, JobModifyIndex: 0 });
    const again = await rejection(f.client.jobs.register({ Job: serviceJob("cas-1"), EnforceIndex: true, JobModifyIndex: 0 }));
    expect(again.code).toBe("conflict");
    expect(again.message).toMatch(/Enforcing job modify index 0: job already exists/);
    const stale = await rejection(
      f.client.jobs.register({ Job: withLogLevel(serviceJob("cas-1"), "x"), EnforceIndex: true, JobModifyIndex: (first.JobModifyIndex ?? 0) + 1000 }),
    );
    expect(stale.code).toBe("conflict");
    expect(stale.message).toMatch(/conflicting job modify index/);
    const ok = await f.client.jobs.register({ Job: withLogLevel(serviceJob("cas-1"), "x"), EnforceIndex: true, JobModifyIndex: first.JobModifyIndex ?? 0 });
    expect(ok.value.JobModifyIndex).toBeGreaterThan(first.JobModifyIndex ?? 0);
  });

  it("always sends ?namespace=, defaulting from the connection", async () => {
    f.server.resetLog();
    await f.client.jobs.info("reg-1");
    const entry = f.server.requestLog.find((e) => e.path === "/v1/job/reg-1");
    expect(new URLSearchParams(entry?.query).get("namespace")).toBe("default");
  });
});

describe("Jobs.list", () => {
  const ids = ["page-a", "page-b", "page-c", "page-d", "page-e", "page-f", "page-g"];
  beforeAll(async () => {
    for (const id of ids) await f.client.jobs.register({ Job: serviceJob(id, { Meta: { tier: id === "page-a" ? "gold" : "std" } }) });
  });

  it("follows the next-page token over several pages and yields every job once, in ID order", async () => {
    f.server.resetLog();
    const seen: string[] = [];
    for await (const stub of f.client.jobs.list({ prefix: "page-", perPage: 3 })) seen.push(stub.ID ?? "");
    expect(seen).toEqual(ids);
    const pages = f.server.requestLog.filter((e) => e.path === "/v1/jobs");
    expect(pages).toHaveLength(3);
    expect(new URLSearchParams(pages[1]?.query).get("next_token")).toBeTruthy();
    expect(new URLSearchParams(pages[0]?.query).get("per_page")).toBe("3");
  });

  it("returns one page with its next token from listPage, and everything from listAll", async () => {
    const page = await f.client.jobs.listPage({ prefix: "page-", perPage: 2 });
    expect(page.value.map((s) => s.ID)).toEqual(["page-a", "page-b"]);
    expect(page.meta.nextToken).toBeTruthy();
    const rest = await f.client.jobs.listAll({ prefix: "page-", perPage: 2, nextToken: page.meta.nextToken });
    expect(rest.map((s) => s.ID)).toEqual(ids.slice(2));
    expect((await f.client.jobs.listAll({ prefix: "page-" })).map((s) => s.ID)).toEqual(ids);
  });

  it("includes Meta only when asked, and passes a filter expression", async () => {
    const plain = await f.client.jobs.listAll({ prefix: "page-a" });
    expect(plain[0]?.Meta ?? undefined).toBeUndefined();
    const withMeta = await f.client.jobs.listAll({ prefix: "page-a", meta: true });
    expect(withMeta[0]?.Meta).toEqual({ tier: "gold" });
    const filtered = await f.client.jobs.listAll({ filter: 'Meta.tier == "gold"', meta: true });
    expect(filtered.map((s) => s.ID)).toEqual(["page-a"]);
  });

  it("lists across namespaces with namespace '*'", async () => {
    await f.client.jobs.register({ Job: serviceJob("ns-job", { Namespace: "other" }) }, { namespace: "other" });
    const inDefault = await f.client.jobs.listAll({ prefix: "ns-job" });
    expect(inDefault).toEqual([]);
    const all = await f.client.jobs.listAll({ prefix: "ns-job", namespace: "*" });
    expect(all.map((s) => [s.ID, s.Namespace])).toEqual([["ns-job", "other"]]);
  });
});

describe("blocking queries", () => {
  // Blocking indexes are table-wide on the real scheduler (any job's change moves them), so these tests
  // use their own server and a parameterized job, which has no evaluations or allocations changing it.
  let b: SchedulerFixture;
  const quiet = (id: string, level = "info"): Job =>
    withLogLevel(serviceJob(id, { Type: "batch", ParameterizedJob: { Payload: "optional" } }), level);
  beforeAll(async () => {
    b = await startScheduler();
  });
  afterAll(async () => {
    await b.server.close();
  });

  it("returns a blocked read when the job changes, with a higher index", async () => {
    await b.client.jobs.register({ Job: quiet("block-1") });
    const before = await b.client.jobs.info("block-1");
    const index = before.meta.lastIndex ?? 0;
    b.sent.length = 0;
    const blocked = b.client.jobs.info("block-1", { waitIndex: index, waitMs: 20_000 });
    await until(() => (b.sent.length === 1 ? true : undefined), "the blocking read to be sent");
    await b.client.jobs.register({ Job: quiet("block-1", "debug") });
    const after = await blocked;
    expect(after.value.Version).toBe(1);
    expect(after.meta.lastIndex).toBeGreaterThan(index);
    const q = new URLSearchParams(b.server.requestLog.filter((e) => e.path === "/v1/job/block-1").at(-1)?.query);
    expect(q.get("index")).toBe(String(index));
    expect(q.get("wait")).toBe("20000ms");
  });

  it("returns the unchanged job with the same index after the wait when nothing changes", async () => {
    await b.client.jobs.register({ Job: quiet("block-2") });
    const before = await b.client.jobs.info("block-2");
    const after = await b.client.jobs.info("block-2", { waitIndex: before.meta.lastIndex, waitMs: 50 });
    expect(after.value.Version).toBe(0);
    expect(after.meta.lastIndex).toBe(before.meta.lastIndex);
  });

  it("watch yields the job now and again after each change", async () => {
    await b.client.jobs.register({ Job: quiet("watch-1") });
    const abort = new AbortController();
    const versions: number[] = [];
    for await (const { value } of watch((o) => b.client.jobs.info("watch-1", o), { waitMs: 20_000, signal: abort.signal })) {
      versions.push(value.Version ?? -1);
      if (versions.length === 1) await b.client.jobs.register({ Job: quiet("watch-1", "debug") });
      else if (versions.length === 2) await b.client.jobs.register({ Job: quiet("watch-1", "warn") });
      else abort.abort();
    }
    expect(versions).toEqual([0, 1, 2]);
  });
});

describe("Jobs.plan", () => {
  it("returns a diff of the change and registers nothing", async () => {
    const { value: reg } = await f.client.jobs.register({ Job: serviceJob("plan-1") });
    const { value: plan } = await f.client.jobs.plan("plan-1", { Job: withLogLevel(serviceJob("plan-1"), "debug"), Diff: true });
    expect(plan.Diff?.Type).toBe("Edited");
    const tg = plan.Diff?.TaskGroups?.find((g) => g.Name === "web");
    const task = tg?.Tasks?.find((t) => t.Name === "app");
    expect(task?.Type).toBe("Edited");
    const field = task?.Fields?.find((x) => x.Name === "Env[LOG_LEVEL]");
    expect(field).toMatchObject({ Type: "Edited", Old: "info", New: "debug" });
    expect(plan.JobModifyIndex).toBe(reg.JobModifyIndex);
    expect(plan.Annotations?.DesiredTGUpdates?.web).toBeDefined();
    const { value: after } = await f.client.jobs.info("plan-1");
    expect(after.Version).toBe(0);
    expect(after.JobModifyIndex).toBe(reg.JobModifyIndex);
  });

  it("reports an unchanged job as diff type None", async () => {
    await f.client.jobs.register({ Job: serviceJob("plan-2") });
    const { value: plan } = await f.client.jobs.plan("plan-2", { Job: serviceJob("plan-2"), Diff: true });
    expect(plan.Diff?.Type).toBe("None");
  });

  it("plans a new job as Added with JobModifyIndex 0, and the job still does not exist", async () => {
    const { value: plan } = await f.client.jobs.plan("plan-new", { Job: serviceJob("plan-new"), Diff: true });
    expect(plan.Diff?.Type).toBe("Added");
    expect(plan.JobModifyIndex ?? 0).toBe(0);
    expect(await f.client.jobs.find("plan-new")).toBeUndefined();
  });
});

describe("Jobs.parse", () => {
  const hcl = `
job "parsed" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "docker"
      config { image = "nginx:1.27" }
    }
  }
}
`;
  it("parses HCL2 into the job JSON, and canonicalizes when asked", async () => {
    const { value: raw } = await f.client.jobs.parse({ JobHCL: hcl });
    expect(raw.ID).toBe("parsed");
    expect(raw.TaskGroups?.[0]?.Tasks?.[0]?.Config).toEqual({ image: "nginx:1.27" });
    const { value: canon } = await f.client.jobs.parse({ JobHCL: hcl, Canonicalize: true });
    expect(canon).toMatchObject({ Region: "global", Namespace: "default", Priority: 50, Type: "service" });
  });

  it("reports a syntax error as bad_request", async () => {
    const e = await rejection(f.client.jobs.parse({ JobHCL: 'job "x" {' }));
    expect(e.code).toBe("bad_request");
  });
});

describe("Jobs.dispatch", () => {
  const parent = (id: string): Job =>
    batchJob(id, { ParameterizedJob: { Payload: "optional", MetaRequired: ["customer"], MetaOptional: ["note"] } });

  it("dispatches a parameterized job with meta and a payload the child carries base64-encoded", async () => {
    await f.client.jobs.register({ Job: parent("report") });
    const payload = Buffer.from([0, 1, 2, 250, 251, 252]);
    const { value: d } = await f.client.jobs.dispatch("report", { Payload: payload, Meta: { customer: "acme" } });
    expect(d.DispatchedJobID).toMatch(/^report\/dispatch-/);
    const { value: child } = await f.client.jobs.info(d.DispatchedJobID ?? "");
    expect(child.Payload).toBe(payload.toString("base64"));
    expect(child.Meta).toMatchObject({ customer: "acme" });
    expect(child.ParentID).toBe("report");
  });

  it("dispatches with a raw body through dispatch/payload", async () => {
    await f.client.jobs.register({ Job: batchJob("report-raw", { ParameterizedJob: { Payload: "required" } }) });
    const { value: d } = await f.client.jobs.dispatchPayload("report-raw", "hello payload");
    const { value: child } = await f.client.jobs.info(d.DispatchedJobID ?? "");
    expect(Buffer.from(child.Payload ?? "", "base64").toString()).toBe("hello payload");
  });

  it("dispatches once per idempotency token", async () => {
    await f.client.jobs.register({ Job: parent("report-idem") });
    const a = await f.client.jobs.dispatch("report-idem", { Meta: { customer: "x" } }, { idempotencyToken: "run-42" });
    const b = await f.client.jobs.dispatch("report-idem", { Meta: { customer: "x" } }, { idempotencyToken: "run-42" });
    expect(b.value.DispatchedJobID).toBe(a.value.DispatchedJobID);
    const children = await f.client.jobs.listAll({ prefix: "report-idem/" });
    expect(children).toHaveLength(1);
  });

  it("reports a missing required meta key as a server error with its text", async () => {
    await f.client.jobs.register({ Job: parent("report-meta") });
    const e = await rejection(f.client.jobs.dispatch("report-meta", {}));
    expect(e.message).toMatch(/customer/);
  });
});

describe("Jobs.forcePeriodic, evaluate and scale", () => {
  it("forces a periodic launch that creates a child job", async () => {
    await f.client.jobs.register({ Job: batchJob("cron", { Periodic: { Enabled: true, Spec: "0 0 1 1 *", SpecType: "cron", ProhibitOverlap: true } }) });
    const { value } = await f.client.jobs.forcePeriodic("cron");
    expect(value.EvalID).toBeTruthy();
    const children = await f.client.jobs.listAll({ prefix: "cron/periodic-" });
    expect(children).toHaveLength(1);
  });

  it("forces an evaluation that shows up among the job's evaluations", async () => {
    await f.client.jobs.register({ Job: serviceJob("eval-1") });
    const { value } = await f.client.jobs.evaluate("eval-1", { forceReschedule: true });
    expect(value.EvalID).toBeTruthy();
    const { value: evals } = await f.client.records.evaluations("eval-1");
    expect(evals.map((e) => e.ID)).toContain(value.EvalID);
  });

  it("scales a task group and reports the new count in the scale status", async () => {
    await f.client.jobs.register({ Job: serviceJob("scale-1") });
    // Scaling is refused while a deployment runs; wait until the first rollout (if any) has ended.
    await until(async () => {
      const d = (await f.client.records.latestDeployment("scale-1")).value;
      return d === null || !["running", "pending", "initializing", "paused", "blocked", "unblocking"].includes(d.Status ?? "") ? true : undefined;
    }, "the first deployment to end");
    await f.client.jobs.scale("scale-1", { Target: { Group: "web" }, Count: 3, Message: "more traffic" });
    const { value: job } = await f.client.jobs.info("scale-1");
    expect(job.TaskGroups?.[0]?.Count).toBe(3);
    const { value: status } = await f.client.records.scaleStatus("scale-1");
    expect(status.TaskGroups?.web?.Desired).toBe(3);
  });
  it("refuses to scale while a deployment is active, as bad_request with the server's text", async () => {
    const job = serviceJob("scale-2", { Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 60_000_000_000 } });
    await f.client.jobs.register({ Job: job });
    await f.client.jobs.register({ Job: withLogLevel(job, "debug") });
    await until(async () => {
      const d = (await f.client.records.latestDeployment("scale-2")).value;
      return d?.JobVersion === 1 && d.Status === "running" ? true : undefined;
    }, "the version 1 deployment to run");
    const e = await rejection(f.client.jobs.scale("scale-2", { Target: { Group: "web" }, Count: 2, Message: "m" }));
    expect(e.code).toBe("bad_request");
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/active deployment/);
  });
});

describe("Jobs.stop", () => {
  it("stops a job without purge (still readable, Stop true) and purges it with purge", async () => {
    await f.client.jobs.register({ Job: serviceJob("stop-1") });
    const { value: res } = await f.client.jobs.stop("stop-1");
    expect(res.EvalID).toBeTruthy();
    const { value: stopped } = await f.client.jobs.info("stop-1");
    expect(stopped.Stop).toBe(true);
    await f.client.jobs.deregister("stop-1", { purge: true });
    expect(await f.client.jobs.find("stop-1")).toBeUndefined();
    const q = new URLSearchParams(f.server.requestLog.filter((e) => e.method === "DELETE" && e.path === "/v1/job/stop-1").at(-1)?.query);
    expect(q.get("purge")).toBe("true");
  });

  it("sends the stop options as query parameters", async () => {
    await f.client.jobs.register({ Job: serviceJob("stop-2") });
    await f.client.jobs.stop("stop-2", { global: true, evalPriority: 70, noShutdownDelay: true });
    const q = new URLSearchParams(f.server.requestLog.filter((e) => e.method === "DELETE" && e.path === "/v1/job/stop-2").at(-1)?.query);
    expect(Object.fromEntries(q)).toEqual({ namespace: "default", global: "true", eval_priority: "70", no_shutdown_delay: "true" });
  });

  it("treats stopping a job that does not exist as success with no evaluation", async () => {
    const { value } = await f.client.jobs.stop("never-registered");
    expect(value.EvalID ?? "").toBe("");
  });
});

describe("JobRecords", () => {
  it("reads allocations, evaluations, summary, deployments and the latest deployment of a job", async () => {
    const job = serviceJob("rec-1", {
      Update: { MaxParallel: 1, HealthCheck: "task_states", MinHealthyTime: 0, HealthyDeadline: 300_000_000_000, ProgressDeadline: 600_000_000_000 },
    });
    const { value: reg } = await f.client.jobs.register({ Job: job });
    const allocs = await until(async () => {
      const { value } = await f.client.records.allocations("rec-1");
      return value.length > 0 ? value : undefined;
    }, "allocations");
    expect(allocs[0]).toMatchObject({ JobID: "rec-1", TaskGroup: "web" });
    const { value: evals } = await f.client.records.evaluations("rec-1");
    expect(evals.map((e) => e.ID)).toContain(reg.EvalID);
    const { value: summary } = await f.client.records.summary("rec-1");
    expect(summary.JobID).toBe("rec-1");
    expect(summary.Summary?.web).toBeDefined();
    const latest = await until(async () => (await f.client.records.latestDeployment("rec-1")).value ?? undefined, "a deployment");
    expect(latest.JobID).toBe("rec-1");
    const { value: deployments } = await f.client.records.deployments("rec-1");
    expect(deployments.map((d) => d.ID)).toContain(latest.ID);
  });

  it("asks for the records of earlier registrations with all=true", async () => {
    f.server.resetLog();
    await f.client.records.allocations("rec-1", { all: true });
    await f.client.records.deployments("rec-1", { all: true });
    const queries = f.server.requestLog.filter((e) => e.path.startsWith("/v1/job/rec-1/")).map((e) => [e.path, new URLSearchParams(e.query).get("all")]);
    expect(queries).toEqual([
      ["/v1/job/rec-1/allocations", "true"],
      ["/v1/job/rec-1/deployments", "true"],
    ]);
  });

  it("lists the services registered for a job's running allocations", async () => {
    const job = serviceJob("svc-1");
    job.TaskGroups = [{ ...job.TaskGroups![0]!, Services: [{ Name: "svc-one", PortLabel: "http", Provider: "nomad", Tags: ["a"] }], Networks: [{ Mode: "host", DynamicPorts: [{ Label: "http" }] }] }];
    await f.client.jobs.register({ Job: job });
    const services = await until(async () => {
      const { value } = await f.client.records.services("svc-1");
      return value.length > 0 ? value : undefined;
    }, "service registrations");
    expect(services[0]).toMatchObject({ ServiceName: "svc-one", JobID: "svc-1" });
  });
});
