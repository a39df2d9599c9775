import { connect } from "node:net";
import { Readable } from "node:stream";
import { Pool, request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DevHttpError,
  REAL_HEADER_NAMES,
  isLoopbackHost,
  startServiceHost,
  type DevServer,
  type ServiceModule,
} from "../../../devserver/core";
import { startDevServer } from "../../../devserver";

/** A scheduler-like module exercising the core features the real module will use. */
function testScheduler(): ServiceModule {
  const jobs = new Map<string, { ModifyIndex: number; body: unknown }>();
  return {
    name: "scheduler",
    routes(r, ctx) {
      r.get(
        "/v1/jobs",
        (req) => ({
          json: { prefix: req.query.get("prefix"), perPage: Number(req.query.get("per_page") ?? 0), ns: req.namespace },
          headers: ctx.queryMeta(ctx.index(), "next-page"),
        }),
        { capability: "namespace:list-jobs" },
      );
      r.get(
        "/v1/job/:job_id",
        async (req) => {
          const id = req.params.job_id ?? "";
          const index = await ctx.blockingQuery(req, () => jobs.get(id)?.ModifyIndex ?? 0);
          const job = jobs.get(id);
          if (job === undefined) throw new DevHttpError(404, "job not found");
          return { json: { ID: id, ...job }, headers: ctx.queryMeta(index) };
        },
        { capability: "namespace:read-job" },
      );
      r.post(
        "/v1/job/:job_id",
        (req) => {
          const body = req.json();
          const index = ctx.nextIndex();
          jobs.set(req.params.job_id ?? "", { ModifyIndex: index, body });
          return { json: { JobModifyIndex: index } };
        },
        { capability: "namespace:submit-job" },
      );
      r.delete(
        "/v1/job/:job_id",
        (req) => {
          jobs.delete(req.params.job_id ?? "");
          ctx.nextIndex();
          return {};
        },
        { capability: "namespace:submit-job" },
      );
      r.post("/v1/job/:job_id/versions/:tag/tag", (req) => ({ json: { ...req.params } }));
      r.post(
        "/v1/job/:job_id/dispatch/payload",
        (req) => ({ json: { size: req.raw.length, b64: req.raw.toString("base64") } }),
        { maxBodyBytes: 16 },
      );
      r.get("/v1/open", () => ({ text: "anyone" }));
      r.get("/v1/typed", () => ({ json: { a: 1 }, headers: { "Content-Type": "application/vnd.test+json" } }));
      r.get("/v1/teapot", () => {
        throw new DevHttpError(418, "short and stout", { "x-extra": "1" });
      });
      r.get("/v1/crash", () => {
        throw new Error("boom");
      });
    },
  };
}

/** A secrets-like module: unauthenticated login, policy-mapped capabilities, LIST. */
function testSecrets(): ServiceModule {
  return {
    name: "secrets",
    policyCapabilities: (p) => (p === "reader" ? ["read"] : undefined),
    routes(r, ctx) {
      r.post(
        "/v1/auth/*mount/login",
        (req) => {
          req.json();
          const minted = ctx.tokens.create({ policies: ["reader"], meta: { mount: req.params.mount } });
          return {
            json: { auth: { client_token: minted.token, accessor: minted.record.accessor, policies: ["reader"] } },
          };
        },
        { auth: false },
      );
      r.get("/v1/sys/auth", (req) => ({ json: { data: {}, by: req.token?.accessor } }), {
        capability: ["read", "sudo"],
      });
      r.post("/v1/sys/auth/*path", () => ({}), { capability: "sudo" });
      r.list("/v1/auth/*mount/role", (req) => ({ json: { data: { keys: [req.params.mount] } } }), {
        capability: "read",
      });
    },
  };
}

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
}

