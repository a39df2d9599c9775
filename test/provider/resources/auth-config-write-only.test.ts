/**
 * AuthConfig's write-only client secret (`clientSecretVersion` with the secret read at apply time), the
 * workload-identity settings, and what a refresh after drift stores as inputs. Over
 * real HTTP against a devserver whose persisted state shows which secret the service holds.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { secretsControls } from "../../../devserver/secrets";
import { SecretsClient } from "../../../provider/clients/secrets";
import { setStackConfig } from "../../helpers/stack-config";
import { authConfig } from "../../../provider/resources/auth-config";
import { migrating } from "../../../provider/resources/migrate";
import type { AuthConfigInputs, AuthConfigOutputs } from "../../helpers/resource-types";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "00000002-0000-0000-c000-000000000000";
const base = { tenantId: TENANT, resource: "https://management.azure.com/", clientId: CLIENT };
const ENV_VAR = "PSS_TEST_WO_CLIENT_SECRET";

let dir: string;
let dev: DevServer;
let client: SecretsClient;
let type: string;

beforeAll(async () => {
  // A private directory of this test (mkdtemp: mode 0700, a new name).
  dir = mkdtempSync(join(tmpdir(), "pss-wo-"));
  dev = await startDevServer({
    persistPath: join(dir, "state.json"),
    persistDelayMs: 1,
    secretsService: { workloadIdentity: true },
  });
  type = (await secretsControls(dev)).methodType;
  client = new SecretsClient({ address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {} });
  for (const m of ["wo1", "wo2", "wo3", "wo4", "wi1", "d1"]) await client.mounts.enable(m, { type });
});
afterAll(async () => {
  delete process.env[ENV_VAR];
  await dev.close();
  rmSync(dir, { recursive: true, force: true });
});

function useStackConfig(any: Record<string, string> = {}): void {
  setStackConfig({ secretsAddress: dev.urls.secrets, secretsToken: dev.rootTokens.secrets }, any);
}

/** The client secret the service holds for a mount, from the devserver's persisted state. */
async function heldSecret(mount: string): Promise<string | undefined> {
  await dev.flush();
  const accessor = (await client.mounts.find(mount))?.accessor;
  const state = JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as {
    services?: Record<string, unknown>;
  } & Record<string, unknown>;
  const text = JSON.stringify(state);
  const methods = findMethods(state);
  const m = methods.find((x) => x.accessor === accessor);
  if (m === undefined) throw new Error(`no stored method for ${mount} in ${text.length} bytes of state`);
  return m.config?.client_secret;
}

function findMethods(v: unknown): { accessor: string; config: { client_secret?: string } | null }[] {
  if (v === null || typeof v !== "object") return [];
  const o = v as Record<string, unknown>;
  if (Array.isArray(o.methods)) return o.methods as { accessor: string; config: { client_secret?: string } | null }[];
  for (const x of Object.values(o)) {
    const found = findMethods(x);
    if (found.length > 0) return found;
  }
  return [];
}

async function checked(news: Record<string, unknown>) {
  return authConfig.check({}, news);
}

async function ok(news: Record<string, unknown>): Promise<AuthConfigInputs> {
  const r = await checked(news);
  expect(r.failures ?? []).toEqual([]);
  return r.inputs as AuthConfigInputs;
}

