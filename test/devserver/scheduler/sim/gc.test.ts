/**
 * The scheduler collects finished records as the real server's garbage collector does: a purged job's
 * evaluations and allocations go once older than the evaluation threshold (at once on `PUT /v1/system/gc`),
 * a stopped job once older than the job threshold, a finished deployment once older than the deployment
 * threshold. Without it the devserver kept every purged job's records, and its memory grew with every
 * create and destroy.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { admitJob } from "../../../../devserver/scheduler/ops/admission";
import { JobOps } from "../../../../devserver/scheduler/ops/jobs";
import { allocAsk, makeNodes } from "../../../../devserver/scheduler/sim/cluster";
import { Engine } from "../../../../devserver/scheduler/sim/engine";
import { GarbageCollector, gcSettings, type GcOptions } from "../../../../devserver/scheduler/sim/gc";
import type { JsonObject } from "../../../../devserver/scheduler/state/json";
import { Store } from "../../../../devserver/scheduler/state/store";
import { batchJob, list, rec, serviceJob, startScheduler, until, type Harness } from "../http";

type Obj = Record<string, unknown>;

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** A job that starts a deployment (one allocation, rolling update) and asks little of its node. */
function deployedJob(id: string): Obj {
  return serviceJob(
    id,
    { Update: { MaxParallel: 1 } },
    { Count: 1, Networks: [], Services: [], Tasks: [{ Name: "app", Driver: "docker", Config: { image: "x" } }] },
  );
}

/** The scheduler's store, simulation, job operations and collector in this process, on a clock the test moves. */
function inProcess(gc: GcOptions = {}) {
  let index = 0;
  const clock = { now: 1_000_000_000_000 };
  const store = new Store(() => ++index, allocAsk);
  const engine = new Engine(store, {
    evalDelayMs: 0,
    deploymentMs: 1,
    batchMs: 1,
    nodes: makeNodes({ count: 3, cpu: 1e9, memoryMB: 1e9 }),
  });
  const ops = new JobOps(store, engine, { trackedVersions: 6, maxSourceBytes: 1_000_000 });
  const collector = new GarbageCollector(store, gcSettings(gc), () => clock.now);
  const admit = (raw: Obj): JsonObject =>
    admitJob(raw as JsonObject, {
      queryNamespace: "",
      bodyNamespace: "",
      queryRegion: "",
      bodyRegion: "",
      agentRegion: "global",
    });
  return {
    store,
    engine,
    clock,
    collector,
    register: (raw: Obj) => ops.register({ job: admit(raw) }),
    purge: (id: string) => ops.deregister("default", id, { purge: true, evalPriority: 0 }),
    stop: (id: string) => ops.deregister("default", id, { purge: false, evalPriority: 0 }),
    sizes: () => ({
      jobs: store.jobs.size,
      evals: store.evals.size,
      allocs: store.allocs.size,
      deployments: store.deployments.size,
    }),
    close: () => engine.close(),
  };
}

