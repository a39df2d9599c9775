import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJob, list, rec, serviceJob, startScheduler, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler({ nodes: { count: 3, cpu: 4000, memoryMB: 8192 } });
});
afterAll(async () => {
  await h.close();
});

async function register(job: Obj): Promise<Obj> {
  const r = await h.call("POST", "/v1/jobs", { body: { Job: job } });
  expect(r.status, r.text).toBe(200);
  await h.sched.control.idle();
  return rec(r);
}

async function plan(job: Obj, diff = true): Promise<Obj> {
  const r = await h.call("POST", `/v1/job/${encodeURIComponent(String(job.ID))}/plan`, {
    body: { Job: job, Diff: diff },
  });
  expect(r.status, r.text).toBe(200);
  return rec(r);
}

function desired(p: Obj, group = "web"): Obj {
  return ((p.Annotations as Obj).DesiredTGUpdates as Obj)[group] as Obj;
}

function groupDiff(p: Obj, name = "web"): Obj {
  return ((p.Diff as Obj).TaskGroups as Obj[]).find((g) => g.Name === name) as Obj;
}

function taskDiff(p: Obj, group = "web", task = "app"): Obj {
  return (groupDiff(p, group).Tasks as Obj[]).find((t) => t.Name === task) as Obj;
}