async function call(
  base: string,
  path: string,
  opts: { method?: string; headers?: Record<string, string>; body?: string | Buffer; dispatcher?: Pool } = {},
): Promise<Reply> {
  const res = await request(base + path, {
    method: (opts.method ?? "GET") as "GET",
    headers: opts.headers,
    body: opts.body,
    ...(opts.dispatcher ? { dispatcher: opts.dispatcher } : {}),
  });
  return { status: res.statusCode, headers: res.headers, text: await res.body.text() };
}

let server: DevServer;
let sched: string;
let secrets: string;
let root: Record<string, string>;

beforeAll(async () => {
  server = await startServiceHost({ services: [testScheduler(), testSecrets()], maxBodyBytes: 1024 });
  sched = server.urls.scheduler;
  secrets = server.urls.secrets;
  root = { "X-Svc-Token": server.rootTokens.scheduler };
});
afterAll(async () => {
  await server.close();
});

describe("routing", () => {
  it("decodes path params per segment, keeping %2F inside a job ID", async () => {
    const r = await call(sched, "/v1/job/batch%2Fdispatch-17/versions/v%201/tag", { method: "POST", headers: root });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toEqual({ job_id: "batch/dispatch-17", tag: "v 1" });
  });

  it("answers unknown paths with 404 in each service's style", async () => {
    const a = await call(sched, "/v1/nothing", { headers: root });
    const b = await call(secrets, "/v1/nothing");
    expect([a.status, a.text, a.headers["content-type"]]).toEqual([
      404,
      "404 page not found",
      "text/plain; charset=utf-8",
    ]);
    expect([b.status, JSON.parse(b.text), b.headers["content-type"]]).toEqual([
      404,
      { errors: [] },
      "application/json",
    ]);
  });

  it("answers a wrong method on a known path with 405", async () => {
    const a = await call(sched, "/v1/job/x", { method: "PATCH", headers: root });
    expect([a.status, a.text]).toEqual([405, "Invalid method"]);
    expect(a.headers.allow).toBe("GET, POST, DELETE");
    const b = await call(secrets, "/v1/sys/auth", {
      method: "DELETE",
      headers: { "X-Svc-Token": server.rootTokens.secrets },
    });
    expect([b.status, JSON.parse(b.text)]).toEqual([405, { errors: [] }]);
  });

  // node:http's parser does not know the LIST verb (it answers 400 itself), so LIST routes are reached the way
  // the secrets service's own client does it: GET with ?list=true.
  it("routes PUT to POST routes and GET ?list=true to LIST routes", async () => {
    const put = await call(sched, "/v1/job/put-me", { method: "PUT", headers: root, body: "{}" });
    expect(put.status).toBe(200);
    const st = { "X-Svc-Token": server.rootTokens.secrets };
    const viaQuery = await call(secrets, "/v1/auth/a/b/role?list=true", { headers: st });
    const slash = await call(secrets, "/v1/auth/a/b/role/?list=true", { headers: st });
    const plainGet = await call(secrets, "/v1/auth/a/b/role", { headers: st });
    expect(JSON.parse(viaQuery.text)).toEqual({ data: { keys: ["a/b"] } });
    expect(JSON.parse(slash.text)).toEqual({ data: { keys: ["a/b"] } });
    expect(plainGet.status).toBe(405);
  });

  it("parses the query and the namespace", async () => {
    const r = await call(sched, "/v1/jobs?prefix=we%20b&per_page=5&namespace=prod", { headers: root });
    expect(JSON.parse(r.text)).toEqual({ prefix: "we b", perPage: 5, ns: "prod" });
    expect(r.headers["x-svc-nexttoken"]).toBe("next-page");
    const d = await call(sched, "/v1/jobs", { headers: root });
    expect(JSON.parse(d.text).ns).toBe("default");
  });
});

