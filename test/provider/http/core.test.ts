/**
 * The HTTP core over real HTTP against the devserver core, with a small test service module on each
 * listener so these tests do not depend on either service's routes.
 */
import { inspect } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { DevHttpError, startServiceHost, type DevServer, type ServiceModule } from "../../../devserver/core";
import { ApiError, ConfigError } from "../../../provider/errors";
import { HttpCore } from "../../../provider/http/core";
import type { ConnectionOptions, HttpHooks } from "../../../provider/http/settings";
import { makePki, type TestPki } from "../../helpers/tls";

function echoModule(name: "secrets" | "scheduler"): ServiceModule {
  return {
    name,
    routes(r, ctx) {
      r.get("/v1/echo", (req) => ({
        json: { ok: true, q: req.query.get("q") },
        headers: ctx.queryMeta(ctx.index(), req.query.get("next") ?? undefined),
      }));
      r.get("/v1/headers", (req) => ({
        json: { marker: req.headers["x-svc-request"] ?? null, real: req.headers["x-vault-request"] ?? null },
      }));
      r.post("/v1/echo", (req) => ({ json: { got: req.json() } }));
      r.get("/v1/shape", () => ({ json: { items: [{ id: "a", count: "three" }] } }));
      r.get("/v1/denied", () => {
        throw new DevHttpError(403, "Permission denied");
      });
    },
  };
}

const fastRetry = { baseDelayMs: 1, maxDelayMs: 5_000 };
let dev: DevServer;

beforeAll(async () => {
  dev = await startServiceHost({ services: [echoModule("secrets"), echoModule("scheduler")] });
});
afterAll(async () => {
  await dev.close();
});
afterEach(() => {
  dev.faults.clear();
  dev.resetLog();
});

function core(service: "secrets" | "scheduler", extra: ConnectionOptions = {}): HttpCore {
  return new HttpCore(service, {
    address: dev.urls[service],
    token: dev.rootTokens[service],
    retry: fastRetry,
    env: {},
    ...extra,
  });
}

const count = (path: string) => dev.requestLog.filter((e) => e.path === path).length;

describe("HttpCore retries", () => {
  it("retries a GET through 503, 502 and 504 and then succeeds", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", status: 503, times: 1 });
    dev.faults.add({ service: "scheduler", path: "/v1/echo", status: 502, times: 1 });
    dev.faults.add({ service: "scheduler", path: "/v1/echo", status: 504, times: 1 });
    const res = await core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" });
    expect(res.value).toEqual({ ok: true, q: null });
    expect(res.meta.attempts).toBe(4);
    expect(count("/v1/echo")).toBe(4);
  });

  it("honours Retry-After on 429, for a POST too", async () => {
    dev.faults.add({ service: "secrets", method: "POST", path: "/v1/echo", status: 429, retryAfter: 1, times: 1 });
    const waits: number[] = [];
    const hooks: HttpHooks = { onRetry: (i) => waits.push(i.delayMs) };
    const res = await core("secrets", { hooks }).request({
      operation: "echo",
      method: "POST",
      path: "/v1/echo",
      body: { a: 1 },
    });
    expect(res.value).toEqual({ got: { a: 1 } });
    expect(waits).toHaveLength(1);
    expect(waits[0]).toBeGreaterThanOrEqual(1000);
  });

  it.each([400, 403, 404])("does not retry %i, even for a GET", async (status) => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", status, times: 3 });
    const err = await core("scheduler")
      .request({ operation: "echo", method: "GET", path: "/v1/echo" })
      .catch((e) => e);
    expect(ApiError.is(err)).toBe(true);
    expect((err as ApiError).status).toBe(status);
    expect(count("/v1/echo")).toBe(1);
  });

  it("does not repeat a POST after a 503 or a 500", async () => {
    dev.faults.add({ service: "scheduler", method: "POST", path: "/v1/echo", status: 503, times: 1 });
    await expect(
      core("scheduler").request({ operation: "echo", method: "POST", path: "/v1/echo", body: {} }),
    ).rejects.toMatchObject({ code: "unavailable" });
    dev.faults.add({
      service: "scheduler",
      method: "POST",
      path: "/v1/echo",
      status: 500,
      body: "No cluster leader",
      times: 1,
    });
    await expect(
      core("scheduler").request({ operation: "echo", method: "POST", path: "/v1/echo", body: {} }),
    ).rejects.toMatchObject({ code: "server" });
    expect(count("/v1/echo")).toBe(2);
  });

  it("retries a scheduler 500 on a GET only when the message is transient", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", status: 500, body: "No cluster leader", times: 1 });
    await core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" });
    expect(count("/v1/echo")).toBe(2);
    dev.resetLog();
    dev.faults.add({ service: "scheduler", path: "/v1/echo", status: 500, body: "job validation failed", times: 1 });
    await expect(
      core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    ).rejects.toMatchObject({ code: "server" });
    expect(count("/v1/echo")).toBe(1);
  });

  it("gives up after maxAttempts and says how many attempts it made", async () => {
    dev.faults.add({
      service: "secrets",
      path: "/v1/echo",
      status: 503,
      body: { errors: ["Vault is sealed"] },
      times: 10,
    });
    const err = (await core("secrets", { retry: { ...fastRetry, maxAttempts: 3 } })
      .request({ operation: "read echo", method: "GET", path: "/v1/echo" })
      .catch((e) => e)) as ApiError;
    expect(err.code).toBe("unavailable");
    expect(err.attempts).toBe(3);
    expect(err.message).toContain("read echo: GET /v1/echo returned 503: Vault is sealed (after 3 attempts)");
    expect(err.message).toContain("unseal");
    expect(count("/v1/echo")).toBe(3);
  });

  it("retries a GET after a connection reset", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", reset: true, times: 1 });
    const res = await core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo" });
    expect(res.meta.attempts).toBe(2);
  });

  it("retries a refused connection and then reports a transport error naming where the address came from", async () => {
    const retries: string[] = [];
    const err = (await new HttpCore("secrets", {
      address: "http://127.0.0.1:1",
      token: "t0k3n-value",
      retry: { ...fastRetry, maxAttempts: 2 },
      env: {},
      hooks: { onRetry: (i) => retries.push(i.code ?? "") },
    })
      .request({ operation: "enable auth method", method: "POST", path: "/v1/sys/auth/cloud", body: {} })
      .catch((e) => e)) as ApiError;
    expect(err.code).toBe("transport");
    expect(retries).toEqual(["ECONNREFUSED"]);
    expect(err.message).toContain("check the address (from the `address` option)");
  });
});

