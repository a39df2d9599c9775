import { describe, expect, it } from "vitest";
import { Router, compilePath, matchPath } from "../../../devserver/core";

const ok = () => ({});

describe("matchPath", () => {
  it.each([
    { pattern: "/v1/job/:job_id", path: "/v1/job/web", params: { job_id: "web" } },
    { pattern: "/v1/job/:job_id", path: "/v1/job/batch%2Fdispatch-1", params: { job_id: "batch/dispatch-1" } },
    {
      pattern: "/v1/job/:job_id/versions/:tag/tag",
      path: "/v1/job/a%2Fb/versions/release%201/tag",
      params: { job_id: "a/b", tag: "release 1" },
    },
    { pattern: "/v1/auth/*mount/login", path: "/v1/auth/cloud/login", params: { mount: "cloud" } },
    { pattern: "/v1/auth/*mount/login", path: "/v1/auth/team%20a/nested/login", params: { mount: "team a/nested" } },
    { pattern: "/v1/job/:job_id", path: "/v1/job/bad%ZZ", params: { job_id: "bad%ZZ" } },
    { pattern: "/v1/a.b", path: "/v1/a.b", params: {} },
  ])("matches $path against $pattern", ({ pattern, path, params }) => {
    expect(matchPath(compilePath(pattern), path)).toEqual(params);
  });

  it.each([
    { pattern: "/v1/job/:job_id", path: "/v1/job/a/b" },
    { pattern: "/v1/job/:job_id", path: "/v1/job/" },
    { pattern: "/v1/a.b", path: "/v1/aXb" },
    { pattern: "/v1/auth/*mount/login", path: "/v1/auth/login" },
  ])("does not match $path against $pattern", ({ pattern, path }) => {
    expect(matchPath(compilePath(pattern), path)).toBeUndefined();
  });
});

describe("Router.match", () => {
  const r = new Router()
    .get("/v1/job/:job_id", ok)
    .post("/v1/job/:job_id", ok)
    .delete("/v1/job/:job_id", ok)
    .get("/v1/job/:job_id/versions", ok)
    .list("/v1/auth/*mount/role", ok)
    .post("/v1/sys/auth/*path/tune", ok)
    .post("/v1/sys/auth/*path", ok);

  it("finds a route by method and path", () => {
    const m = r.match("DELETE", "/v1/job/x");
    expect(m.kind === "found" && m.route.method).toBe("DELETE");
  });

  it("sends PUT to a POST route and HEAD to a GET route", () => {
    const put = r.match("PUT", "/v1/job/x");
    const head = r.match("HEAD", "/v1/job/x");
    expect(put.kind === "found" && put.route.method).toBe("POST");
    expect(head.kind === "found" && head.route.method).toBe("GET");
  });

  it("reports the allowed methods of a known path", () => {
    expect(r.match("PATCH", "/v1/job/x")).toEqual({ kind: "method-not-allowed", allowed: ["GET", "POST", "DELETE"] });
    expect(r.match("GET", "/v1/auth/a/b/role")).toEqual({ kind: "method-not-allowed", allowed: ["LIST"] });
  });

  it("reports unknown paths", () => {
    expect(r.match("GET", "/v1/nope")).toEqual({ kind: "not-found" });
  });

  it("lets the first registered pattern win", () => {
    const m = r.match("POST", "/v1/sys/auth/a/b/tune");
    expect(m.kind === "found" && [m.route.pattern, m.params]).toEqual(["/v1/sys/auth/*path/tune", { path: "a/b" }]);
  });

  it("refuses a duplicate registration", () => {
    expect(() => new Router().get("/a", ok).get("/a", ok)).toThrow(/registered twice/);
  });
});