describe("bodies and responses", () => {
  it("passes raw bytes through unchanged", async () => {
    const bytes = Buffer.from([0, 255, 10, 13, 128]);
    const r = await call(sched, "/v1/job/x/dispatch/payload", { method: "POST", headers: root, body: bytes });
    expect(JSON.parse(r.text)).toEqual({ size: 5, b64: bytes.toString("base64") });
  });

  it("answers 413 above the server limit and above a route's own limit, and keeps serving", async () => {
    const big = await call(sched, "/v1/job/x", {
      method: "POST",
      headers: root,
      body: JSON.stringify({ a: "x".repeat(2000) }),
    });
    expect([big.status, big.text]).toEqual([413, "Request body too large"]);
    const route = await call(sched, "/v1/job/x/dispatch/payload", {
      method: "POST",
      headers: root,
      body: "x".repeat(17),
    });
    expect(route.status).toBe(413);
    const fits = await call(sched, "/v1/job/x/dispatch/payload", {
      method: "POST",
      headers: root,
      body: "x".repeat(16),
    });
    expect(fits.status).toBe(200);
    const login = await call(secrets, "/v1/auth/cloud/login", { method: "POST", body: "x".repeat(1025) });
    expect([login.status, JSON.parse(login.text)]).toEqual([413, { errors: ["http: request body too large"] }]);
  });

  it("answers 413 to a chunked body that grows past the limit", async () => {
    const chunks = Readable.from(
      (function* () {
        for (let i = 0; i < 8; i++) yield Buffer.alloc(256, 0x61);
      })(),
    );
    const res = await request(`${sched}/v1/job/x`, { method: "POST", headers: root, body: chunks }).catch(
      (e: Error) => e,
    );
    // The server may close before the client finishes sending; either way no handler saw the body.
    if (res instanceof Error) expect(res.message).toMatch(/socket|closed|reset|EPIPE/i);
    else {
      expect(res.statusCode).toBe(413);
      await res.body.text();
    }
    // No handler ran for the oversized uploads, so job x was never registered.
    const after = await call(sched, "/v1/job/x", { headers: root });
    expect([after.status, after.text]).toEqual([404, "job not found"]);
  });

  it("answers bad JSON with 400 in each service's style, without echoing the body", async () => {
    const a = await call(sched, "/v1/job/x", { method: "POST", headers: root, body: "{nope" });
    expect([a.status, a.text]).toEqual([400, "Request body decode failed"]);
    const c = await call(sched, "/v1/job/x", {
      method: "POST",
      headers: root,
      body: "eyJhbGciOiJSUzI1NiJ9.secret-jwt-body",
    });
    expect(c.status).toBe(400);
    expect(c.text).not.toContain("secret-jwt-body");
    expect(c.text).not.toContain("eyJ");
    const d = await call(secrets, "/v1/auth/cloud/login", { method: "POST", body: '{"jwt":"eyJ.secret-jwt-body' });
    expect([d.status, JSON.parse(d.text)]).toEqual([400, { errors: ["failed to parse JSON input"] }]);
  });

  it("sends 204 without a body and JSON with content-length", async () => {
    const del = await call(sched, "/v1/job/gone", { method: "DELETE", headers: root });
    expect([del.status, del.text, del.headers["content-length"]]).toEqual([204, "", undefined]);
    const post = await call(sched, "/v1/job/y", { method: "POST", headers: root, body: '{"a":1}' });
    expect(post.headers["content-length"]).toBe(String(Buffer.byteLength(post.text)));
    expect(post.headers["content-type"]).toBe("application/json");
  });

  it("keeps a handler's own content-type", async () => {
    const r = await call(sched, "/v1/typed", { headers: root });
    expect([r.headers["content-type"], JSON.parse(r.text)]).toEqual(["application/vnd.test+json", { a: 1 }]);
  });

  it("renders handler errors with their headers, and plain errors as 500", async () => {
    const tea = await call(sched, "/v1/teapot", { headers: root });
    expect([tea.status, tea.text, tea.headers["x-extra"]]).toEqual([418, "short and stout", "1"]);
    const crash = await call(sched, "/v1/crash", { headers: root });
    expect([crash.status, crash.text]).toEqual([500, "boom"]);
  });
});

