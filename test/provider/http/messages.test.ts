/**
 * The "what to do" of the core's errors, over real HTTP: each names the setting to change where its value
 * really came from (a typed client's option, the providers' stack config key, or the environment
 * variable), a certificate failure is called one and is not retried, and a 403 after a token rotation
 * points at the recipe.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { DevHttpError, startServiceHost, type DevServer, type ServiceModule } from "../../../devserver/core";
import { startDevServer } from "../../../devserver";
import { connectionOptions } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";
import { ApiError } from "../../../provider/errors";
import { HttpCore } from "../../../provider/http/core";
import { ENV } from "../../../provider/http/setting-table";
import type { ConnectionOptions } from "../../../provider/http/settings";
import { jobVersionTag } from "../../../provider/resources/job-version-tag";
import { makePki, type TestPki } from "../../helpers/tls";

function testModule(name: "secrets" | "scheduler"): ServiceModule {
  return {
    name,
    routes(r) {
      r.get("/v1/echo", () => ({ json: { ok: true } }));
      r.get("/v1/denied", () => {
        throw new DevHttpError(403, "Permission denied");
      });
    },
  };
}

const fast = { baseDelayMs: 1, maxDelayMs: 5 };
let dev: DevServer;
let tlsDev: DevServer;
let pki: TestPki;

beforeAll(async () => {
  pki = makePki();
  dev = await startServiceHost({ services: [testModule("secrets"), testModule("scheduler")] });
  tlsDev = await startServiceHost({
    services: [testModule("secrets"), testModule("scheduler")],
    tls: { cert: pki.serverCert, key: pki.serverKey },
  });
});
afterAll(async () => {
  await dev?.close();
  await tlsDev?.close();
  pki?.cleanup();
});
afterEach(() => {
  dev.faults.clear();
  setStackConfig({});
  vi.unstubAllEnvs();
});

async function failure(c: HttpCore, path = "/v1/echo"): Promise<ApiError> {
  const e = await c.request({ operation: "read thing", method: "GET", path }).catch((x: unknown) => x);
  if (!ApiError.is(e)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}

/** A scheduler connection the way the providers build it: from stack config values, then the environment. */
function fromStack(
  values: Record<string, string>,
  env: Record<string, string> = {},
  extra: ConnectionOptions = {},
): HttpCore {
  setStackConfig(values);
  return new HttpCore("scheduler", { ...connectionOptions("scheduler"), env, retry: fast, ...extra });
}

describe("TLS verification failures", () => {
  it("are called a certificate problem naming the CA settings, and are not retried", async () => {
    const attempts: number[] = [];
    const c = new HttpCore("scheduler", {
      address: tlsDev.urls.scheduler,
      token: "t",
      env: {},
      retry: fast,
      hooks: { onRequest: (i) => attempts.push(i.attempt) },
    });
    const e = await failure(c);
    expect(e.code).toBe("transport");
    expect(attempts).toEqual([1]);
    expect(e.attempts).toBe(1);
    expect(e.message).toMatch(/certificate/);
    expect(e.message).toContain("the `caCert` option or the SCHEDULER_CACERT environment variable");
    expect(e.message).not.toContain("check the address");
    expect(e.message).not.toContain("could not reach");
  });

  it("name the providers' stack config key, and the CA bundle that did not verify it", async () => {
    const other = makePki();
    try {
      const c = fromStack({
        schedulerAddress: tlsDev.urls.scheduler,
        schedulerToken: "t",
        schedulerCaCert: other.caCertPath,
      });
      const e = await failure(c);
      expect(e.attempts).toBe(1);
      expect(e.message).toContain("the CA bundle from stack config `pulumi-secrets-scheduler:schedulerCaCert`");
      expect(e.message).toContain(
        "set stack config `pulumi-secrets-scheduler:schedulerCaCert` or the SCHEDULER_CACERT environment variable",
      );
      expect(e.message).not.toContain("`caCert` option");
    } finally {
      other.cleanup();
    }
  });
});