describe("write-only client secret", () => {
  it("reads the secret from an environment variable at create, and only again when the version changes; no trace of it in state", async () => {
    useStackConfig();
    process.env[ENV_VAR] = "wo-secret-one";
    const inputs = await ok({ ...base, mount: "wo1", clientSecretVersion: 1, clientSecretEnv: ENV_VAR });
    const c = await authConfig.create(inputs);
    const outs = c.outs as AuthConfigOutputs;
    expect(await heldSecret("wo1")).toBe("wo-secret-one");
    expect(outs).toMatchObject({ clientSecretVersion: 1, clientSecretEnv: ENV_VAR });
    expect(outs.clientSecretHash).toBeUndefined();
    expect(JSON.stringify([inputs, outs])).not.toContain("wo-secret-one");

    // A new value under the same version is not sent, and the preview shows nothing (it never reads it).
    process.env[ENV_VAR] = "wo-secret-two";
    expect(await authConfig.diff(c.id, outs, inputs)).toEqual({ changes: false });
    const sameVersion = await authConfig.update(c.id, outs, { ...inputs, maxRetries: 5 });
    expect(await heldSecret("wo1")).toBe("wo-secret-one");
    // Bumping the version sends what the variable holds now.
    const bumped = await ok({ ...base, mount: "wo1", maxRetries: 5, clientSecretVersion: 2, clientSecretEnv: ENV_VAR });
    expect(await authConfig.diff(c.id, sameVersion.outs as AuthConfigOutputs, bumped)).toEqual({ changes: true });
    const up = await authConfig.update(c.id, sameVersion.outs as AuthConfigOutputs, bumped);
    expect(await heldSecret("wo1")).toBe("wo-secret-two");
    expect(JSON.stringify(up.outs)).not.toContain("wo-secret-two");
    // A refresh keeps the version, so the next preview is quiet.
    const read = await authConfig.read(c.id, up.outs as AuthConfigOutputs);
    expect(await authConfig.diff(c.id, read.props as AuthConfigOutputs, bumped)).toEqual({ changes: false });
  });

  it("a new place to read it from under the same version is an update that sends no secret", async () => {
    useStackConfig({ "myproj:other": "wo-from-other-key" });
    process.env[ENV_VAR] = "wo-secret-src";
    const inputs = await ok({ ...base, mount: "wo2", clientSecretVersion: 1, clientSecretEnv: ENV_VAR });
    const c = await authConfig.create(inputs);
    const moved = await ok({ ...base, mount: "wo2", clientSecretVersion: 1, clientSecretConfigKey: "myproj:other" });
    expect(await authConfig.diff(c.id, c.outs as AuthConfigOutputs, moved)).toEqual({ changes: true });
    const up = await authConfig.update(c.id, c.outs as AuthConfigOutputs, moved);
    expect(up.outs).toMatchObject({ clientSecretConfigKey: "myproj:other" });
    expect(up.outs).not.toHaveProperty("clientSecretEnv");
    expect(await heldSecret("wo2")).toBe("wo-secret-src");
  });

  it("reads it from a stack config key named by the user", async () => {
    useStackConfig({ "myproj:azureClientSecret": "wo-from-config" });
    const inputs = await ok({
      ...base,
      mount: "wo2",
      clientSecretVersion: 1,
      clientSecretConfigKey: "myproj:azureClientSecret",
    });
    await authConfig.create(inputs);
    expect(await heldSecret("wo2")).toBe("wo-from-config");
  });

  it("a missing secret at apply time fails naming the variable, and sends nothing", async () => {
    useStackConfig();
    delete process.env[ENV_VAR];
    const inputs = await ok({ ...base, mount: "wo3", clientSecretVersion: 1, clientSecretEnv: ENV_VAR });
    dev.resetLog();
    await expect(authConfig.create(inputs)).rejects.toThrow(new RegExp(`environment variable ${ENV_VAR} is not set`));
    expect(dev.requestLog.filter((e) => e.method === "POST")).toEqual([]);
  });

  it("switching from clientSecret to a write-only version sends the secret and drops the hash", async () => {
    useStackConfig();
    process.env[ENV_VAR] = "wo-secret-switch";
    const first = await ok({ ...base, mount: "wo4", clientSecret: "plain-secret" });
    const c = await authConfig.create(first);
    expect(await heldSecret("wo4")).toBe("plain-secret");
    const next = await ok({ ...base, mount: "wo4", clientSecretVersion: 1, clientSecretEnv: ENV_VAR });
    expect(await authConfig.diff(c.id, c.outs as AuthConfigOutputs, next)).toEqual({ changes: true });
    const up = await authConfig.update(c.id, c.outs as AuthConfigOutputs, next);
    expect(await heldSecret("wo4")).toBe("wo-secret-switch");
    expect((up.outs as AuthConfigOutputs).clientSecretHash).toBeUndefined();
  });

  it("check refuses mixing the two ways, a version without a source, and a source without a version", async () => {
    useStackConfig();
    const failure = async (news: Record<string, unknown>) =>
      ((await checked({ ...base, mount: "x", ...news })).failures ?? []).map((f) => f.property);
    expect(await failure({ clientSecret: "s", clientSecretVersion: 1, clientSecretEnv: ENV_VAR })).toEqual([
      "clientSecretVersion",
    ]);
    expect(await failure({ clientSecretVersion: 1 })).toEqual(["clientSecretVersion"]);
    expect(await failure({ clientSecretVersion: 1, clientSecretEnv: ENV_VAR, clientSecretConfigKey: "a:b" })).toEqual([
      "clientSecretVersion",
    ]);
    expect(await failure({ clientSecretEnv: ENV_VAR })).toEqual(["clientSecretEnv"]);
    expect(await failure({ clientSecretEnv: "not a name", clientSecretVersion: 1 })).toEqual(["clientSecretEnv"]);
    expect(await failure({ identityTokenAudience: "api://x", clientSecret: "s" })).toEqual(["identityTokenAudience"]);
  });
});

