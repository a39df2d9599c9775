import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJob, list, rec, serviceJob, startScheduler, until, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
});
afterAll(async () => {
  await h.close();
});

async function register(job: Obj, extra: Obj = {}): Promise<Obj> {
  const r = await h.call("POST", "/v1/jobs", { body: { Job: job, ...extra } });
  expect(r.status, r.text).toBe(200);
  return rec(r);
}

async function getJob(id: string): Promise<Obj> {
  const r = await h.call("GET", `/v1/job/${encodeURIComponent(id)}`);
  expect(r.status, r.text).toBe(200);
  return rec(r);
}

async function versions(id: string): Promise<Obj[]> {
  return rec(await h.call("GET", `/v1/job/${encodeURIComponent(id)}/versions`)).Versions as Obj[];
}

describe("revert", () => {
  it("registers a copy of the old version as a new version with its submission", async () => {
    // A batch job: no deployment marks versions stable behind the test's back.
    await register(batchJob("rev-basic"), { Submission: { Source: "v0 source", Format: "hcl2" } });
    await h.call("POST", "/v1/job/rev-basic/stable", { body: { JobID: "rev-basic", JobVersion: 0, Stable: true } });
    await register(batchJob("rev-basic", { Priority: 60 }), { Submission: { Source: "v1 source", Format: "hcl2" } });
    const r = await h.call("POST", "/v1/job/rev-basic/revert", { body: { JobID: "rev-basic", JobVersion: 0 } });
    expect(r.status, r.text).toBe(200);
    expect(rec(r).EvalID).not.toBe("");
    const job = await getJob("rev-basic");
    expect([job.Version, job.Priority, job.Stable]).toEqual([2, 50, false]);
    expect((await versions("rev-basic")).find((v) => v.Version === 0)?.Stable).toBe(true);
    expect(rec(await h.call("GET", "/v1/job/rev-basic/submission?version=2")).Source).toBe("v0 source");
  });

  it("creates no version when the old spec equals the current one, but still an evaluation", async () => {
    await register(serviceJob("rev-same"));
    await register(serviceJob("rev-same", { Priority: 60 }));
    await register(serviceJob("rev-same"));
    const r = await h.call("POST", "/v1/job/rev-same/revert", { body: { JobID: "rev-same", JobVersion: 0 } });
    expect(r.status, r.text).toBe(200);
    expect(rec(r).EvalID).not.toBe("");
    expect((await getJob("rev-same")).Version).toBe(2);
  });

  it("answers the real error texts", async () => {
    await register(serviceJob("rev-err"));
    await register(serviceJob("rev-err", { Priority: 60 }));
    const cases: [Obj, number, string][] = [
      [{ JobID: "rev-err", JobVersion: 1 }, 500, "can't revert to current version"],
      [{ JobID: "rev-err", JobVersion: 9 }, 500, 'job "rev-err" in namespace "default" at version 9 not found'],
      [
        { JobID: "rev-err", JobVersion: 0, EnforcePriorVersion: 0 },
        500,
        "Current job has version 1; enforcing version 0",
      ],
      [
        { JobID: "rev-err", JobVersion: 1, TaggedVersion: "x" },
        400,
        "JobVersion and TaggedVersion are mutually exclusive: specify only one",
      ],
      [{ JobID: "rev-err", TaggedVersion: "nope" }, 500, 'tag "nope" not found on job "rev-err"'],
      [{ JobVersion: 0 }, 400, "JobID must be specified"],
      [{ JobID: "other", JobVersion: 0 }, 400, "Job ID does not match"],
    ];
    for (const [body, status, text] of cases) {
      const r = await h.call("POST", "/v1/job/rev-err/revert", { body });
      expect([r.status, r.text]).toEqual([status, text]);
    }
    const missing = await h.call("POST", "/v1/job/rev-missing/revert", {
      body: { JobID: "rev-missing", JobVersion: 0 },
    });
    expect([missing.status, missing.text]).toEqual([500, 'job "rev-missing" not found']);
    const ok = await h.call("POST", "/v1/job/rev-err/revert", {
      body: { JobID: "rev-err", JobVersion: 0, EnforcePriorVersion: 1 },
    });
    expect(ok.status, ok.text).toBe(200);
    expect((await getJob("rev-err")).Version).toBe(2);
  });

  it("resolves TaggedVersion on the server and drops the tag from the copy", async () => {
    await register(serviceJob("rev-tag"));
    await h.call("POST", "/v1/job/rev-tag/versions/golden/tag", { body: { Version: 0, Description: "known good" } });
    await register(serviceJob("rev-tag", { Priority: 61 }));
    const r = await h.call("POST", "/v1/job/rev-tag/revert", { body: { JobID: "rev-tag", TaggedVersion: "golden" } });
    expect(r.status, r.text).toBe(200);
    const job = await getJob("rev-tag");
    expect([job.Version, job.Priority, job.VersionTag]).toEqual([2, 50, undefined]);
    const tagged = (await versions("rev-tag")).filter((v) => v.VersionTag !== undefined);
    expect(tagged.map((v) => v.Version)).toEqual([0]);
  });
});