describe("HttpCore timeouts and cancellation", () => {
  it("times out a slow response", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", delayMs: 1500, times: 1 });
    const err = (await core("scheduler", { timeoutMs: 100, retry: { maxAttempts: 1 } })
      .request({ operation: "echo", method: "GET", path: "/v1/echo" })
      .catch((e) => e)) as ApiError;
    expect(err.code).toBe("timeout");
    expect(err.message).toContain("no response within 100 ms");
  });

  it("stops when the caller aborts", async () => {
    dev.faults.add({ service: "scheduler", path: "/v1/echo", delayMs: 1500, times: 1 });
    const ac = new AbortController();
    const p = core("scheduler").request({ operation: "echo", method: "GET", path: "/v1/echo", signal: ac.signal });
    setTimeout(() => ac.abort(), 20);
    await expect(p).rejects.toMatchObject({ code: "aborted" });
  });
});

describe("HttpCore connections", () => {
  it("reuses one keep-alive connection for sequential requests", async () => {
    const fresh = await startServiceHost({ services: [echoModule("secrets")] });
    try {
      let opened = 0;
      const c = new HttpCore("secrets", {
        address: fresh.urls.secrets,
        token: fresh.rootTokens.secrets,
        env: {},
        hooks: { onConnect: () => opened++ },
      });
      for (let i = 0; i < 20; i++)
        await c.request({ operation: "echo", method: "GET", path: "/v1/echo", query: { q: String(i) } });
      expect(fresh.stats().secrets.requests).toBe(20);
      // undici's Pool may open a second connection for the request that follows at once, before the first
      // connection is marked free; after that both are reused. Without keep-alive this would be 20.
      expect(fresh.stats().secrets.connections).toBeLessThanOrEqual(2);
      expect(opened).toBe(fresh.stats().secrets.connections);
    } finally {
      await fresh.close();
    }
  });

  it("reads blocking-query and paging headers into meta, under overridable names", async () => {
    const res = await core("scheduler").request({
      operation: "echo",
      method: "GET",
      path: "/v1/echo",
      query: { next: "tok-2" },
    });
    expect(res.meta.lastIndex).toBeTypeOf("number");
    expect(res.meta.knownLeader).toBe(true);
    expect(res.meta.nextToken).toBe("tok-2");
  });
});