describe("timeouts", () => {
  it("name the typed client's option when the client is used directly", async () => {
    // Every request is held far beyond the 50 ms timeout, so a loaded machine cannot let an answer in first.
    dev.faults.add({ service: "scheduler", path: "/v1/echo", delayMs: 3000, times: Infinity });
    const e = await failure(
      new HttpCore("scheduler", {
        address: dev.urls.scheduler,
        token: "t",
        env: {},
        timeoutMs: 50,
        retry: { maxAttempts: 1 },
      }),
    );
    expect(e.code).toBe("timeout");
    expect(e.message).toContain("raise the `timeoutMs` option");
  });

  it("name the stack config key a Pulumi user sets", async () => {
    // Every request is held far beyond the 50 ms timeout, so a loaded machine cannot let an answer in first.
    dev.faults.add({ service: "scheduler", path: "/v1/echo", delayMs: 3000, times: Infinity });
    const e = await failure(
      fromStack(
        { schedulerAddress: dev.urls.scheduler, schedulerToken: "t", schedulerTimeoutMs: "50" },
        {},
        { retry: { maxAttempts: 1 } },
      ),
    );
    expect(e.code).toBe("timeout");
    expect(e.message).toContain("raise stack config `pulumi-secrets-scheduler:schedulerTimeoutMs`");
    expect(e.message).not.toMatch(/raise (the `)?timeoutMs/);
  });
});

describe("an unreachable address", () => {
  const closed = "http://127.0.0.1:1";
  it.each([
    {
      from: "stack config",
      core: () => fromStack({ schedulerAddress: closed, schedulerToken: "t" }, { SCHEDULER_ADDR: "http://ignored:1" }),
      says: "stack config `pulumi-secrets-scheduler:schedulerAddress`",
    },
    {
      from: "the environment under the providers",
      core: () => fromStack({ schedulerToken: "t" }, { SCHEDULER_ADDR: closed }),
      says: "(from SCHEDULER_ADDR)",
    },
    {
      from: "a typed client's option",
      core: () => new HttpCore("scheduler", { address: closed, token: "t", env: {}, retry: { maxAttempts: 1 } }),
      says: "the `address` option",
    },
  ])("names where the address came from: $from", async ({ core, says }) => {
    const e = await failure(core());
    expect(e.code).toBe("transport");
    expect(e.message).toContain(says);
    if (!says.includes("SCHEDULER_ADDR")) expect(e.message).not.toContain("SCHEDULER_ADDR");
  });
});

describe("missing and bad settings", () => {
  it("a missing token names the stack config key under the providers", async () => {
    setStackConfig({ secretsAddress: dev.urls.secrets });
    const c = new HttpCore("secrets", { ...connectionOptions("secrets"), env: {} });
    await expect(c.request({ operation: "read mounts", method: "GET", path: "/v1/echo" })).rejects.toThrow(
      "stack config `pulumi-secrets-scheduler:secretsToken` or the SECRETS_TOKEN environment variable",
    );
  });
});

describe("403", () => {
  it("after a token from stack config: names the key and points at the rotation recipe", async () => {
    const e = await failure(
      fromStack({ schedulerAddress: dev.urls.scheduler, schedulerToken: "old" }, { SCHEDULER_TOKEN: "new" }),
      "/v1/denied",
    );
    expect(e.code).toBe("permission_denied");
    expect(e.message).toContain("scheduler token (from stack config `pulumi-secrets-scheduler:schedulerToken`)");
    expect(e.message).toContain("`pulumi refresh` and `pulumi destroy` use that stored copy");
    expect(e.message).toContain("run `pulumi up` first");
    expect(e.message).toContain("`pulumi destroy --run-program`");
    expect(e.message).not.toContain("SCHEDULER_TOKEN");
  });

  it("after a token from the environment: names the variable, no recipe (it is read at call time)", async () => {
    const e = await failure(
      fromStack({ schedulerAddress: dev.urls.scheduler }, { SCHEDULER_TOKEN: "env" }),
      "/v1/denied",
    );
    expect(e.message).toContain("scheduler token (from SCHEDULER_TOKEN)");
    expect(e.message).not.toContain("--run-program");
  });

  it("for a typed client: names the option", async () => {
    const e = await failure(new HttpCore("secrets", { address: dev.urls.secrets, token: "t", env: {} }), "/v1/denied");
    expect(e.message).toContain("secrets service token (from the `token` option)");
  });

  it("when no token was sent: says so and which setting to fill in", async () => {
    const e = await failure(
      fromStack({ schedulerAddress: dev.urls.scheduler, schedulerAnonymous: "true" }),
      "/v1/denied",
    );
    expect(e.message).toContain("no token was sent");
    expect(e.message).toContain(
      "set stack config `pulumi-secrets-scheduler:schedulerToken` or the SCHEDULER_TOKEN environment variable",
    );
  });

  it("reaches the Pulumi user through a resource operation", async () => {
    const server = await startDevServer();
    try {
      vi.stubEnv(ENV.scheduler.token, server.rootTokens.scheduler);
      setStackConfig({ schedulerAddress: server.urls.scheduler, schedulerToken: "rotated-away" });
      const e = await jobVersionTag
        .read("web@default/v1", {
          jobId: "web",
          namespace: "default",
          name: "v1",
          version: 0,
          description: "",
          taggedTime: 0,
          schemaVersion: 1,
        })
        .catch((x: unknown) => x);
      expect(ApiError.is(e) && e.code).toBe("permission_denied");
      expect((e as Error).message).toContain("stack config `pulumi-secrets-scheduler:schedulerToken`");
      expect((e as Error).message).toContain("--run-program");
    } finally {
      await server.close();
    }
  });
});