describe("stable", () => {
  it("marks a version stable, bumping ModifyIndex but not JobModifyIndex", async () => {
    const out = await register(batchJob("stable-job"));
    await h.sched.control.idle();
    const r = await h.call("POST", "/v1/job/stable-job/stable", {
      body: { JobID: "stable-job", JobVersion: 0, Stable: true },
    });
    expect(r.status, r.text).toBe(200);
    const job = await getJob("stable-job");
    expect(job.Stable).toBe(true);
    expect(job.JobModifyIndex).toBe(out.JobModifyIndex);
    expect(job.ModifyIndex).toBe(rec(r).Index);
    const bad = await h.call("POST", "/v1/job/stable-job/stable", {
      body: { JobID: "stable-job", JobVersion: 4, Stable: true },
    });
    expect([bad.status, bad.text]).toEqual([500, 'job "stable-job" in namespace "default" at version 4 not found']);
  });
});

describe("version tags", () => {
  it("tags a version, updates the description in place, and refuses the name on another version", async () => {
    await register(serviceJob("tag-job"));
    const v1 = await register(serviceJob("tag-job", { Priority: 60 }));
    const before = await getJob("tag-job");
    let r = await h.call("POST", "/v1/job/tag-job/versions/release/tag", {
      body: { Version: 1, Description: "first" },
    });
    expect(r.status, r.text).toBe(200);
    const tagged = rec(r);
    expect(tagged).toMatchObject({ Name: "release", Description: "first", KnownLeader: true });
    expect(tagged.TaggedTime as number).toBeGreaterThan(1e18);
    const job = await getJob("tag-job");
    expect(job.VersionTag).toMatchObject({ Name: "release", Description: "first" });
    expect([job.Version, job.JobModifyIndex]).toEqual([1, v1.JobModifyIndex]);
    expect(job.ModifyIndex as number).toBeGreaterThan(before.ModifyIndex as number);
    r = await h.call("PUT", "/v1/job/tag-job/versions/release/tag", { body: { Version: 1, Description: "updated" } });
    expect(r.status).toBe(200);
    expect((await getJob("tag-job")).VersionTag).toMatchObject({ Name: "release", Description: "updated" });
    r = await h.call("POST", "/v1/job/tag-job/versions/release/tag", { body: { Version: 0 } });
    expect([r.status, r.text]).toEqual([500, 'tag "release" already exists on a different version of job "tag-job"']);
    r = await h.call("POST", "/v1/job/tag-job/versions/old/tag", { body: { Version: 7 } });
    expect([r.status, r.text]).toEqual([500, 'job "tag-job" version 7 not found']);
  });

  it("tags version 0 when neither Version nor Latest is given, and the latest with Latest", async () => {
    await register(serviceJob("tag-default"));
    await register(serviceJob("tag-default", { Priority: 60 }));
    await h.call("POST", "/v1/job/tag-default/versions/zero/tag", { body: {} });
    await h.call("POST", "/v1/job/tag-default/versions/newest/tag", { body: { Latest: true } });
    const vs = await versions("tag-default");
    expect(vs.map((v) => [v.Version, (v.VersionTag as Obj | undefined)?.Name])).toEqual([
      [1, "newest"],
      [0, "zero"],
    ]);
    const r = await h.call("POST", "/v1/job/tag-default/versions/x/tag", { body: { Latest: true, Version: 1 } });
    expect([r.status, r.text]).toEqual([500, "version must be zero when tagging latest, got: 1"]);
  });

  it("untags, answering the real text for an unknown tag", async () => {
    await register(serviceJob("tag-del"));
    await h.call("POST", "/v1/job/tag-del/versions/t1/tag", { body: { Version: 0 } });
    let r = await h.call("DELETE", "/v1/job/tag-del/versions/t1/tag");
    expect(r.status, r.text).toBe(200);
    expect(rec(r)).toMatchObject({ EvalID: "", JobModifyIndex: 0, VolumeEvalID: "" });
    expect((await getJob("tag-del")).VersionTag).toBeUndefined();
    r = await h.call("DELETE", "/v1/job/tag-del/versions/t1/tag");
    expect([r.status, r.text]).toEqual([500, 'tag "t1" not found on job "tag-del"']);
  });

  it("exempts tagged versions from the retention limit", async () => {
    await register(serviceJob("tag-keep"));
    await h.call("POST", "/v1/job/tag-keep/versions/first/tag", { body: { Version: 0 } });
    for (let i = 1; i <= 8; i++) await register(serviceJob("tag-keep", { Priority: 40 + i }));
    let vs = (await versions("tag-keep")).map((v) => v.Version);
    expect(vs).toEqual([8, 7, 6, 5, 4, 0]);
    await h.call("DELETE", "/v1/job/tag-keep/versions/first/tag");
    await register(serviceJob("tag-keep", { Priority: 90 }));
    vs = (await versions("tag-keep")).map((v) => v.Version);
    expect(vs).toEqual([9, 8, 7, 6, 5, 4]);
  });
});

