/**
 * A new AuthMount path moves the mount with sys/remount: the provider's methods called as the
 * engine does, against devservers with and without remount, over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import type { AuthMountInputs, AuthMountOutputs } from "../../../provider/resources/auth-mount-wire";
import { authRole } from "../../../provider/resources/auth-role";
import { setStackConfig } from "../../helpers/stack-config";
import { SecretsClient } from "../../../provider/clients/secrets";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";
import type {
  AuthConfigInputs,
  AuthConfigOutputs,
  AuthRoleInputs,
  AuthRoleOutputs,
} from "../../helpers/resource-types";

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

    env.dev.resetLog();
    const m1 = await mountInputs({ path: "rm-b", description: "d" }, m0);
    const { value: diff, lines } = await capturingStderr(() => authMount.diff("rm-a", mount, m1));
    expect(diff).toEqual({ changes: true });
    expect(lines.join("\n")).toMatch(/moves from "rm-a\/" to "rm-b\/".*revoked/);
    // One probe of remount (check and diff share it), and the accessor from the mount list: the inputs a
    // create stored lack it, and the preview shows it (a move keeps it).
    expect(env.requests()).toHaveLength(2);
    expect(env.requests()[0]).toMatch(/^GET \/v1\/sys\/remount\/status\//);
    expect(env.requests()[1]).toBe("GET /v1/sys/auth");
    expect((m1 as AuthMountInputs & { accessor?: string }).accessor).toBe(mount.accessor);

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

describe("AuthConfig and AuthRoles that pass the mount's accessor", () => {
  /** Creates a mount, a config and two roles at `path`, the dependents given `mountAccessor`. */
  async function stack(path: string) {
    const m0 = await mountInputs({ path, description: "d" });
    const mount = (await authMount.create(m0)).outs as AuthMountOutputs;
    const cArgs = {
      tenantId: TENANT,
      resource: "https://management.example/",
      clientSecret: "follow-secret",
    };
    const cIn = (await authConfig.check({}, { ...cArgs, mount: path, mountAccessor: mount.accessor }))
      .inputs as AuthConfigInputs;
    const config = await authConfig.create(cIn);
    const roles = [];
    for (const name of ["web", "api"]) {
      const rArgs = { name, boundServicePrincipalIds: ["sp"], tokenPolicies: [name] };
      const rIn = (await authRole.check({}, { ...rArgs, mount: path, mountAccessor: mount.accessor }))
        .inputs as AuthRoleInputs;
      roles.push({ args: rArgs, created: await authRole.create(rIn) });
    }
    return { m0, mount, cArgs, config, roles };
  }

  it("follow a remount as updates that write nothing, at preview and at up alike; a second diff finds nothing", async () => {
    const { m0, mount, cArgs, config, roles } = await stack("fw-a");
    const cOld = config.outs as AuthConfigOutputs;
    // Preview: the AuthMount's check knows its accessor (a move keeps it), so the dependents see it.
    const m1 = (await mountInputs({ path: "fw-b", description: "d" }, m0)) as AuthMountInputs & { accessor?: string };
    expect(m1.accessor).toBe(mount.accessor);
    const cNew = (await authConfig.check(cOld, { ...cArgs, mount: m1.path, mountAccessor: m1.accessor }))
      .inputs as AuthConfigInputs;
    const rNew: AuthRoleInputs[] = [];
    for (const r of roles)
      rNew.push(
        (
          await authRole.check(r.created.outs as AuthRoleOutputs, {
            ...r.args,
            mount: m1.path,
            mountAccessor: m1.accessor,
          })
        ).inputs as AuthRoleInputs,
      );
    const previewed = [
      await authConfig.diff(config.id, cOld, cNew),
      ...(await Promise.all(
        roles.map((r, i) => authRole.diff(r.created.id, r.created.outs as AuthRoleOutputs, rNew[i]!)),
      )),
    ];
    expect(previewed).toEqual([{ changes: true }, { changes: true }, { changes: true }]);

    // Up: the mount moves first; the dependents' diff says the same, and their updates only read.
    await capturingStderr(() => authMount.update("fw-a", mount, m1));
    const atUp = [
      await authConfig.diff(config.id, cOld, cNew),
      ...(await Promise.all(
        roles.map((r, i) => authRole.diff(r.created.id, r.created.outs as AuthRoleOutputs, rNew[i]!)),
      )),
    ];
    expect(atUp).toEqual(previewed);
    env.dev.resetLog();
    const cUp = (await authConfig.update(config.id, cOld, cNew)).outs as AuthConfigOutputs;
    const rUp = [];
    for (const [i, r] of roles.entries())
      rUp.push(
        (await authRole.update(r.created.id, r.created.outs as AuthRoleOutputs, rNew[i]!)).outs as AuthRoleOutputs,
      );
    expect(env.requests().filter((r) => !r.startsWith("GET "))).toEqual([]);
    expect(env.requests()).toEqual([
      "GET /v1/auth/fw-b/config",
      "GET /v1/auth/fw-b/role/web",
      "GET /v1/auth/fw-b/role/api",
    ]);
    expect(cUp).toMatchObject({ mount: "fw-b", mountAccessor: mount.accessor });
    expect(cUp.clientSecretHash).toMatch(/^scrypt\$/);
    expect(rUp.map((r) => r.mount)).toEqual(["fw-b", "fw-b"]);
    expect(await env.client.config.read("fw-b")).toMatchObject({ tenantId: TENANT });
    expect(await env.client.roles.read("fw-b", "api")).toMatchObject({ token_policies: ["api"] });

    // The next preview: nothing (the secret matches the hash made with the new path); a refresh reads the
    // objects at the new path, by the state's mount (the IDs keep the old path), and finds no drift.
    expect(await authConfig.diff(config.id, cUp, cNew)).toEqual({ changes: false });
    for (const [i, r] of rUp.entries())
      expect(await authRole.diff(roles[i]!.created.id, r, rNew[i]!)).toEqual({ changes: false });
    const cRead = await authConfig.read(config.id, cUp);
    expect(cRead.props).toMatchObject({ mount: "fw-b", mountAccessor: mount.accessor });
    expect(cRead.inputs).toBeUndefined();
    const rRead = await authRole.read(roles[0]!.created.id, rUp[0]!);
    expect(rRead.props).toMatchObject({ mount: "fw-b", mountAccessor: mount.accessor });
    expect(await authRole.diff(roles[0]!.created.id, rRead.props as AuthRoleOutputs, rNew[0]!)).toEqual({
      changes: false,
    });
  });

  it("a moved config or role that changed too, or is missing at the new path, is written", async () => {
    const { m0, mount, cArgs, config, roles } = await stack("fw-c");
    const m1 = await mountInputs({ path: "fw-d", description: "d" }, m0);
    await capturingStderr(() => authMount.update("fw-c", mount, m1));
    await env.client.roles.delete("fw-d", "api");
    env.dev.resetLog();
    const cNew = (
      await authConfig.check(config.outs as AuthConfigOutputs, {
        ...cArgs,
        resource: "https://other.example/",
        mount: "fw-d",
        mountAccessor: mount.accessor,
      })
    ).inputs as AuthConfigInputs;
    expect(await authConfig.diff(config.id, config.outs as AuthConfigOutputs, cNew)).toEqual({ changes: true });
    await authConfig.update(config.id, config.outs as AuthConfigOutputs, cNew);
    const api = roles[1]!;
    const rNew = (
      await authRole.check(api.created.outs as AuthRoleOutputs, {
        ...api.args,
        mount: "fw-d",
        mountAccessor: mount.accessor,
      })
    ).inputs as AuthRoleInputs;
    await authRole.update(api.created.id, api.created.outs as AuthRoleOutputs, rNew);
    expect(env.requests().filter((r) => r.startsWith("POST ") || r.startsWith("PUT "))).toEqual([
      "POST /v1/auth/fw-d/config",
      "POST /v1/auth/fw-d/role/api",
    ]);
    expect(await env.client.config.read("fw-d")).toMatchObject({ resource: "https://other.example/" });
    expect(await env.client.roles.read("fw-d", "api")).toBeDefined();
  });

  it("are replaced when the mount is: an accessor not known yet (a replacement's), another one, or none", async () => {
    const { config, roles, cArgs } = await stack("fw-e");
    const cOld = config.outs as AuthConfigOutputs;
    const role = roles[0]!;
    const rOld = role.created.outs as AuthRoleOutputs;
    const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";
    const cases: [Record<string, unknown>, string][] = [
      [{ mount: "fw-f", mountAccessor: UNKNOWN }, "mount"], // disableRemount, or a server without remount
      [{ mount: "fw-f", mountAccessor: "auth_cloud_other" }, "mount"],
      [{ mount: "fw-f" }, "mount"], // no accessor passed: nothing tells a move
      [{ mount: "fw-e", mountAccessor: UNKNOWN }, "mountAccessor"], // a type change at the same path
      [{ mount: "fw-e", mountAccessor: "auth_cloud_other" }, "mountAccessor"],
    ];
    for (const [change, key] of cases) {
      const cNew = { ...cArgs, ...change } as unknown as AuthConfigInputs;
      expect(await authConfig.diff(config.id, cOld, cNew), JSON.stringify(change)).toEqual({
        changes: true,
        replaces: [key],
      });
      const rNew = { ...rOld, ...change, mountAccessor: change.mountAccessor } as unknown as AuthRoleInputs;
      expect(await authRole.diff(role.created.id, rOld, rNew), JSON.stringify(change)).toEqual({
        changes: true,
        replaces: [key],
      });
    }
    // Adding or removing the accessor at the same path: an update of state only.
    const { mountAccessor: _a, ...plainRole } = rOld;
    expect(
      await authRole.diff(role.created.id, plainRole as AuthRoleOutputs, rOld as unknown as AuthRoleInputs),
    ).toEqual({
      changes: true,
    });
    env.dev.resetLog();
    await authRole.update(role.created.id, plainRole as AuthRoleOutputs, rOld as unknown as AuthRoleInputs);
    expect(env.requests()).toEqual(["GET /v1/auth/fw-e/role/web"]);
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
