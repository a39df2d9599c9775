/**
 * A new AuthMount path moves the mount with sys/remount: the provider's methods called as the
 * engine does, against devservers with and without remount, over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { authConfig, type AuthConfigInputs, type AuthConfigOutputs } from "../../../provider/resources/auth-config";
import { authMount, type AuthMountInputs, type AuthMountOutputs } from "../../../provider/resources/auth-mount";
import { authRole, type AuthRoleInputs, type AuthRoleOutputs } from "../../../provider/resources/auth-role";
import { setStackConfig } from "../../../provider/config";
import { SecretsClient } from "../../../provider/clients/secrets";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";

let env: SecretsEnv;
beforeAll(async () => {
  env = await startSecretsEnv();
});
afterAll(async () => {
  await env.close();
});

const TENANT = "00000000-0000-4000-8000-00000000aaaa";

async function mountInputs(
  news: Record<string, unknown>,
  olds: Record<string, unknown> = {},
): Promise<AuthMountInputs> {
  const r = await authMount.check(olds, { type: env.controls.methodType, ...news });
  expect(r.failures ?? []).toEqual([]);
  return r.inputs as AuthMountInputs;
}

describe("AuthMount path change with sys/remount", () => {
  it("previews an update (one probe request), moves the mount with its accessor, config and roles, and the dependents follow", async () => {
    const m0 = await mountInputs({ path: "rm-a", description: "d" });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    const cIn = (
      await authConfig.check(
        {},
        { mount: "rm-a", tenantId: TENANT, resource: "https://management.example/", clientSecret: "rm-secret" },
      )
    ).inputs as AuthConfigInputs;
    const config = await authConfig.create(cIn);
    const rIn = (
      await authRole.check({}, { mount: "rm-a", name: "web", boundServicePrincipalIds: ["sp"], tokenPolicies: ["web"] })
    ).inputs as AuthRoleInputs;
    const role = await authRole.create(rIn);

    const m1 = await mountInputs({ path: "rm-b", description: "d" }, m0);
    env.dev.resetLog();
    const { value: diff, lines } = await capturingStderr(() => authMount.diff("rm-a", mount, m1));
    expect(diff).toEqual({ changes: true });
    expect(lines.join("\n")).toMatch(/moves from "rm-a\/" to "rm-b\/".*revoked/);
    expect(env.requests()).toHaveLength(1);
    expect(env.requests()[0]).toMatch(/^GET \/v1\/sys\/remount\/status\//);

    env.dev.resetLog();
    const up = (await authMount.update("rm-a", mount, m1)).outs as AuthMountOutputs;
    expect(up).toMatchObject({ path: "rm-b", accessor: mount.accessor });
    expect(env.requests().filter((r) => r.startsWith("POST /v1/sys/remount"))).toHaveLength(1);
    expect(await env.client.mounts.find("rm-a")).toBeUndefined();
    expect(await env.client.mounts.find("rm-b")).toMatchObject({ accessor: mount.accessor, description: "d" });
    expect(await env.client.config.read("rm-b")).toMatchObject({ tenantId: TENANT });
    expect(await env.client.roles.read("rm-b", "web")).toBeDefined();

    // The config and role follow the mount's new path: a replacement that finds what it writes already there
    // (the create goes first), and whose delete of the old one finds nothing.
    const cIn2 = (await authConfig.check(cIn, { ...cIn, mount: "rm-b", clientSecret: "rm-secret" }))
      .inputs as AuthConfigInputs;
    expect(await authConfig.diff(config.id, config.outs as AuthConfigOutputs, cIn2)).toMatchObject({
      replaces: ["mount"],
    });
    await authConfig.create(cIn2);
    await authConfig.delete(config.id, config.outs as AuthConfigOutputs);
    const rIn2 = (await authRole.check(rIn, { ...rIn, mount: "rm-b" })).inputs as AuthRoleInputs;
    await authRole.create(rIn2);
    await authRole.delete(role.id, role.outs as AuthRoleOutputs);
    expect(await env.client.config.read("rm-b")).toMatchObject({ tenantId: TENANT });
    expect(await env.client.roles.read("rm-b", "web")).toMatchObject({ token_policies: ["web"] });

    // Refresh reads the mount at its new path; the next preview shows nothing.
    const read = await authMount.read("rm-a", up);
    expect(read.props).toMatchObject({ path: "rm-b", accessor: mount.accessor });
    const again = await mountInputs({ path: "rm-b", description: "d" }, { ...read.inputs });
    expect(await authMount.diff("rm-a", read.props as AuthMountOutputs, again)).toEqual({ changes: false });
  });

  it("disableRemount makes a new path a replacement, without asking the server", async () => {
    const m0 = await mountInputs({ path: "rm-c" });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    env.dev.resetLog();
    const { value } = await capturingStderr(() =>
      authMount.diff("rm-c", mount, { ...m0, path: "rm-d", disableRemount: true }),
    );
    expect(value).toEqual({ changes: true, replaces: ["path"], deleteBeforeReplace: true });
    expect(env.requests()).toEqual([]);
  });
});

describe("AuthMount path change on a server without sys/remount", () => {
  let old: DevServer;
  beforeAll(async () => {
    old = await startDevServer({ secretsService: { remount: false } });
    setStackConfig({ secretsAddress: old.urls.secrets, secretsToken: old.rootTokens.secrets });
  });
  afterAll(async () => {
    setStackConfig({ secretsAddress: env.dev.urls.secrets, secretsToken: env.dev.rootTokens.secrets });
    await old.close();
  });

  it("the preview says replace and why; an update that comes anyway is refused and changes nothing", async () => {
    const m0 = await mountInputs({ path: "old-a" });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    const { value, lines } = await capturingStderr(() => authMount.diff("old-a", mount, { ...m0, path: "old-b" }));
    expect(value).toEqual({ changes: true, replaces: ["path"], deleteBeforeReplace: true });
    expect(lines.join("\n")).toMatch(/cannot move: the server has no sys\/remount/);

    await expect(authMount.update("old-a", mount, { ...m0, path: "old-b" })).rejects.toThrow(
      /no sys\/remount.*nothing was changed.*disableRemount: true/,
    );
    const client = new SecretsClient({ address: old.urls.secrets, token: old.rootTokens.secrets, env: {} });
    expect(await client.mounts.find("old-a")).toMatchObject({ accessor: mount.accessor });
    expect(await client.mounts.find("old-b")).toBeUndefined();
  });
});

describe("AuthMount pluginVersion", () => {
  it("is sent on enable, changed by tune, read back by refresh, and refused when it is not a version", async () => {
    const m0 = await mountInputs({ path: "pv", pluginVersion: "v0.20.1" });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    expect(await env.client.mounts.find("pv")).toMatchObject({ plugin_version: "v0.20.1" });
    const m1 = await mountInputs({ path: "pv", pluginVersion: "v0.21.0" }, m0);
    expect(await authMount.diff("pv", mount, m1)).toEqual({ changes: true });
    const { value: up, lines } = await capturingStderr(() => authMount.update("pv", mount, m1));
    expect(lines.join("\n")).toMatch(/runs it after the plugin is reloaded/);
    expect(await env.client.mounts.find("pv")).toMatchObject({ plugin_version: "v0.21.0" });
    await env.client.mounts.tune("pv", { plugin_version: "v0.22.0" });
    const read = await authMount.read("pv", up.outs as AuthMountOutputs);
    expect(read.props).toMatchObject({ pluginVersion: "v0.22.0" });
    const bad = await authMount.check({}, { path: "pv", pluginVersion: "latest" });
    expect(bad.failures?.[0]).toMatchObject({ property: "pluginVersion" });
  });

  it("the built-in plugin's own version (kept by the server as no pin) refreshes to the version the program set", async () => {
    const running = (await env.client.mounts.find("pv"))?.running_plugin_version ?? "";
    expect(running).not.toBe("");
    const m0 = await mountInputs({ path: "pv-builtin", pluginVersion: running.replace(/^v/, "") });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    expect(await env.client.mounts.find("pv-builtin")).toMatchObject({ plugin_version: "" });
    const read = await authMount.read("pv-builtin", mount);
    expect(read.props).toMatchObject({ pluginVersion: m0.pluginVersion });
    expect(await authMount.diff("pv-builtin", read.props as AuthMountOutputs, m0)).toEqual({ changes: false });
  });
});

describe("AuthMount remount that fails on the server", () => {
  let slow: DevServer;
  beforeAll(async () => {
    slow = await startDevServer({ secretsService: { remountDelayMs: 300 } });
    setStackConfig({ secretsAddress: slow.urls.secrets, secretsToken: slow.rootTokens.secrets });
  });
  afterAll(async () => {
    setStackConfig({ secretsAddress: env.dev.urls.secrets, secretsToken: env.dev.rootTokens.secrets });
    await slow.close();
  });

  it("waits while the move is in progress, and a move the server reports failed leaves the state as it was, saying so", async () => {
    const client = new SecretsClient({ address: slow.urls.secrets, token: slow.rootTokens.secrets, env: {} });
    const m0 = await mountInputs({ path: "slow-a" });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    // The destination is taken while the move waits: the server reports the migration failed.
    const update = authMount.update("slow-a", mount, { ...m0, path: "slow-b" });
    await new Promise((r) => setTimeout(r, 50));
    await client.mounts.enable("slow-b", { type: env.controls.methodType });
    await expect(update).rejects.toThrow(/reported "failure", and the mount is still at "slow-a\/"/);
    expect(await client.mounts.find("slow-a")).toMatchObject({ accessor: mount.accessor });
    const statuses = slow.requestLog.filter((e) => e.path.startsWith("/v1/sys/remount/status/")).length;
    expect(statuses).toBeGreaterThan(1);
  });
});