describe("stop and purge", () => {
  it("stops a job as a new version that stays readable as dead", async () => {
    await register(serviceJob("stop-job"));
    await h.sched.control.idle();
    const r = await h.call("DELETE", "/v1/job/stop-job?eval_priority=70&no_shutdown_delay=true&global=false");
    expect(r.status, r.text).toBe(200);
    const out = rec(r);
    expect(Object.keys(out).sort()).toEqual([
      "EvalCreateIndex",
      "EvalID",
      "Index",
      "JobModifyIndex",
      "VolumeEvalID",
      "VolumeEvalIndex",
    ]);
    await h.sched.control.idle();
    const job = await getJob("stop-job");
    expect([job.Stop, job.Status, job.Version, job.JobModifyIndex]).toEqual([true, "dead", 1, out.JobModifyIndex]);
    const evals = list(await h.call("GET", "/v1/job/stop-job/evaluations"));
    expect(evals.find((e) => e.ID === out.EvalID)).toMatchObject({
      TriggeredBy: "job-deregister",
      Priority: 70,
      Status: "complete",
    });
    const allocs = list(await h.call("GET", "/v1/job/stop-job/allocations"));
    expect(allocs.every((a) => a.DesiredStatus === "stop" && a.ClientStatus === "complete")).toBe(true);
    expect(list(await h.call("GET", "/v1/job/stop-job/services"))).toEqual([]);
  });

  it("purges a job at once", async () => {
    await register(serviceJob("purge-job"));
    await h.sched.control.idle();
    const r = await h.call("DELETE", "/v1/job/purge-job?purge=true");
    expect(r.status).toBe(200);
    const gone = await h.call("GET", "/v1/job/purge-job");
    expect([gone.status, gone.text]).toEqual([404, "job not found"]);
    await h.sched.control.idle();
    const allocs = list(await h.call("GET", "/v1/job/purge-job/allocations"));
    expect(allocs.length).toBe(2);
    expect(allocs.every((a) => a.DesiredStatus === "stop")).toBe(true);
  });

  it("answers 200 with an empty evaluation for an unknown job", async () => {
    const r = await h.call("DELETE", "/v1/job/never-existed");
    expect(r.status).toBe(200);
    expect(rec(r)).toMatchObject({ EvalID: "", JobModifyIndex: 0 });
    const bad = await h.call("DELETE", "/v1/job/never-existed?purge=maybe");
    expect(bad.status).toBe(500);
    expect(bad.text).toContain('Failed to parse value of "purge" (maybe) as a bool');
  });

  it("stops the allocations of a purged registration when the same ID is registered again at once", async () => {
    await register(serviceJob("repurge"));
    await h.sched.control.idle();
    // Slow evaluations so the purge's evaluation runs after the new registration exists.
    h.sched.control.setTiming({ evalDelayMs: 300 });
    try {
      await h.call("DELETE", "/v1/job/repurge?purge=true");
      await register(serviceJob("repurge", {}, { Count: 1 }));
      await h.sched.control.idle();
    } finally {
      h.sched.control.setTiming({ evalDelayMs: 1 });
    }
    const all = list(await h.call("GET", "/v1/job/repurge/allocations?all=true"));
    const running = all.filter((a) => a.DesiredStatus === "run");
    expect(all).toHaveLength(3);
    expect(running).toHaveLength(1);
    expect(list(await h.call("GET", "/v1/job/repurge/allocations")).map((a) => a.ID)).toEqual(running.map((a) => a.ID));
  });

  it("hides an earlier registration's allocations unless all=true", async () => {
    await register(serviceJob("rereg"));
    await h.sched.control.idle();
    await h.call("DELETE", "/v1/job/rereg?purge=true");
    await h.sched.control.idle();
    await register(serviceJob("rereg", {}, { Count: 1 }));
    await h.sched.control.idle();
    expect(list(await h.call("GET", "/v1/job/rereg/allocations"))).toHaveLength(1);
    expect(list(await h.call("GET", "/v1/job/rereg/allocations?all=true"))).toHaveLength(3);
    expect(list(await h.call("GET", "/v1/job/rereg/deployments"))).toHaveLength(1);
    expect(list(await h.call("GET", "/v1/job/rereg/deployments?all=true"))).toHaveLength(2);
  });
});

