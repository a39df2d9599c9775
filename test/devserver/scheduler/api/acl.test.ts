import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJob, list, rec, serviceJob, startScheduler, type Harness } from "../http";

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
  for (const [job, ns] of [
    [serviceJob("acl-web"), "default"],
    [batchJob("acl-param", { ParameterizedJob: {} }), "default"],
    [batchJob("acl-team"), "team-a"],
  ] as const) {
    const r = await h.call("POST", `/v1/jobs?namespace=${ns}`, { body: { Job: job } });
    expect(r.status, r.text).toBe(200);
  }
  await h.sched.control.idle();
});
afterAll(async () => {
  await h.close();
});

function token(spec: { policies?: string[]; capabilities?: string[]; namespaces?: string[] }): string {
  return h.server.createToken("scheduler", spec);
}

describe("ACL", () => {
  it("denies requests without a token or with an unknown one", async () => {
    let r = await h.call("GET", "/v1/jobs", { token: null });
    expect([r.status, r.text]).toEqual([403, "Permission denied"]);
    r = await h.call("GET", "/v1/job/acl-web", { token: "00000000-0000-0000-0000-000000000000" });
    expect([r.status, r.text]).toEqual([403, "ACL token not found"]);
    r = await h.call("POST", "/v1/jobs", { token: null, body: { Job: serviceJob("acl-x") } });
    expect([r.status, r.text]).toEqual([403, "Permission denied"]);
  });

  it("lets the read policy read and parse but not write", async () => {
    const t = token({ policies: ["read"] });
    for (const path of [
      "/v1/jobs",
      "/v1/job/acl-web",
      "/v1/job/acl-web/versions",
      "/v1/job/acl-web/allocations",
      "/v1/job/acl-web/scale",
      "/v1/job/acl-web/services",
    ]) {
      expect([path, (await h.call("GET", path, { token: t })).status]).toEqual([path, 200]);
    }
    expect(
      (
        await h.call("POST", "/v1/jobs/parse", {
          token: t,
          body: { JobHCL: 'job "p" {\n group "g" {\n task "t" {\n driver = "docker"\n }\n }\n}\n' },
        })
      ).status,
    ).toBe(200);
    const writes: [string, string, unknown][] = [
      ["POST", "/v1/jobs", { Job: serviceJob("acl-web") }],
      ["POST", "/v1/job/acl-web/plan", { Job: serviceJob("acl-web") }],
      ["POST", "/v1/job/acl-web/revert", { JobID: "acl-web", JobVersion: 0 }],
      ["POST", "/v1/job/acl-web/evaluate", { JobID: "acl-web" }],
      ["POST", "/v1/job/acl-web/scale", { Target: { Group: "web" }, Count: 1, Message: "m" }],
      ["POST", "/v1/job/acl-param/dispatch", {}],
      ["POST", "/v1/job/acl-web/versions/t/tag", { Version: 0 }],
      ["DELETE", "/v1/job/acl-web", undefined],
    ];
    for (const [method, path, body] of writes) {
      const r = await h.call(method, path, { token: t, body });
      expect([method, path, r.status, r.text]).toEqual([method, path, 403, "Permission denied"]);
    }
  });

  it("maps single capabilities to their endpoints", async () => {
    const dispatchOnly = token({ capabilities: ["namespace:dispatch-job"] });
    expect((await h.call("POST", "/v1/job/acl-param/dispatch", { token: dispatchOnly, body: {} })).status).toBe(200);
    expect((await h.call("POST", "/v1/jobs", { token: dispatchOnly, body: { Job: serviceJob("acl-d") } })).status).toBe(
      403,
    );
    const scaler = token({ policies: ["scale"] });
    const scaled = await h.call("POST", "/v1/job/acl-web/scale", {
      token: scaler,
      body: { Target: { Group: "web" }, Error: "just recording" },
    });
    expect(scaled.status, scaled.text).toBe(200);
    expect((await h.call("GET", "/v1/job/acl-web/scale", { token: scaler })).status).toBe(200);
    expect((await h.call("GET", "/v1/job/acl-web", { token: scaler })).status).toBe(403);
    const tagger = token({ capabilities: ["namespace:tag-job-version"] });
    expect(
      (await h.call("POST", "/v1/job/acl-web/versions/ok/tag", { token: tagger, body: { Version: 0 } })).status,
    ).toBe(200);
    const parser = token({ capabilities: ["namespace:parse-job"] });
    expect((await h.call("POST", "/v1/jobs/parse", { token: parser, body: { JobHCL: "" } })).status).toBe(400);
  });

  it("needs policy-override when PolicyOverride is set", async () => {
    const writer = token({ policies: ["write"] });
    let r = await h.call("POST", "/v1/jobs", {
      token: writer,
      body: { Job: serviceJob("acl-po"), PolicyOverride: true },
    });
    expect([r.status, r.text]).toEqual([403, "Permission denied"]);
    r = await h.call("POST", "/v1/jobs", { token: writer, body: { Job: serviceJob("acl-po") } });
    expect(r.status, r.text).toBe(200);
    const overrider = token({ policies: ["write"], capabilities: ["namespace:policy-override"] });
    r = await h.call("POST", "/v1/job/acl-po/plan", {
      token: overrider,
      body: { Job: serviceJob("acl-po"), PolicyOverride: true },
    });
    expect(r.status, r.text).toBe(200);
  });

  it("checks writes in the namespace the job lands in and filters * listings", async () => {
    const teamA = token({ policies: ["write"], namespaces: ["team-a"] });
    let r = await h.call("POST", "/v1/jobs", {
      token: teamA,
      body: { Job: batchJob("acl-ns", { Namespace: "team-a" }) },
    });
    expect(r.status, r.text).toBe(200);
    r = await h.call("POST", "/v1/jobs", { token: teamA, body: { Job: batchJob("acl-ns") } });
    expect(r.status).toBe(403);
    r = await h.call("POST", "/v1/jobs?namespace=default", {
      token: teamA,
      body: { Job: batchJob("acl-ns", { Namespace: "team-a" }) },
    });
    expect(r.status).toBe(403);
    const listed = list(await h.call("GET", "/v1/jobs?namespace=*", { token: teamA }));
    expect(listed.map((j) => `${String(j.Namespace)}/${String(j.ID)}`).sort()).toEqual([
      "team-a/acl-ns",
      "team-a/acl-team",
    ]);
    expect((await h.call("GET", "/v1/jobs", { token: teamA })).status).toBe(403);
    expect((await h.call("GET", "/v1/job/acl-team?namespace=team-a", { token: teamA })).status).toBe(200);
  });

  it("refuses writes to the * namespace, a wildcard for reads only, as the real server does", async () => {
    const teamA = token({ policies: ["write"], namespaces: ["team-a"] });
    const wildcard = 'job "acl-star" is in nonexistent namespace "*"';
    let r = await h.call("POST", "/v1/jobs?namespace=*", { token: teamA, body: { Job: batchJob("acl-star") } });
    expect([r.status, r.text]).toEqual([500, wildcard]);
    r = await h.call("POST", "/v1/jobs", { token: teamA, body: { Job: batchJob("acl-star", { Namespace: "*" }) } });
    expect([r.status, r.text]).toEqual([500, wildcard]);
    r = await h.call("POST", "/v1/job/acl-star?namespace=*", { token: h.root, body: { Job: batchJob("acl-star") } });
    expect([r.status, r.text]).toEqual([500, wildcard]);
    r = await h.call("POST", "/v1/job/acl-star/plan?namespace=*", {
      token: teamA,
      body: { Job: batchJob("acl-star") },
    });
    expect([r.status, r.text]).toEqual([500, wildcard]);
    // a token that may submit nowhere is refused before
    const reader = token({ policies: ["read"] });
    r = await h.call("POST", "/v1/jobs?namespace=*", { token: reader, body: { Job: batchJob("acl-star") } });
    expect([r.status, r.text]).toEqual([403, "Permission denied"]);
    // nothing was stored: not in a namespace named *, not anywhere
    const all = list(await h.call("GET", "/v1/jobs?namespace=*"));
    expect(all.filter((j) => j.ID === "acl-star")).toEqual([]);
    const teamB = token({ policies: ["read"], namespaces: ["team-b"] });
    expect((await h.call("GET", "/v1/job/acl-star?namespace=*", { token: teamB })).status).toBe(404);
    expect(list(await h.call("GET", "/v1/jobs?namespace=*", { token: teamB }))).toEqual([]);
  });

  it("records the accessor of the registering token, never its secret", async () => {
    const writer = token({ policies: ["write"] });
    await h.call("POST", "/v1/jobs", { token: writer, body: { Job: batchJob("acl-owner") } });
    const job = rec(await h.call("GET", "/v1/job/acl-owner"));
    expect(typeof job.SvcTokenID).toBe("string");
    expect(JSON.stringify(job)).not.toContain(writer);
  });
});

describe("without ACLs", () => {
  let open: Harness;
  beforeAll(async () => {
    open = await startScheduler({}, false);
  });
  afterAll(async () => {
    await open.close();
  });

  it("serves every request without a token", async () => {
    expect((await open.call("POST", "/v1/jobs", { token: null, body: { Job: batchJob("open-job") } })).status).toBe(
      200,
    );
    expect((await open.call("GET", "/v1/job/open-job", { token: null })).status).toBe(200);
    const job = rec(await open.call("GET", "/v1/job/open-job", { token: null }));
    expect(job.SvcTokenID).toBeUndefined();
  });
});
