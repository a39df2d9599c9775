/**
 * The Job provider when a write's outcome is unknown: a fault proxy on
 * loopback sits between the provider and the devserver; what the server holds is read around the proxy.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { SchedulerClient } from "../../../../provider/clients/scheduler";
import { setConnectionOverrides } from "../../../../provider/config";
import { setStackConfig } from "../../../helpers/stack-config";
import { job as jobImpl } from "../../../../provider/resources/job";
import type { ProviderImpl } from "../../../../provider/resources/common";
import { upStep, type Stated } from "../../../helpers/engine-steps";
import { startFaultProxy, type FaultProxy } from "../../../helpers/fault-proxy";
import { SPEC } from "../../../helpers/jobspecs";

const job = jobImpl as unknown as ProviderImpl;

let dev: DevServer;
let proxy: FaultProxy;
let server: SchedulerClient;

beforeAll(async () => {
  dev = await startDevServer({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  proxy = await startFaultProxy(dev.urls.scheduler, "scheduler");
  setStackConfig({ schedulerAddress: proxy.url, schedulerToken: dev.rootTokens.scheduler });
  setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 10 }, timeoutMs: 5_000 });
  server = new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler, env: {} });
});
afterAll(async () => {
  setConnectionOverrides({});
  await proxy?.close();
  await dev?.close();
});
afterEach(() => proxy.clear());

const registersAtServer = (from: number) =>
  dev.requestLog.slice(from).filter((e) => e.method === "POST" && e.path === "/v1/jobs").length;

/** Reads the job around the proxy. */
async function held(id: string) {
  return (await server.jobs.find(id))?.value;
}

/** After a failed step: the re-run (faults off) converges, and state carries the index the server holds. */
async function rerunConverges(state: Stated | undefined, news: Record<string, unknown>, id: string): Promise<Stated> {
  proxy.clear();
  const again = await upStep(job, state, news);
  expect(again.error).toBeUndefined();
  const s = again.state as Stated;
  const now = await held(id);
  expect(now).toBeDefined();
  expect(s.outs.jobModifyIndex).toBe(now?.JobModifyIndex);
  const after = await upStep(job, s, news);
  expect(after.ran).toBe("same");
  return s;
}

describe("Job create whose register was applied but not confirmed", () => {
  it("a reset after the server applied the register: read back, never a plain error, no orphan", async () => {
    proxy.script({ kind: "reset-after", method: "POST", path: /^\/v1\/jobs$/ });
    const news = { jobspec: SPEC("orphan-a", "nginx:1") };
    const r = await upStep(job, undefined, news);
    // Either it was confirmed by reading back (no error), or Pulumi gets an init error with the ID: never nothing.
    if (r.error) expect(r.state?.id).toBe("orphan-a@default");
    else expect(r.state?.outs.jobModifyIndex).toBe((await held("orphan-a"))?.JobModifyIndex);
    const s = r.error ? await rerunConverges(r.state, news, "orphan-a") : (r.state as Stated);
    expect((await held("orphan-a"))?.Version).toBe(0);
    expect(s.id).toBe("orphan-a@default");
  });

  it("the reads after the register keep failing: an init error with the ID and the state read back", async () => {
    proxy.script({ kind: "status", status: 503, method: "GET", path: /^\/v1\/job\/orphan-b\/evaluations$/, times: 40 });
    const news = { jobspec: SPEC("orphan-b", "nginx:1") };
    const r = await upStep(job, undefined, news);
    expect(r.error).toBeDefined();
    expect(r.state?.id).toBe("orphan-b@default");
    expect(r.state?.initError).toBe(true);
    expect(r.state?.outs.jobModifyIndex).toBe((await held("orphan-b"))?.JobModifyIndex);
    await rerunConverges(r.state, news, "orphan-b");
  });

  it("the re-run of a create whose answer was lost recognises its own job, and still refuses a foreign one", async () => {
    // The register applied, every read after it failed and the provider process was gone before it could
    // record anything: the re-run finds a job that is exactly what it sends, at version 0.
    const news = { jobspec: SPEC("orphan-c", "nginx:1") };
    const first = await upStep(job, undefined, news);
    expect(first.error).toBeUndefined();
    const lost = await upStep(job, undefined, news);
    expect(lost.error).toBeUndefined();
    expect(lost.state?.outs.jobModifyIndex).toBe((await held("orphan-c"))?.JobModifyIndex);
    // A job that differs from what this resource sends is someone else's: still refused.
    const foreign = await upStep(job, undefined, { jobspec: SPEC("orphan-c", "nginx:2") });
    expect(foreign.error?.message).toMatch(/already exists/);
    expect((await held("orphan-c"))?.Version).toBe(0);
  });
});

