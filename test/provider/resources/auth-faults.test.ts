/**
 * The auth resources when a write's outcome is unknown (AuthMount and AuthConfig, and the same rule for
 * AuthRole): a fault proxy on loopback between the providers and the devserver; the server is read around it.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { secretsControls } from "../../../devserver/secrets";
import { setConnectionOverrides } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import { authRole } from "../../../provider/resources/auth-role";
import type { ProviderImpl } from "../../../provider/resources/common";
import { upStep, type Stated } from "../../helpers/engine-steps";
import { startFaultProxy, type FaultProxy } from "../../helpers/fault-proxy";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";

const mount = authMount as unknown as ProviderImpl;
const config = authConfig as unknown as ProviderImpl;
const role = authRole as unknown as ProviderImpl;

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "00000002-0000-0000-c000-000000000000";
const cfg = (m: string) => ({
  mount: m,
  tenantId: TENANT,
  resource: "https://management.azure.com/",
  clientId: CLIENT,
  clientSecret: "s3cret-value",
  maxRetries: 5,
});
const roleOf = (m: string, name: string) => ({ mount: m, name, boundServicePrincipalIds: ["sp-1"], tokenTtl: "1h" });

let env: SecretsEnv;
let proxy: FaultProxy;
let methodType: string;

beforeAll(async () => {
  env = await startSecretsEnv();
  methodType = (await secretsControls(env.dev)).methodType;
  proxy = await startFaultProxy(env.dev.urls.secrets, "secrets");
  setStackConfig({ secretsAddress: proxy.url, secretsToken: env.dev.rootTokens.secrets });
  setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 10 }, timeoutMs: 5_000 });
});
afterAll(async () => {
  setConnectionOverrides({});
  await proxy?.close();
  await env?.close();
});
afterEach(() => proxy.clear());

/** Runs one `up` with stderr captured (warnings are expected). */
async function up(impl: ProviderImpl, state: Stated | undefined, news: Record<string, unknown>) {
  return (await capturingStderr(() => upStep(impl, state, news))).value;
}

/** The re-run of a failed `up` (faults off) succeeds and the one after it has nothing to do. */
async function converges(
  impl: ProviderImpl,
  state: Stated | undefined,
  news: Record<string, unknown>,
): Promise<Stated> {
  proxy.clear();
  const again = await up(impl, state, news);
  expect(again.error).toBeUndefined();
  const after = await up(impl, again.state, news);
  expect(after.ran).toBe("same");
  return again.state as Stated;
}

describe("AuthMount create after an unconfirmed enable", () => {
  it("the enable was applied and its answer lost: read back, no 'already enabled' on the re-run", async () => {
    const news = { path: "fm1", type: methodType, description: "faulted" };
    proxy.script({ kind: "reset-after", method: "POST", path: /^\/v1\/sys\/auth\/fm1$/ });
    const r = await up(mount, undefined, news);
    if (r.error) expect(r.state?.id).toBe("fm1");
    const s = r.error ? await converges(mount, r.state, news) : (r.state as Stated);
    const found = await env.client.mounts.find("fm1");
    expect(found?.description).toBe("faulted");
    expect(s.outs.accessor).toBe(found?.accessor);
  });

  it("the mount list cannot be read after the enable: an init error, and the re-run fills in the accessor", async () => {
    const news = { path: "fm2", type: methodType };
    proxy.script({ kind: "status", status: 503, method: "GET", path: /^\/v1\/sys\/auth$/, times: 20 });
    const r = await up(mount, undefined, news);
    expect(r.error).toBeDefined();
    expect(r.state?.id).toBe("fm2");
    const s = await converges(mount, r.state, news);
    expect(s.outs.accessor).toBe((await env.client.mounts.find("fm2"))?.accessor);
  });

  it("a create whose earlier run enabled the mount without recording it continues with it; a mount in use stays refused", async () => {
    const news = { path: "fm3", type: methodType, description: "mine" };
    await env.client.mounts.enable("fm3", { type: methodType, description: "mine" });
    const r = await up(mount, undefined, news);
    expect(r.error).toBeUndefined();
    expect(r.state?.outs.accessor).toBe((await env.client.mounts.find("fm3"))?.accessor);
    // Someone else's mount: configured already, or with another description.
    await env.client.mounts.enable("fm4", { type: methodType, description: "mine" });
    await env.client.config.write("fm4", { tenant_id: TENANT, resource: "https://management.azure.com/" });
    expect((await up(mount, undefined, { ...news, path: "fm4" })).error?.message).toMatch(/already enabled/);
    await env.client.mounts.enable("fm5", { type: methodType, description: "theirs" });
    expect((await up(mount, undefined, { ...news, path: "fm5" })).error?.message).toMatch(/already enabled/);
  });
});

