// The devserver acting as an older scheduler release (`release: "1.6.5"`): routes that release lacks answer
// as its router makes them answer (unknown job sub-paths reach the register, read and deregister handlers).
// Each expected answer is what the real scheduler's release 1.6.5 answered to the same request as a dev agent
// (reference/toolchain.md, "Real servers as peers").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startScheduler, type Harness } from "../http";

const job = (id: string, extra: Record<string, unknown> = {}) => ({
  ID: id,
  Name: id,
  Type: "batch",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "raw_exec", Config: { command: "/bin/date" } }] }],
  ...extra,
});

let h: Harness;
beforeAll(async () => {
  h = await startScheduler({ release: "1.6.5" });
  await h.call("POST", "/v1/jobs", { body: { Job: job("a") } });
  await h.call("POST", "/v1/jobs", { body: { Job: job("a", { Meta: { v: "2" } }) } });
  await h.call("POST", "/v1/jobs", { body: { Job: job("p", { ParameterizedJob: { Payload: "optional" } }) } });
});
afterAll(() => h?.close());

describe("release 1.6.5", () => {
  it("answers the tag route as the register handler: 400 Job must be specified", async () => {
    const r = await h.call("POST", "/v1/job/a/versions/golden/tag", { body: { Version: 0, Description: "d" } });
    expect([r.status, r.text]).toEqual([400, "Job must be specified"]);
  });

  it("answers an untag as stopping a job that does not exist: 200, nothing written, index 0", async () => {
    const r = await h.call("DELETE", "/v1/job/a/versions/golden/tag");
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ EvalID: "", EvalCreateIndex: 0, JobModifyIndex: 0, Index: 0 });
  });

  it("ignores diff_version: diffs compare each version with the one before", async () => {
    const r = await h.call("GET", "/v1/job/a/versions?diffs=true&diff_version=0");
    const body = r.body as { Versions: unknown[]; Diffs: unknown[] };
    expect(body.Versions).toHaveLength(2);
    expect(body.Diffs).toHaveLength(1);
  });

  it("answers dispatch/payload as the register handler decoding a job from the body", async () => {
    expect((await h.call("POST", "/v1/job/p/dispatch/payload", { raw: "hello" })).text).toBe(
      "invalid character 'h' looking for beginning of value",
    );
    expect((await h.call("POST", "/v1/job/p/dispatch/payload", { raw: "" })).text).toBe("Request body is empty");
    expect((await h.call("POST", "/v1/job/p/dispatch/payload", { raw: '{"a":1}' })).text).toBe("Job must be specified");
    expect((await h.call("POST", "/v1/job/p/dispatch/payload", { raw: "[1]" })).text).toBe(
      "json: cannot unmarshal array into Go value of type api.JobRegisterRequest",
    );
  });

  it("has no job actions: the list route finds no job", async () => {
    const r = await h.call("GET", "/v1/job/a/actions");
    expect([r.status, r.text]).toEqual([404, "job not found"]);
  });
});

describe("ACLs off", () => {
  let open: Harness;
  beforeAll(async () => {
    open = await startScheduler({}, false);
  });
  afterAll(() => open?.close());

  it("fails a plan with a token that is not a UUID, as the real plan handler does, and accepts it on register and reads", async () => {
    const body = { Job: job("t1") };
    const reg = await open.call("POST", "/v1/jobs", { body, token: "placeholder" });
    expect(reg.status).toBe(200);
    expect((await open.call("GET", "/v1/job/t1", { token: "placeholder" })).status).toBe(200);
    const plan = await open.call("POST", "/v1/job/t1/plan", { body, token: "placeholder" });
    expect([plan.status, plan.text]).toEqual([500, "acl token lookup failed: index error: UUID must be 36 characters"]);
    expect(
      (await open.call("POST", "/v1/job/t1/plan", { body, token: "00000000-1111-2222-3333-444444444444" })).status,
    ).toBe(200);
    expect((await open.call("POST", "/v1/job/t1/plan", { body, token: null })).status).toBe(200);
  });
});