describe("tokens and ACLs", () => {
  it("secrets: refuses requests without a valid token, accepts the header or Bearer", async () => {
    const none = await call(secrets, "/v1/sys/auth");
    expect([none.status, JSON.parse(none.text)]).toEqual([403, { errors: ["permission denied"] }]);
    const bad = await call(secrets, "/v1/sys/auth", { headers: { "X-Svc-Token": "hvs.nope" } });
    expect(bad.status).toBe(403);
    const header = await call(secrets, "/v1/sys/auth", { headers: { "X-Svc-Token": server.rootTokens.secrets } });
    const bearer = await call(secrets, "/v1/sys/auth", {
      headers: { Authorization: `Bearer ${server.rootTokens.secrets}` },
    });
    expect([header.status, bearer.status]).toEqual([200, 200]);
  });

  it("secrets: login needs no token; its token's policy grants read but not sudo", async () => {
    const login = await call(secrets, "/v1/auth/cloud/login", { method: "POST", body: "{}" });
    expect(login.status).toBe(200);
    const { client_token, accessor } = JSON.parse(login.text).auth as { client_token: string; accessor: string };
    const read = await call(secrets, "/v1/sys/auth", { headers: { "X-Svc-Token": client_token } });
    expect([read.status, JSON.parse(read.text).by]).toEqual([200, accessor]);
    const write = await call(secrets, "/v1/sys/auth/x", {
      method: "POST",
      headers: { "X-Svc-Token": client_token },
      body: "{}",
    });
    expect([write.status, JSON.parse(write.text)]).toEqual([
      403,
      { errors: ["1 error occurred:\n\t* permission denied\n\n"] },
    ]);
  });

  it("scheduler: distinguishes no token, unknown token and missing capability", async () => {
    const none = await call(sched, "/v1/jobs");
    expect([none.status, none.text]).toEqual([403, "Permission denied"]);
    const unknown = await call(sched, "/v1/jobs", {
      headers: { "X-Svc-Token": "00000000-0000-0000-0000-000000000000" },
    });
    expect([unknown.status, unknown.text]).toEqual([403, "ACL token not found"]);
    const lister = server.createToken("scheduler", { capabilities: ["namespace:list-jobs"] });
    const ok = await call(sched, "/v1/jobs", { headers: { "X-Svc-Token": lister } });
    const denied = await call(sched, "/v1/job/x", { headers: { "X-Svc-Token": lister } });
    expect(ok.status).toBe(200);
    expect([denied.status, denied.text]).toEqual([403, "Permission denied"]);
    const open = await call(sched, "/v1/open");
    expect([open.status, open.text]).toEqual([200, "anyone"]);
  });

  it("scheduler: limits a token to its namespaces", async () => {
    const t = server.createToken("scheduler", { capabilities: ["namespace:list-jobs"], namespaces: ["prod"] });
    const h = { Authorization: `Bearer ${t}` };
    expect((await call(sched, "/v1/jobs?namespace=prod", { headers: h })).status).toBe(200);
    expect((await call(sched, "/v1/jobs?namespace=dev", { headers: h })).status).toBe(403);
    expect((await call(sched, "/v1/jobs", { headers: h })).status).toBe(403);
  });

  it("revokes tokens and expires tokens with a TTL", async () => {
    const t = server.createToken("scheduler", { capabilities: ["*"] });
    expect((await call(sched, "/v1/jobs", { headers: { "X-Svc-Token": t } })).status).toBe(200);
    expect(server.revokeToken("scheduler", t)).toBe(true);
    expect((await call(sched, "/v1/jobs", { headers: { "X-Svc-Token": t } })).text).toBe("ACL token not found");
    const expired = server.createToken("scheduler", { capabilities: ["*"], ttlMs: -1 });
    expect((await call(sched, "/v1/jobs", { headers: { "X-Svc-Token": expired } })).status).toBe(403);
  });

  it("never records token values in the request log", () => {
    const text = JSON.stringify(server.requestLog);
    expect(server.requestLog.length).toBeGreaterThan(10);
    expect(text).not.toContain(server.rootTokens.scheduler);
    expect(text).not.toContain(server.rootTokens.secrets);
  });
});