describe("HttpCore request marker and hooks", () => {
  it("marks secrets-service requests (X-Svc-Request, or X-Vault-Request with real names) and not scheduler ones", async () => {
    const spec = await core("secrets").request({ operation: "h", method: "GET", path: "/v1/headers" });
    expect(spec.value).toEqual({ marker: "true", real: null });
    const real = await core("secrets", { headerStyle: "real", headerNames: { token: "X-Svc-Token" } }).request({
      operation: "h",
      method: "GET",
      path: "/v1/headers",
    });
    expect(real.value).toEqual({ marker: null, real: "true" });
    const sched = await core("scheduler").request({ operation: "h", method: "GET", path: "/v1/headers" });
    expect(sched.value).toEqual({ marker: null, real: null });
  });

  it("passes the encoded query string to onRequest", async () => {
    const seen: string[] = [];
    await core("scheduler", { hooks: { onRequest: (i) => seen.push(`${i.path}?${i.query}`) } }).request({
      operation: "echo",
      method: "GET",
      path: "/v1/echo",
      query: { q: "a b", namespace: "*", skip: undefined, flag: true },
    });
    expect(seen).toEqual(["/v1/echo?q=a+b&namespace=*&flag=true"]);
  });
});

describe("HttpCore responses", () => {
  it("fails with the path of the bad field when a response has the wrong shape", async () => {
    const schema = z.object({ items: z.array(z.object({ id: z.string(), count: z.number() })) });
    const err = (await core("scheduler")
      .request({ operation: "list things", method: "GET", path: "/v1/shape", schema })
      .catch((e) => e)) as ApiError;
    expect(err.code).toBe("bad_response");
    expect(err.message).toContain("items[0].count");
  });

  it("maps a 403 to permission_denied with a hint naming the token setting", async () => {
    const err = (await core("scheduler")
      .request({ operation: "read job", method: "GET", path: "/v1/denied" })
      .catch((e) => e)) as ApiError;
    expect(err.code).toBe("permission_denied");
    expect(err.serverErrors).toEqual(["Permission denied"]);
    expect(err.message).toContain("token (from the `token` option)");
  });
});

describe("HttpCore redaction", () => {
  const token = "s.PLANTED-TOKEN-9f8e7d6c";
  const secret = "PLANTED-client-secret-42";
  const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJwbGFudGVkIn0.c2lnbmF0dXJlLXBsYW50ZWQ";

  function everything(e: unknown): string {
    const err = e as Error & { cause?: unknown };
    return [
      String(e),
      err.message,
      err.stack,
      inspect(e, { depth: 10, showHidden: true }),
      JSON.stringify(e),
      inspect(err.cause, { depth: 10 }),
    ].join("\n");
  }

  it.each([
    {
      name: "server echoes secrets (scheduler text)",
      service: "scheduler" as const,
      body: `bad token ${token} and secret ${secret} jwt ${jwt}`,
    },
    {
      name: "server echoes secrets (secrets JSON)",
      service: "secrets" as const,
      body: { errors: [`token ${token}`, `client_secret=${secret}`, `jwt ${jwt}`] },
    },
  ])("keeps planted secrets out of every error: $name", async ({ service, body }) => {
    dev.faults.add({ service, path: "/v1/echo", method: "POST", status: 400, body, times: 1 });
    const logs: string[] = [];
    const hooks: HttpHooks = {
      onRequest: (i) => logs.push(JSON.stringify(i)),
      onResponse: (i) => logs.push(JSON.stringify(i)),
      onRetry: (i) => logs.push(JSON.stringify(i)),
    };
    const err = await core(service, { token, hooks })
      .request({
        operation: "write config",
        method: "POST",
        path: "/v1/echo",
        body: { client_secret: secret, jwt },
        secrets: [secret],
      })
      .catch((e) => e);
    expect(ApiError.is(err)).toBe(true);
    const text = everything(err) + logs.join("\n");
    expect(text).toContain("<redacted>");
    for (const s of [token, secret, jwt]) expect(text).not.toContain(s);
  });

  it("keeps the token out of transport, timeout and config errors", async () => {
    const errors: unknown[] = [];
    errors.push(
      await new HttpCore("scheduler", { address: "http://127.0.0.1:1", token, retry: { maxAttempts: 1 }, env: {} })
        .request({ operation: "x", method: "GET", path: "/v1/echo" })
        .catch((e) => e),
    );
    dev.faults.add({ service: "scheduler", path: "/v1/echo", delayMs: 500, times: 1 });
    errors.push(
      await core("scheduler", { token, timeoutMs: 50, retry: { maxAttempts: 1 } })
        .request({ operation: "x", method: "GET", path: "/v1/echo" })
        .catch((e) => e),
    );
    errors.push(
      (() => {
        try {
          return new HttpCore("scheduler", { address: "not a url " + token, token, env: {} });
        } catch (e) {
          return e;
        }
      })(),
    );
    for (const e of errors) {
      expect(e).toBeInstanceOf(Error);
      expect(everything(e)).not.toContain(token);
    }
  });
});