describe("Job update whose register was applied but a later read failed", () => {
  it("state takes the server's new jobModifyIndex and the next up finishes instead of seeing no change", async () => {
    const v1 = { jobspec: SPEC("stale", "nginx:1") };
    const created = await upStep(job, undefined, v1);
    expect(created.error).toBeUndefined();
    const v2 = { jobspec: SPEC("stale", "nginx:2") };
    proxy.script({ kind: "status", status: 503, method: "GET", path: /^\/v1\/job\/stale\/evaluations$/, times: 40 });
    const r = await upStep(job, created.state, v2);
    expect(r.error).toBeDefined();
    const now = await held("stale");
    expect(now?.Version).toBe(1);
    // The failed update must not leave the old index in state.
    expect(r.state?.outs.jobModifyIndex).toBe(now?.JobModifyIndex);
    const s = await rerunConverges(r.state, v2, "stale");
    // A later real change goes through check-and-set: nobody else touched the job.
    const v3 = await upStep(job, s, { jobspec: SPEC("stale", "nginx:3") });
    expect(v3.error).toBeUndefined();
    expect((await held("stale"))?.Version).toBe(2);
  });
});

describe("check-and-set registers are retried with a re-read in between", () => {
  it("a 503 on the create's register is retried; the job is registered once", async () => {
    const from = dev.requestLog.length;
    proxy.script({ kind: "status", status: 503, method: "POST", path: /^\/v1\/jobs$/ });
    const r = await upStep(job, undefined, { jobspec: SPEC("cas-a", "nginx:1") });
    expect(r.error).toBeUndefined();
    expect(registersAtServer(from)).toBe(1);
    expect((await held("cas-a"))?.Version).toBe(0);
  });

  it("a reset after an update's register was applied: the re-read sees it applied, one new version, no error", async () => {
    const created = await upStep(job, undefined, { jobspec: SPEC("cas-b", "nginx:1") });
    const from = dev.requestLog.length;
    proxy.script({ kind: "reset-after", method: "POST", path: /^\/v1\/jobs$/ });
    const r = await upStep(job, created.state, { jobspec: SPEC("cas-b", "nginx:2") });
    expect(r.error).toBeUndefined();
    const now = await held("cas-b");
    expect(now?.Version).toBe(1);
    expect(r.state?.outs.jobModifyIndex).toBe(now?.JobModifyIndex);
    expect(registersAtServer(from)).toBe(1);
  });

  it("a 502 before the server saw an update's register: re-read, then registered again", async () => {
    const created = await upStep(job, undefined, { jobspec: SPEC("cas-c", "nginx:1") });
    const from = dev.requestLog.length;
    const mark = proxy.log.length;
    proxy.script(
      { kind: "reset-before", method: "POST", path: /^\/v1\/jobs$/ },
      { kind: "status", status: 502, method: "POST", path: /^\/v1\/jobs$/ },
    );
    const r = await upStep(job, created.state, { jobspec: SPEC("cas-c", "nginx:2") });
    expect(r.error).toBeUndefined();
    expect((await held("cas-c"))?.Version).toBe(1);
    expect(registersAtServer(from)).toBe(1);
    // Between the failed attempts and the one that went through, the job was read.
    const seq = proxy.log
      .slice(mark)
      .filter((e) => e.path === "/v1/jobs" || e.path === "/v1/job/cas-c")
      .map((e) => `${e.method} ${e.path}`);
    expect(seq).toEqual(
      ["POST /v1/jobs", "GET /v1/job/cas-c", "POST /v1/jobs", "GET /v1/job/cas-c", "POST /v1/jobs"].concat(
        seq.slice(5),
      ),
    );
  });
});
