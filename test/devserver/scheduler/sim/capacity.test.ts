/**
 * Every placement sums what the live allocations use, and every stop that frees capacity re-queues the
 * blocked evaluations. Both read the allocations still live and the evaluations still blocked, not the whole
 * tables, which keep every stopped allocation and finished evaluation: beside 2,000 stopped jobs a scan of
 * them per register and per stop made the devserver's work grow with the square of the jobs.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { Store } from "../../../../devserver/scheduler/state/store";
import { list, rec, serviceJob, startScheduler, type Harness } from "../http";

let h: Harness;
beforeAll(async () => {
  // One node with room for two jobs of serviceJob's size (2 allocations of 256 MB each).
  h = await startScheduler({ nodes: { count: 1, memoryMB: 1024 } });
});
afterAll(async () => {
  await h.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function register(id: string): Promise<Record<string, unknown>> {
  const r = await h.call("POST", "/v1/jobs", { body: { Job: serviceJob(id) } });
  expect(r.status, r.text).toBe(200);
  await h.sched.control.idle();
  return rec(r);
}

async function stop(id: string): Promise<void> {
  const r = await h.call("DELETE", `/v1/job/${id}`);
  expect(r.status, r.text).toBe(200);
  await h.sched.control.idle();
}

async function running(id: string): Promise<number> {
  const allocs = list(await h.call("GET", `/v1/job/${id}/allocations`));
  return allocs.filter((a) => a.ClientStatus === "running" && a.DesiredStatus === "run").length;
}

/** What the tables of every scheduler's store share: the class of its allocations, evaluations and deployments. */
const tables = Object.getPrototypeOf(new Store(() => 0).allocs) as Store["allocs"];

describe("capacity", () => {
  it("a stop frees what its allocations used: the blocked evaluation of a job that did not fit is placed", async () => {
    await register("cap-a");
    await register("cap-b");
    const c = await register("cap-c");
    expect([await running("cap-a"), await running("cap-b"), await running("cap-c")]).toEqual([2, 2, 0]);
    const first = rec(await h.call("GET", `/v1/evaluation/${String(c.EvalID)}`));
    expect(first.BlockedEval).not.toBe("");
    expect(rec(await h.call("GET", `/v1/evaluation/${String(first.BlockedEval)}`)).Status).toBe("blocked");

    await stop("cap-a");
    expect([await running("cap-a"), await running("cap-c")]).toEqual([0, 2]);
    expect(rec(await h.call("GET", `/v1/evaluation/${String(first.BlockedEval)}`)).Status).toBe("complete");
    await stop("cap-b");
    await stop("cap-c");
  });

  it("a register and a stop read no table whole, however many stopped jobs it keeps", async () => {
    for (let i = 0; i < 10; i++) {
      await register(`cap-old-${i}`);
      await stop(`cap-old-${i}`);
    }
    await register("cap-keep");
    const values = vi.spyOn(tables, "values");
    const iterate = vi.spyOn(tables, Symbol.iterator);
    await register("cap-new");
    await stop("cap-keep");
    await register("cap-new-2");
    expect([await running("cap-new"), await running("cap-new-2")]).toEqual([2, 2]);
    expect(values).not.toHaveBeenCalled();
    expect(iterate).not.toHaveBeenCalled();
  });
});