describe("forced garbage collection over HTTP", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startScheduler();
  });
  afterAll(async () => {
    await h.close();
  });

  it("PUT /v1/system/gc removes a purged job's evaluations, allocations and deployments: reads answer 404", async () => {
    const r = await h.call("POST", "/v1/jobs", { body: { Job: deployedJob("gc-purged") } });
    expect(r.status, r.text).toBe(200);
    await h.sched.control.idle();
    const [alloc] = list(await h.call("GET", "/v1/job/gc-purged/allocations"));
    const deployment = rec(await h.call("GET", "/v1/job/gc-purged/deployment"));
    const registerEval = String(rec(r).EvalID);
    const purge = await h.call("DELETE", "/v1/job/gc-purged?purge=true");
    expect(purge.status, purge.text).toBe(200);
    await h.sched.control.idle();
    const purgeEval = String(rec(purge).EvalID);
    const reads = [
      `/v1/evaluation/${registerEval}`,
      `/v1/evaluation/${purgeEval}`,
      `/v1/allocation/${String(alloc?.ID)}`,
      `/v1/deployment/${String(deployment.ID)}`,
    ];
    // Until collected, the purged job's records are still read.
    for (const path of reads) expect((await h.call("GET", path)).status, path).toBe(200);
    expect(list(await h.call("GET", "/v1/job/gc-purged/evaluations"))).toHaveLength(2);

    const gc = await h.call("PUT", "/v1/system/gc");
    expect(gc.status, gc.text).toBe(200);
    for (const path of reads) expect((await h.call("GET", path)).status, path).toBe(404);
    expect(list(await h.call("GET", "/v1/job/gc-purged/evaluations"))).toEqual([]);
    expect(list(await h.call("GET", "/v1/job/gc-purged/allocations?all=true"))).toEqual([]);
    expect(list(await h.call("GET", "/v1/job/gc-purged/deployments?all=true"))).toEqual([]);
  });

  it("leaves what a running job still uses: its live allocations, their evaluation and its deployment", async () => {
    const r = await h.call("POST", "/v1/jobs", { body: { Job: deployedJob("gc-running") } });
    expect(r.status, r.text).toBe(200);
    await h.sched.control.idle();
    expect((await h.call("PUT", "/v1/system/gc")).status).toBe(200);
    expect(rec(await h.call("GET", "/v1/job/gc-running")).Status).toBe("running");
    expect(rec(await h.call("GET", `/v1/evaluation/${String(rec(r).EvalID)}`)).Status).toBe("complete");
    const allocs = list(await h.call("GET", "/v1/job/gc-running/allocations"));
    expect(allocs.map((a) => a.ClientStatus)).toEqual(["running"]);
  });
});

describe("the thresholds of a periodic run", () => {
  it("keeps a purged job's records until the evaluation threshold has passed, then removes them", async () => {
    const s = inProcess();
    s.collector.run(); // notes the time of index 0
    s.register(deployedJob("purged"));
    await s.engine.idle();
    s.purge("purged");
    await s.engine.idle();
    s.clock.now += 5 * MINUTE;
    s.collector.run(); // notes the purge's index
    expect(s.sizes()).toMatchObject({ jobs: 0, evals: 2, allocs: 1, deployments: 1 });
    s.clock.now += HOUR - 5 * MINUTE;
    expect(s.collector.run()).toEqual({ jobs: 0, evals: 0, allocs: 0, deployments: 0 });
    s.clock.now += 5 * MINUTE; // an hour after the purge
    expect(s.collector.run()).toEqual({ jobs: 0, evals: 2, allocs: 1, deployments: 1 });
    expect(s.sizes()).toEqual({ jobs: 0, evals: 0, allocs: 0, deployments: 0 });
    s.close();
  });

  it("keeps a stopped job (still read as dead) until the job threshold, its records with it", async () => {
    const s = inProcess();
    s.collector.run();
    s.register(deployedJob("stopped"));
    await s.engine.idle();
    s.stop("stopped");
    await s.engine.idle();
    expect(s.store.getJob("default", "stopped")?.job.Status).toBe("dead");
    s.clock.now += 5 * MINUTE;
    s.collector.run();
    s.clock.now += 2 * HOUR;
    // The evaluations are old enough for the evaluation threshold, but the job keeps them: it is still read.
    expect(s.collector.run()).toMatchObject({ jobs: 0 });
    expect(s.store.getJob("default", "stopped")).toBeDefined();
    s.clock.now += 2 * HOUR; // four hours after the job was created
    expect(s.collector.run()).toMatchObject({ jobs: 1 });
    expect(s.sizes()).toEqual({ jobs: 0, evals: 0, allocs: 0, deployments: 0 });
    s.close();
  });

  it("gives a batch job's evaluations the batch threshold, and keeps a finished batch job's current work", async () => {
    const s = inProcess({ jobThresholdMs: 48 * HOUR });
    s.collector.run();
    s.register(batchJob("batch"));
    await s.engine.idle();
    expect(s.store.getJob("default", "batch")?.job.Status).toBe("dead");
    s.clock.now += 5 * MINUTE;
    s.collector.run();
    s.clock.now += 2 * HOUR;
    expect(s.collector.run()).toEqual({ jobs: 0, evals: 0, allocs: 0, deployments: 0 });
    s.clock.now += 24 * HOUR;
    // Old enough for the batch threshold, but the job is registered: its current allocation stays.
    expect(s.collector.run()).toEqual({ jobs: 0, evals: 0, allocs: 0, deployments: 0 });
    s.clock.now += 24 * HOUR;
    expect(s.collector.run()).toEqual({ jobs: 1, evals: 1, allocs: 1, deployments: 0 });
    s.close();
  });

  it("keeps its table of times bounded however often it runs", () => {
    const s = inProcess({ intervalMs: 1 });
    for (let i = 0; i < 5000; i++) {
      s.clock.now += 30_000; // 41 h in all
      s.collector.run();
    }
    // 24 h (the longest default threshold) at 5-minute spacing: 289 entries at most.
    expect((s.collector as unknown as { times: unknown[] }).times.length).toBeLessThanOrEqual(289);
    s.close();
  });

  it("refuses a threshold or interval that is not a number of milliseconds", () => {
    expect(() => gcSettings({ evalThresholdMs: -1 })).toThrow(/gc.evalThresholdMs/);
    expect(() => gcSettings({ jobThresholdMs: Number.NaN })).toThrow(/gc.jobThresholdMs/);
    expect(() => gcSettings({ intervalMs: 0 })).toThrow(/gc.intervalMs/);
    expect(gcSettings({})).toEqual({
      jobThresholdMs: 4 * HOUR,
      evalThresholdMs: HOUR,
      batchEvalThresholdMs: 24 * HOUR,
      deploymentThresholdMs: HOUR,
      intervalMs: 5 * MINUTE,
    });
  });
});

