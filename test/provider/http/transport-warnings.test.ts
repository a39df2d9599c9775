/**
 * A token sent over plain http to a host that is not this machine, and TLS verification
 * turned off, are warned about (once per address, through the provider's warning printer); loopback over
 * http (the devserver) stays silent. No warning holds the token.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { setConnectionOverrides } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";
import { SecretsClient } from "../../../provider/clients/secrets";
import { HttpCore } from "../../../provider/http/core";
import { isLoopbackHost } from "../../../provider/http/loopback";
import { authMount } from "../../../provider/resources/auth-mount";

let dev: DevServer;
let spy: MockInstance<(...args: unknown[]) => void>;
let lines: string[];

beforeAll(async () => {
  dev = await startDevServer();
});
afterAll(async () => {
  await dev.close();
});
beforeEach(() => {
  lines = [];
  spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  });
});
afterEach(() => {
  spy.mockRestore();
});

const TOKEN = "s.PlainHttpSecretToken987";

describe("plain http with a token", () => {
  it("warns once per address when a token would go over http to a host that is not loopback", () => {
    const a = new HttpCore("scheduler", { address: "http://192.0.2.10:4646", token: TOKEN, env: {} });
    a.authHeaders("read jobs");
    a.authHeaders("read jobs");
    new HttpCore("scheduler", { address: "http://192.0.2.10:4646/", token: TOKEN, env: {} }).authHeaders("read job");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^warning: the scheduler token is sent over plain http to http:\/\/192\.0\.2\.10:4646, which is not this machine/,
    );
    expect(lines[0]).toContain("the `address` option");
    new HttpCore("secrets", { address: "http://secrets.example:8200", token: TOKEN, env: {} }).authHeaders(
      "read mounts",
    );
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/secrets service token is sent over plain http to http:\/\/secrets\.example:8200/);
    for (const l of lines) expect(l).not.toContain(TOKEN);
  });

  it("says nothing for https, for a scheduler without a token, and for loopback over http (real requests)", async () => {
    new HttpCore("scheduler", { address: "https://192.0.2.11:4646", token: TOKEN, env: {} }).authHeaders("x");
    new HttpCore("scheduler", { address: "http://192.0.2.12:4646", env: {} }).authHeaders("x");
    await new HttpCore("scheduler", { address: dev.urls.scheduler, token: dev.rootTokens.scheduler, env: {} }).request({
      operation: "list jobs",
      method: "GET",
      path: "/v1/jobs",
    });
    const port = new URL(dev.urls.secrets).port;
    await new HttpCore("secrets", {
      address: `http://localhost:${port}`,
      token: dev.rootTokens.secrets,
      env: {},
    }).request({ operation: "list", method: "GET", path: "/v1/sys/auth" });
    expect(lines).toEqual([]);
  });

  it("reaches the CLI through a provider: the address from stack config is named", async () => {
    setStackConfig({ secretsAddress: "http://192.0.2.13:8200", secretsToken: TOKEN, secretsTimeoutMs: "100" });
    setConnectionOverrides({ retry: { maxAttempts: 1 } });
    try {
      await authMount.read("cloud", { path: "cloud", type: "azure" } as never).catch(() => undefined);
    } finally {
      setStackConfig({});
      setConnectionOverrides({});
    }
    const warnings = lines.filter((l) => l.startsWith("warning:"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("stack config `pulumi-secrets-scheduler:secretsAddress`");
    expect(lines.join("\n")).not.toContain(TOKEN);
  }, 30_000);
});

describe("TLS verification off", () => {
  it("warns once per address, naming the setting", () => {
    new HttpCore("scheduler", {
      address: "https://192.0.2.20:4646",
      token: TOKEN,
      dangerouslySkipTlsVerify: true,
      env: {},
    });
    new HttpCore("scheduler", {
      address: "https://192.0.2.20:4646",
      token: TOKEN,
      dangerouslySkipTlsVerify: true,
      env: {},
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^warning: TLS certificate verification is off for the scheduler at https:\/\/192\.0\.2\.20:4646 \(the `dangerouslySkipTlsVerify` option\)/,
    );
    expect(lines[0]).not.toContain(TOKEN);
    new HttpCore("scheduler", { address: "https://192.0.2.21:4646", dangerouslySkipTlsVerify: false, env: {} });
    // Over plain http there is no TLS to turn off (the token warning covers http).
    new HttpCore("scheduler", { address: "http://127.0.0.1:4646", dangerouslySkipTlsVerify: true, env: {} });
    expect(lines).toHaveLength(1);
  });
});

describe("localhost names", () => {
  it("*.localhost and localhost reach this machine without a resolver (none knows pss-test.localhost here), with no warning", async () => {
    for (const name of ["pss-test.localhost", "LOCALHOST", "a.b.localhost."]) {
      const url = new URL(dev.urls.secrets);
      url.hostname = name;
      const client = new SecretsClient({ address: url.toString(), token: dev.rootTokens.secrets, env: {} });
      expect(await client.mounts.list(), name).toHaveProperty(["token/"]);
    }
    expect(lines).toEqual([]);
  });
});

describe("isLoopbackHost", () => {
  it("knows localhost, 127.0.0.0/8 and ::1, and nothing else", () => {
    const host = (u: string) => new URL(u).hostname;
    for (const u of [
      "http://localhost:1",
      "http://LOCALHOST.:1",
      "http://a.localhost",
      "http://127.0.0.1",
      "http://127.3.4.5",
      "http://[::1]:8",
      "http://[::ffff:127.0.0.1]",
    ]) {
      expect(isLoopbackHost(host(u)), u).toBe(true);
    }
    for (const u of [
      "http://10.0.0.1",
      "http://128.0.0.1",
      "http://localhost.example",
      "http://[::2]",
      "http://127.0.0.1.nip.io",
      "http://0.0.0.0",
    ]) {
      expect(isLoopbackHost(host(u)), u).toBe(false);
    }
  });
});
