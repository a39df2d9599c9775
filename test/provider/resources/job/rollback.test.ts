import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSchedulerService } from "../../../../devserver";
import { job } from "../../../../provider/resources/job";
import { recoverFromFailure } from "../../../../provider/resources/job/recovery";
import {
  applyJob,
  captureStderr,
  checked,
  countRequests,
  createJob,
  initError,
  registers,
  rejection,
  serverImage as imageOn,
  startHarness,
  type Harness,
} from "./harness";

const spec = (id: string, image: string, opts: { autoRevert?: boolean; memory?: number } = {}) => `
job "${id}" {
  datacenters = ["dc1"]
  group "g" {
    count = 2
    update {
      max_parallel = 1
      auto_revert  = ${opts.autoRevert === true}
    }
    task "t" {
      driver = "docker"
      config {
        image = "${image}"
      }
      resources {
        cpu    = 100
        memory = ${opts.memory ?? 128}
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
  sched.control.setTiming({ deploymentMs: 20 });
  sched.control.setNodes({});
});

afterAll(async () => {
  await h?.close();
});

const serverImage = (id: string): Promise<unknown> => imageOn(h.client, id);

describe("a failing deployment", () => {
  it("is reverted to the version that ran before; the update fails and state matches the server", async () => {
    const state = await createJob({ jobspec: spec("rb", "app:1") });
    expect(state.outs.version).toBe(0);
    sched.control.failNextDeployment("rb");

    const e = initError(await rejection(() => applyJob(state, { jobspec: spec("rb", "app:2") })));
    const server = (await h.client.jobs.info("rb")).value;
    const failed = (await h.client.records.deployments("rb")).value.find((d) => d.JobVersion === 1);
    expect(failed?.Status).toBe("failed");
    expect(e.message).toContain(
      `Deployment ${failed?.ID} of job "rb" in namespace "default" version 1 failed: ${failed?.StatusDescription}.`,
    );
    expect(e.message).toContain('Failed groups: "g" (');
    expect(e.message).toContain("Pulumi reverted the job to version 0 (now registered as version 2)");
    expect(e.message).toContain("revert deployment");
    expect(e.message).toContain("is successful");
    expect(e.message).toContain("Version now running: 2.");
    expect(countRequests(h.server, "POST", "/v1/job/rb/revert")).toBe(1);

    // The engine keeps these properties as the state: they match the server, spec included.
    expect(e.id).toBe(state.id);
    expect(server.Version).toBe(2);
    expect(await serverImage("rb")).toBe("app:1");
    expect(e.properties).toMatchObject({
      version: 2,
      jobModifyIndex: server.JobModifyIndex,
      inputsHash: state.outs.inputsHash,
    });
    expect(e.properties.normalizedJob).toBe(state.outs.normalizedJob);

    // Back on the program that runs: no change, but the engine plans an update for a resource with init
    // errors; the preview says why, and that update registers nothing and drops the failure from state.
    expect(e.properties.rolloutFailed).toBe(true);
    const back = await captureStderr(() => job.diff(e.id, e.properties, { jobspec: spec("rb", "app:1") }));
    expect(back.value.changes).toBe(false);
    expect(back.text).toContain('Job "rb": its last update failed');
    expect(back.text).toContain("registers nothing");
    const from = h.server.requestLog.length;
    const cleared = await job.update(e.id, e.properties, await checked({ jobspec: spec("rb", "app:1") }));
    expect(registers(h.server, from)).toBe(0);
    expect(countRequests(h.server, "POST", /\/revert$/, from)).toBe(0);
    expect(cleared.outs).not.toHaveProperty("rolloutFailed");

    // So the next preview shows the change again, and the next up applies it.
    const after = { id: e.id, outs: e.properties };
    const d = await captureStderr(() => job.diff(after.id, after.outs, { jobspec: spec("rb", "app:2") }));
    expect(d.value.changes).toBe(true);
    expect(d.text).toContain('"app:1" => "app:2"');
    const retried = await applyJob(after, { jobspec: spec("rb", "app:2") });
    expect(retried.outs).toMatchObject({ version: 3, deploymentStatus: "successful" });
  });

  it("is detected when the server's auto_revert already rolled back, and that rollback is waited for", async () => {
    const state = await createJob({ jobspec: spec("auto", "app:1", { autoRevert: true }) });
    sched.control.failNextDeployment("auto");
    const e = initError(
      await rejection(() => applyJob(state, { jobspec: spec("auto", "app:2", { autoRevert: true }) })),
    );
    expect(e.message).toContain("rolling back to job version 0");
    expect(e.message).toContain(
      "The scheduler's auto_revert rolled the job back to version 0 (now registered as version 2)",
    );
    expect(e.message).toMatch(/rollback deployment \S+ is successful/);
    expect(e.message).toContain("Version now running: 2.");
    expect(countRequests(h.server, "POST", "/v1/job/auto/revert")).toBe(0);
    const server = (await h.client.jobs.info("auto")).value;
    expect(await serverImage("auto")).toBe("app:1");
    expect(e.properties).toMatchObject({
      version: server.Version,
      jobModifyIndex: server.JobModifyIndex,
      deploymentStatus: "successful",
    });
    expect(e.properties.normalizedJob).toBe(state.outs.normalizedJob);
    expect(
      (await job.diff(e.id, e.properties, await checked({ jobspec: spec("auto", "app:2", { autoRevert: true }) })))
        .changes,
    ).toBe(true);
  });

  it('is left in place with onDeploymentFailure "fail", and state records the failed version', async () => {
    const state = await createJob({ jobspec: spec("keep", "app:1"), onDeploymentFailure: "fail" });
    sched.control.failNextDeployment("keep");
    const e = initError(
      await rejection(() => applyJob(state, { jobspec: spec("keep", "app:2"), onDeploymentFailure: "fail" })),
    );
    expect(e.message).toContain('The job was left on the failed version (onDeploymentFailure is "fail").');
    expect(e.message).toContain("Version now running: 1.");
    expect(countRequests(h.server, "POST", "/v1/job/keep/revert")).toBe(0);
    expect(await serverImage("keep")).toBe("app:2");
    expect(e.properties).toMatchObject({ version: 1, deploymentStatus: "failed" });
    // With an init error the engine keeps the failed update's inputs: the next check starts from them.
    const news = { jobspec: spec("keep", "app:2"), onDeploymentFailure: "fail" };
    const stored = await checked(news, state.inputs);
    const n = h.server.requestLog.length;
    expect((await job.diff(e.id, e.properties, await checked(news, stored))).changes).toBe(false);
    expect(h.server.requestLog.length).toBe(n);
  });

  it("fails fast on placements the cluster cannot fit, shows them at preview, and reverts", async () => {
    const state = await createJob({ jobspec: spec("big", "app:1") });
    sched.control.setNodes({ count: 2, memoryMB: 1024 });
    const d = await captureStderr(() =>
      job.diff(state.id, state.outs, { jobspec: spec("big", "app:1", { memory: 4096 }) }),
    );
    expect(d.value.changes).toBe(true);
    expect(d.text).toContain("! Failed placement:");
    expect(d.text).toContain("memory exhausted on 2 nodes");

    const e = initError(await rejection(() => applyJob(state, { jobspec: spec("big", "app:1", { memory: 4096 }) })));
    expect(e.message).toContain('The scheduler could not place version 1 of job "big"');
    expect(e.message).toContain('group "g": ');
    expect(e.message).toContain("memory exhausted");
    expect(e.message).toContain("Pulumi reverted the job to version 0");
    const server = (await h.client.jobs.info("big")).value;
    expect(server.TaskGroups?.[0]?.Tasks?.[0]?.Resources?.MemoryMB).toBe(128);
    expect(e.properties).toMatchObject({ version: server.Version, jobModifyIndex: server.JobModifyIndex });
  });

  it("times out without rolling back when the deployment takes longer than deploymentTimeout", async () => {
    const state = await createJob({ jobspec: spec("slow", "app:1") });
    sched.control.setTiming({ deploymentMs: 60_000 });
    const e = initError(
      await rejection(() => applyJob(state, { jobspec: spec("slow", "app:2"), deploymentTimeout: 0.2 })),
    );
    expect(e.message).toMatch(
      /^Timed out after 200ms waiting for deployment \S+ of job "slow" in namespace "default" version 1 \(status running/,
    );
    expect(e.message).toContain("Nothing was rolled back.");
    expect(e.message).not.toContain("Failed groups");
    expect(e.message).toMatch(/Still in progress: "g" \(0 of 2 healthy, 2 placed allocations\)\./);
    expect(await serverImage("slow")).toBe("app:2");
    expect(e.properties).toMatchObject({ version: 1, deploymentStatus: "running" });
  });
});

describe("a failing first deployment", () => {
  it("fails the create with the job kept in state (init error), since there is nothing to revert to", async () => {
    sched.control.failNextDeployment("fresh");
    const e = initError(await rejection(() => createJob({ jobspec: spec("fresh", "app:1") })));
    expect(e.id).toBe("fresh@default");
    expect(e.message).toContain('of job "fresh" in namespace "default" version 0 failed');
    expect(e.message).toContain("There is no earlier version to revert to.");
    expect(e.properties).toMatchObject({ jobId: "fresh", version: 0, deploymentStatus: "failed" });
    expect(countRequests(h.server, "POST", "/v1/job/fresh/revert")).toBe(0);
  });
});

describe("recoverFromFailure", () => {
  it("never reverts over a newer version written concurrently (EnforcePriorVersion)", async () => {
    const state = await createJob({ jobspec: spec("race", "app:1") });
    await applyJob(state, { jobspec: spec("race", "app:2") });
    // The failed version was 0, but version 1 is current now: the revert must be refused.
    const deployment = (await h.client.records.latestDeployment("race")).value;
    const r = await recoverFromFailure(
      h.client,
      { jobId: "race", namespace: "default", region: "global" },
      {
        ok: false,
        kind: "deployment",
        evalId: "e",
        deployment: {
          ...deployment,
          JobVersion: 0,
          Status: "failed",
          StatusDescription: "Failed due to unhealthy allocations",
        },
      },
      { failedVersion: 0, priorVersion: 0, mode: "revert", timeoutMs: 5000 },
    );
    expect(r.kind).toBe("refused");
    expect((await h.client.jobs.info("race")).value.Version).toBe(1);
    expect(await serverImage("race")).toBe("app:2");
  });
});
