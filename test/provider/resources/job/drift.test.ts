import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stripServerManagedFields } from "../../../../provider/clients/scheduler";
import { setStackConfig } from "../../../helpers/stack-config";
import { isApiError } from "../../../../provider/errors";
import { job } from "../../../../provider/resources/job";
import type { Deployment } from "../../../../provider/schemas/scheduler";
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
import { SMALL_SPEC } from "../../../helpers/jobspecs";

const spec = SMALL_SPEC;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
});

afterAll(async () => {
  await h?.close();
});

/** Registers a changed image for a job straight through the API, as someone outside Pulumi would. */
async function changeOutside(id: string, image: string): Promise<void> {
  const current = (await h.client.jobs.info(id)).value;
  const copy = structuredClone(stripServerManagedFields(current));
  const task = copy.TaskGroups?.[0]?.Tasks?.[0];
  if (!task) throw new Error("no task");
  task.Config = { ...(task.Config ?? {}), image };
  await h.client.jobs.register({ Job: copy });
}

/** Waits until the job's latest deployment satisfies `ok`, and returns it. */
async function waitForDeployment(id: string, ok: (d: Deployment | undefined) => boolean): Promise<Deployment> {
  for (let i = 0; i < 200; i++) {
    const d = (await h.client.records.latestDeployment(id)).value ?? undefined;
    if (ok(d) && d !== undefined) return d;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`job ${id}: no such deployment`);
}

describe("changes made outside Pulumi", () => {
  it("refuses the update by check-and-set, shows the change after refresh, and then applies", async () => {
    const state = await createJob({ jobspec: spec("drift", "app:1") });
    await changeOutside("drift", "app:hotfix");
    expect((await h.client.jobs.info("drift")).value.Version).toBe(1);

    // The preview still works, and says the update will be refused.
    const preview = await captureStderr(() => job.diff(state.id, state.outs, { jobspec: spec("drift", "app:2") }));
    expect(preview.value.changes).toBe(true);
    expect(preview.text).toContain("The job was changed outside Pulumi");

    const from = h.server.requestLog.length;
    const e = await rejection(() => applyJob(state, { jobspec: spec("drift", "app:2") }));
    expect(e.message).toContain('Job "drift" in namespace "default" was changed outside Pulumi');
    expect(e).toMatchObject({ name: "ResourceError", code: "changed_outside" });
    expect(e.message).toContain("pulumi refresh");
    expect(registers(h.server, from)).toBe(1);
    const server = (await h.client.jobs.info("drift")).value;
    expect(server.Version).toBe(1);
    expect(server.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image).toBe("app:hotfix");

    // Refresh: the next preview with the unchanged program shows the change back to what it declares.
    const refreshed = await refreshJob(state);
    expect(refreshed?.outs.version).toBe(1);
    expect(refreshed?.outs.jobModifyIndex).toBe(server.JobModifyIndex);
    const back = await captureStderr(() =>
      job.diff(refreshed!.id, refreshed!.outs, { jobspec: spec("drift", "app:1") }),
    );
    expect(back.value.changes).toBe(true);
    expect(back.text).toContain('"app:hotfix" => "app:1"');

    const applied = await applyJob(refreshed!, { jobspec: spec("drift", "app:1") });
    expect(applied.step).toBe("update");
    expect(applied.outs.version).toBe(2);
    expect((await h.client.jobs.info("drift")).value.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image).toBe("app:1");

    // And after that, the program matches state again without asking the server.
    const n = h.server.requestLog.length;
    expect(
      (await job.diff(applied.id, applied.outs, await checked({ jobspec: spec("drift", "app:1") }, applied.inputs)))
        .changes,
    ).toBe(false);
    expect(h.server.requestLog.length).toBe(n);
  });

  it("keeps state as it is when nothing changed on the server (server defaults are not drift)", async () => {
    const state = await createJob({
      job: {
        ID: "plain",
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }],
      },
    });
    const refreshed = await refreshJob(state);
    expect(refreshed?.outs.normalizedJob).toBe(state.outs.normalizedJob);
    expect(refreshed?.outs.inputsHash).toBe(state.outs.inputsHash);
    const n = h.server.requestLog.length;
    expect(
      (
        await job.diff(
          refreshed!.id,
          refreshed!.outs,
          await checked({
            job: {
              ID: "plain",
              TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }],
            },
          }),
        )
      ).changes,
    ).toBe(false);
    expect(h.server.requestLog.length).toBe(n);
  });

  it("shows a job stopped outside Pulumi as drift, and starts it again", async () => {
    const state = await createJob({ jobspec: spec("stopped", "app:1") });
    await h.client.jobs.deregister("stopped");
    const refreshed = await refreshJob(state);
    expect(refreshed?.outs.stopped).toBe(true);
    const d = await captureStderr(() =>
      job.diff(refreshed!.id, refreshed!.outs, { jobspec: spec("stopped", "app:1") }),
    );
    expect(d.value.changes).toBe(true);
    expect(d.text).toContain("Stop");
    const applied = await applyJob(refreshed!, { jobspec: spec("stopped", "app:1") });
    expect(applied.outs.stopped).toBe(false);
    expect((await h.client.jobs.info("stopped")).value.Stop).toBe(false);
  });

  it("reads the latest deployment again on refresh when the job changed outside Pulumi, and only the job when nothing did", async () => {
    const state = await createJob({ jobspec: spec("redeployed", "app:1") });
    expect(state.outs.deploymentStatus).toBe("successful");
    // Settled: the job list alone is read (it shows the job unchanged), and state stays as it was.
    let from = h.server.requestLog.length;
    const same = await refreshJob(state);
    expect(h.server.requestLog.slice(from).map((e) => `${e.method} ${e.path}`)).toEqual(["GET /v1/jobs"]);
    expect(same?.outs).toEqual(state.outs);

    await changeOutside("redeployed", "app:hotfix");
    const outside = await waitForDeployment(
      "redeployed",
      (d) => d !== undefined && d.ID !== state.outs.deploymentId && d.Status === "successful",
    );
    from = h.server.requestLog.length;
    const moved = await refreshJob(state);
    // The list shows the job moved: it is read in full, with its latest deployment.
    expect(
      h.server.requestLog
        .slice(from)
        .map((e) => `${e.method} ${e.path}`)
        .sort(),
    ).toEqual(["GET /v1/job/redeployed", "GET /v1/job/redeployed/deployment", "GET /v1/jobs"]);
    expect(moved?.outs).toMatchObject({ version: 1, deploymentId: outside.ID, deploymentStatus: "successful" });
  });

  it("drops a purged job from state on refresh", async () => {
    const state = await createJob({ jobspec: spec("purged", "app:1") });
    await h.client.jobs.deregister("purged", { purge: true });
    expect(await refreshJob(state)).toBeUndefined();
  });
});

describe("ACL denials", () => {
  it("fail create with the operation and the server's reason, and never leak the token", async () => {
    const token = h.server.createToken("scheduler", { policies: ["read"] });
    setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: token });
    try {
      const e = await rejection(() => createJob({ jobspec: spec("denied", "app:1") }));
      expect(isApiError(e, "permission_denied")).toBe(true);
      expect(e.message).toMatch(/^register job: POST \/v1\/jobs returned 403: Permission denied/);
      expect(e.message).not.toContain(token);
      expect(await h.client.jobs.find("denied")).toBeUndefined();
    } finally {
      setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: h.server.rootTokens.scheduler });
    }
  });
});
