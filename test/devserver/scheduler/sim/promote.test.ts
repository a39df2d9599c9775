// `PUT /v1/deployment/promote/:id` as the real server answers it: `All` or only the named
// `Groups`; a group whose canaries are not all healthy refuses the promotion (500 "Task group ... has n/m
// healthy allocations") and nothing is promoted.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { list, rec, serviceJob, startScheduler, until, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
});
afterAll(async () => {
  await h.close();
});

/** A job of two groups, "web" and "api", each with one canary per update. */
function twoGroups(id: string, image: string): Obj {
  const job = serviceJob(id, {}, { Update: { MaxParallel: 1, Canary: 1 } });
  const web = (job.TaskGroups as Obj[])[0] as Obj;
  const withImage = (g: Obj, name: string): Obj => ({
    ...g,
    Name: name,
    Services: [],
    Tasks: [{ ...((g.Tasks as Obj[])[0] as Obj), Config: { image } }],
  });
  job.TaskGroups = [withImage(web, "web"), withImage(web, "api")];
  return job;
}

async function register(job: Obj): Promise<void> {
  const r = await h.call("POST", "/v1/jobs", { body: { Job: job } });
  expect(r.status, r.text).toBe(200);
}

describe("deployment promote", () => {
  it("promotes only the named groups; the others keep the deployment waiting for promotion", async () => {
    h.sched.control.setTiming({ deploymentMs: 30 });
    await register(twoGroups("pr-groups", "nginx:1"));
    await h.sched.control.idle();
    await register(twoGroups("pr-groups", "nginx:2"));
    await h.sched.control.idle();
    let d = rec(await h.call("GET", "/v1/job/pr-groups/deployment"));
    const p = await h.call("PUT", `/v1/deployment/promote/${String(d.ID)}`, {
      body: { DeploymentID: d.ID, Groups: ["web"] },
    });
    expect(p.status, p.text).toBe(200);
    await h.sched.control.idle();
    d = rec(await h.call("GET", "/v1/job/pr-groups/deployment"));
    expect(d).toMatchObject({
      Status: "running",
      StatusDescription: "Deployment is running but requires manual promotion",
    });
    expect((d.TaskGroups as Obj).web).toMatchObject({ Promoted: true });
    expect((d.TaskGroups as Obj).api).toMatchObject({ Promoted: false });
    const running = list(await h.call("GET", "/v1/job/pr-groups/allocations")).filter((a) => a.DesiredStatus === "run");
    const versions = (g: string): number[] =>
      running
        .filter((a) => a.TaskGroup === g)
        .map((a) => a.JobVersion as number)
        .sort();
    expect(versions("web")).toEqual([1, 1]);
    expect(versions("api")).toEqual([0, 0, 1]);
    const rest = await h.call("PUT", `/v1/deployment/promote/${String(d.ID)}`, {
      body: { DeploymentID: d.ID, All: true },
    });
    expect(rest.status, rest.text).toBe(200);
    await h.sched.control.idle();
    expect(rec(await h.call("GET", "/v1/job/pr-groups/deployment"))).toMatchObject({ Status: "successful" });
  });

  it("refuses while a promoted group's canaries are not healthy yet, and promotes nothing", async () => {
    h.sched.control.setTiming({ deploymentMs: 30 });
    await register(twoGroups("pr-early", "nginx:1"));
    await h.sched.control.idle();
    h.sched.control.setTiming({ deploymentMs: 60_000 });
    await register(twoGroups("pr-early", "nginx:2"));
    // The canaries are placed; their health is a minute away.
    const d = await until(async () => {
      const latest = (await h.call("GET", "/v1/job/pr-early/deployment")).body as Obj | null;
      return latest !== null &&
        latest.JobVersion === 1 &&
        ((latest.TaskGroups as Obj).api as Obj).PlacedCanaries !== null
        ? latest
        : undefined;
    }, "canaries placed");
    const p = await h.call("PUT", `/v1/deployment/promote/${String(d.ID)}`, {
      body: { DeploymentID: d.ID, Groups: ["api"] },
    });
    expect([p.status, p.text]).toEqual([500, 'Task group "api" has 0/1 healthy allocations']);
    const after = rec(await h.call("GET", "/v1/job/pr-early/deployment"));
    expect((after.TaskGroups as Obj).api).toMatchObject({ Promoted: false });
    expect((after.TaskGroups as Obj).web).toMatchObject({ Promoted: false });
    h.sched.control.setTiming({ deploymentMs: 30 });
  });
});