describe("plan", () => {
  it("plans a new job as Added with placements, index 0, and stores nothing", async () => {
    const before = h.server.requestLog.length;
    const p = await plan(serviceJob("plan-new"));
    expect(p.JobModifyIndex).toBe(0);
    expect((p.Diff as Obj).Type).toBe("Added");
    expect(groupDiff(p).Type).toBe("Added");
    expect(desired(p)).toMatchObject({
      Place: 2,
      Ignore: 0,
      Stop: 0,
      InPlaceUpdate: 0,
      DestructiveUpdate: 0,
      Canary: 0,
    });
    expect(groupDiff(p).Updates).toEqual({ create: 2 });
    expect(taskDiff(p).Annotations).toEqual(["forces create"]);
    const count = (groupDiff(p).Fields as Obj[]).find((f) => f.Name === "Count");
    expect(count).toMatchObject({ Type: "Added", Old: "", New: "2", Annotations: ["forces create"] });
    expect(p.FailedTGAllocs).toBeNull();
    expect(p.NextPeriodicLaunch).toBe("0001-01-01T00:00:00Z");
    expect((await h.call("GET", "/v1/job/plan-new")).status).toBe(404);
    expect(list(await h.call("GET", "/v1/job/plan-new/evaluations"))).toEqual([]);
    expect(h.server.requestLog.length).toBe(before + 3);
  });

  it("reports None and Ignore for an unchanged job, with the server's JobModifyIndex", async () => {
    const out = await register(serviceJob("plan-same"));
    const p = await plan(serviceJob("plan-same"));
    expect((p.Diff as Obj).Type).toBe("None");
    expect(p.JobModifyIndex).toBe(out.JobModifyIndex);
    expect(desired(p)).toMatchObject({ Ignore: 2, Place: 0, InPlaceUpdate: 0, DestructiveUpdate: 0 });
    expect(groupDiff(p).Type).toBe("None");
    const versions = rec(await h.call("GET", "/v1/job/plan-same/versions"));
    expect((versions.Versions as Obj[]).length).toBe(1);
  });

  it("shows primitive job fields with old and new values as strings", async () => {
    await register(serviceJob("plan-prio"));
    const p = await plan(serviceJob("plan-prio", { Priority: 70, Meta: { team: "a" } }));
    const fields = (p.Diff as Obj).Fields as Obj[];
    expect(fields).toContainEqual({ Type: "Edited", Name: "Priority", Old: "50", New: "70", Annotations: null });
    expect(fields).toContainEqual({ Type: "Added", Name: "Meta[team]", Old: "", New: "a", Annotations: null });
    expect((p.Diff as Obj).Type).toBe("Edited");
  });

  it("annotates a count increase as placements plus in-place updates", async () => {
    await register(serviceJob("plan-count"));
    const p = await plan(serviceJob("plan-count", {}, { Count: 4 }));
    expect(desired(p)).toMatchObject({ Place: 2, InPlaceUpdate: 2, DestructiveUpdate: 0, Stop: 0 });
    expect(groupDiff(p).Updates).toEqual({ create: 2, "in-place update": 2 });
    expect((groupDiff(p).Fields as Obj[])[0]).toEqual({
      Type: "Edited",
      Name: "Count",
      Old: "2",
      New: "4",
      Annotations: ["forces create"],
    });
    expect(taskDiff(p).Type).toBe("None");
    const down = await plan(serviceJob("plan-count", {}, { Count: 1 }));
    expect(desired(down)).toMatchObject({ Stop: 1, InPlaceUpdate: 1 });
    expect(((groupDiff(down).Fields as Obj[])[0] as Obj).Annotations).toEqual(["forces destroy"]);
  });

  it("marks task config changes destructive, limited by max_parallel, with a Config object diff", async () => {
    await register(serviceJob("plan-image"));
    const job = serviceJob("plan-image");
    const task = (((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj;
    task.Config = { image: "nginx:1.27", ports: ["http"] };
    const p = await plan(job);
    expect(desired(p)).toMatchObject({ DestructiveUpdate: 1, Ignore: 1, InPlaceUpdate: 0 });
    const t = taskDiff(p);
    expect(t.Type).toBe("Edited");
    expect(t.Annotations).toEqual(["forces create/destroy update"]);
    const config = (t.Objects as Obj[]).find((o) => o.Name === "Config") as Obj;
    expect(config.Type).toBe("Edited");
    expect(config.Fields).toEqual([
      { Type: "Edited", Name: "image", Old: "nginx:1.25", New: "nginx:1.27", Annotations: null },
      { Type: "None", Name: "ports[0]", Old: "http", New: "http", Annotations: null },
    ]);
  });

  it("treats env, resources and meta changes as destructive and service changes as in-place", async () => {
    await register(serviceJob("plan-kinds"));
    const env = serviceJob("plan-kinds");
    ((((env.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj).Env = { MODE: "dev" };
    expect(desired(await plan(env))).toMatchObject({ DestructiveUpdate: 1, Ignore: 1 });
    const res = serviceJob("plan-kinds");
    ((((res.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj).Resources = { CPU: 300, MemoryMB: 256 };
    const rp = await plan(res);
    expect(desired(rp)).toMatchObject({ DestructiveUpdate: 1 });
    const resources = (taskDiff(rp).Objects as Obj[]).find((o) => o.Name === "Resources") as Obj;
    expect(resources.Fields).toContainEqual({ Type: "Edited", Name: "CPU", Old: "200", New: "300", Annotations: null });
    expect(desired(await plan(serviceJob("plan-kinds", { Meta: { release: "2" } })))).toMatchObject({
      DestructiveUpdate: 1,
    });
    const svc = serviceJob(
      "plan-kinds",
      {},
      { Services: [{ Name: "plan-kinds-web", PortLabel: "http", Provider: "nomad", Tags: ["v2"] }] },
    );
    const sp = await plan(svc);
    expect(desired(sp)).toMatchObject({ InPlaceUpdate: 2, DestructiveUpdate: 0 });
    const service = (groupDiff(sp).Objects as Obj[]).find((o) => o.Name === "Service") as Obj;
    expect(service.Type).toBe("Edited");
    const tags = (service.Objects as Obj[]).find((o) => o.Name === "Tags") as Obj;
    expect(tags).toEqual({
      Type: "Edited",
      Name: "Tags",
      Objects: null,
      Fields: [
        { Type: "Added", Name: "Tags", Old: "", New: "v2", Annotations: null },
        { Type: "Deleted", Name: "Tags", Old: "v1", New: "", Annotations: null },
      ],
    });
  });

  it("plans canaries when the update block asks for them and the change is destructive", async () => {
    const canary = { Update: { MaxParallel: 1, Canary: 1 } };
    await register(serviceJob("plan-canary", {}, canary));
    const job = serviceJob("plan-canary", {}, canary);
    ((((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj).Config = { image: "nginx:2" };
    const p = await plan(job);
    expect(desired(p)).toMatchObject({ Canary: 1, Ignore: 2, DestructiveUpdate: 0 });
    expect(groupDiff(p).Updates).toEqual({ canary: 1, ignore: 2 });
    const meta = await plan(serviceJob("plan-canary", { Priority: 51 }, canary));
    expect(desired(meta)).toMatchObject({ Canary: 0, InPlaceUpdate: 2 });
  });

  it("shows added and deleted groups and constraints as set changes", async () => {
    await register(
      serviceJob("plan-groups", { Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }] }),
    );
    const job = serviceJob("plan-groups", {
      Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "darwin", Operand: "=" }],
    });
    const groups = job.TaskGroups as Obj[];
    job.TaskGroups = [{ ...(groups[0] as Obj), Name: "api", Count: 1 }];
    const p = await plan(job);
    expect(groupDiff(p, "api").Type).toBe("Added");
    expect(groupDiff(p, "web").Type).toBe("Deleted");
    expect(desired(p, "api")).toMatchObject({ Place: 1 });
    expect(desired(p, "web")).toMatchObject({ Stop: 2 });
    expect(taskDiff(p, "web").Annotations).toEqual(["forces destroy"]);
    const constraints = ((p.Diff as Obj).Objects as Obj[]).filter((o) => o.Name === "Constraint");
    expect(constraints.map((c) => c.Type)).toEqual(["Added", "Deleted"]);
  });

  it("computes the next launch of a periodic job", async () => {
    const p = await plan(batchJob("plan-cron", { Periodic: { Spec: "0 3 * * *" } }));
    const next = new Date(String(p.NextPeriodicLaunch));
    expect(next.getUTCHours()).toBe(3);
    expect(next.getUTCMinutes()).toBe(0);
    expect(next.getTime()).toBeGreaterThan(Date.now());
    expect(next.getTime() - Date.now()).toBeLessThanOrEqual(86_400_000);
  });

  it("omits the diff when not asked and checks the path ID", async () => {
    const p = await plan(serviceJob("plan-nodiff"), false);
    expect(p.Diff).toBeNull();
    const r = await h.call("POST", "/v1/job/other/plan", { body: { Job: serviceJob("plan-x") } });
    expect([r.status, r.text]).toEqual([400, "Job ID does not match"]);
    const r2 = await h.call("POST", "/v1/job/plan-x/plan", { body: {} });
    expect([r2.status, r2.text]).toEqual([400, "Job must be specified"]);
  });
});

describe("plan against an empty node pool", () => {
  // A fresh server so other tests' allocations do not use the capacity these tests count on.
  let empty: Harness;
  beforeAll(async () => {
    empty = await startScheduler({ nodes: { count: 3, cpu: 4000, memoryMB: 8192 } });
  });
  afterAll(async () => {
    await empty.close();
  });

  async function planOn(server: Harness, job: Obj): Promise<Obj> {
    const r = await server.call("POST", `/v1/job/${String(job.ID)}/plan`, { body: { Job: job, Diff: true } });
    expect(r.status, r.text).toBe(200);
    return rec(r);
  }

  it("reports failed placements against the node pool's CPU", async () => {
    const job = serviceJob("plan-cpu", {}, { Count: 5 });
    ((((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj).Resources = { CPU: 3000, MemoryMB: 256 };
    const p = await planOn(empty, job);
    expect(desired(p)).toMatchObject({ Place: 5 });
    const failed = (p.FailedTGAllocs as Obj).web as Obj;
    expect(failed).toMatchObject({
      NodesEvaluated: 3,
      NodesExhausted: 3,
      NodesInPool: 3,
      DimensionExhausted: { cpu: 3 },
      CoalescedFailures: 1,
      NodesAvailable: { dc1: 3 },
    });
    const created = p.CreatedEvals as Obj[];
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ Status: "blocked", TriggeredBy: "queued-allocs" });
  });

  it("reports exhausted memory as its own dimension", async () => {
    const job = batchJob("plan-mem", {
      TaskGroups: [
        { Name: "work", Count: 1, Tasks: [{ Name: "run", Driver: "exec", Resources: { CPU: 100, MemoryMB: 9000 } }] },
      ],
    });
    const p = await planOn(empty, job);
    expect(((p.FailedTGAllocs as Obj).work as Obj).DimensionExhausted).toEqual({ memory: 3 });
  });

  it("counts every constraint that filtered a node (job, group and task level) next to exhausted dimensions", async () => {
    const nodes = empty.sched.control.nodes();
    const job = batchJob("plan-cons", {
      Constraints: [{ LTarget: "${node.unique.name}", RTarget: String(nodes[0]?.Name), Operand: "!=" }],
      TaskGroups: [
        {
          Name: "work",
          Count: 1,
          Constraints: [{ LTarget: "${node.unique.id}", RTarget: String(nodes[1]?.ID), Operand: "!=" }],
          Tasks: [
            {
              Name: "run",
              Driver: "exec",
              Resources: { CPU: 100, MemoryMB: 9000 },
              Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
            },
          ],
        },
      ],
    });
    const p = await planOn(empty, job);
    const m = (p.FailedTGAllocs as Obj).work as Obj;
    expect(m).toMatchObject({
      NodesEvaluated: 3,
      NodesFiltered: 2,
      NodesExhausted: 1,
      ConstraintFiltered: {
        [`\${node.unique.name} != ${String(nodes[0]?.Name)}`]: 1,
        [`\${node.unique.id} != ${String(nodes[1]?.ID)}`]: 1,
      },
      DimensionExhausted: { memory: 1 },
    });
    // A constraint no node meets filters all of them, and nothing is placed when registered.
    const none = batchJob("plan-cons-none", {
      Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "windows", Operand: "=" }],
    });
    const q = await planOn(empty, none);
    expect((q.FailedTGAllocs as Obj).work).toMatchObject({
      NodesEvaluated: 3,
      NodesFiltered: 3,
      NodesExhausted: 0,
      ConstraintFiltered: { "${attr.kernel.name} = windows": 3 },
    });
  });

  it("fails the evaluation of a registered job the same way and leaves a blocked evaluation", async () => {
    // A service job: batch allocations would complete and free the capacity by themselves.
    const job = serviceJob(
      "eval-cpu",
      {},
      {
        Name: "work",
        Count: 4,
        Services: [],
        Networks: [],
        Tasks: [{ Name: "run", Driver: "exec", Resources: { CPU: 3500, MemoryMB: 100 } }],
      },
    );
    const r = await empty.call("POST", "/v1/jobs", { body: { Job: job } });
    await empty.sched.control.idle();
    const evalId = String(rec(r).EvalID);
    const evals = list(await empty.call("GET", "/v1/job/eval-cpu/evaluations"));
    const first = evals.find((e) => e.ID === evalId) as Obj;
    expect(first).toMatchObject({ Status: "complete", TriggeredBy: "job-register", QueuedAllocations: { work: 1 } });
    expect(first.DeploymentID).not.toBe("");
    expect((first.FailedTGAllocs as Obj).work as Obj).toMatchObject({
      NodesExhausted: 3,
      DimensionExhausted: { cpu: 3 },
      CoalescedFailures: 0,
    });
    const blocked = evals.find((e) => e.ID === first.BlockedEval) as Obj;
    expect(blocked).toMatchObject({ Status: "blocked", TriggeredBy: "queued-allocs", PreviousEval: evalId });
    expect(list(await empty.call("GET", "/v1/job/eval-cpu/allocations"))).toHaveLength(3);
    expect(rec(await empty.call("GET", "/v1/job/eval-cpu")).Status).toBe("running");
    const summary = rec(await empty.call("GET", "/v1/job/eval-cpu/summary"));
    expect((summary.Summary as Obj).work).toMatchObject({ Queued: 1, Running: 3 });
    // More capacity unblocks the queued placement.
    empty.sched.control.setNodes({ count: 4, cpu: 4000, memoryMB: 8192 });
    await empty.sched.control.idle();
    expect(list(await empty.call("GET", "/v1/job/eval-cpu/allocations"))).toHaveLength(4);
    const after = list(await empty.call("GET", "/v1/job/eval-cpu/evaluations"));
    expect(after.find((e) => e.ID === blocked.ID)?.Status).toBe("complete");
  });
});

describe("versions with diffs", () => {
  it("lists versions newest first with diffs between neighbours or against a chosen version", async () => {
    await register(serviceJob("ver-diff"));
    await register(serviceJob("ver-diff", { Priority: 60 }));
    await register(serviceJob("ver-diff", { Priority: 70 }));
    let r = rec(await h.call("GET", "/v1/job/ver-diff/versions?diffs=true"));
    expect((r.Versions as Obj[]).map((v) => v.Version)).toEqual([2, 1, 0]);
    let diffs = r.Diffs as Obj[];
    expect(diffs).toHaveLength(2);
    expect((diffs[0]?.Fields as Obj[])[0]).toMatchObject({ Name: "Priority", Old: "60", New: "70" });
    expect((diffs[1]?.Fields as Obj[])[0]).toMatchObject({ Name: "Priority", Old: "50", New: "60" });
    r = rec(await h.call("GET", "/v1/job/ver-diff/versions?diffs=true&diff_version=0"));
    diffs = r.Diffs as Obj[];
    expect(diffs).toHaveLength(3);
    expect((diffs[0]?.Fields as Obj[])[0]).toMatchObject({ Name: "Priority", Old: "50", New: "70" });
    expect(diffs[2]?.Type).toBe("None");
    expect(rec(await h.call("GET", "/v1/job/ver-diff/versions")).Diffs).toBeNull();
    await h.call("POST", "/v1/job/ver-diff/versions/base/tag", { body: { Version: 1 } });
    r = rec(await h.call("GET", "/v1/job/ver-diff/versions?diffs=true&diff_tag=base"));
    expect(((r.Diffs as Obj[])[0]?.Fields as Obj[])[0]).toMatchObject({ Old: "60", New: "70" });
    const missing = await h.call("GET", "/v1/job/ver-diff/versions?diffs=true&diff_tag=nope");
    expect([missing.status, missing.text]).toEqual([500, 'tag "nope" not found']);
    expect((await h.call("GET", "/v1/job/nope/versions")).text).toBe("job versions not found");
  });
});
