/**
 * `onDeploymentFailure: { revertTo: "<tag>" }`: a failed deployment is reverted to the version
 * carrying that version tag, with check-and-set on the failed version; a missing tag (or a scheduler older
 * than version tags) reverts nothing and says why. Against the devserver over real HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSchedulerService, startDevServer, type DevServer } from "../../../../devserver";
import { setStackConfig } from "../../../helpers/stack-config";
import { recoverFromFailure } from "../../../../provider/resources/job/recovery";
import { SMALL_SPEC } from "../../../helpers/jobspecs";
import {
  applyJob,
  countRequests,
  createJob,
  initError,
  rejection,
  serverImage as imageOn,
  startHarness,
  type Harness,
} from "./harness";

const spec = SMALL_SPEC;

let h: Harness;
let sched: ReturnType<typeof createSchedulerService>;

beforeAll(async () => {
  sched = createSchedulerService({ deploymentMs: 20, evalDelayMs: 1 });
  h = await startHarness({ services: [sched] });
});

beforeEach(() => {
  setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: h.server.rootTokens.scheduler });
});

afterAll(async () => {
  await h?.close();
});

const serverImage = (id: string): Promise<unknown> => imageOn(h.client, id);

describe("onDeploymentFailure: { revertTo }", () => {
  it("reverts a failed deployment to the tagged version, not the one that ran before", async () => {
    const settings = { onDeploymentFailure: { revertTo: "good" } };
    let state = await createJob({ jobspec: spec("rt", "app:1"), ...settings });
    await h.client.versions.tagVersion("rt", "good", { Version: 0 });
    state = await applyJob(state, { jobspec: spec("rt", "app:2"), ...settings });
    expect(state.outs).toMatchObject({ version: 1, deploymentStatus: "successful" });

    sched.control.failNextDeployment("rt");
    const from = h.server.requestLog.length;
    const e = initError(await rejection(() => applyJob(state, { jobspec: spec("rt", "app:3"), ...settings })));
    expect(e.message).toContain("version 2 failed: Failed due to unhealthy allocations.");
    expect(e.message).toContain('Pulumi reverted the job to version 0, tagged "good" (now registered as version 3)');
    expect(e.message).toContain("Version now running: 3.");
    expect(countRequests(h.server, "POST", "/v1/job/rt/revert", from)).toBe(1);
    expect(await serverImage("rt")).toBe("app:1");
    // State holds what runs (the tagged version's spec, not version 1's): the next preview shows a change.
    expect(e.properties).toMatchObject({ version: 3, rolloutFailed: true, inputsHash: "" });
    expect(e.properties.normalizedJob).toContain("app:1");
    const again = await applyJob(
      { id: e.id as string, outs: e.properties, inputs: state.inputs },
      { jobspec: spec("rt", "app:2"), ...settings },
    );
    expect(again.step).toBe("update");
    expect(await serverImage("rt")).toBe("app:2");
  });

  it("reverts nothing when no version carries the tag, and says so", async () => {
    const settings = { onDeploymentFailure: { revertTo: "missing" } };
    const state = await createJob({ jobspec: spec("rt-missing", "app:1"), ...settings });
    sched.control.failNextDeployment("rt-missing");
    const from = h.server.requestLog.length;
    const e = initError(await rejection(() => applyJob(state, { jobspec: spec("rt-missing", "app:2"), ...settings })));
    expect(e.message).toContain(
      'Pulumi did not revert to the version tagged "missing": no version of job "rt-missing" carries the tag "missing"',
    );
    expect(e.message).toContain("Version now running: 1.");
    expect(countRequests(h.server, "POST", "/v1/job/rt-missing/revert", from)).toBe(0);
    expect(await serverImage("rt-missing")).toBe("app:2");
  });

  it("keeps check-and-set: never reverts over a newer version written meanwhile", async () => {
    const state = await createJob({ jobspec: spec("rt-race", "app:1") });
    await h.client.versions.tagVersion("rt-race", "good", { Version: 0 });
    const second = await applyJob(state, { jobspec: spec("rt-race", "app:2") });
    await applyJob(second, { jobspec: spec("rt-race", "app:3") });
    expect((await h.client.jobs.info("rt-race")).value.Version).toBe(2);
    // Version 1 "failed", but version 2 is current now: the revert must be refused.
    const deployment = (await h.client.records.latestDeployment("rt-race")).value;
    const r = await recoverFromFailure(
      h.client,
      { jobId: "rt-race", namespace: "default", region: "global" },
      {
        ok: false,
        kind: "deployment",
        evalId: "e",
        deployment: {
          ...deployment,
          JobVersion: 1,
          Status: "failed",
          StatusDescription: "Failed due to unhealthy allocations",
        },
      },
      { failedVersion: 1, priorVersion: 0, mode: { revertTo: "good" }, timeoutMs: 5000 },
    );
    expect(r).toMatchObject({ kind: "refused", tag: "good" });
    expect(r.kind === "refused" ? r.reason : "").toContain("enforcing version 1");
    expect((await h.client.jobs.info("rt-race")).value.Version).toBe(2);
    expect(await serverImage("rt-race")).toBe("app:3");
  });
});

describe("onDeploymentFailure: { revertTo } on a scheduler without version tags (release 1.6.5)", () => {
  let old: DevServer;
  let oldSched: ReturnType<typeof createSchedulerService>;
  beforeAll(async () => {
    oldSched = createSchedulerService({ deploymentMs: 20, evalDelayMs: 1, release: "1.6.5" });
    old = await startDevServer({ services: [oldSched] });
  });
  afterAll(async () => {
    await old?.close();
  });

  it("reverts nothing and names the release version tags need", async () => {
    setStackConfig({ schedulerAddress: old.urls.scheduler, schedulerToken: old.rootTokens.scheduler });
    const settings = { onDeploymentFailure: { revertTo: "good" } };
    const state = await createJob({ jobspec: spec("rt-old", "app:1"), ...settings });
    oldSched.control.failNextDeployment("rt-old");
    const e = initError(await rejection(() => applyJob(state, { jobspec: spec("rt-old", "app:2"), ...settings })));
    expect(e.message).toContain(
      'Pulumi did not revert to the version tagged "good": no version of job "rt-old" carries the tag "good" (version tags need scheduler release 1.9 or newer',
    );
    expect(countRequests(old, "POST", "/v1/job/rt-old/revert")).toBe(0);
  });
});
