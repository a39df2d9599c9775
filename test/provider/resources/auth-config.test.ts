/** The AuthConfig provider's methods called directly against the devserver over real HTTP. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { authConfig } from "../../../provider/resources/auth-config";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { startSecretsEnv, type SecretsEnv } from "./auth-helpers";
import type { AuthConfigInputs, AuthConfigOutputs } from "../../helpers/resource-types";

let env: SecretsEnv;
const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "00000002-0000-0000-c000-000000000000";
const SECRET = "first-client-secret";
const base = { tenantId: TENANT, resource: "https://management.azure.com/", clientId: CLIENT, clientSecret: SECRET };

beforeAll(async () => {
  env = await startSecretsEnv();
  for (const m of ["c1", "c2", "c3", "c4", "c5", "c6", "c7", "c8", "c9"])
    await env.client.mounts.enable(m, { type: env.controls.methodType });
});
afterAll(async () => {
  await env.close();
});
beforeEach(() => {
  env.dev.resetLog();
});

async function checked(news: Record<string, unknown>): Promise<AuthConfigInputs> {
  const res = await authConfig.check({}, news);
  expect(res.failures ?? []).toEqual([]);
  return res.inputs as AuthConfigInputs;
}

async function created(news: Record<string, unknown>) {
  const inputs = await checked(news);
  const res = await authConfig.create(inputs);
  return { id: res.id, outs: res.outs as AuthConfigOutputs, inputs };
}

describe("AuthConfig", () => {
  it("creates the config; the state keeps a salted hash of the secret, never the secret", async () => {
    const { id, outs } = await created({ ...base, mount: "c1", maxRetries: 5 });
    expect(id).toBe("auth/c1/config");
    expect(outs).toMatchObject({
      mount: "c1",
      tenantId: TENANT,
      resource: base.resource,
      clientId: CLIENT,
      maxRetries: 5,
      schemaVersion: SCHEMA_VERSION,
    });
    expect(outs.clientSecretHash).toMatch(/^scrypt\$/);
    expect(JSON.stringify(outs)).not.toContain(SECRET);
    expect(await env.client.config.read("c1")).toMatchObject({
      tenantId: TENANT,
      maxRetries: 5,
      retryDelay: 4,
      maxRetryDelay: 60,
    });
  });

  it("has no diff after create → refresh → preview", async () => {
    const news = { ...base, mount: "c2", environment: "azurepubliccloud", retryDelay: "5s" };
    const { id, outs } = await created(news);
    const read = await authConfig.read(id, outs);
    expect(read.id).toBe(id);
    expect(read.props).toEqual(outs);
    expect(await authConfig.diff(id, read.props as AuthConfigOutputs, await checked(news))).toEqual({ changes: false });
  });

  it("updates in place; the state's hash changes only with the secret", async () => {
    const { id, outs } = await created({ ...base, mount: "c3", maxRetries: 7 });
    const news1 = await checked({ ...base, mount: "c3", maxRetries: 7, resource: "https://vault.example/" });
    expect(await authConfig.diff(id, outs, news1)).toEqual({ changes: true });
    const up1 = await authConfig.update(id, outs, news1);
    expect((up1.outs as AuthConfigOutputs).clientSecretHash).toBe(outs.clientSecretHash);
    expect(await env.client.config.read("c3")).toMatchObject({ resource: "https://vault.example/", maxRetries: 7 });

    const news2 = await checked({ ...news1, clientSecret: "second-client-secret" });
    expect(await authConfig.diff(id, up1.outs as AuthConfigOutputs, news2)).toEqual({ changes: true });
    const up2 = await authConfig.update(id, up1.outs as AuthConfigOutputs, news2);
    expect((up2.outs as AuthConfigOutputs).clientSecretHash).not.toBe(outs.clientSecretHash);
    expect(await authConfig.diff(id, up2.outs as AuthConfigOutputs, news2)).toEqual({ changes: false });
  });

  it("an omitted clientId is sent empty only to clear one the state had; one it never had is left as it is", async () => {
    await env.client.mounts.enable("c10", { type: env.controls.methodType });
    const plain = { tenantId: TENANT, resource: base.resource, mount: "c10" };
    const { id, outs } = await created(plain);
    // Set outside the program, with no refresh since: the next write leaves it, as the service keeps it.
    await env.client.config.write("c10", { tenant_id: TENANT, resource: base.resource, client_id: CLIENT });
    const up1 = await authConfig.update(id, outs, await checked({ ...plain, maxRetries: 5 }));
    expect(await env.client.config.read("c10")).toMatchObject({ clientId: CLIENT, maxRetries: 5 });
    // Set by the program, then removed from it: the write clears it.
    const withId = await checked({ ...plain, clientId: CLIENT });
    const up2 = await authConfig.update(id, up1.outs as AuthConfigOutputs, withId);
    await authConfig.update(id, up2.outs as AuthConfigOutputs, await checked(plain));
    expect(await env.client.config.read("c10")).toMatchObject({ clientId: "", maxRetries: 3 });
  });

  it("replaces on a new mount and deletes (again without error)", async () => {
    const { id, outs } = await created({ ...base, mount: "c4" });
    expect(await authConfig.diff(id, outs, await checked({ ...base, mount: "c5" }))).toEqual({
      changes: true,
      replaces: ["mount"],
    });
    await authConfig.delete(id, outs);
    expect(await env.client.config.read("c4")).toBeUndefined();
    await expect(authConfig.delete(id, outs)).resolves.toBeUndefined();
  });

  it("refuses to create over an existing config unless adopt is set, then overwrites it", async () => {
    await env.client.config.write("c5", { tenant_id: TENANT, resource: "https://theirs/", client_id: CLIENT });
    const inputs = await checked({ tenantId: TENANT, resource: "https://ours/", mount: "c5" });
    await expect(authConfig.create(inputs)).rejects.toThrow(/already configured.*adopt: true/);
    await expect(authConfig.create(inputs)).rejects.toMatchObject({ name: "ResourceError", code: "already_exists" });
    await authConfig.create({ ...inputs, adopt: true });
    // The adopted config's client_id is cleared, since this resource does not set one.
    expect(await env.client.config.read("c5")).toMatchObject({ resource: "https://ours/", clientId: "" });
  });

  it("refresh picks up an out-of-band change, and the next diff shows it", async () => {
    const news = { ...base, mount: "c6" };
    const { id, outs } = await created(news);
    await env.client.config.write("c6", { tenant_id: TENANT, resource: "https://other/", max_retries: 1 });
    const read = await authConfig.read(id, outs);
    expect(read.props).toMatchObject({
      resource: "https://other/",
      maxRetries: 1,
      clientSecretHash: outs.clientSecretHash,
    });
    expect(await authConfig.diff(id, read.props as AuthConfigOutputs, await checked(news))).toEqual({ changes: true });
  });

  // `pulumi refresh` as the engine runs it: Read(state), keep the old inputs unless Read returns new ones,
  // then report a change when Diff(olds = refreshed outputs, news = the old inputs) finds one.
  async function refresh(id: string, state: { outs: AuthConfigOutputs; inputs: AuthConfigInputs }) {
    const read = await authConfig.read(id, state.outs);
    const inputs = (read.inputs ?? state.inputs) as AuthConfigInputs;
    const changed = (await authConfig.diff(id, read.props as AuthConfigOutputs, state.inputs)).changes === true;
    return { changed, state: { outs: read.props as AuthConfigOutputs, inputs } };
  }

  it("refresh is a fixed point and keeps the declared client secret in the inputs", async () => {
    const c = await created({ ...base, mount: "c8" });
    let state = { outs: c.outs, inputs: c.inputs };
    for (let i = 1; i <= 3; i++) {
      const r = await refresh(c.id, state);
      expect(r.changed, `refresh ${i}`).toBe(false);
      expect(r.state.inputs.clientSecret, `refresh ${i}`).toBe(SECRET);
      state = r.state;
    }
    // The program's next preview sees no change either.
    expect(await authConfig.diff(c.id, state.outs, await checked({ ...base, mount: "c8" }))).toEqual({
      changes: false,
    });
  });

  it("after drift the first refresh shows it, the next ones show nothing, and the program's diff still does", async () => {
    const c = await created({ ...base, mount: "c9" });
    await env.client.config.write("c9", { tenant_id: TENANT, resource: "https://drifted/", client_id: CLIENT });
    const first = await refresh(c.id, { outs: c.outs, inputs: c.inputs });
    expect(first.changed).toBe(true);
    const second = await refresh(c.id, first.state);
    expect(second.changed).toBe(false);
    expect((await refresh(c.id, second.state)).changed).toBe(false);
    // The secret never lands in outputs; the program still brings the resource back.
    expect(JSON.stringify(second.state.outs)).not.toContain(SECRET);
    expect(await authConfig.diff(c.id, second.state.outs, await checked({ ...base, mount: "c9" }))).toEqual({
      changes: true,
    });
    // The same secret with the drifted settings: no change (the stored hash still matches the secret).
    expect(
      await authConfig.diff(
        c.id,
        second.state.outs,
        await checked({ ...base, mount: "c9", resource: "https://drifted/" }),
      ),
    ).toEqual({ changes: false });
  });

  it("refresh after deletion reports the config as gone", async () => {
    const { id, outs } = await created({ ...base, mount: "c7" });
    await env.client.config.delete("c7");
    expect((await authConfig.read(id, outs)).id).toBeUndefined();
  });

  it("tells which mount is missing when the method is not enabled", async () => {
    const inputs = await checked({ ...base, mount: "nowhere" });
    await expect(authConfig.create(inputs)).rejects.toThrow(/no auth method is enabled at "nowhere\/"/);
  });
});
