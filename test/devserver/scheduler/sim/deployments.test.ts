import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { FAIL_DEPLOYMENT_META } from "../../../../devserver/scheduler";
import { batchJob, list, rec, serviceJob, startScheduler, until, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
});
afterAll(async () => {
  await h.close();
});

async function register(job: Obj): Promise<Obj> {
  const r = await h.call("POST", "/v1/jobs", { body: { Job: job } });
  expect(r.status, r.text).toBe(200);
  return rec(r);
}

async function getJob(id: string): Promise<Obj> {
  return rec(await h.call("GET", `/v1/job/${encodeURIComponent(id)}`));
}

async function deployments(id: string): Promise<Obj[]> {
  return list(await h.call("GET", `/v1/job/${id}/deployments`));
}

const autoRevert = { Update: { MaxParallel: 1, AutoRevert: true } };

function withImage(job: Obj, image: string): Obj {
  ((((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj).Config = { image };
  return job;
}

describe("deployments", () => {
  it("runs a service deployment to success and marks the version stable", async () => {
    const out = await register(serviceJob("dep-ok"));
    const first = await until(
      async () => ((await h.call("GET", "/v1/job/dep-ok/deployment")).body as Obj | null) ?? undefined,
      "deployment",
    );
    expect(first).toMatchObject({ JobID: "dep-ok", JobVersion: 0, JobModifyIndex: out.JobModifyIndex });
    await h.sched.control.idle();
    const d = rec(await h.call("GET", "/v1/job/dep-ok/deployment"));
    expect(d).toMatchObject({ Status: "successful", StatusDescription: "Deployment completed successfully" });
    expect((d.TaskGroups as Obj).web).toMatchObject({
      DesiredTotal: 2,
      PlacedAllocs: 2,
      HealthyAllocs: 2,
      UnhealthyAllocs: 0,
      AutoRevert: false,
    });
    const job = await getJob("dep-ok");
    expect([job.Status, job.Stable]).toEqual(["running", true]);
    const evals = list(await h.call("GET", "/v1/job/dep-ok/evaluations"));
    expect(evals[0]).toMatchObject({
      ID: out.EvalID,
      Status: "complete",
      TriggeredBy: "job-register",
      DeploymentID: d.ID,
    });
    const allocs = list(await h.call("GET", "/v1/job/dep-ok/allocations"));
    expect(allocs).toHaveLength(2);
    for (const a of allocs) {
      expect(a).toMatchObject({ DesiredStatus: "run", ClientStatus: "running", DeploymentStatus: { Healthy: true } });
      const state = (a.TaskStates as Obj).app as Obj;
      expect((state.Events as Obj[]).map((e) => e.Type)).toEqual(["Received", "Task Setup", "Driver", "Started"]);
      expect(state.State).toBe("running");
    }
    const summary = rec(await h.call("GET", "/v1/job/dep-ok/summary"));
    expect((summary.Summary as Obj).web).toMatchObject({ Running: 2, Queued: 0, Failed: 0 });
  });

  it("registers services for running allocations with their ports", async () => {
    await register(serviceJob("dep-svc"));
    await h.sched.control.idle();
    const services = list(await h.call("GET", "/v1/job/dep-svc/services"));
    expect(services).toHaveLength(2);
    const allocs = list(await h.call("GET", "/v1/job/dep-svc/allocations"));
    for (const s of services) {
      expect(s).toMatchObject({
        ServiceName: "dep-svc-web",
        JobID: "dep-svc",
        Namespace: "default",
        Tags: ["v1"],
        Address: "127.0.0.1",
        Datacenter: "dc1",
      });
      expect(s.Port as number).toBeGreaterThanOrEqual(20000);
      expect(allocs.map((a) => a.ID)).toContain(s.AllocID);
    }
    const full = rec(await h.call("GET", `/v1/allocation/${String(allocs[0]?.ID)}`));
    const ports = ((full.AllocatedResources as Obj).Shared as Obj).Ports as Obj[];
    expect(services.map((s) => s.Port)).toContain(ports[0]?.Value);
    expect((full.Job as Obj).ID).toBe("dep-svc");
    expect((await h.call("GET", "/v1/job/nope/services")).status).toBe(404);
  });

  it("leaves consul-provider services out of the scheduler's catalog", async () => {
    await register(serviceJob("dep-consul", {}, { Services: [{ Name: "c", PortLabel: "http" }] }));
    await h.sched.control.idle();
    expect(list(await h.call("GET", "/v1/job/dep-consul/services"))).toEqual([]);
  });

  it("fails a deployment when the job asks for it, without auto-revert", async () => {
    await register(serviceJob("dep-fail", { Meta: { [FAIL_DEPLOYMENT_META]: "true" } }));
    await h.sched.control.idle();
    const d = rec(await h.call("GET", "/v1/job/dep-fail/deployment"));
    expect(d).toMatchObject({ Status: "failed", StatusDescription: "Failed due to unhealthy allocations" });
    expect((d.TaskGroups as Obj).web).toMatchObject({ UnhealthyAllocs: 2, HealthyAllocs: 0 });
    const allocs = list(await h.call("GET", "/v1/job/dep-fail/allocations"));
    expect(allocs.every((a) => a.ClientStatus === "failed" && (a.DeploymentStatus as Obj).Healthy === false)).toBe(
      true,
    );
    const job = await getJob("dep-fail");
    expect([job.Version, job.Stable]).toEqual([0, false]);
  });

  it("rolls back to the newest stable version when a group has auto_revert", async () => {
    await register(serviceJob("dep-revert", {}, autoRevert));
    await h.sched.control.idle();
    expect((await getJob("dep-revert")).Stable).toBe(true);
    await register(
      withImage(serviceJob("dep-revert", { Meta: { [FAIL_DEPLOYMENT_META]: "true" } }, autoRevert), "broken:1"),
    );
    await h.sched.control.idle();
    const all = await deployments("dep-revert");
    expect(all.map((d) => [d.JobVersion, d.Status])).toEqual([
      [2, "successful"],
      [1, "failed"],
      [0, "successful"],
    ]);
    expect(all[1]?.StatusDescription).toBe("Failed due to unhealthy allocations - rolling back to job version 0");
    const job = await getJob("dep-revert");
    expect([job.Version, job.Stable]).toEqual([2, true]);
    expect(((((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj).Config).toEqual({
      image: "nginx:1.25",
      ports: ["http"],
    });
    const evals = list(await h.call("GET", "/v1/job/dep-revert/evaluations"));
    expect(evals.map((e) => e.TriggeredBy)).toContain("deployment-watcher");
    const running = list(await h.call("GET", "/v1/job/dep-revert/allocations")).filter(
      (a) => a.ClientStatus === "running",
    );
    expect(running.map((a) => a.JobVersion)).toEqual([2, 2]);
  });

  it("fails a deployment whose allocations never turn healthy at its progress deadline (no revert without auto_revert)", async () => {
    const update = { Update: { MaxParallel: 1, MinHealthyTime: 1e8, HealthyDeadline: 2e8, ProgressDeadline: 4e8 } };
    const started = Date.now();
    await register(serviceJob("dep-deadline", { Meta: { "devserver.never_healthy": "true" } }, update));
    const first = await until(
      async () => ((await h.call("GET", "/v1/job/dep-deadline/deployment")).body as Obj | null) ?? undefined,
      "deployment",
    );
    expect(first).toMatchObject({ Status: "running", StatusDescription: "Deployment is running" });
    const d = await until(async () => {
      const now = rec(await h.call("GET", "/v1/job/dep-deadline/deployment"));
      return now.Status === "running" ? undefined : now;
    }, "deployment to end");
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(d).toMatchObject({ Status: "failed", StatusDescription: "Failed due to progress deadline" });
    expect((d.TaskGroups as Obj).web).toMatchObject({ PlacedAllocs: 2, HealthyAllocs: 0, UnhealthyAllocs: 0 });
    const job = await getJob("dep-deadline");
    expect([job.Version, job.Stable]).toEqual([0, false]);
  });

  it("keeps a deployment whose canaries are healthy waiting for promotion past its progress deadline", async () => {
    const update = (canary: number) => ({
      Update: { MaxParallel: 1, Canary: canary, AutoRevert: true, HealthyDeadline: 2e8, ProgressDeadline: 4e8 },
    });
    await register(serviceJob("dep-deadline-canary", {}, update(0)));
    await h.sched.control.idle();
    await register(withImage(serviceJob("dep-deadline-canary", {}, update(1)), "nginx:1.26"));
    await h.sched.control.idle();
    await new Promise((r) => setTimeout(r, 500));
    await h.sched.control.idle();
    const d = rec(await h.call("GET", "/v1/job/dep-deadline-canary/deployment"));
    expect(d).toMatchObject({
      JobVersion: 1,
      Status: "running",
      StatusDescription: "Deployment is running but requires manual promotion",
    });
  });

  it("says when there is no stable version to revert to", async () => {
    await register(serviceJob("dep-nostable", { Meta: { [FAIL_DEPLOYMENT_META]: "true" } }, autoRevert));
    await h.sched.control.idle();
    expect(rec(await h.call("GET", "/v1/job/dep-nostable/deployment")).StatusDescription).toBe(
      "Failed due to unhealthy allocations - no stable job version to auto revert to",
    );
  });

  it("fails the next deployment through the control API", async () => {
    await register(serviceJob("dep-ctl"));
    await h.sched.control.idle();
    h.sched.control.failNextDeployment("dep-ctl");
    await register(serviceJob("dep-ctl", { Priority: 60 }));
    await h.sched.control.idle();
    expect(rec(await h.call("GET", "/v1/job/dep-ctl/deployment")).Status).toBe("failed");
    await register(serviceJob("dep-ctl", { Priority: 61 }));
    await h.sched.control.idle();
    expect(rec(await h.call("GET", "/v1/job/dep-ctl/deployment")).Status).toBe("successful");
  });

  describe("with slow deployments", () => {
    beforeAll(async () => {
      await h.sched.control.idle();
      h.sched.control.setTiming({ deploymentMs: 60_000 });
    });
    afterAll(() => {
      h.sched.control.setTiming({ deploymentMs: 40 });
    });

    async function running(id: string, version: number): Promise<Obj> {
      return until(async () => {
        const d = (await h.call("GET", `/v1/job/${id}/deployment`)).body as Obj | null;
        return d?.JobVersion === version && d.Status === "running" ? d : undefined;
      }, `deployment of ${id} v${version}`);
    }

    it("cancels the older deployment when a newer version arrives", async () => {
      await register(serviceJob("dep-cancel"));
      const first = await running("dep-cancel", 0);
      await register(serviceJob("dep-cancel", { Priority: 60 }));
      await running("dep-cancel", 1);
      const old = rec(await h.call("GET", `/v1/deployment/${String(first.ID)}`));
      expect(old).toMatchObject({ Status: "cancelled", StatusDescription: "Cancelled due to newer version of job" });
      // Stopping the job cancels the running deployment too (and ends its pending health step).
      await h.call("DELETE", "/v1/job/dep-cancel");
      const latest = rec(await h.call("GET", "/v1/job/dep-cancel/deployment"));
      expect(latest).toMatchObject({
        JobVersion: 1,
        Status: "cancelled",
        StatusDescription: "Cancelled because job is stopped",
      });
    });

    it("fails a deployment through the real fail endpoint, noting a same-spec stable version", async () => {
      h.sched.control.setTiming({ deploymentMs: 40 });
      await register(serviceJob("dep-manual", {}, autoRevert));
      await h.sched.control.idle();
      h.sched.control.setTiming({ deploymentMs: 60_000 });
      await register(serviceJob("dep-manual", { Priority: 60 }, autoRevert));
      await running("dep-manual", 1);
      const rv = await h.call("POST", "/v1/job/dep-manual/revert", { body: { JobID: "dep-manual", JobVersion: 0 } });
      expect(rv.status, rv.text).toBe(200);
      const d = await running("dep-manual", 2);
      const r = await h.call("PUT", `/v1/deployment/fail/${String(d.ID)}`);
      expect(r.status, r.text).toBe(200);
      expect(rec(r).RevertedJobVersion).toBeUndefined();
      const after = rec(await h.call("GET", `/v1/deployment/${String(d.ID)}`));
      expect(after).toMatchObject({
        Status: "failed",
        StatusDescription:
          "Deployment marked as failed - not rolling back to stable job version 0 as current job has same specification",
      });
      const again = await h.call("PUT", `/v1/deployment/fail/${String(d.ID)}`);
      expect([again.status, again.text]).toEqual([500, "can't fail terminal deployment"]);
    });

    it("waits for manual promotion of canaries, then replaces the old allocations", async () => {
      const canary = { Update: { MaxParallel: 1, Canary: 1 } };
      h.sched.control.setTiming({ deploymentMs: 40 });
      await register(serviceJob("dep-canary", {}, canary));
      await h.sched.control.idle();
      await register(withImage(serviceJob("dep-canary", {}, canary), "nginx:2"));
      await h.sched.control.idle();
      let d = rec(await h.call("GET", "/v1/job/dep-canary/deployment"));
      expect(d).toMatchObject({
        Status: "running",
        StatusDescription: "Deployment is running but requires manual promotion",
        JobVersion: 1,
      });
      const group = (d.TaskGroups as Obj).web as Obj;
      expect(group).toMatchObject({ DesiredCanaries: 1, Promoted: false, HealthyAllocs: 1 });
      expect(group.PlacedCanaries as string[]).toHaveLength(1);
      let allocs = list(await h.call("GET", "/v1/job/dep-canary/allocations")).filter((a) => a.DesiredStatus === "run");
      expect(allocs.map((a) => a.JobVersion).sort()).toEqual([0, 0, 1]);
      // Another evaluation while waiting for promotion changes nothing.
      expect((await h.call("POST", "/v1/job/dep-canary/evaluate", { body: { JobID: "dep-canary" } })).status).toBe(200);
      await h.sched.control.idle();
      allocs = list(await h.call("GET", "/v1/job/dep-canary/allocations")).filter((a) => a.DesiredStatus === "run");
      expect(allocs.map((a) => a.JobVersion).sort()).toEqual([0, 0, 1]);
      const plan = rec(
        await h.call("POST", "/v1/job/dep-canary/plan", {
          body: { Job: withImage(serviceJob("dep-canary", {}, canary), "nginx:2") },
        }),
      );
      expect(((plan.Annotations as Obj).DesiredTGUpdates as Obj).web).toMatchObject({ Canary: 0, Ignore: 3, Stop: 0 });
      const blocked = await h.call("POST", "/v1/job/dep-canary/scale", {
        body: { Target: { Group: "web" }, Count: 5, Message: "x" },
      });
      expect(blocked.status).toBe(400);
      const p = await h.call("POST", `/v1/deployment/promote/${String(d.ID)}`, {
        body: { DeploymentID: d.ID, All: true },
      });
      expect(p.status, p.text).toBe(200);
      await h.sched.control.idle();
      d = rec(await h.call("GET", "/v1/job/dep-canary/deployment"));
      expect(d).toMatchObject({ Status: "successful" });
      expect((d.TaskGroups as Obj).web).toMatchObject({ Promoted: true });
      allocs = list(await h.call("GET", "/v1/job/dep-canary/allocations")).filter((a) => a.DesiredStatus === "run");
      expect(allocs.map((a) => a.JobVersion)).toEqual([1, 1]);
    });

    it("says a canary deployment waits for promotion from the moment it is created, as the real scheduler does", async () => {
      const manual = { Update: { MaxParallel: 1, Canary: 1 } };
      const auto = { Update: { MaxParallel: 1, Canary: 1, AutoPromote: true } };
      h.sched.control.setTiming({ deploymentMs: 40 });
      await register(serviceJob("dep-desc-m", {}, manual));
      await register(serviceJob("dep-desc-a", {}, auto));
      await h.sched.control.idle();
      // Health takes long now: the deployments are read before any canary is healthy.
      h.sched.control.setTiming({ deploymentMs: 60_000 });
      onTestFinished(async () => {
        // Whatever the test saw, no deployment is left waiting on that slow health for the next tests.
        h.sched.control.setTiming({ deploymentMs: 40 });
        for (const id of ["dep-desc-m", "dep-desc-a"])
          for (const d of await deployments(id))
            if (d.Status === "running") h.sched.control.failDeployment(String(d.ID));
      });
      await register(withImage(serviceJob("dep-desc-m", {}, manual), "nginx:2"));
      await register(withImage(serviceJob("dep-desc-a", {}, auto), "nginx:2"));
      const created = (id: string) =>
        until(async () => {
          const d = (await h.call("GET", `/v1/job/${id}/deployment`)).body as Obj | null;
          const g = (d?.TaskGroups as Obj | undefined)?.web as Obj | undefined;
          return d?.JobVersion === 1 && (g?.PlacedCanaries as unknown[] | null)?.length === 1 ? d : undefined;
        }, "canary deployment");
      const m = await created("dep-desc-m");
      expect(m).toMatchObject({
        Status: "running",
        StatusDescription: "Deployment is running but requires manual promotion",
        TaskGroups: { web: { DesiredCanaries: 1, HealthyAllocs: 0, Promoted: false } },
      });
      const a = await created("dep-desc-a");
      expect(a).toMatchObject({
        Status: "running",
        StatusDescription: "Deployment is running pending automatic promotion",
        TaskGroups: { web: { DesiredCanaries: 1, HealthyAllocs: 0, Promoted: false, AutoPromote: true } },
      });
      // The progress deadline runs from the placement: RequireProgressBy is set, as the real server sets it.
      const web = (m.TaskGroups as Obj).web as Obj;
      expect(web.ProgressDeadline).toBeGreaterThan(0);
      const by = Date.parse(String(web.RequireProgressBy));
      expect(by).toBeGreaterThan(Date.now());
      expect(by).toBeLessThanOrEqual(Date.now() + Number(web.ProgressDeadline) / 1e6);
    });

    it("promotes canaries by itself with auto_promote", async () => {
      const canary = { Update: { MaxParallel: 1, Canary: 1, AutoPromote: true } };
      h.sched.control.setTiming({ deploymentMs: 40 });
      await register(serviceJob("dep-autopromote", {}, canary));
      await h.sched.control.idle();
      await register(withImage(serviceJob("dep-autopromote", {}, canary), "nginx:2"));
      await h.sched.control.idle();
      const d = rec(await h.call("GET", "/v1/job/dep-autopromote/deployment"));
      expect(d).toMatchObject({ Status: "successful", JobVersion: 1 });
      const allocs = list(await h.call("GET", "/v1/job/dep-autopromote/allocations")).filter(
        (a) => a.DesiredStatus === "run",
      );
      expect(allocs.map((a) => a.JobVersion)).toEqual([1, 1]);
    });
  });

  it("runs batch allocations to completion and the job to dead, without deployments", async () => {
    await register(batchJob("dep-batch"));
    await h.sched.control.idle();
    const allocs = list(await h.call("GET", "/v1/job/dep-batch/allocations"));
    expect(allocs.map((a) => a.ClientStatus)).toEqual(["complete"]);
    expect((await getJob("dep-batch")).Status).toBe("dead");
    expect(await deployments("dep-batch")).toEqual([]);
    expect((rec(await h.call("GET", "/v1/job/dep-batch/summary")).Summary as Obj).work).toMatchObject({ Complete: 1 });
    await register(batchJob("dep-batch"));
    await h.sched.control.idle();
    expect(list(await h.call("GET", "/v1/job/dep-batch/allocations"))).toHaveLength(1);
  });
});

describe("blocking queries", () => {
  it("holds a job read until the job changes, then answers with the new index", async () => {
    await register(serviceJob("block-job"));
    await h.sched.control.idle();
    const first = await h.call("GET", "/v1/job/block-job");
    const index = Number(first.headers["x-svc-index"]);
    expect(index).toBe(rec(first).ModifyIndex);
    expect(first.headers["x-svc-knownleader"]).toBe("true");
    expect(first.headers["x-svc-lastcontact"]).toBe("0");
    const clock = h.server.context("scheduler").clock;
    const waitingBefore = clock.waiting();
    const pending = h.call("GET", `/v1/job/block-job?index=${index}&wait=30s`);
    await until(async () => (clock.waiting() > waitingBefore ? true : undefined), "the blocked query");
    await register(serviceJob("block-job", { Priority: 77 }));
    const answer = await pending;
    expect(Number(answer.headers["x-svc-index"])).toBeGreaterThan(index);
    expect(rec(answer).Priority).toBe(77);
  });

  it("answers at the wait timeout with the same index when nothing changes", async () => {
    const r = await h.call("GET", "/v1/job/block-job/summary");
    const index = Number(r.headers["x-svc-index"]);
    await h.sched.control.idle();
    const again = await h.call("GET", `/v1/job/block-job/summary?index=${index}&wait=20ms`);
    expect(again.status).toBe(200);
    expect(Number(again.headers["x-svc-index"])).toBeGreaterThanOrEqual(index);
    const bad = await h.call("GET", "/v1/job/block-job?index=x");
    expect([bad.status, bad.text]).toEqual([400, "Invalid index"]);
  });

  it("wakes a blocked allocation list when the evaluation places allocations", async () => {
    const before = await h.call("GET", "/v1/job/block-allocs/allocations");
    const index = Number(before.headers["x-svc-index"]);
    const pending = h.call("GET", `/v1/job/block-allocs/allocations?index=${index}&wait=30s`);
    await register(batchJob("block-allocs"));
    const answer = await pending;
    expect(Number(answer.headers["x-svc-index"])).toBeGreaterThan(index);
  });
});
