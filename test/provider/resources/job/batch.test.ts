/**
 * Batch jobs: waitForCompletion, runOnce and triggers, against the devserver (batch work
 * that completes or fails, and the forced garbage collection of finished jobs).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StartedDevServer } from "../../../../devserver";
import { job } from "../../../../provider/resources/job";
import {
  applyJob,
  captureStderr,
  checked,
  createJob,
  refreshJob,
  registers,
  rejection,
  startHarness,
  type Harness,
} from "./harness";

const BATCH = (id: string, opts: { failTask?: boolean; type?: string } = {}) => `
job "${id}" {
  type = "${opts.type ?? "batch"}"

  group "work" {
    task "prepare" {
      driver = "exec"

      config {
        command = "/bin/true"
      }
    }

    task "run" {
      driver = "exec"

      config {
        command = "/usr/local/bin/report"
      }
${opts.failTask ? '\n      meta = {\n        "devserver.fail_batch" = "true"\n      }\n' : ""}
    }
  }
}
`;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1, batchMs: 150 } });
});
afterAll(async () => {
  await h.close();
});

const control = () => {
  const c = (h.server as StartedDevServer).schedulerControl;
  if (c === undefined) throw new Error("no scheduler control");
  return c;
};

async function allocations(
  id: string,
): Promise<{ ID?: string | null; ClientStatus?: string | null; JobVersion?: number | null }[]> {
  return (await h.client.records.allocations(id)).value;
}

describe("waitForCompletion", () => {
  it("returns once the job's allocations finished", async () => {
    // The work runs long enough to be seen running before it completes.
    control().setTiming({ batchMs: 600 });
    const { value: state, text } = await captureStderr(() =>
      createJob({ jobspec: BATCH("report-ok"), waitForCompletion: true }),
    ).finally(() => control().setTiming({ batchMs: 150 }));
    expect(state.outs.status).toBe("dead");
    expect((await allocations("report-ok")).map((a) => a.ClientStatus)).toEqual(["complete"]);
    expect(text).toContain('Job "report-ok": version 0 completed (1 allocation)');
    // Progress while waiting: one line per change of the allocations' client statuses.
    const running = text.indexOf('Job "report-ok": version 0 allocations: "work" 1 running, 0 complete, 0 failed');
    const complete = text.indexOf('Job "report-ok": version 0 allocations: "work" 0 running, 1 complete, 0 failed');
    expect(running).toBeGreaterThanOrEqual(0);
    expect(complete).toBeGreaterThan(running);
    expect(text.split("1 complete, 0 failed")).toHaveLength(2);
    // Without it, create returns while the work still runs.
    const quick = await createJob({ jobspec: BATCH("report-quick") });
    expect(quick.outs.status).not.toBe("dead");
    await control().idle();
  });

  it("fails on a failed allocation, naming its ID prefix, group, task and the events' messages", async () => {
    const e = await rejection(() =>
      createJob({ jobspec: BATCH("report-bad", { failTask: true }), waitForCompletion: true }),
    );
    const [a] = await allocations("report-bad");
    if (a === undefined) throw new Error(e.message);
    expect(a?.ClientStatus).toBe("failed");
    const prefix = String(a?.ID).slice(0, 8);
    expect(e.message).toBe(
      `Job "report-bad" in namespace "default" version 0: 1 allocation of 1 failed: allocation ${prefix} (group "work", task "run": ` +
        'Exit Code: 1, Exceeded allowed attempts 0 in interval 0s and mode is "fail").',
    );
    // The job was registered: the engine keeps it in state with the failure.
    expect(e.id).toBe("report-bad@default");
  });

  it("is refused for a service job at preview and create", async () => {
    const service = BATCH("svc-wait", { type: "service" });
    const e = await rejection(() => createJob({ jobspec: service, waitForCompletion: true }));
    expect(e.message).toContain(
      'Job "svc-wait": waitForCompletion apply only to batch and sysbatch jobs that run themselves, not to a service job.',
    );
    expect(await allocations("svc-wait")).toEqual([]);
    // Turned on later for a service job whose spec did not change: refused at preview too.
    const svc = await createJob({ jobspec: service });
    const late = await rejection(() => applyJob(svc, { jobspec: service, runOnce: true }));
    expect(late.message).toContain("runOnce apply only to batch and sysbatch jobs");
    const periodic = BATCH("per-wait").replace(
      'type = "batch"',
      'type = "batch"\n  periodic {\n    crons = ["0 3 * * *"]\n  }',
    );
    const p = await rejection(() => createJob({ jobspec: periodic, waitForCompletion: true }));
    expect(p.message).toContain("not to a periodic batch job (its runs are child jobs the scheduler launches)");
  });
});

describe("runOnce and triggers", () => {
  it("keeps a finished job the scheduler collected as done: refresh keeps it, the next up registers nothing", async () => {
    const inputs = { jobspec: BATCH("once"), waitForCompletion: true, runOnce: true };
    const state = await createJob(inputs);
    control().gc();
    expect(await h.client.jobs.find("once")).toBeUndefined();
    const refreshed = await refreshJob(state);
    expect(refreshed).toBeDefined();
    expect(refreshed?.outs).toMatchObject({ collected: true, status: "dead", jobId: "once", type: "batch" });
    const from = h.server.requestLog.length;
    const next = await applyJob(refreshed as NonNullable<typeof refreshed>, inputs);
    expect(next.step).toBe("same");
    // Even without the refresh, an up of the same inputs neither diffs nor registers.
    const direct = await applyJob(state, inputs);
    expect(direct.step).toBe("same");
    expect(registers(h.server, from)).toBe(0);
    expect(await h.client.jobs.find("once")).toBeUndefined();
    // A jobspec only reformatted is the same job: no change; with a setting changed too, it stays done.
    const reformatted = { ...inputs, jobspec: `# the same report\n${BATCH("once")}` };
    expect((await applyJob(direct, reformatted)).step).toBe("same");
    const again = await applyJob(direct, { ...reformatted, deploymentTimeout: "3m" });
    expect(again.step).toBe("update");
    expect(again.outs).toMatchObject({ collected: true, status: "dead" });
    expect(registers(h.server, from)).toBe(0);
  });

  it("without runOnce, refresh drops a collected job (the next up would run it again)", async () => {
    const state = await createJob({ jobspec: BATCH("not-once"), waitForCompletion: true });
    control().gc();
    expect(await refreshJob(state)).toBeUndefined();
  });

  it("runs a collected runOnce job again when its triggers change", async () => {
    const base = { jobspec: BATCH("nightly"), waitForCompletion: true, runOnce: true };
    const state = await createJob({ ...base, triggers: { dataset: "2026-11-24" } });
    control().gc();
    const refreshed = await refreshJob(state);
    if (refreshed === undefined) throw new Error("dropped");
    const news = await checked({ ...base, triggers: { dataset: "2026-11-25" } }, refreshed.inputs);
    const { value: d, text } = await captureStderr(() => job.diff(refreshed.id, refreshed.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain("new job");
    const from = h.server.requestLog.length;
    const next = await applyJob(refreshed, { ...base, triggers: { dataset: "2026-11-25" } });
    expect(next.step).toBe("update");
    expect(registers(h.server, from)).toBe(1);
    expect(next.outs.collected).toBeUndefined();
    expect(next.outs.status).toBe("dead");
    expect((await allocations("nightly")).map((a) => a.ClientStatus)).toEqual(["complete"]);
    const meta = (await h.client.jobs.find("nightly"))?.value.Meta ?? {};
    expect(meta["pulumi-triggers"]).toMatch(/^[0-9a-f]{16}$/);
    expect(JSON.stringify(meta)).not.toContain("2026-11-25");
  });

  it("runs a collected runOnce job again when its triggers change, without a refresh first", async () => {
    const base = { jobspec: BATCH("weekly"), waitForCompletion: true, runOnce: true };
    const state = await createJob({ ...base, triggers: { week: "47" } });
    control().gc();
    const next = await applyJob(state, { ...base, triggers: { week: "48" } });
    expect(next.step).toBe("update");
    expect(next.outs.status).toBe("dead");
    expect((await allocations("weekly")).map((a) => a.ClientStatus)).toEqual(["complete"]);
  });

  it("runs a finished job that is still there again when its triggers change (a new version)", async () => {
    const base = { jobspec: BATCH("hourly"), waitForCompletion: true, runOnce: true };
    const state = await createJob({ ...base, triggers: { run: "1" } });
    const same = await applyJob(state, { ...base, triggers: { run: "1" } });
    expect(same.step).toBe("same");
    // The same map with its keys in another order is no change.
    const two = await applyJob(same, { ...base, triggers: { run: "1", at: "x" } });
    expect(two.step).toBe("update");
    const swapped = await job.diff(
      two.id,
      { ...two.outs, triggers: { at: "x", run: "1" } },
      await checked({ ...base, triggers: { run: "1", at: "x" } }, two.inputs),
    );
    expect(swapped.changes).toBe(false);
    const next = await applyJob(two, { ...base, triggers: { run: "2" } });
    expect(next.step).toBe("update");
    expect(next.outs.version).toBe(2);
    const allocs = await allocations("hourly");
    expect(allocs.map((a) => [a.JobVersion, a.ClientStatus])).toEqual([
      [0, "complete"],
      [1, "complete"],
      [2, "complete"],
    ]);
  });
});

describe("on an older scheduler release", () => {
  // Last in this file: it points the providers at its own devserver.
  it("needs nothing 1.6.5 lacks: waits, keeps a collected job done, and re-runs on a trigger", async () => {
    const old = await startHarness({
      schedulerService: { deploymentMs: 20, evalDelayMs: 1, batchMs: 50, release: "1.6.5" },
    });
    try {
      const base = { jobspec: BATCH("legacy"), waitForCompletion: true, runOnce: true };
      const state = await createJob({ ...base, triggers: { n: "1" } });
      expect(state.outs.status).toBe("dead");
      (old.server as StartedDevServer).schedulerControl?.gc();
      const kept = await refreshJob(state);
      expect(kept?.outs.collected).toBe(true);
      const next = await applyJob(kept as NonNullable<typeof kept>, { ...base, triggers: { n: "2" } });
      expect(next.step).toBe("update");
      expect(next.outs.status).toBe("dead");
    } finally {
      await old.close();
    }
  });
});