describe("AuthConfig create after unconfirmed writes", () => {
  it("every attempt was applied but answered 502: read back as written, or kept in state; the re-run converges", async () => {
    await env.client.mounts.enable("fc1", { type: methodType });
    const news = cfg("fc1");
    proxy.script({ kind: "error-after", status: 502, method: "POST", path: /^\/v1\/auth\/fc1\/config$/, times: 10 });
    const r = await up(config, undefined, news);
    if (r.error) expect(r.state?.id).toBe("auth/fc1/config");
    if (r.error) await converges(config, r.state, news);
    expect(await env.client.config.read("fc1")).toMatchObject({ tenantId: TENANT, clientId: CLIENT, maxRetries: 5 });
  });

  it("the write's outcome and the read-back both fail: an init error with the fixed ID; the re-run writes again", async () => {
    await env.client.mounts.enable("fc2", { type: methodType });
    const news = cfg("fc2");
    // The pre-read goes through; every write is answered 502 after it reached the service, and the reads back fail.
    proxy.script(
      { kind: "error-after", status: 502, method: "POST", path: /^\/v1\/auth\/fc2\/config$/, times: 10 },
      { kind: "status", status: 503, method: "GET", path: /^\/v1\/auth\/fc2\/config$/, skip: 1, times: 10 },
    );
    const r = await up(config, undefined, news);
    expect(r.error).toBeDefined();
    expect(r.state?.id).toBe("auth/fc2/config");
    expect(r.state?.outs.incomplete).toBe(true);
    expect(JSON.stringify(r.state?.outs)).not.toContain("s3cret-value");
    const s = await converges(config, r.state, news);
    expect(s.outs.clientSecretHash).toMatch(/^scrypt\$/);
    expect(await env.client.config.read("fc2")).toMatchObject({ tenantId: TENANT, maxRetries: 5 });
  });

  it("a config that holds exactly what this resource writes is written again; another one is refused", async () => {
    await env.client.mounts.enable("fc3", { type: methodType });
    await env.client.config.write("fc3", {
      tenant_id: TENANT,
      resource: "https://management.azure.com/",
      client_id: CLIENT,
      client_secret: "s3cret-value",
      max_retries: 5,
    });
    const r = await up(config, undefined, cfg("fc3"));
    expect(r.error).toBeUndefined();
    await env.client.mounts.enable("fc4", { type: methodType });
    await env.client.config.write("fc4", { tenant_id: TENANT, resource: "https://other.example/" });
    expect((await up(config, undefined, cfg("fc4"))).error?.message).toMatch(/already configured/);
  });
});

describe("AuthRole writes whose outcome is unknown", () => {
  it("applied but answered 502 on every attempt: read back as written; the re-run has nothing to do", async () => {
    await env.client.mounts.enable("fr1", { type: methodType });
    const news = roleOf("fr1", "web");
    proxy.script({ kind: "error-after", status: 502, method: "POST", path: /^\/v1\/auth\/fr1\/role\/web$/, times: 10 });
    const r = await up(role, undefined, news);
    if (r.error) expect(r.state?.id).toBe("auth/fr1/role/web");
    await converges(role, r.state, news);
    expect((await env.client.roles.read("fr1", "web"))?.bound_service_principal_ids).toEqual(["sp-1"]);
  });
});
