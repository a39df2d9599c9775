/**
 * Conformance of blocking queries on a job (`?index=&wait=`) and the watch iterator over real HTTP. Runs
 * against the devserver by default and against a real cluster with CONFORMANCE_TARGET=env.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { watch } from "../../provider/clients/scheduler";
import type { Job } from "../../provider/schemas/scheduler";
import { schedulerSide, serviceJob, until, withLogLevel, type SchedulerSide } from "./scheduler-fixture";
import { openTarget, type ConformanceTarget } from "./target";

describe("blocking queries", () => {
  // Blocking indexes are table-wide on the real scheduler (any job's change moves them), so these tests
  // have a file (a fresh devserver) of their own and use a parameterized job, which has no evaluations or
  // allocations changing it.
  let bt: ConformanceTarget;
  let b: SchedulerSide;
  const quiet = (id: string, level = "info"): Job =>
    withLogLevel(serviceJob(id, { Type: "batch", ParameterizedJob: { Payload: "optional" } }), level);
  beforeAll(async () => {
    bt = await openTarget();
    b = schedulerSide(bt);
  });
  afterAll(() => bt?.close());

  /** Registers a job, starts a blocking read of it, changes the job, and resolves to the read and its index. */
  async function blockedAcrossChange(name: string) {
    const id = bt.name(name);
    await b.register({ Job: quiet(id) });
    const before = await b.client.jobs.info(id);
    const index = before.meta.lastIndex ?? 0;
    b.record.clear();
    const blocked = b.client.jobs.info(id, { waitIndex: index, waitMs: 20_000 });
    await until(() => (b.record.sent.length === 1 ? true : undefined), "the blocking read to be sent");
    await b.client.jobs.register({ Job: quiet(id, "debug") });
    return { id, index, after: await blocked };
  }

  it("returns a blocked read when the job changes, with a higher index", async () => {
    const { index, after } = await blockedAcrossChange("block-1");
    expect(after.value.Version).toBe(1);
    expect(after.meta.lastIndex).toBeGreaterThan(index);
  });

  it("sends the blocking read as ?index= and a Go duration in ?wait=", async () => {
    const { id, index, after } = await blockedAcrossChange("block-q");
    expect(after.value.Version).toBe(1);
    const q = b.record.lastQuery("GET", `/v1/job/${id}`);
    expect(q.get("index")).toBe(String(index));
    expect(q.get("wait")).toBe("20000ms");
  });

  it("returns the unchanged job with the same index after the wait when nothing changes", async () => {
    const id = bt.name("block-2");
    await b.register({ Job: quiet(id) });
    const before = await b.client.jobs.info(id);
    const after = await b.client.jobs.info(id, { waitIndex: before.meta.lastIndex, waitMs: 50 });
    expect(after.value.Version).toBe(0);
    expect(after.meta.lastIndex).toBe(before.meta.lastIndex);
  });

  it("watch yields the job now and again after each change", async () => {
    const id = bt.name("watch-1");
    await b.register({ Job: quiet(id) });
    const abort = new AbortController();
    const versions: number[] = [];
    for await (const { value } of watch((o) => b.client.jobs.info(id, o), { waitMs: 20_000, signal: abort.signal })) {
      versions.push(value.Version ?? -1);
      if (versions.length === 1) await b.client.jobs.register({ Job: quiet(id, "debug") });
      else if (versions.length === 2) await b.client.jobs.register({ Job: quiet(id, "warn") });
      else abort.abort();
    }
    expect(versions).toEqual([0, 1, 2]);
  });
});
