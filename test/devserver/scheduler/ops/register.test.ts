import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJob, rec, serviceJob, startScheduler, type Harness } from "../http";

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
});
afterAll(async () => {
  await h.close();
});

async function register(
  job: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  query = "",
): Promise<Record<string, unknown>> {
  const r = await h.call("POST", `/v1/jobs${query}`, { body: { Job: job, ...extra } });
  expect(r.status, r.text).toBe(200);
  return rec(r);
}

async function getJob(id: string, ns = "default"): Promise<Record<string, unknown>> {
  const r = await h.call("GET", `/v1/job/${encodeURIComponent(id)}?namespace=${ns}`);
  expect(r.status, r.text).toBe(200);
  return rec(r);
}

describe("register", () => {
  it("returns the evaluation and write index, without a Version field", async () => {
    const out = await register(serviceJob("reg-basic"));
    expect(Object.keys(out).sort()).toEqual(["EvalCreateIndex", "EvalID", "Index", "JobModifyIndex", "Warnings"]);
    expect(out.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    expect(out.JobModifyIndex).toBe(out.Index);
    const job = await getJob("reg-basic");
    expect(job.Version).toBe(0);
    expect(job.JobModifyIndex).toBe(out.JobModifyIndex);
    expect(job.CreateIndex).toBe(out.JobModifyIndex);
    expect(job.Region).toBe("global");
    expect(job.Datacenters).toEqual(["dc1"]);
  });

  it("creates a new version only when the spec changes, but always an evaluation", async () => {
    const first = await register(serviceJob("reg-versions"));
    const same = await register(serviceJob("reg-versions"));
    expect(same.EvalID).not.toBe("");
    expect(same.EvalID).not.toBe(first.EvalID);
    expect(same.JobModifyIndex).toBe(first.JobModifyIndex);
    expect(same.Index as number).toBeGreaterThan(first.Index as number);
    expect((await getJob("reg-versions")).Version).toBe(0);
    const changed = await register(serviceJob("reg-versions", { Meta: { build: "2" } }));
    expect(changed.JobModifyIndex as number).toBeGreaterThan(first.JobModifyIndex as number);
    const job = await getJob("reg-versions");
    expect(job.Version).toBe(1);
    expect(job.JobModifyIndex).toBe(changed.JobModifyIndex);
  });

  it("ignores server-managed fields sent back by a client when deciding whether the spec changed", async () => {
    await register(serviceJob("reg-mask"));
    await h.sched.control.idle();
    const stored = await getJob("reg-mask");
    expect(stored.Status).toBe("running");
    const out = await register(stored);
    expect((await getJob("reg-mask")).Version).toBe(0);
    expect(out.JobModifyIndex).toBe(stored.JobModifyIndex);
  });

  it("treats VersionTag as part of the spec: re-sending the plain spec of a tagged version makes a new version", async () => {
    await register(serviceJob("reg-tagged"));
    const tag = await h.call("POST", "/v1/job/reg-tagged/versions/v0/tag", {
      body: { Version: 0, Description: "first" },
    });
    expect(tag.status, tag.text).toBe(200);
    const stored = await getJob("reg-tagged");
    expect(stored.VersionTag).toMatchObject({ Name: "v0", Description: "first" });
    await register(stored);
    expect((await getJob("reg-tagged")).Version).toBe(0);
    await register(serviceJob("reg-tagged"));
    const job = await getJob("reg-tagged");
    expect(job.Version).toBe(1);
    expect(job.VersionTag).toBeUndefined();
  });

  it("keeps JobModifyIndex when only ModifyIndex moves (status, stability)", async () => {
    const out = await register(serviceJob("reg-indexes"));
    await h.sched.control.idle();
    const job = await getJob("reg-indexes");
    expect(job.JobModifyIndex).toBe(out.JobModifyIndex);
    expect(job.ModifyIndex as number).toBeGreaterThan(job.JobModifyIndex as number);
    expect(job.Stable).toBe(true);
  });

  it("enforces the job modify index with the real error texts", async () => {
    const created = await register(serviceJob("reg-cas"), { EnforceIndex: true, JobModifyIndex: 0 });
    let r = await h.call("POST", "/v1/jobs", {
      body: { Job: serviceJob("reg-cas"), EnforceIndex: true, JobModifyIndex: 0 },
    });
    expect(r.status).toBe(500);
    expect(r.text).toBe("Enforcing job modify index 0: job already exists");
    const wrong = (created.JobModifyIndex as number) + 100;
    r = await h.call("POST", "/v1/jobs", {
      body: { Job: serviceJob("reg-cas"), EnforceIndex: true, JobModifyIndex: wrong },
    });
    expect(r.status).toBe(500);
    expect(r.text).toBe(
      `Enforcing job modify index ${wrong}: job exists with conflicting job modify index: ${String(created.JobModifyIndex)}`,
    );
    r = await h.call("POST", "/v1/jobs", {
      body: { Job: serviceJob("reg-cas-new"), EnforceIndex: true, JobModifyIndex: 7 },
    });
    expect(r.status).toBe(500);
    expect(r.text).toBe("Enforcing job modify index 7: job does not exist");
    const ok = await register(serviceJob("reg-cas", { Priority: 60 }), {
      EnforceIndex: true,
      JobModifyIndex: created.JobModifyIndex,
    });
    expect(ok.JobModifyIndex as number).toBeGreaterThan(created.JobModifyIndex as number);
  });

  it("refuses type and periodic/parameterized transitions with the real texts", async () => {
    await register(batchJob("reg-trans"));
    const cases: [Record<string, unknown>, string][] = [
      [serviceJob("reg-trans"), 'cannot update job from type "batch" to "service"'],
      [
        batchJob("reg-trans", { Periodic: { Spec: "*/5 * * * *" } }),
        "cannot update non-periodic job to being periodic",
      ],
      [
        batchJob("reg-trans", { ParameterizedJob: { Payload: "optional" } }),
        "cannot update non-parameterized job to being parameterized",
      ],
    ];
    for (const [job, text] of cases) {
      const r = await h.call("POST", "/v1/jobs", { body: { Job: job } });
      expect(r.status).toBe(500);
      expect(r.text).toBe(text);
    }
    await register(batchJob("reg-periodic", { Periodic: { Spec: "0 * * * *" } }));
    let r = await h.call("POST", "/v1/jobs", { body: { Job: batchJob("reg-periodic") } });
    expect(r.text).toBe("cannot update periodic job to being non-periodic");
    await register(batchJob("reg-param", { ParameterizedJob: {} }));
    r = await h.call("POST", "/v1/jobs", { body: { Job: batchJob("reg-param") } });
    expect(r.text).toBe("cannot update parameterized job to being non-parameterized");
  });

  it("returns an empty EvalID for periodic and parameterized jobs, even when unchanged", async () => {
    const a = await register(batchJob("reg-noeval", { Periodic: { Spec: "0 * * * *" } }));
    expect(a.EvalID).toBe("");
    const b = await register(batchJob("reg-noeval", { Periodic: { Spec: "0 * * * *" } }));
    expect(b.EvalID).toBe("");
    expect((await getJob("reg-noeval")).Status).toBe("running");
  });

  it("lets ?namespace= and ?region= override the body and the job", async () => {
    await register(
      serviceJob("reg-ns", { Namespace: "body-ns", Region: "job-region" }),
      { Namespace: "request-ns" },
      "?namespace=query-ns&region=eu",
    );
    const job = await getJob("reg-ns", "query-ns");
    expect(job.Namespace).toBe("query-ns");
    expect(job.Region).toBe("eu");
    await register(serviceJob("reg-ns2", { Namespace: "job-ns" }), { Namespace: "request-ns" });
    expect((await getJob("reg-ns2", "request-ns")).Namespace).toBe("request-ns");
    await register(serviceJob("reg-ns3", { Namespace: "job-ns" }));
    expect((await getJob("reg-ns3", "job-ns")).Namespace).toBe("job-ns");
    expect((await h.call("GET", "/v1/job/reg-ns3")).status).toBe(404);
  });

  it("checks the path ID on POST /v1/job/:job_id", async () => {
    let r = await h.call("POST", "/v1/job/other", { body: { Job: serviceJob("reg-path") } });
    expect(r.status).toBe(400);
    expect(r.text).toBe("Job ID does not match name");
    r = await h.call("POST", "/v1/job/reg-path", { body: { Job: serviceJob("reg-path") } });
    expect(r.status).toBe(200);
    r = await h.call("PUT", "/v1/job/reg-path", { body: { Job: serviceJob("reg-path", { Priority: 70 }) } });
    expect(r.status).toBe(200);
    expect((await getJob("reg-path")).Version).toBe(1);
  });

  it("answers malformed requests with the real 400 texts", async () => {
    let r = await h.call("POST", "/v1/jobs", { body: {} });
    expect([r.status, r.text]).toEqual([400, "Job must be specified"]);
    r = await h.call("POST", "/v1/jobs", { body: { Job: { Name: "x" } } });
    expect([r.status, r.text]).toEqual([400, "Job ID hasn't been provided"]);
    r = await h.call("POST", "/v1/jobs", { body: { Job: serviceJob("reg-prio"), EvalPriority: 101 } });
    expect([r.status, r.text]).toEqual([400, "Eval priority must be between 1 and 100 inclusively"]);
    r = await h.call("POST", "/v1/jobs", { body: { Job: { ID: "reg-empty", TaskGroups: [] } } });
    expect(r.status).toBe(500);
    expect(r.text).toContain("Missing job task groups");
  });

  it("stores submissions per version and drops them past the size limit with a warning", async () => {
    const sub = { Source: 'job "reg-sub" {}', Format: "hcl2", VariableFlags: { env: "prod" }, Variables: "" };
    const out = await register(serviceJob("reg-sub"), { Submission: sub });
    const r = await h.call("GET", "/v1/job/reg-sub/submission?version=0");
    expect(r.status).toBe(200);
    expect(rec(r)).toMatchObject({
      JobID: "reg-sub",
      Namespace: "default",
      Version: 0,
      JobIndex: out.JobModifyIndex,
      Source: sub.Source,
      Format: "hcl2",
      VariableFlags: { env: "prod" },
    });
    expect((await h.call("GET", "/v1/job/reg-sub/submission?version=1")).text).toBe("job source not found");
    expect((await h.call("GET", "/v1/job/reg-sub/submission?version=1")).status).toBe(404);
    expect((await h.call("GET", "/v1/job/reg-sub/submission")).status).toBe(400);
    const big = await register(serviceJob("reg-sub", { Priority: 51 }), {
      Submission: { Source: "x".repeat(1_000_001), Format: "hcl2" },
    });
    expect(big.Warnings).toBe(
      "1 warning(s):\n\n* job source size of 1.0 MB exceeds maximum of 1.0 MB and will be discarded",
    );
    expect((await h.call("GET", "/v1/job/reg-sub/submission?version=1")).status).toBe(404);
  });

  it("keeps the last 6 versions and their submissions", async () => {
    for (let i = 0; i < 8; i++)
      await register(serviceJob("reg-keep", { Priority: 40 + i }), { Submission: { Source: `v${i}`, Format: "hcl2" } });
    const r = rec(await h.call("GET", "/v1/job/reg-keep/versions"));
    expect((r.Versions as Record<string, unknown>[]).map((v) => v.Version)).toEqual([7, 6, 5, 4, 3, 2]);
    expect((await h.call("GET", "/v1/job/reg-keep/submission?version=1")).status).toBe(404);
    expect(rec(await h.call("GET", "/v1/job/reg-keep/submission?version=2")).Source).toBe("v2");
  });

  it("preserves existing group counts when asked", async () => {
    await register(serviceJob("reg-counts", {}, { Count: 3 }));
    await register(serviceJob("reg-counts", { Priority: 55 }, { Count: 1 }), { PreserveCounts: true });
    const job = await getJob("reg-counts");
    expect((job.TaskGroups as Record<string, unknown>[])[0]?.Count).toBe(3);
    expect(job.Priority).toBe(55);
  });

  it("canonicalizes JSON jobs like the server's admission (defaults do not make a new version)", async () => {
    await register({
      ID: "reg-canon",
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }],
    });
    const job = await getJob("reg-canon");
    expect(job).toMatchObject({
      Name: "reg-canon",
      Type: "service",
      Priority: 50,
      Namespace: "default",
      Datacenters: ["*"],
      NodePool: "default",
    });
    const group = (job.TaskGroups as Record<string, unknown>[])[0] as Record<string, unknown>;
    expect(group.Count).toBe(1);
    expect(group.Update).toMatchObject({ MaxParallel: 1, HealthCheck: "checks" });
    expect(job.Update).toMatchObject({ MaxParallel: 1, HealthCheck: "" });
    await register({
      ID: "reg-canon",
      Type: "service",
      Priority: 50,
      TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }],
    });
    expect((await getJob("reg-canon")).Version).toBe(0);
  });

  it("clears submitted secrets tokens and records the caller's token accessor", async () => {
    await register(serviceJob("reg-tokens", { SecretsToken: "s.secret", DiscoveryToken: "c-secret" }));
    const job = await getJob("reg-tokens");
    expect(job.SecretsToken).toBe("");
    expect(job.DiscoveryToken).toBe("");
    expect(typeof job.SvcTokenID).toBe("string");
    expect(JSON.stringify(job)).not.toContain("s.secret");
  });

  it("restarts a stopped job as a new version when registered again", async () => {
    await register(serviceJob("reg-restart"));
    await h.sched.control.idle();
    const stop = await h.call("DELETE", "/v1/job/reg-restart");
    expect(stop.status).toBe(200);
    await h.sched.control.idle();
    const stopped = await getJob("reg-restart");
    expect([stopped.Stop, stopped.Version, stopped.Status]).toEqual([true, 1, "dead"]);
    await register(serviceJob("reg-restart"));
    const again = await getJob("reg-restart");
    expect([again.Stop, again.Version]).toEqual([false, 2]);
  });
});

