/**
 * Connection settings (provider/http/settings.ts): the stack config key and environment variable of every
 * setting, the order in which options and the environment are read, and the messages naming a bad setting.
 */
import { describe, expect, it } from "vitest";
import { CONFIG_KEYS, CONFIG_NAMESPACE } from "../../../provider/config";
import { HttpCore } from "../../../provider/http/core";
import { stackConfigKey, type SettingName } from "../../../provider/http/settings";

describe("stack config keys", () => {
  it("are the names the messages use, for every setting of both services", () => {
    for (const service of ["secrets", "scheduler"] as const) {
      for (const [setting, key] of Object.entries(CONFIG_KEYS[service])) {
        expect(stackConfigKey(service, setting as SettingName)).toBe(`${CONFIG_NAMESPACE}:${key}`);
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
