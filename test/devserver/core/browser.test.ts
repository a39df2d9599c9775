/**
 * What a web page can make a browser send to the devserver: a form or text body (no preflight), a request
 * through a DNS name rebound to loopback (a foreign `Host`), a request or WebSocket from another site (its
 * `Origin`). With `acl: false` any of them could register a job; each is refused, while the requests real
 * clients send (JSON or no declared type, loopback names, the names the server was told to serve as) pass.
 */
import * as http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { secretsControls, startDevServer, type StartedDevServer } from "../../../devserver";
import { createSecretsService } from "../../../devserver/secrets";
import { serviceJob } from "../scheduler/http";

let server: StartedDevServer;
let cloudUrl: string;

beforeAll(async () => {
  server = await startDevServer({ acl: false, hostNames: ["devbox.test"] });
  cloudUrl = (await secretsControls(server)).cloud.url;
});

afterAll(async () => {
  await server.close();
});

interface Reply {
  readonly status: number;
  readonly text: string;
}

function call(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Reply> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: Number(u.port), method, path, headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

function register(id: string, headers: Record<string, string>): Promise<Reply> {
  return call(server.urls.scheduler, "POST", "/v1/jobs", headers, JSON.stringify({ Job: serviceJob(id) }));
}

async function stored(id: string): Promise<boolean> {
  const r = await call(server.urls.scheduler, "GET", `/v1/job/${id}`, {});
  return r.status === 200;
}

describe("bodies a page can post without a preflight", () => {
  for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"]) {
    it(`refuses a write whose body is ${type} (415) and stores nothing`, async () => {
      const id = `form-${type.split(/[/;]/)[1] ?? "x"}`;
      const r = await register(id, { "content-type": type });
      expect([r.status, await stored(id)]).toEqual([415, false]);
    });
  }

  it("accepts JSON and an undeclared type (what the real clients send)", async () => {
    expect((await register("typed", { "content-type": "application/json; charset=utf-8" })).status).toBe(200);
    expect((await register("untyped", {})).status).toBe(200);
    expect([await stored("typed"), await stored("untyped")]).toEqual([true, true]);
  });

  it("still takes a raw dispatch payload of any type", async () => {
    const r = await call(
      server.urls.scheduler,
      "POST",
      "/v1/job/nope/dispatch/payload",
      { "content-type": "application/octet-stream" },
      "payload",
    );
    expect(r.status).not.toBe(415);
  });

  it("refuses a form body on the cloud port's control API", async () => {
    const r = await call(
      cloudUrl,
      "POST",
      "/_control/instance",
      { "content-type": "text/plain", "x-svc-token": server.rootTokens.secrets },
      "{}",
    );
    expect(r.status).toBe(415);
  });
});

describe("Host names", () => {
  it("refuses a name rebound to loopback on every port, before anything is stored", async () => {
    expect((await call(server.urls.scheduler, "GET", "/v1/jobs", { host: "localhost.attacker.example" })).status).toBe(
      403,
    );
    const r = await register("rebound", { host: "attacker.example:4646", "content-type": "application/json" });
    expect([r.status, await stored("rebound")]).toEqual([403, false]);
    expect((await call(server.urls.secrets, "GET", "/v1/sys/auth", { host: "attacker.example" })).status).toBe(403);
    const metadata = await call(cloudUrl, "GET", "/metadata/instance?api-version=2021-02-01", {
      host: "attacker.example",
      metadata: "true",
    });
    expect(metadata.status).toBe(403);
  });

  it("answers loopback names and the names it was told to serve as", async () => {
    const names = ["localhost:4646", "127.0.0.1", "127.1.2.3:1", "[::1]:4646", "LOCALHOST", "devbox.test:4646"];
    // A name under .localhost is loopback by reservation (our client and curl connect to it without DNS).
    for (const host of [...names, "app.localhost:4646", "pss-test.localhost", "a.b.localhost."]) {
      expect([host, (await call(server.urls.scheduler, "GET", "/v1/jobs", { host })).status]).toEqual([host, 200]);
    }
  });
});

describe("Origin", () => {
  it("refuses a write from another site's page, and a WebSocket opened by one", async () => {
    const r = await register("cross-site", { origin: "https://attacker.example", "content-type": "application/json" });
    expect([r.status, await stored("cross-site")]).toEqual([403, false]);
    expect((await register("sandboxed", { origin: "null" })).status).toBe(403);
    const ws = await call(server.urls.scheduler, "GET", "/v1/job/typed/action?action=x&task=t&group=g", {
      origin: "https://attacker.example",
      connection: "Upgrade",
      upgrade: "websocket",
      "sec-websocket-version": "13",
      "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    }).catch(() => ({ status: 0, text: "" }));
    expect(ws.status).toBe(403);
  });

  it("accepts an origin on loopback", async () => {
    expect((await register("local-page", { origin: "http://localhost:3000" })).status).toBe(200);
  });
});

describe("cloudHost", () => {
  it("is held to loopback", () => {
    expect(() => createSecretsService({ cloudHost: "0.0.0.0" })).toThrow(/not a loopback address/);
    expect(() => createSecretsService({ cloudHost: "::1" })).not.toThrow();
  });
});