describe("configured header names and ACL off", () => {
  let real: DevServer;
  let open: DevServer;
  beforeAll(async () => {
    real = await startServiceHost({
      services: [testScheduler(), testSecrets()],
      scheduler: { headerNames: REAL_HEADER_NAMES.scheduler },
      secrets: { headerNames: REAL_HEADER_NAMES.secrets, rootToken: "root-for-test" },
    });
    open = await startServiceHost({ services: [testScheduler()], acl: false });
  });
  afterAll(async () => {
    await Promise.all([real.close(), open.close()]);
  });

  it("reads the real token headers and emits the real index headers", async () => {
    const h = { "X-Nomad-Token": real.rootTokens.scheduler };
    const r = await call(real.urls.scheduler, "/v1/jobs", { headers: h });
    expect(r.status).toBe(200);
    expect(r.headers["x-nomad-index"]).toBe("1");
    expect(r.headers["x-nomad-nexttoken"]).toBe("next-page");
    expect(r.headers["x-svc-index"]).toBeUndefined();
    const spec = await call(real.urls.scheduler, "/v1/jobs", { headers: { "X-Svc-Token": real.rootTokens.scheduler } });
    expect(spec.status).toBe(403);
    expect(real.rootTokens.secrets).toBe("root-for-test");
    expect(
      (await call(real.urls.secrets, "/v1/sys/auth", { headers: { "X-Vault-Token": "root-for-test" } })).status,
    ).toBe(200);
  });

  it("skips scheduler token checks when ACLs are off", async () => {
    const r = await call(open.urls.scheduler, "/v1/jobs");
    expect(r.status).toBe(200);
  });
});