describe("dispatch", () => {
  const param = batchJob("param", {
    ParameterizedJob: { Payload: "optional", MetaRequired: ["owner"], MetaOptional: ["note"] },
  });

  it("dispatches children with the real ID form, meta checks and payload limit", async () => {
    await register(param);
    const payload = Buffer.from("hello").toString("base64");
    let r = await h.call("POST", "/v1/job/param/dispatch", { body: { Payload: payload, Meta: { owner: "me" } } });
    expect(r.status, r.text).toBe(200);
    const out = rec(r);
    expect(String(out.DispatchedJobID)).toMatch(/^param\/dispatch-\d{10}-[0-9a-f]{8}$/);
    expect(out.EvalID).not.toBe("");
    const child = rec(await h.call("GET", `/v1/job/${encodeURIComponent(String(out.DispatchedJobID))}`));
    expect(child).toMatchObject({ ParentID: "param", Dispatched: true, Payload: payload, Meta: { owner: "me" } });
    const cases: [Obj, string][] = [
      [{ Meta: {} }, "Dispatch did not provide required meta keys: [owner]"],
      [{ Meta: { owner: "a", bad: "b" } }, "Dispatch request included unpermitted metadata keys: [bad]"],
      [
        { Meta: { owner: "a" }, Payload: Buffer.alloc(16385).toString("base64") },
        "Payload exceeds maximum size; 16385 > 16384",
      ],
    ];
    for (const [body, text] of cases) {
      r = await h.call("POST", "/v1/job/param/dispatch", { body });
      expect([r.status, r.text]).toEqual([500, text]);
    }
    r = await h.call("POST", "/v1/job/param/dispatch", {
      body: { Meta: { owner: "a" }, Payload: Buffer.alloc(16384).toString("base64") },
    });
    expect(r.status).toBe(200);
  });

  it("returns the same child for the same idempotency token", async () => {
    const a = rec(
      await h.call("POST", "/v1/job/param/dispatch?idempotency_token=tok-1", { body: { Meta: { owner: "x" } } }),
    );
    const b = rec(
      await h.call("POST", "/v1/job/param/dispatch?idempotency_token=tok-1", { body: { Meta: { owner: "x" } } }),
    );
    expect(b.DispatchedJobID).toBe(a.DispatchedJobID);
    expect(b.EvalID).toBe("");
    const c = rec(
      await h.call("POST", "/v1/job/param/dispatch?idempotency_token=tok-2", { body: { Meta: { owner: "x" } } }),
    );
    expect(c.DispatchedJobID).not.toBe(a.DispatchedJobID);
  });

  it("takes the raw body as payload on dispatch/payload and uses the prefix template", async () => {
    await register(batchJob("param-raw", { ParameterizedJob: { Payload: "required" } }));
    let r = await h.call("POST", "/v1/job/param-raw/dispatch/payload", { raw: Buffer.from([0, 1, 2, 255]) });
    expect(r.status, r.text).toBe(200);
    const child = rec(await h.call("GET", `/v1/job/${encodeURIComponent(String(rec(r).DispatchedJobID))}`));
    expect(child.Payload).toBe(Buffer.from([0, 1, 2, 255]).toString("base64"));
    r = await h.call("POST", "/v1/job/param-raw/dispatch", { body: {} });
    expect([r.status, r.text]).toEqual([500, "Payload is not provided but required by parameterized job"]);
    r = await h.call("POST", "/v1/job/param-raw/dispatch", { body: { Payload: "aGk=", IdPrefixTemplate: "nightly" } });
    expect(String(rec(r).DispatchedJobID)).toMatch(/^param-raw\/dispatch-nightly-\d+-[0-9a-f]{8}$/);
  });

  it("refuses non-parameterized and stopped jobs with the real texts", async () => {
    await register(batchJob("not-param"));
    let r = await h.call("POST", "/v1/job/not-param/dispatch", { body: {} });
    expect([r.status, r.text]).toEqual([500, 'Specified job "not-param" is not a parameterized job']);
    r = await h.call("POST", "/v1/job/missing-param/dispatch", { body: {} });
    expect([r.status, r.text]).toEqual([500, "parameterized job not found"]);
    await register(batchJob("param-stopped", { ParameterizedJob: {} }));
    await h.call("DELETE", "/v1/job/param-stopped");
    r = await h.call("POST", "/v1/job/param-stopped/dispatch", { body: {} });
    expect([r.status, r.text]).toEqual([500, 'Specified job "param-stopped" is stopped']);
  });

  it("counts children in the parent's summary", async () => {
    await h.sched.control.idle();
    const summary = rec(await h.call("GET", "/v1/job/param/summary"));
    const children = summary.Children as Obj;
    expect(
      (children.Dead as number) + (children.Running as number) + (children.Pending as number),
    ).toBeGreaterThanOrEqual(3);
    expect(summary.Namespace).toBeUndefined();
  });
});