describe("connection settings", () => {
  it("fails with a message naming the option and the variable when the address is missing", () => {
    expect(() => new HttpCore("scheduler", { env: {} })).toThrow(ConfigError);
    expect(() => new HttpCore("scheduler", { env: {} })).toThrow(/`address` option.*SCHEDULER_ADDR/);
    expect(() => new HttpCore("secrets", { env: {} })).toThrow(/SECRETS_ADDR/);
  });

  it("fails at the first request when the token is missing, naming SECRETS_TOKEN", async () => {
    const c = new HttpCore("secrets", { address: dev.urls.secrets, env: {} });
    await expect(c.request({ operation: "read mounts", method: "GET", path: "/v1/echo" })).rejects.toThrow(
      /read mounts: the secrets service token is not set.*SECRETS_TOKEN/,
    );
    expect(count("/v1/echo")).toBe(0);
  });

  it("lets a call without auth (login) go out with no token", async () => {
    const c = new HttpCore("secrets", { address: dev.urls.secrets, env: {} });
    await expect(
      c.request({ operation: "login", method: "POST", path: "/v1/echo", body: {}, auth: false }),
    ).rejects.toMatchObject({ status: 403 });
  });

  it("sends no token to an anonymous scheduler connection", async () => {
    const c = new HttpCore("scheduler", {
      address: dev.urls.scheduler,
      env: { SCHEDULER_ANONYMOUS: "1", SCHEDULER_TOKEN: "ignored" },
    });
    expect(c.connection.token).toBeUndefined();
    expect(c.authHeaders("x")).toEqual({});
  });
});

describe("HttpCore TLS", () => {
  let pki: TestPki;
  let tlsDev: DevServer;
  let mtlsDev: DevServer;
  beforeAll(async () => {
    pki = makePki();
    tlsDev = await startServiceHost({
      services: [echoModule("secrets"), echoModule("scheduler")],
      tls: { cert: pki.serverCert, key: pki.serverKey },
    });
    mtlsDev = await startServiceHost({
      services: [echoModule("secrets"), echoModule("scheduler")],
      tls: { cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert, requestClientCert: true },
    });
  });
  afterAll(async () => {
    await tlsDev?.close();
    await mtlsDev?.close();
    pki?.cleanup();
  });

  it("verifies the server with a CA given as a file (SECRETS_CACERT) or as PEM", async () => {
    expect(tlsDev.urls.secrets.startsWith("https://")).toBe(true);
    const env = {
      SECRETS_ADDR: tlsDev.urls.secrets,
      SECRETS_TOKEN: tlsDev.rootTokens.secrets,
      SECRETS_CACERT: pki.caCertPath,
    };
    await expect(
      new HttpCore("secrets", { env }).request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    ).resolves.toMatchObject({ value: { ok: true } });
    const pem = new HttpCore("scheduler", {
      address: tlsDev.urls.scheduler,
      token: tlsDev.rootTokens.scheduler,
      caCert: pki.caCert,
      env: {},
    });
    await expect(pem.request({ operation: "echo", method: "GET", path: "/v1/echo" })).resolves.toMatchObject({
      value: { ok: true },
    });
  });

  it("refuses a server it cannot verify unless verification is explicitly, dangerously skipped", async () => {
    const opts = {
      address: tlsDev.urls.scheduler,
      token: tlsDev.rootTokens.scheduler,
      env: {},
      retry: { maxAttempts: 1 },
    };
    await expect(
      new HttpCore("scheduler", opts).request({ operation: "echo", method: "GET", path: "/v1/echo" }),
    ).rejects.toMatchObject({ code: "transport" });
    await expect(
      new HttpCore("scheduler", { ...opts, dangerouslySkipTlsVerify: true }).request({
        operation: "echo",
        method: "GET",
        path: "/v1/echo",
      }),
    ).resolves.toMatchObject({ value: { ok: true } });
  });

  it("presents a client certificate for mutual TLS (SCHEDULER_CLIENT_CERT / SCHEDULER_CLIENT_KEY)", async () => {
    const base = {
      SCHEDULER_ADDR: mtlsDev.urls.scheduler,
      SCHEDULER_TOKEN: mtlsDev.rootTokens.scheduler,
      SCHEDULER_CACERT: pki.caCertPath,
    };
    const without = new HttpCore("scheduler", { env: base, retry: { maxAttempts: 1 } });
    await expect(without.request({ operation: "echo", method: "GET", path: "/v1/echo" })).rejects.toBeInstanceOf(
      ApiError,
    );
    const withCert = new HttpCore("scheduler", {
      env: { ...base, SCHEDULER_CLIENT_CERT: pki.clientCertPath, SCHEDULER_CLIENT_KEY: pki.clientKeyPath },
    });
    await expect(withCert.request({ operation: "echo", method: "GET", path: "/v1/echo" })).resolves.toMatchObject({
      value: { ok: true },
    });
  });
});
