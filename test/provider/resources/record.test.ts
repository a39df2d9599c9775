/**
 * The record driver (provider/resources/record.ts) through one record resource, AuthRole, over the devserver
 * with a fault proxy between: create reads a lost write back, refuses someone else's object unless `adopt`,
 * keeps a write whose outcome stays unknown as unfinished (the next `up` writes again), and a delete or a
 * refresh of a record that is gone succeeds.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { setConnectionOverrides } from "../../../provider/config";
import { setStackConfig } from "../../helpers/stack-config";
import { authRole } from "../../../provider/resources/auth-role";
import { ResourceInitError, type ProviderImpl } from "../../../provider/resources/common";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { upStep } from "../../helpers/engine-steps";
import { startFaultProxy, type FaultProxy } from "../../helpers/fault-proxy";
import { capturingStderr, startSecretsEnv, type SecretsEnv } from "./auth-helpers";

const role = authRole as unknown as ProviderImpl;

let env: SecretsEnv;
let proxy: FaultProxy;

beforeAll(async () => {
  env = await startSecretsEnv();
  await env.client.mounts.enable("rec", { type: env.controls.methodType });
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

const news = (name: string, extra: Record<string, unknown> = {}) => ({
  mount: "rec",
  name,
  boundServicePrincipalIds: ["sp-1"],
  tokenTtl: "1h",
  ...extra,
});

/** Checks and creates, with stderr captured (a lost write warns). */
async function create(inputs: Record<string, unknown>): Promise<{ id: string; outs: Record<string, unknown> }> {
  const checked = await role.check({}, inputs);
  expect(checked.failures ?? []).toEqual([]);
  const { id, outs } = (await capturingStderr(() => role.create(checked.inputs ?? {}))).value;
  return { id, outs: outs ?? {} };
}

describe("record driver (AuthRole)", () => {
  it("create: every write's answer lost after it was applied; the read-back finds it written and state keeps it", async () => {
    proxy.script({
      kind: "error-after",
      status: 502,
      method: "POST",
      path: /^\/v1\/auth\/rec\/role\/lost$/,
      times: 50,
    });
    const { id, outs } = await create(news("lost"));
    expect(id).toBe("auth/rec/role/lost");
    expect(outs).toMatchObject({ mount: "rec", name: "lost", tokenTtl: "1h", schemaVersion: SCHEMA_VERSION });
    expect(outs).not.toHaveProperty("incomplete");
    expect(await env.client.roles.read("rec", "lost")).toMatchObject({
      bound_service_principal_ids: ["sp-1"],
      token_ttl: 3600,
    });
  });

  it("create: someone else's record is refused unless adopt is set, then written over", async () => {
    await env.client.roles.write("rec", "theirs", { bound_group_ids: ["g"], token_policies: ["admin"] });
    await expect(create(news("theirs"))).rejects.toMatchObject({ name: "ResourceError", code: "already_exists" });
    expect((await env.client.roles.read("rec", "theirs"))?.token_policies).toEqual(["admin"]);
    const { outs } = await create(news("theirs", { adopt: true }));
    expect(outs).toMatchObject({ name: "theirs", adopt: true });
    expect(await env.client.roles.read("rec", "theirs")).toMatchObject({
      bound_service_principal_ids: ["sp-1"],
      bound_group_ids: [],
      token_policies: [],
    });
  });

  it("create: a write whose outcome stays unknown is kept in state as unfinished; the next up writes again", async () => {
    // The read before the write goes through; every write is answered 502 after it reached the service, and
    // every read back fails.
    proxy.script(
      { kind: "error-after", status: 502, method: "POST", path: /^\/v1\/auth\/rec\/role\/unknown$/, times: 50 },
      { kind: "status", status: 503, method: "GET", path: /^\/v1\/auth\/rec\/role\/unknown$/, skip: 1, times: 500 },
    );
    const err = await create(news("unknown")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResourceInitError);
    const init = err as ResourceInitError;
    expect(init.message).toMatch(/kept in the stack as unfinished; run `pulumi up` again to write it/);
    expect(init.id).toBe("auth/rec/role/unknown");
    expect(init.properties).toMatchObject({ name: "unknown", incomplete: true, schemaVersion: SCHEMA_VERSION });
    proxy.clear();
    const state = { id: init.id, outs: init.properties as Record<string, unknown>, initError: true };
    const again = (await capturingStderr(() => upStep(role, state, news("unknown")))).value;
    expect(again.error).toBeUndefined();
    expect(again.ran).toBe("update");
    expect(again.state?.outs).not.toHaveProperty("incomplete");
    const after = (await capturingStderr(() => upStep(role, again.state, news("unknown")))).value;
    expect(after.ran).toBe("same");
  });

  it("delete and refresh of a record that is gone succeed: nothing to remove, nothing read", async () => {
    const { id, outs } = await create(news("gone"));
    await env.client.roles.delete("rec", "gone");
    await expect(role.delete(id, outs)).resolves.toBeUndefined();
    expect(await role.read(id, outs)).toEqual({});
  });
});