describe("periodic force", () => {
  it("launches a child named <parent>/periodic-<ts>", async () => {
    await register(batchJob("cron-job", { Periodic: { Spec: "0 0 1 1 *" } }));
    const r = await h.call("POST", "/v1/job/cron-job/periodic/force");
    expect(r.status, r.text).toBe(200);
    const out = rec(r);
    expect(out.EvalID).not.toBe("");
    const kids = list(await h.call("GET", "/v1/jobs?prefix=cron-job/"));
    expect(kids).toHaveLength(1);
    expect(String(kids[0]?.ID)).toMatch(/^cron-job\/periodic-\d{10}$/);
    expect(kids[0]?.ParentID).toBe("cron-job");
    const evals = list(await h.call("GET", `/v1/job/${encodeURIComponent(String(kids[0]?.ID))}/evaluations`));
    expect(evals[0]?.TriggeredBy).toBe("periodic-job");
    await register(batchJob("not-cron"));
    const bad = await h.call("POST", "/v1/job/not-cron/periodic/force");
    expect([bad.status, bad.text]).toEqual([500, "can't force launch non-periodic job"]);
  });
});

describe("evaluate", () => {
  it("creates an evaluation and honours ForceReschedule on failed allocations", async () => {
    const out = await register(serviceJob("eval-job"));
    await h.sched.control.idle();
    const job = await getJob("eval-job");
    let r = await h.call("POST", "/v1/job/eval-job/evaluate", {
      body: { JobID: "eval-job", EvalOptions: { ForceReschedule: true } },
    });
    expect(r.status, r.text).toBe(200);
    expect(rec(r).JobModifyIndex).toBe(job.ModifyIndex);
    expect(rec(r).EvalID).not.toBe(out.EvalID);
    r = await h.call("POST", "/v1/job/eval-job/evaluate");
    expect(r.status).toBe(200);
    r = await h.call("POST", "/v1/job/eval-job/evaluate", { body: { JobID: "other" } });
    expect([r.status, r.text]).toEqual([400, "JobID not same as job name"]);
    r = await h.call("POST", "/v1/job/nope/evaluate", { body: { JobID: "nope" } });
    expect([r.status, r.text]).toEqual([500, "job not found"]);
    await register(batchJob("eval-periodic", { Periodic: { Spec: "0 0 1 1 *" } }));
    r = await h.call("POST", "/v1/job/eval-periodic/evaluate", { body: { JobID: "eval-periodic" } });
    expect([r.status, r.text]).toEqual([500, "can't evaluate periodic job"]);
  });
});

