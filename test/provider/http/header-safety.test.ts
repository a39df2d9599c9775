/**
 * A control character in a header value or name (a namespace, a token, a header-name
 * setting) is refused when the settings are resolved, or at check for resource inputs, naming the setting
 * and never echoing the value; the HTTP core never reports it as a connection lost after sending, nor
 * retries it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { ApiError, ConfigError } from "../../../provider/errors";
import { HttpCore } from "../../../provider/http/core";
import { checkJobInputs } from "../../../provider/resources/job/inputs";
import { jobVersionTag } from "../../../provider/resources/job-version-tag";
import { connectionOptions } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";

let dev: DevServer;
beforeAll(async () => {
  dev = await startDevServer();
});
afterAll(async () => {
  await dev.close();
});

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a throw");
};

describe("control characters in connection settings", () => {
  it("refuses a secrets namespace with CR/LF at resolution, naming the option and sending nothing", () => {
    const e = thrown(
      () =>
        new HttpCore("secrets", {
          address: dev.urls.secrets,
          token: dev.rootTokens.secrets,
          namespace: "team\r\nX-Evil: 1",
          env: {},
        }),
    );
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(/secrets service namespace \(from the `namespace` option\) holds a control character/);
    expect(e.message).not.toContain("team");
    expect(e.message).not.toContain("X-Evil");
  });

  it("names the environment variable and the stack config key", () => {
    const fromEnv = thrown(
      () =>
        new HttpCore("secrets", {
          env: { SECRETS_ADDR: dev.urls.secrets, SECRETS_TOKEN: "t0ken", SECRETS_NAMESPACE: "ns\n" },
        }),
    );
    expect(fromEnv.message).toMatch(/namespace \(from SECRETS_NAMESPACE\) holds a control character/);
    setStackConfig({ schedulerAddress: dev.urls.scheduler, schedulerToken: "tok\r\n" });
    try {
      const fromStack = thrown(() => new HttpCore("scheduler", { ...connectionOptions("scheduler"), env: {} }));
      expect(fromStack.message).toMatch(
        /scheduler token \(from stack config `pulumi-secrets-scheduler:schedulerToken`\) holds a control character/,
      );
    } finally {
      setStackConfig({});
    }
  });

  it("refuses a token with a line break without echoing the token", () => {
    const token = "s.VerySecretTokenValue1234\n";
    const e = thrown(() => new HttpCore("scheduler", { address: dev.urls.scheduler, token, env: {} }));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(/scheduler token \(from the `token` option\) holds a control character/);
    expect(e.message).not.toContain("VerySecretTokenValue");
  });

  it("refuses a header name that is not an HTTP token (option and variable named)", () => {
    expect(
      thrown(
        () =>
          new HttpCore("scheduler", { address: dev.urls.scheduler, headerNames: { token: "X-Tok\r\nen" }, env: {} }),
      ).message,
    ).toMatch(/token header name \(from the `headerNames.token` option\) is not a valid HTTP header name/);
    expect(
      thrown(
        () =>
          new HttpCore("scheduler", { env: { SCHEDULER_ADDR: dev.urls.scheduler, SCHEDULER_TOKEN_HEADER: "X Token" } }),
      ).message,
    ).toMatch(/token header name \(from SCHEDULER_TOKEN_HEADER\) is not a valid HTTP header name/);
    setStackConfig({ schedulerAddress: dev.urls.scheduler, schedulerTokenHeader: "X-Token\n" });
    try {
      expect(thrown(() => new HttpCore("scheduler", { ...connectionOptions("scheduler"), env: {} })).message).toMatch(
        /token header name \(from stack config `pulumi-secrets-scheduler:schedulerTokenHeader`\) is not a valid HTTP header name/,
      );
    } finally {
      setStackConfig({});
    }
    expect(
      thrown(() => new HttpCore("secrets", { address: dev.urls.secrets, headerNames: { namespace: "X-Ns:" }, env: {} }))
        .message,
    ).toMatch(/namespace header name \(from the `headerNames.namespace` option\)/);
  });

  it("still accepts ordinary values, and an empty request marker (none sent)", () => {
    const c = new HttpCore("secrets", {
      address: dev.urls.secrets,
      token: "abc",
      namespace: "team-a/sub",
      headerNames: { requestMarker: "" },
      env: {},
    });
    expect(c.connection.namespace).toBe("team-a/sub");
  });

  it("a header value the HTTP library refuses fails once, as not sent, never as lost after sending", async () => {
    let attempts = 0;
    const c = new HttpCore("scheduler", {
      address: dev.urls.scheduler,
      token: dev.rootTokens.scheduler,
      env: {},
      retry: { baseDelayMs: 1 },
      hooks: { onRequest: () => attempts++ },
    });
    const e = (await c
      .request({ operation: "read jobs", method: "GET", path: "/v1/jobs", headers: { "X-Extra": "a\r\nb" } })
      .catch((x: unknown) => x)) as ApiError;
    expect(ApiError.is(e)).toBe(true);
    expect(attempts).toBe(1);
    expect(e.requestSent).toBe(false);
    expect(e.message).not.toMatch(/lost after/);
    expect(e.message).toMatch(/refused before it was sent/);
  });
});

describe("control characters in resource inputs", () => {
  it("Job: refuses a namespace or region with a line break at check, naming the input", () => {
    const r = checkJobInputs({ jobspec: 'job "web" {}', namespace: "prod\r\n", region: "eu\n" });
    expect(r.failures).toEqual(
      expect.arrayContaining([
        { property: "namespace", reason: expect.stringMatching(/control character/) as unknown },
        { property: "region", reason: expect.stringMatching(/control character/) as unknown },
      ]),
    );
  });

  it("JobVersionTag: refuses a namespace with a line break at check", async () => {
    const r = await jobVersionTag.check({}, { jobId: "web", name: "v1", namespace: "a\nb" });
    expect(r.failures).toEqual([
      { property: "namespace", reason: expect.stringMatching(/control character/) as unknown },
    ]);
  });
});
