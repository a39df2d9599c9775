/**
 * Connection settings (provider/http/settings.ts and its table, setting-table.ts): the stack config key and
 * environment variable of every setting, the order in which options and the environment are read, and the
 * messages naming a bad setting.
 */
import { afterEach, describe, expect, expectTypeOf, it } from "vitest";
import { CONFIG_KEYS, CONFIG_NAMESPACE, connectionOptions } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";
import { ConfigError } from "../../../provider/errors";
import { HttpCore } from "../../../provider/http/core";
import { ENV, type SettingName } from "../../../provider/http/setting-table";
import { howToSet, resolveConnection, settingSource, type ConnectionOptions } from "../../../provider/http/settings";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

describe("stack config keys", () => {
  it("are the names the messages use, for every setting of both services", () => {
    for (const service of ["secrets", "scheduler"] as const) {
      for (const [setting, key] of Object.entries(CONFIG_KEYS[service])) {
        // How a provider's message says to set it.
        const named = /^stack config `([^`]*)`/.exec(howToSet(service, setting as SettingName, "stack-config"));
        expect(named?.[1], setting).toBe(`${CONFIG_NAMESPACE}:${key}`);
      }
    }
  });
});

describe("connection settings", () => {
  it("reads every setting from the environment, and explicit options win", () => {
    const env = {
      SCHEDULER_ADDR: "http://10.0.0.1:4646",
      SCHEDULER_TOKEN: "env-token",
      SCHEDULER_NAMESPACE: "ns1",
      SCHEDULER_REGION: "eu",
      SCHEDULER_HEADER_STYLE: "real",
    };
    const fromEnv = new HttpCore("scheduler", { env }).connection;
    expect(fromEnv).toMatchObject({
      origin: "http://10.0.0.1:4646",
      token: "env-token",
      namespace: "ns1",
      region: "eu",
    });
    expect(fromEnv.headers.token).toBe("X-Nomad-Token");
    expect(fromEnv.headers.nextToken).toBe("X-Nomad-NextToken");
    const explicit = new HttpCore("scheduler", {
      env,
      address: "http://127.0.0.1:9",
      token: "opt",
      namespace: "ns2",
      headerNames: { token: "X-Custom" },
    }).connection;
    expect(explicit).toMatchObject({ origin: "http://127.0.0.1:9", token: "opt", namespace: "ns2" });
    expect(explicit.headers.token).toBe("X-Custom");
    expect(
      new HttpCore("secrets", { env: { SECRETS_ADDR: "http://h:8200", SECRETS_HEADER_STYLE: "real" } }).connection
        .headers.token,
    ).toBe("X-Vault-Token");
  });

  it("names the variable of a bad header style, an unreadable CA file and half a client pair", () => {
    expect(
      () => new HttpCore("secrets", { env: { SECRETS_ADDR: "http://h", SECRETS_HEADER_STYLE: "vaultish" } }),
    ).toThrow(/SECRETS_HEADER_STYLE/);
    expect(
      () => new HttpCore("secrets", { env: { SECRETS_ADDR: "http://h", SECRETS_CACERT: "/nonexistent/ca.pem" } }),
    ).toThrow(/SECRETS_CACERT/);
    expect(
      () =>
        new HttpCore("scheduler", {
          env: { SCHEDULER_ADDR: "http://h", SCHEDULER_CLIENT_CERT: "-----BEGIN CERTIFICATE-----" },
        }),
    ).toThrow(/SCHEDULER_CLIENT_KEY/);
  });
});

describe("missing and bad settings", () => {
  afterEach(() => {
    setStackConfig({});
  });

  it("name the stack config key and the variable under the providers, and no client option", () => {
    setStackConfig({});
    const err = (() => {
      try {
        return new HttpCore("scheduler", { ...connectionOptions("scheduler"), env: {} });
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(
      "stack config `pulumi-secrets-scheduler:schedulerAddress` or the SCHEDULER_ADDR environment variable",
    );
    expect((err as Error).message).not.toContain("`address` option");
  });

  it("name the client option and the variable for a typed client, and no stack config key", () => {
    expect(() => new HttpCore("secrets", { env: {} })).toThrow(
      "the `address` option or the SECRETS_ADDR environment variable",
    );
    expect(() => new HttpCore("secrets", { env: {} })).not.toThrow(/stack config/);
  });

  it("name stack config, not the variable, when a bad value came from stack config", () => {
    setStackConfig({ schedulerAddress: "ftp://x", schedulerCaCert: "/nonexistent/ca.pem" });
    expect(() => new HttpCore("scheduler", { ...connectionOptions("scheduler"), env: {} })).toThrow(
      "(from stack config `pulumi-secrets-scheduler:schedulerAddress`)",
    );
    setStackConfig({ schedulerAddress: "http://x", schedulerCaCert: "/nonexistent/ca.pem" });
    expect(
      () => new HttpCore("scheduler", { ...connectionOptions("scheduler"), env: { SCHEDULER_CACERT: "/other" } }),
    ).toThrow(/CA bundle file given by stack config `pulumi-secrets-scheduler:schedulerCaCert`.*ENOENT/);
    expect(() => new HttpCore("scheduler", { address: "not a url", env: {} })).toThrow("(from the `address` option)");
    expect(() => new HttpCore("scheduler", { env: { SCHEDULER_ADDR: "not a url" } })).toThrow("(from SCHEDULER_ADDR)");
  });
});

describe("the settings table", () => {
  it("keeps every stack config key and environment variable name of both services", () => {
    expect(CONFIG_KEYS).toEqual({
      secrets: {
        address: "secretsAddress",
        token: "secretsToken",
        namespace: "secretsNamespace",
        caCert: "secretsCaCert",
        clientCert: "secretsClientCert",
        clientKey: "secretsClientKey",
        tlsServerName: "secretsTlsServerName",
        headerStyle: "secretsHeaderStyle",
        tokenHeader: "secretsTokenHeader",
        timeoutMs: "secretsTimeoutMs",
        dangerouslySkipTlsVerify: "secretsDangerouslySkipTlsVerify",
      },
      scheduler: {
        address: "schedulerAddress",
        token: "schedulerToken",
        namespace: "schedulerNamespace",
        region: "schedulerRegion",
        caCert: "schedulerCaCert",
        clientCert: "schedulerClientCert",
        clientKey: "schedulerClientKey",
        tlsServerName: "schedulerTlsServerName",
        headerStyle: "schedulerHeaderStyle",
        tokenHeader: "schedulerTokenHeader",
        timeoutMs: "schedulerTimeoutMs",
        anonymous: "schedulerAnonymous",
        dangerouslySkipTlsVerify: "schedulerDangerouslySkipTlsVerify",
      },
    });
    expect(ENV).toEqual({
      secrets: {
        address: "SECRETS_ADDR",
        token: "SECRETS_TOKEN",
        namespace: "SECRETS_NAMESPACE",
        caCert: "SECRETS_CACERT",
        clientCert: "SECRETS_CLIENT_CERT",
        clientKey: "SECRETS_CLIENT_KEY",
        headerStyle: "SECRETS_HEADER_STYLE",
        tokenHeader: "SECRETS_TOKEN_HEADER",
      },
      scheduler: {
        address: "SCHEDULER_ADDR",
        token: "SCHEDULER_TOKEN",
        namespace: "SCHEDULER_NAMESPACE",
        region: "SCHEDULER_REGION",
        caCert: "SCHEDULER_CACERT",
        clientCert: "SCHEDULER_CLIENT_CERT",
        clientKey: "SCHEDULER_CLIENT_KEY",
        headerStyle: "SCHEDULER_HEADER_STYLE",
        tokenHeader: "SCHEDULER_TOKEN_HEADER",
        anonymous: "SCHEDULER_ANONYMOUS",
      },
    });
    expect(Object.isFrozen(ENV.scheduler) && Object.isFrozen(CONFIG_KEYS.secrets)).toBe(true);
    // Users' code indexes them by name: the views keep their literal types, and a service's own settings.
    expectTypeOf(ENV.scheduler.anonymous).toEqualTypeOf<"SCHEDULER_ANONYMOUS">();
    expectTypeOf(CONFIG_KEYS.secrets.tokenHeader).toEqualTypeOf<"secretsTokenHeader">();
    expectTypeOf(ENV.secrets).not.toHaveProperty("region");
    expectTypeOf(ENV.secrets).not.toHaveProperty("timeoutMs");
    expectTypeOf(CONFIG_KEYS.secrets).not.toHaveProperty("anonymous");
    expectTypeOf(CONFIG_KEYS.scheduler).toHaveProperty("region");
  });

  it("reads every variable when no option is given, and names each one as where its value came from", () => {
    const c = resolveConnection("scheduler", {
      env: {
        SCHEDULER_ADDR: "http://h:4646/base/",
        SCHEDULER_TOKEN: "tok",
        SCHEDULER_NAMESPACE: "ns",
        SCHEDULER_REGION: "eu",
        SCHEDULER_CACERT: PEM,
        SCHEDULER_CLIENT_CERT: PEM,
        SCHEDULER_CLIENT_KEY: PEM,
        SCHEDULER_HEADER_STYLE: "real",
        SCHEDULER_TOKEN_HEADER: "X-Tok",
        SCHEDULER_TIMEOUT_MS: "5",
      },
    });
    expect(c).toMatchObject({
      origin: "http://h:4646",
      basePath: "/base",
      token: "tok",
      anonymous: false,
      namespace: "ns",
      region: "eu",
      timeoutMs: 30_000,
      tokenSource: "the `token` option or the SCHEDULER_TOKEN environment variable",
      tls: { ca: PEM, cert: PEM, key: PEM, rejectUnauthorized: true },
    });
    expect(c.headers.token).toBe("X-Tok");
    expect(c.headers.index).toBe("X-Nomad-Index");
    expect(c.origins).toEqual({
      address: "env",
      token: "env",
      namespace: "env",
      region: "env",
      caCert: "env",
      clientCert: "env",
      clientKey: "env",
      headerStyle: "env",
      tokenHeader: "env",
    });
    expect(
      resolveConnection("scheduler", { env: { SCHEDULER_ADDR: "http://h", SCHEDULER_ANONYMOUS: "true" } }),
    ).toMatchObject({ anonymous: true, origins: { anonymous: "env" } });
    expect(
      resolveConnection("scheduler", { env: { SCHEDULER_ADDR: "http://h", SCHEDULER_ANONYMOUS: "yes" } }),
    ).toMatchObject({ anonymous: false, origins: { address: "env" } });
    // The secrets service has no region nor anonymous setting: their scheduler variables do not apply.
    const s = resolveConnection("secrets", {
      env: { SECRETS_ADDR: "http://h", SECRETS_REGION: "eu", SECRETS_ANONYMOUS: "1", SECRETS_TOKEN: "t" },
    });
    expect(s).toMatchObject({ region: undefined, anonymous: false, token: "t" });
  });

  it("lets a set option win over its variable, an empty one fall back to it, and names stack config under the providers", () => {
    const env = {
      SCHEDULER_ADDR: "http://env:1",
      SCHEDULER_TOKEN: "env-tok",
      SCHEDULER_NAMESPACE: "env-ns",
      SCHEDULER_HEADER_STYLE: "real",
      SCHEDULER_TOKEN_HEADER: "X-Env",
      SCHEDULER_ANONYMOUS: "1",
    };
    const c = resolveConnection("scheduler", {
      env,
      optionsFrom: "stack-config",
      address: "http://opt:2",
      token: "opt-tok",
      namespace: "",
      headerStyle: "spec",
      anonymous: false,
      timeoutMs: 7,
      tlsServerName: "name",
      dangerouslySkipTlsVerify: true,
    });
    expect(c).toMatchObject({
      origin: "http://opt:2",
      token: "opt-tok",
      anonymous: false,
      namespace: "env-ns",
      timeoutMs: 7,
      tls: { servername: "name", rejectUnauthorized: false },
      tokenSource: "stack config `pulumi-secrets-scheduler:schedulerToken` or the SCHEDULER_TOKEN environment variable",
    });
    expect(c.headers.token).toBe("X-Env");
    expect(c.headers.index).toBe("X-Svc-Index");
    expect(c.origins).toEqual({
      address: "stack-config",
      token: "stack-config",
      anonymous: "stack-config",
      namespace: "env",
      headerStyle: "stack-config",
      tokenHeader: "env",
      timeoutMs: "stack-config",
      tlsServerName: "stack-config",
      dangerouslySkipTlsVerify: "stack-config",
    });
    expect(settingSource(c, "namespace")).toBe("SCHEDULER_NAMESPACE");
    expect(settingSource(c, "address")).toBe("stack config `pulumi-secrets-scheduler:schedulerAddress`");
    expect(settingSource(c, "region")).toBe(
      "stack config `pulumi-secrets-scheduler:schedulerRegion` or the SCHEDULER_REGION environment variable",
    );
    expect(settingSource({ ...c, optionsFrom: "client" }, "timeoutMs")).toBe(
      "stack config `pulumi-secrets-scheduler:schedulerTimeoutMs`",
    );
    expect(howToSet("secrets", "timeoutMs", "client")).toBe("the `timeoutMs` option");
    expect(howToSet("secrets", "caCert", "client")).toBe(
      "the `caCert` option or the SECRETS_CACERT environment variable",
    );
    // An explicit empty header style is refused, not replaced by the variable; an empty variable too.
    expect(() => resolveConnection("scheduler", { env, headerStyle: "" as "spec" })).toThrow(
      'The scheduler header style (from the `headerStyle` option) must be "spec" or "real", not "".',
    );
    expect(() => resolveConnection("secrets", { env: { SECRETS_ADDR: "http://h", SECRETS_HEADER_STYLE: "" } })).toThrow(
      'The secrets service header style (from SECRETS_HEADER_STYLE) must be "spec" or "real", not "".',
    );
    expect(() => resolveConnection("secrets", { address: "http://h", timeoutMs: 0, env: {} })).toThrow(
      "The secrets service timeout (the `timeoutMs` option) must be a positive number of milliseconds.",
    );
  });

  it("names the setting and never the value of a refused token, namespace, region or PEM file", () => {
    const secret = "s.Secret\nValue";
    const thrown = (options: ConnectionOptions): string => {
      try {
        resolveConnection("scheduler", { address: "http://h", env: {}, ...options });
      } catch (e) {
        return (e as Error).message;
      }
      throw new Error("expected a throw");
    };
    for (const [setting, label] of [
      ["token", "token"],
      ["namespace", "namespace"],
      ["region", "region"],
    ] as const) {
      const m = thrown({ [setting]: secret });
      expect(m).toMatch(
        new RegExp(`^The scheduler ${label} \\(from the \`${setting}\` option\\) holds a control character`),
      );
      expect(m).not.toContain("Secret");
    }
    expect(thrown({ clientKey: "/nonexistent/s.SecretPath" })).toBe(
      "Cannot read the client key file given by the `clientKey` option (a value that is not PEM text is read as a file path): ENOENT.",
    );
  });
});