describe("workload identity settings", () => {
  it("writes identityTokenAudience and identityTokenTtl, reads them back, and an old state without them shows no change", async () => {
    useStackConfig();
    const inputs = await ok({
      ...base,
      mount: "wi1",
      identityTokenAudience: "api://vault-wif",
      identityTokenTtl: "30m",
    });
    const c = await authConfig.create(inputs);
    expect((await client.config.read("wi1"))?.raw).toMatchObject({
      identity_token_audience: "api://vault-wif",
      identity_token_ttl: 1800,
    });
    const read = await authConfig.read(c.id, c.outs as AuthConfigOutputs);
    expect(read.props).toMatchObject({ identityTokenAudience: "api://vault-wif", identityTokenTtl: "30m" });
    expect(await authConfig.diff(c.id, read.props as AuthConfigOutputs, inputs)).toEqual({ changes: false });
    expect(await authConfig.diff(c.id, c.outs as AuthConfigOutputs, { ...inputs, identityTokenTtl: 3600 })).toEqual({
      changes: true,
    });
    // Removing the audience clears it on the service.
    const none = await ok({ ...base, mount: "wi1" });
    await authConfig.update(c.id, c.outs as AuthConfigOutputs, none);
    expect((await client.config.read("wi1"))?.raw).toMatchObject({
      identity_token_audience: "",
      identity_token_ttl: 3600,
    });
  });

  it("a community-edition server refuses the audience with its own message", async () => {
    const community = await startDevServer();
    try {
      setStackConfig({ secretsAddress: community.urls.secrets, secretsToken: community.rootTokens.secrets });
      const c = new SecretsClient({ address: community.urls.secrets, token: community.rootTokens.secrets, env: {} });
      await c.mounts.enable("wi", { type });
      await expect(
        authConfig.create(await ok({ ...base, mount: "wi", identityTokenAudience: "api://x" })),
      ).rejects.toThrow(/community edition/);
    } finally {
      await community.close();
    }
  });
});

describe("refresh after drift", () => {
  it("stores no hash of the secret in the inputs, only a flag, and the next refreshes and previews stay quiet", async () => {
    useStackConfig();
    const inputs = await ok({ ...base, mount: "d1", clientSecret: "drift-secret" });
    const c = await authConfig.create(inputs);
    const outs = c.outs as AuthConfigOutputs;
    await client.config.write("d1", { tenant_id: TENANT, resource: "https://drifted/", client_id: CLIENT });
    const read = await authConfig.read(c.id, outs);
    expect(read.inputs).toBeDefined();
    // The engine keeps an input secret only under a key that held one: the hash must not be among them.
    expect(JSON.stringify(read.inputs)).not.toContain(outs.clientSecretHash ?? "no hash");
    expect(read.inputs).not.toHaveProperty("clientSecretHash");
    expect(read.inputs).toMatchObject({ clientSecretKept: true });
    const stored = read.inputs as unknown as AuthConfigInputs;
    // The engine's next refresh: Diff(refreshed outputs, stored inputs) shows nothing.
    const again = await authConfig.read(c.id, read.props as AuthConfigOutputs);
    expect(await authConfig.diff(c.id, again.props as AuthConfigOutputs, stored)).toEqual({ changes: false });
    // The program still brings the resource back.
    expect(await authConfig.diff(c.id, read.props as AuthConfigOutputs, inputs)).toEqual({ changes: true });
  });

  it("inputs 0.1.0 stored after drift (the hash itself) migrate to the flag: the refresh's diff stays quiet", async () => {
    useStackConfig();
    const outs: AuthConfigOutputs = {
      mount: "d1",
      ...base,
      clientSecretHash: "scrypt$16384$8$1$c2FsdA$aGFzaA",
      schemaVersion: 1,
    };
    const stored = { mount: "d1", ...base, clientSecretHash: outs.clientSecretHash } as unknown as AuthConfigInputs;
    // As the provider host loads it (provider/index.ts): stored state migrated before every method.
    const provider = migrating("authConfig", authConfig);
    expect((await provider.diff("auth/d1/config", outs, stored)).changes).toBe(false);
  });
});
