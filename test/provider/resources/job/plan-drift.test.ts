/**
 * Apply matches preview: `update` plans again right before its register and refuses when that
 * plan has destructive updates or failed placements that the plan `diff` showed in the same `up` did not
 * (opt-out `allowPlanDrift`). The cluster changes between diff and update here the way it does for real:
 * nodes go away. Against the devserver over real HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSchedulerService } from "../../../../devserver";
import { job } from "../../../../provider/resources/job";
import { planDrift, planFacts, type ShownPlan } from "../../../../provider/resources/job/text";
import { captureStderr, checked, createJob, registers, rejection, startHarness, type Harness } from "./harness";

const spec = (id: string, memory: number, image = "app:1") => `
job "${id}" {
  datacenters = ["dc1"]
  group "g" {
    count = 2
    update {
      max_parallel = 2
    }
    task "t" {
      driver = "docker"
      config {
        image = "${image}"
      }
      resources {
        cpu    = 100
        memory = ${memory}
      }
    }
  }
}
`;

let h: Harness;
let sched: ReturnType<typeof createSchedulerService>;

beforeAll(async () => {
  sched = createSchedulerService({ deploymentMs: 20, evalDelayMs: 1 });
  h = await startHarness({ services: [sched] });
});

beforeEach(() => {
  sched.control.setNodes({});
});

afterAll(async () => {
  await h?.close();
});

describe("apply matches preview", () => {
  it("refuses a register whose plan now has failed placements the preview did not show, printing both plans", async () => {
    const state = await createJob({ jobspec: spec("pd", 128) });
    const news = await checked({ jobspec: spec("pd", 2048) }, state.inputs);
    const d = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.value.changes).toBe(true);
    expect(d.text).not.toContain("Failed placement");
    // Between the preview and the register the cluster shrinks: 2 GB no longer fits anywhere.
    sched.control.setNodes({ count: 2, memoryMB: 1024 });
    const from = h.server.requestLog.length;
    const out = await captureStderr(() => rejection(() => job.update(state.id, state.outs, news)));
    const e = out.value;
    expect(e.message).toContain(
      'Job "pd" in namespace "default" was not updated: right before the register the scheduler\'s plan has group "g": 2 allocations that cannot be placed (the preview showed 0)',
    );
    expect(e.message).toContain('the preview\'s plan showed group "g": 2 destructive');
    expect(e.message).toContain("allowPlanDrift: true");
    expect(out.text).toContain('Plan shown by this `up`:\nScheduler plan for job "pd"');
    expect(out.text).toContain('Plan right before the register:\nScheduler plan for job "pd"');
    expect(out.text).toContain("! Failed placement: 2 allocations could not be placed");
    expect(registers(h.server, from)).toBe(0);
    expect((await h.client.jobs.info("pd")).value.Version).toBe(0);
  });

  it("registers when the plan is what the preview showed (destructive updates included)", async () => {
    const state = await createJob({ jobspec: spec("pd-same", 128) });
    const news = await checked({ jobspec: spec("pd-same", 256) }, state.inputs);
    await captureStderr(() => job.diff(state.id, state.outs, news));
    const from = h.server.requestLog.length;
    const r = await job.update(state.id, state.outs, news);
    expect(registers(h.server, from)).toBe(1);
    expect(r.outs).toMatchObject({ version: 1, deploymentStatus: "successful" });
  });

  it("with allowPlanDrift: true, registers anyway (and the rollout then reports the failed placement)", async () => {
    const state = await createJob({
      jobspec: spec("pd-allow", 128),
      allowPlanDrift: true,
      onDeploymentFailure: "fail",
    });
    const news = await checked(
      { jobspec: spec("pd-allow", 2048), allowPlanDrift: true, onDeploymentFailure: "fail" },
      state.inputs,
    );
    await captureStderr(() => job.diff(state.id, state.outs, news));
    sched.control.setNodes({ count: 2, memoryMB: 1024 });
    const from = h.server.requestLog.length;
    const e = await rejection(() => job.update(state.id, state.outs, news));
    expect(registers(h.server, from)).toBe(1);
    expect(e.message).toContain('The scheduler could not place version 1 of job "pd-allow"');
  });

  it("refuses when this `up` showed no plan for the spec being registered (the diff ran for another spec)", async () => {
    const state = await createJob({ jobspec: spec("pd-other", 128) });
    await captureStderr(() => job.diff(state.id, state.outs, { jobspec: spec("pd-other", 256) }));
    const news = await checked({ jobspec: spec("pd-other", 256, "app:2") }, state.inputs);
    const from = h.server.requestLog.length;
    const e = await captureStderr(() => rejection(() => job.update(state.id, state.outs, news)));
    expect(e.value.message).toContain(
      'group "g": 2 destructive updates (the preview showed 0), which this `up` did not show (this `up` showed no scheduler plan for this spec)',
    );
    expect(registers(h.server, from)).toBe(0);
  });
});

describe("planDrift", () => {
  const facts = (destructive: Record<string, number>, failed: Record<string, number> = {}) => ({
    destructive,
    failed,
    failedSummary: "",
  });
  const shown = (f: ReturnType<typeof facts>): ShownPlan => ({ planned: true, facts: f, text: "" });

  it("lists only what exceeds the shown plan: more destructive updates, new or larger failed placements", () => {
    expect(planDrift(shown(facts({ a: 2 })), facts({ a: 2 }))).toEqual([]);
    expect(planDrift(shown(facts({ a: 2 })), facts({ a: 1 }))).toEqual([]);
    expect(planDrift(shown(facts({ a: 1 })), facts({ a: 2, b: 1 }))).toEqual([
      'group "a": 2 destructive updates (the preview showed 1)',
      'group "b": 1 destructive update (the preview showed 0)',
    ]);
    expect(planDrift(shown(facts({}, { a: 1 })), facts({}, { a: 1 }))).toEqual([]);
    expect(planDrift(shown(facts({}, { a: 1 })), facts({}, { a: 3 }))).toEqual([
      'group "a": 3 allocations that cannot be placed (the preview showed 1)',
    ]);
    expect(planDrift({ planned: false }, facts({ a: 1 }))).toEqual([
      'group "a": 1 destructive update (the preview showed 0)',
    ]);
  });

  it("reads the counts from a plan response", () => {
    expect(
      planFacts({
        Annotations: {
          DesiredTGUpdates: { web: { DestructiveUpdate: 2, InPlaceUpdate: 1 }, api: { InPlaceUpdate: 3 } },
        },
        FailedTGAllocs: { web: { CoalescedFailures: 1, DimensionExhausted: { memory: 2 } } },
      }),
    ).toEqual({
      destructive: { web: 2 },
      failed: { web: 2 },
      failedSummary: 'group "web": 2 allocations could not be placed (memory exhausted on 2 nodes)',
    });
  });
});