describe("fault injection", () => {
  it("fails the next N matching requests with a status and Retry-After", async () => {
    server.resetLog();
    const f = server.faults.add({
      service: "scheduler",
      method: "get",
      path: "/v1/job/:job_id",
      times: 2,
      status: 503,
      retryAfter: 3,
    });
    const a = await call(sched, "/v1/job/put-me", { headers: root });
    const b = await call(sched, "/v1/job/put-me", { headers: root });
    const c = await call(sched, "/v1/job/put-me", { headers: root });
    expect([a.status, a.headers["retry-after"], a.text]).toEqual([503, "3", "injected fault"]);
    expect(b.status).toBe(503);
    expect(c.status).toBe(200);
    expect([f.hits, f.remaining, server.faults.pending]).toEqual([2, 0, 0]);
    expect(server.requestLog.map((e) => [e.status, e.fault])).toEqual([
      [503, true],
      [503, true],
      [200, undefined],
    ]);
  });

  it("matches by service, method and RegExp, and sends a custom body in the secrets style", async () => {
    server.faults.add({ service: "secrets", path: /^\/v1\/sys\//, status: 429, body: { errors: ["slow down"] } });
    const other = await call(sched, "/v1/jobs", { headers: root });
    expect(other.status).toBe(200);
    const hit = await call(secrets, "/v1/sys/auth");
    expect([hit.status, JSON.parse(hit.text)]).toEqual([429, { errors: ["slow down"] }]);
    const postOnly = server.faults.add({ service: "scheduler", method: "POST", path: "/v1/jobs", status: 500 });
    expect((await call(sched, "/v1/jobs", { headers: root })).status).toBe(200);
    expect(postOnly.hits).toBe(0);
    server.faults.clear();
    expect(server.faults.pending).toBe(0);
  });

  it("delays a request, then handles it normally", async () => {
    server.faults.add({ service: "scheduler", path: "/v1/open", delayMs: 1500 });
    let slowDone = false;
    const slow = call(sched, "/v1/open").then((r) => {
      slowDone = true;
      return r;
    });
    const fast = await call(sched, "/v1/jobs", { headers: root });
    expect(fast.status).toBe(200);
    expect(slowDone).toBe(false);
    const r = await slow;
    expect([r.status, r.text]).toEqual([200, "anyone"]);
    expect(server.requestLog.at(-1)).toMatchObject({ path: "/v1/open", status: 200, fault: true });
  });

  it("resets the connection", async () => {
    server.faults.add({ service: "scheduler", path: "/v1/open", reset: true });
    await expect(call(sched, "/v1/open")).rejects.toThrow(/socket|closed|reset/i);
    expect(server.requestLog.at(-1)).toMatchObject({ path: "/v1/open", status: 0, fault: true });
    expect((await call(sched, "/v1/open")).status).toBe(200);
  });

  it("refuses a fault that does nothing", () => {
    expect(() => server.faults.add({ service: "scheduler", path: "/x" })).toThrow(TypeError);
  });
});

describe("blocking queries", () => {
  it("holds a read until the job's index moves, then returns the new index", async () => {
    const put = await call(sched, "/v1/job/watched", { method: "POST", headers: root, body: '{"v":1}' });
    const index = JSON.parse(put.text).JobModifyIndex as number;
    const ctx = server.context("scheduler");
    const waiting = call(sched, `/v1/job/watched?index=${index}&wait=60s`, { headers: root });
    await expect.poll(() => ctx.clock.waiting()).toBe(1);
    await call(sched, "/v1/job/other", { method: "POST", headers: root, body: "{}" });
    expect(ctx.clock.waiting()).toBe(1); // another job changed: still waiting
    const upd = await call(sched, "/v1/job/watched", { method: "POST", headers: root, body: '{"v":2}' });
    const r = await waiting;
    expect(r.status).toBe(200);
    expect(Number(r.headers["x-svc-index"])).toBe(JSON.parse(upd.text).JobModifyIndex);
    expect(JSON.parse(r.text).body).toEqual({ v: 2 });
    expect([r.headers["x-svc-knownleader"], r.headers["x-svc-lastcontact"]]).toEqual(["true", "0"]);
  });

  it("returns the unchanged index when the wait elapses", async () => {
    const now = await call(sched, "/v1/job/watched", { headers: root });
    const index = now.headers["x-svc-index"];
    const r = await call(sched, `/v1/job/watched?index=${String(index)}&wait=20ms`, { headers: root });
    expect([r.status, r.headers["x-svc-index"]]).toEqual([200, index]);
  });

  it("rejects bad index and wait values", async () => {
    const w = await call(sched, "/v1/job/watched?index=3&wait=forever", { headers: root });
    const i = await call(sched, "/v1/job/watched?index=x", { headers: root });
    expect([w.status, w.text, i.status, i.text]).toEqual([400, "Invalid wait time", 400, "Invalid index"]);
  });
});

describe("connection counting", () => {
  it("counts one connection for many requests over a keep-alive pool", async () => {
    const s = await startServiceHost({ services: [testScheduler()] });
    const pool = new Pool(s.urls.scheduler, { connections: 1 });
    try {
      const h = { "X-Svc-Token": s.rootTokens.scheduler };
      for (let i = 0; i < 20; i++)
        expect((await call(s.urls.scheduler, "/v1/jobs", { headers: h, dispatcher: pool })).status).toBe(200);
      expect(s.stats().scheduler).toMatchObject({ connections: 1, requests: 20 });
      expect(s.stats().secrets).toMatchObject({ connections: 0, requests: 0 });
      await call(s.urls.scheduler, "/v1/jobs", { headers: { ...h, connection: "close" }, dispatcher: pool });
      await call(s.urls.scheduler, "/v1/jobs", { headers: h, dispatcher: pool });
      expect(s.stats().scheduler.connections).toBe(2);
    } finally {
      await pool.close();
      await s.close();
    }
  });
});

describe("request log", () => {
  it("keeps at most requestLogLimit entries, newest last, and resets", async () => {
    const s = await startServiceHost({ services: [testScheduler()], requestLogLimit: 4 });
    try {
      for (let i = 0; i < 10; i++) await call(s.urls.scheduler, `/v1/open?i=${i}`);
      expect(s.requestLog.length).toBeLessThanOrEqual(4);
      expect(s.requestLog.length).toBeGreaterThan(0);
      expect(s.requestLog.at(-1)).toMatchObject({
        service: "scheduler",
        method: "GET",
        path: "/v1/open",
        query: "i=9",
        status: 200,
      });
      expect(typeof s.requestLog.at(-1)?.ms).toBe("number");
      s.resetLog();
      expect(s.requestLog).toEqual([]);
    } finally {
      await s.close();
    }
  });
});

describe("upgrades", () => {
  it("hands upgrades to the module and refuses them where no module takes them", async () => {
    let closed = 0;
    const ws: ServiceModule = {
      name: "scheduler",
      routes: () => undefined,
      upgrade(req, socket) {
        if (!req.url?.startsWith("/v1/job/")) return false;
        socket.end("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nhi");
        return true;
      },
      close() {
        closed += 1;
      },
    };
    const s = await startServiceHost({ services: [ws] });
    const raw = (base: string, path: string) =>
      new Promise<string>((resolve, reject) => {
        const u = new URL(base);
        const sock = connect(Number(u.port), u.hostname, () =>
          sock.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`),
        );
        let data = "";
        sock.on("data", (d) => (data += String(d)));
        sock.on("end", () => resolve(data));
        sock.on("error", reject);
      });
    try {
      expect(await raw(s.urls.scheduler, "/v1/job/a/action")).toMatch(/^HTTP\/1\.1 101[\s\S]*hi$/);
      expect(await raw(s.urls.scheduler, "/v1/other")).toMatch(/^HTTP\/1\.1 400/);
      expect(await raw(s.urls.secrets, "/v1/job/a/action")).toMatch(/^HTTP\/1\.1 400/);
    } finally {
      await s.close();
    }
    expect(closed).toBe(1);
  });
});

describe("lifecycle", () => {
  it("releases blocked queries on close, and close is idempotent", async () => {
    const s = await startServiceHost({ services: [testScheduler()] });
    const h = { "X-Svc-Token": s.rootTokens.scheduler };
    await call(s.urls.scheduler, "/v1/job/a", { method: "POST", headers: h, body: "{}" });
    const blocked = call(s.urls.scheduler, "/v1/job/a?index=2&wait=300s", { headers: h });
    await expect.poll(() => s.context("scheduler").clock.waiting()).toBe(1);
    await Promise.all([s.close(), s.close()]);
    expect((await blocked).status).toBe(200);
    await expect(call(s.urls.scheduler, "/v1/jobs", { headers: h })).rejects.toThrow();
  });

  it("starts the default modules through startDevServer", async () => {
    const s = await startDevServer();
    try {
      expect(s.urls.secrets).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(s.urls.scheduler).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(s.urls.secrets).not.toBe(s.urls.scheduler);
    } finally {
      await s.close();
    }
  });

  it("fails to start on a port in use and leaves nothing listening", async () => {
    const port = Number(new URL(server.urls.scheduler).port);
    await expect(startServiceHost({ scheduler: { port } })).rejects.toThrow(/EADDRINUSE/);
  });
});

describe("listen address", () => {
  it("refuses a non-loopback host unless allowNonLoopback says so", async () => {
    for (const host of ["0.0.0.0", "::", "10.1.2.3", "example.com", "::ffff:10.0.0.1"]) {
      await expect(startServiceHost({ host })).rejects.toThrow(/not a loopback address/);
    }
  });

  it("tells loopback addresses from others", () => {
    for (const host of ["127.0.0.1", "127.9.9.9", "::1", "localhost", "::ffff:127.0.0.1"])
      expect([host, isLoopbackHost(host)]).toEqual([host, true]);
    for (const host of ["0.0.0.0", "::", "192.168.0.1", "128.0.0.1", "example.com", "127.1", ""])
      expect([host, isLoopbackHost(host)]).toEqual([host, false]);
  });
});
