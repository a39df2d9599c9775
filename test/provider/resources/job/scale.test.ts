/**
 * Autoscaler-safe updates: with preserveCounts / preserveResources, a job scaled through
 * the API (or with only counts/resources changed) between two `up`s is updated on its current index, keeping
 * the scaled values, without a refresh; any other change made outside Pulumi is still refused.
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
import { serviceSpec } from "../../../helpers/jobspecs";

/** The shared service job with two allocations and 128 MB each (the size autoscaling moves). */
const SPEC = (id: string, image: string, count = 2, cpu = 100): string =>
  serviceSpec(id, image, { count, cpu, memory: 128 });

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
});
afterAll(async () => {
  await h.close();
});

const idle = (): Promise<void> => (h.server as StartedDevServer).schedulerControl?.idle() ?? Promise.resolve();

async function scale(id: string, count: number): Promise<void> {
  await h.client.jobs.scale(id, { Count: count, Target: { Group: "api" }, Message: "autoscaler" });
  await idle();
}

async function serverJob(id: string): Promise<Record<string, unknown>> {
  const found = await h.client.jobs.find(id);
  if (found === undefined) throw new Error(`job ${id} not found`);
  return found.value as Record<string, unknown>;
}

function group(j: Record<string, unknown>): Record<string, unknown> {
  return (j.TaskGroups as Record<string, unknown>[])[0] as Record<string, unknown>;
}

function task(j: Record<string, unknown>): Record<string, unknown> {
  return (group(j).Tasks as Record<string, unknown>[])[0] as Record<string, unknown>;
}

describe("autoscaler-safe updates", () => {
  it("updates a job scaled through /scale between two ups on its current index, keeping the scaled count", async () => {
    const state = await createJob({ jobspec: SPEC("scaled", "nginx:1.25"), preserveCounts: true });
    await scale("scaled", 4);
    const moved = (await serverJob("scaled")).JobModifyIndex;
    expect(moved).not.toBe(state.outs.jobModifyIndex);

    // Preview: the plan keeps the scaled count and does not call the job changed outside Pulumi.
    const news = await checked({ jobspec: SPEC("scaled", "nginx:1.26"), preserveCounts: true }, state.inputs);
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain(
      `was scaled outside Pulumi (JobModifyIndex ${state.outs.jobModifyIndex} -> ${String(moved)})`,
    );
    expect(text).not.toContain("changed outside Pulumi");
    expect(text).not.toContain("Count:");

    const from = h.server.requestLog.length;
    const next = await applyJob(state, { jobspec: SPEC("scaled", "nginx:1.26"), preserveCounts: true });
    expect(next.step).toBe("update");
    expect(registers(h.server, from)).toBe(1);
    const after = await serverJob("scaled");
    expect(group(after).Count).toBe(4);
    expect((task(after).Config as Record<string, unknown>).image).toBe("nginx:1.26");
    expect(next.outs.jobModifyIndex).toBe(after.JobModifyIndex);
    // State holds what runs: the same inputs show no change.
    const again = await applyJob(next, { jobspec: SPEC("scaled", "nginx:1.26"), preserveCounts: true });
    expect(again.step).toBe("same");
    // Scaled again, then refreshed: the next preview of the same inputs shows no change either.
    await scale("scaled", 5);
    const refreshed = await refreshJob(again);
    if (refreshed === undefined) throw new Error("refresh dropped the job");
    const after2 = await applyJob(refreshed, { jobspec: SPEC("scaled", "nginx:1.26"), preserveCounts: true });
    expect(after2.step).toBe("same");
  });

  it("without preserveCounts the same sequence is refused as a change made outside Pulumi", async () => {
    const state = await createJob({ jobspec: SPEC("scaled-plain", "nginx:1.25") });
    await scale("scaled-plain", 3);
    const e = await rejection(() => applyJob(state, { jobspec: SPEC("scaled-plain", "nginx:1.26") }));
    expect(e.message).toContain("was changed outside Pulumi");
  });

  it("still refuses a change outside Pulumi that is not only scaling", async () => {
    const state = await createJob({ jobspec: SPEC("scaled-drift", "nginx:1.25"), preserveCounts: true });
    await scale("scaled-drift", 3);
    // Someone else changes the image too.
    const parsed = await h.client.jobs.parse({ JobHCL: SPEC("scaled-drift", "nginx:1.27", 3), Canonicalize: true });
    await h.client.jobs.register({ Job: parsed.value });
    await idle();
    const e = await rejection(() =>
      applyJob(state, { jobspec: SPEC("scaled-drift", "nginx:1.26"), preserveCounts: true }),
    );
    expect(e.message).toContain("was changed outside Pulumi");
    expect((task(await serverJob("scaled-drift")).Config as Record<string, unknown>).image).toBe("nginx:1.27");
  });

  it("with preserveResources keeps task resources changed outside Pulumi and registers on the current index", async () => {
    const state = await createJob({
      jobspec: SPEC("sized", "nginx:1.25"),
      preserveResources: true,
      preserveCounts: true,
    });
    // A vertical autoscaler registers the same job with more CPU, then a horizontal one scales it.
    const parsed = await h.client.jobs.parse({ JobHCL: SPEC("sized", "nginx:1.25", 2, 300), Canonicalize: true });
    await h.client.jobs.register({ Job: parsed.value });
    await idle();
    await scale("sized", 3);
    const next = await applyJob(state, {
      jobspec: SPEC("sized", "nginx:1.26"),
      preserveResources: true,
      preserveCounts: true,
    });
    expect(next.step).toBe("update");
    const after = await serverJob("sized");
    expect((task(after).Resources as Record<string, unknown>).CPU).toBe(300);
    expect(group(after).Count).toBe(3);
    expect((task(after).Config as Record<string, unknown>).image).toBe("nginx:1.26");

    // preserveCounts alone does not cover a resource change.
    const other = await createJob({ jobspec: SPEC("sized-counts", "nginx:1.25"), preserveCounts: true });
    const p2 = await h.client.jobs.parse({ JobHCL: SPEC("sized-counts", "nginx:1.25", 2, 300), Canonicalize: true });
    await h.client.jobs.register({ Job: p2.value });
    await idle();
    const e = await rejection(() =>
      applyJob(other, { jobspec: SPEC("sized-counts", "nginx:1.26"), preserveCounts: true }),
    );
    expect(e.message).toContain("was changed outside Pulumi");
  });
});

describe("on an older scheduler release", () => {
  // Last in this file: it points the providers at its own devserver.
  it("a 1.6.5 scheduler scaled between two ups is updated on its current index too", async () => {
    const old = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1, release: "1.6.5" } });
    try {
      const state = await createJob({
        jobspec: SPEC("legacy", "nginx:1.25"),
        preserveCounts: true,
        preserveResources: true,
      });
      await old.client.jobs.scale("legacy", { Count: 4, Target: { Group: "api" }, Message: "autoscaler" });
      await (old.server as StartedDevServer).schedulerControl?.idle();
      const next = await applyJob(state, {
        jobspec: SPEC("legacy", "nginx:1.26"),
        preserveCounts: true,
        preserveResources: true,
      });
      expect(next.step).toBe("update");
      const after = (await old.client.jobs.info("legacy")).value as Record<string, unknown>;
      expect(group(after).Count).toBe(4);
      expect((task(after).Config as Record<string, unknown>).image).toBe("nginx:1.26");
    } finally {
      await old.close();
    }
  });
});
