/**
 * The devserver's switches for a cluster's own answers: a leader change (LEADER_CHANGE), a standby's
 * redirect to the active node (`location`) and a standby that lags the active node (`stale`).
 */
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LEADER_CHANGE, startDevServer, type DevServer } from "../../../devserver";

let server: DevServer;
let root: Record<string, string>;

beforeAll(async () => {
  server = await startDevServer();
  root = { "x-svc-token": server.rootTokens.secrets };
});
afterAll(async () => {
  await server.close();
});
afterEach(() => {
  server.faults.clear();
});

async function call(path: string, method: "GET" | "POST" = "GET", body?: unknown) {
  const res = await request(server.urls.secrets + path, {
    method,
    headers: { ...root, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

const mounts = async () => Object.keys((JSON.parse((await call("/v1/sys/auth")).text) as { data: object }).data);

describe("cluster faults", () => {
  it("stale: reads answer from the state before the latest write, then catch up; writes are not affected", async () => {
    server.faults.add({ service: "secrets", path: "/v1/sys/auth", stale: true, times: 2 });
    expect((await call("/v1/sys/auth/lagging", "POST", { type: "cloud" })).status).toBe(204);
    expect(await mounts()).not.toContain("lagging/");
    expect(await mounts()).not.toContain("lagging/");
    expect(await mounts()).toContain("lagging/");
    expect(server.requestLog.filter((e) => e.path === "/v1/sys/auth" && e.fault === true)).toHaveLength(2);
  });

  it("location: a 307 naming another node, with the request's own path and query, and no body", async () => {
    server.faults.add({ service: "secrets", path: "/v1/sys/auth", status: 307, location: "http://127.0.0.1:8200" });
    const r = await call("/v1/sys/auth?x=1");
    expect([r.status, r.headers.location, r.text]).toEqual([307, "http://127.0.0.1:8200/v1/sys/auth?x=1", ""]);
    expect(() => server.faults.add({ service: "secrets", path: "/", status: 500, location: "http://x" })).toThrow(
      /307 or 308/,
    );
  });

  it("LEADER_CHANGE: the services' own texts", async () => {
    server.faults.add({ service: "secrets", path: "/v1/sys/auth", ...LEADER_CHANGE.noActiveNode });
    const r = await call("/v1/sys/auth");
    expect([r.status, JSON.parse(r.text)]).toEqual([503, { errors: ["no active Vault instance found"] }]);
    server.faults.add({ service: "scheduler", path: "/v1/jobs", ...LEADER_CHANGE.noLeader });
    const s = await request(server.urls.scheduler + "/v1/jobs");
    expect([s.statusCode, await s.body.text()]).toEqual([500, "No cluster leader"]);
  });
});