describe("scale", () => {
  it("changes the count as a new version, records the event, and refuses during a deployment", async () => {
    await h.sched.control.idle();
    h.sched.control.setTiming({ deploymentMs: 60_000 });
    try {
      await register(serviceJob("scale-job"));
      await until(
        async () =>
          ((await h.call("GET", "/v1/job/scale-job/deployment")).body as Obj | null)?.Status === "running" || undefined,
        "deployment",
      );
      const blocked = await h.call("POST", "/v1/job/scale-job/scale", {
        body: { Target: { Group: "web" }, Count: 3, Message: "more" },
      });
      expect([blocked.status, blocked.text]).toEqual([400, "job scaling blocked due to active deployment"]);
      const deployment = rec(await h.call("GET", "/v1/job/scale-job/deployment"));
      h.sched.control.failDeployment(String(deployment.ID));
    } finally {
      h.sched.control.setTiming({ deploymentMs: 40 });
    }
    const before = await getJob("scale-job");
    const r = await h.call("POST", "/v1/job/scale-job/scale", {
      body: { Target: { Group: "web" }, Count: 3, Message: "more", Meta: { by: "test" } },
    });
    expect(r.status, r.text).toBe(200);
    const out = rec(r);
    expect(out.EvalID).not.toBe("");
    const job = await getJob("scale-job");
    expect((job.TaskGroups as Obj[])[0]?.Count).toBe(3);
    expect(job.Version).toBe((before.Version as number) + 1);
    expect(job.JobModifyIndex).toBe(out.JobModifyIndex);
    expect((await h.call("GET", `/v1/job/scale-job/submission?version=${String(job.Version)}`)).status).toBe(404);
    await h.sched.control.idle();
    const status = rec(await h.call("GET", "/v1/job/scale-job/scale"));
    const group = (status.TaskGroups as Obj).web as Obj;
    expect(group).toMatchObject({ Desired: 3, Placed: 3, Running: 3 });
    expect((group.Events as Obj[])[0]).toMatchObject({
      Count: 3,
      PreviousCount: 2,
      Message: "more",
      Error: false,
      Meta: { by: "test" },
      EvalID: out.EvalID,
    });
    const evals = list(await h.call("GET", "/v1/job/scale-job/evaluations"));
    expect(evals.find((e) => e.ID === out.EvalID)?.TriggeredBy).toBe("job-scaling");
  });

  it("records an error event without changing the job", async () => {
    await register(batchJob("scale-err"));
    const before = await getJob("scale-err");
    const r = await h.call("POST", "/v1/job/scale-err/scale", {
      body: { Target: { Group: "work" }, Error: "autoscaler failed" },
    });
    expect(r.status, r.text).toBe(200);
    expect(rec(r).EvalID).toBe("");
    expect((await getJob("scale-err")).Version).toBe(before.Version);
    const events = ((rec(await h.call("GET", "/v1/job/scale-err/scale")).TaskGroups as Obj).work as Obj)
      .Events as Obj[];
    expect(events[0]).toMatchObject({ Error: true, Message: "autoscaler failed", Count: null });
  });

  it("validates the request with the real texts", async () => {
    await register(batchJob("scale-bad"));
    const cases: [Obj, number, string][] = [
      [{ Count: 1, Message: "m" }, 400, "missing task group name for scaling action"],
      [
        { Target: { Group: "work" }, Count: 1 },
        400,
        "exactly one of Message or Error must be set for a scaling action",
      ],
      [
        { Target: { Group: "work" }, Count: 1, Message: "m", Error: "e" },
        400,
        "exactly one of Message or Error must be set for a scaling action",
      ],
      [{ Target: { Group: "work" }, Count: -1, Message: "m" }, 400, "scaling action count can't be negative"],
      [
        { Target: { Group: "nope" }, Count: 1, Message: "m" },
        400,
        'task group "nope" specified for scaling does not exist in job',
      ],
      [{ Target: { Group: "work", Job: "other" }, Count: 1, Message: "m" }, 400, "job ID in payload did not match URL"],
    ];
    for (const [body, status, text] of cases) {
      const r = await h.call("POST", "/v1/job/scale-bad/scale", { body });
      expect([r.status, r.text]).toEqual([status, text]);
    }
    const missing = await h.call("POST", "/v1/job/scale-none/scale", {
      body: { Target: { Group: "g" }, Count: 1, Message: "m" },
    });
    expect([missing.status, missing.text]).toEqual([404, 'job "scale-none" not found']);
  });
});