describe("the devserver's periodic collector", () => {
  it("runs on its own every intervalMs with the configured thresholds", async () => {
    const h = await startScheduler({
      gc: { intervalMs: 20, jobThresholdMs: 0, evalThresholdMs: 0, batchEvalThresholdMs: 0, deploymentThresholdMs: 0 },
    });
    try {
      const r = await h.call("POST", "/v1/jobs", { body: { Job: deployedJob("gc-periodic") } });
      await h.sched.control.idle();
      await h.call("DELETE", "/v1/job/gc-periodic?purge=true");
      await h.sched.control.idle();
      await until(
        async () =>
          (await h.call("GET", `/v1/evaluation/${String(rec(r).EvalID)}`)).status === 404 ? true : undefined,
        "the periodic collector to remove the purged job's evaluation",
      );
      expect(list(await h.call("GET", "/v1/job/gc-periodic/allocations?all=true"))).toEqual([]);
    } finally {
      await h.close();
    }
  });
});

describe("memory over many creates and purges", () => {
  it("2,000 jobs created and purged ten times: no record of them kept, the heap flat", async () => {
    setFlagsFromString("--expose-gc");
    const collectHeap = runInNewContext("gc") as () => void;
    const s = inProcess();
    const heaps: number[] = [];
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 2000; i++) s.register(deployedJob(`job-${i}`));
      await s.engine.idle();
      for (let i = 0; i < 2000; i++) s.purge(`job-${i}`);
      await s.engine.idle();
      s.collector.force();
      expect(s.sizes()).toEqual({ jobs: 0, evals: 0, allocs: 0, deployments: 0 });
      for (let i = 0; i < 2000; i += 499) {
        expect([...s.store.evals.ofJob("default", `job-${i}`)]).toEqual([]);
        expect([...s.store.allocs.ofJob("default", `job-${i}`)]).toEqual([]);
      }
      collectHeap();
      collectHeap();
      heaps.push(process.memoryUsage().heapUsed);
    }
    // Without the collector each round kept about 16 MB more; with it the heap stays within noise.
    const mb = heaps.map((b) => (b / 2 ** 20).toFixed(1)).join(", ");
    expect((heaps.at(-1) ?? 0) - (heaps[0] ?? 0), `heap after each round (MB): ${mb}`).toBeLessThan(4 * 2 ** 20);
    s.close();
  }, 120_000);
});
