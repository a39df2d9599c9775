import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchJob, list, rec, serviceJob, startScheduler, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
  for (const id of ["page-a", "page-b", "page-c", "page-d", "page-e"]) {
    const r = await h.call("POST", "/v1/jobs", {
      body: { Job: batchJob(id, { Meta: { team: id < "page-c" ? "blue" : "red" } }) },
    });
    expect(r.status, r.text).toBe(200);
  }
  await h.call("POST", "/v1/jobs?namespace=other", { body: { Job: batchJob("page-x") } });
  await h.call("POST", "/v1/jobs", { body: { Job: serviceJob("svc-read") } });
  await h.sched.control.idle();
});
afterAll(async () => {
  await h.close();
});

describe("list jobs", () => {
  it("pages with per_page and the next-token header", async () => {
    const seen: string[] = [];
    let token = "";
    const tokens: string[] = [];
    for (;;) {
      const r = await h.call(
        "GET",
        `/v1/jobs?prefix=page-&per_page=2${token ? `&next_token=${encodeURIComponent(token)}` : ""}`,
      );
      expect(r.status).toBe(200);
      seen.push(...list(r).map((j) => String(j.ID)));
      token = String(r.headers["x-svc-nexttoken"] ?? "");
      if (token === "") break;
      tokens.push(token);
    }
    expect(seen).toEqual(["page-a", "page-b", "page-c", "page-d", "page-e"]);
    expect(tokens).toEqual(["default.page-c", "default.page-e"]);
  });

  it("returns stubs with a summary, and Meta only when asked", async () => {
    const [stub] = list(await h.call("GET", "/v1/jobs?prefix=page-a"));
    expect(stub).toMatchObject({
      ID: "page-a",
      Name: "page-a",
      Type: "batch",
      Namespace: "default",
      Periodic: false,
      ParameterizedJob: false,
      Stop: false,
    });
    expect((stub?.JobSummary as Obj).JobID).toBe("page-a");
    expect(stub?.Meta).toBeUndefined();
    const [withMeta] = list(await h.call("GET", "/v1/jobs?prefix=page-a&meta=true"));
    expect(withMeta?.Meta).toEqual({ team: "blue" });
  });

  it("filters with the expression language", async () => {
    const ids = async (filter: string): Promise<string[]> => {
      const r = await h.call("GET", `/v1/jobs?filter=${encodeURIComponent(filter)}`);
      expect(r.status, r.text).toBe(200);
      return list(r).map((j) => String(j.ID));
    };
    expect(await ids('Name == "page-b"')).toEqual(["page-b"]);
    expect(await ids('Meta.team == "red"')).toEqual(["page-c", "page-d", "page-e"]);
    expect(await ids('Meta["team"] == "blue" and Name != "page-a"')).toEqual(["page-b"]);
    expect(await ids('(Name == "page-a" or Name == "page-e") and Type == "batch"')).toEqual(["page-a", "page-e"]);
    expect(await ids('Status == "running" and Type == "service"')).toEqual(["svc-read"]);
    expect(await ids('Name matches "^page-[de]$"')).toEqual(["page-d", "page-e"]);
    expect(await ids('"dc1" in Datacenters and Type == "service"')).toEqual(["svc-read"]);
    expect(await ids('not (Meta is empty) and Meta.team contains "lu"')).toEqual(["page-a", "page-b"]);
    const paged = await h.call("GET", `/v1/jobs?per_page=1&filter=${encodeURIComponent('Meta.team == "red"')}`);
    expect(list(paged).map((j) => j.ID)).toEqual(["page-c"]);
    expect(paged.headers["x-svc-nexttoken"]).toBe("default.page-d");
    const bad = await h.call("GET", `/v1/jobs?filter=${encodeURIComponent("Name ==")}`);
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("failed to read filter expression");
  });

  it("lists one namespace, or all with *", async () => {
    expect(list(await h.call("GET", "/v1/jobs?namespace=other")).map((j) => j.ID)).toEqual(["page-x"]);
    const all = list(await h.call("GET", "/v1/jobs?namespace=*&prefix=page-"));
    expect(all.map((j) => `${String(j.Namespace)}/${String(j.ID)}`)).toEqual([
      "default/page-a",
      "default/page-b",
      "default/page-c",
      "default/page-d",
      "default/page-e",
      "other/page-x",
    ]);
  });

  it("sends the blocking-query headers on list reads", async () => {
    const r = await h.call("GET", "/v1/jobs");
    expect(Number(r.headers["x-svc-index"])).toBeGreaterThan(0);
    expect(r.headers["x-svc-knownleader"]).toBe("true");
  });
});

describe("job reads", () => {
  it("answers 404 with the real texts", async () => {
    for (const [path, text] of [
      ["/v1/job/none", "job not found"],
      ["/v1/job/none/summary", "job not found"],
      ["/v1/job/none/scale", "job not found"],
      ["/v1/job/none/services", "job not found"],
      ["/v1/job/none/actions", "job not found"],
      ["/v1/job/none/versions", "job versions not found"],
      ["/v1/job/none/submission?version=0", "job source not found"],
    ] as const) {
      const r = await h.call("GET", path);
      expect([path, r.status, r.text]).toEqual([path, 404, text]);
    }
    expect(list(await h.call("GET", "/v1/job/none/allocations"))).toEqual([]);
    expect(list(await h.call("GET", "/v1/job/none/evaluations"))).toEqual([]);
    expect(list(await h.call("GET", "/v1/job/none/deployments"))).toEqual([]);
    const latest = await h.call("GET", "/v1/job/none/deployment");
    expect([latest.status, latest.text]).toEqual([200, "null"]);
  });

  it("lists the job's actions", async () => {
    expect(list(await h.call("GET", "/v1/job/svc-read/actions"))).toEqual([
      { Name: "hello", Command: "echo", Args: ["hello", "from", "action"], TaskName: "app", TaskGroupName: "web" },
    ]);
  });

  it("reads jobs whose ID contains a slash, encoded or not", async () => {
    await h.call("POST", "/v1/jobs", { body: { Job: batchJob("param-read", { ParameterizedJob: {} }) } });
    const d = rec(await h.call("POST", "/v1/job/param-read/dispatch", { body: {} }));
    const id = String(d.DispatchedJobID);
    expect(rec(await h.call("GET", `/v1/job/${encodeURIComponent(id)}`)).ID).toBe(id);
    expect(rec(await h.call("GET", `/v1/job/${id}`)).ID).toBe(id);
    expect(rec(await h.call("GET", `/v1/job/${id}/summary`)).JobID).toBe(id);
  });

  it("answers Invalid method for a wrong method on a sub-resource", async () => {
    const r = await h.call("GET", "/v1/job/svc-read/plan");
    expect([r.status, r.text]).toEqual([405, "Invalid method"]);
  });

  it("returns the standalone summary without a namespace and the scale status", async () => {
    const summary = rec(await h.call("GET", "/v1/job/svc-read/summary"));
    expect(summary.Namespace).toBeUndefined();
    expect((summary.Summary as Obj).web).toMatchObject({ Running: 2 });
    const scale = rec(await h.call("GET", "/v1/job/svc-read/scale"));
    expect(scale).toMatchObject({ JobID: "svc-read", Namespace: "default", JobStopped: false });
    expect((scale.TaskGroups as Obj).web).toMatchObject({
      Desired: 2,
      Placed: 2,
      Running: 2,
      Healthy: 2,
      Unhealthy: 0,
      Events: null,
    });
  });
});