describe("parse", () => {
  it("returns the bare job, canonicalized on request", async () => {
    const hcl =
      'job "parsed" {\n  group "g" {\n    task "t" {\n      driver = "docker"\n      config { image = var.image }\n    }\n  }\n}\nvariable "image" { default = "a" }\n';
    let r = await h.call("POST", "/v1/jobs/parse", { body: { JobHCL: hcl, Variables: 'image = "b"' } });
    expect(r.status, r.text).toBe(200);
    const job = rec(r);
    expect(job.ID).toBe("parsed");
    expect(job.Job).toBeUndefined();
    expect(((job.TaskGroups as Record<string, unknown>[])[0]?.Tasks as Record<string, unknown>[])[0]?.Config).toEqual({
      image: "b",
    });
    expect(job.Priority).toBeUndefined();
    r = await h.call("PUT", "/v1/jobs/parse", { body: { JobHCL: hcl, Canonicalize: true } });
    expect(rec(r).Priority).toBe(50);
  });

  it("answers the real 400 texts", async () => {
    let r = await h.call("POST", "/v1/jobs/parse", { body: { JobHCL: "" } });
    expect([r.status, r.text]).toEqual([400, "Job spec is empty"]);
    r = await h.call("POST", "/v1/jobs/parse", { body: { JobHCL: "job {" } });
    expect(r.status).toBe(400);
    expect(r.text.startsWith("Failed to parse job: ")).toBe(true);
  });
});
