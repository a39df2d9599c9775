/**
 * The secrets resources against the devserver as OpenBao 2.6.2 with the openbao-plugins azure plugin (the
 * release the transcripts under test/fixtures/recorded/openbao-2.6.2/ were recorded from), with the
 * provider's methods called as the engine does, over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import type { AuthMountInputs, AuthMountOutputs } from "../../../provider/resources/auth-mount-wire";
import { ResourceInitError } from "../../../provider/resources/common";
import { startSecretsEnv, type SecretsEnv } from "./auth-helpers";
import type { AuthConfigInputs, AuthConfigOutputs } from "../../helpers/resource-types";

let env: SecretsEnv;
beforeAll(async () => {
  env = await startSecretsEnv({ secretsService: { methodType: "azure", release: "openbao-2.6.2" } });
});
afterAll(async () => {
  await env.close();
});

async function mountInputs(news: Record<string, unknown>): Promise<AuthMountInputs> {
  const r = await authMount.check({}, { type: "azure", ...news });
  expect(r.failures ?? []).toEqual([]);
  return r.inputs as AuthMountInputs;
}

describe("AuthMount pluginVersion on OpenBao 2.6.2", () => {
  it("is sent where the server reads it (config), so a version its catalog lacks fails the create with the server's words", async () => {
    const inputs = await mountInputs({ path: "ob-pv", pluginVersion: "v9.9.9" });
    await expect(authMount.create(inputs)).rejects.toThrow(/plugin not found in the catalog: azure, version=v9\.9\.9/);
    expect(await env.client.mounts.find("ob-pv")).toBeUndefined();
  });

  it('a mount pinned to no version refreshes to pluginVersion "", so the program\'s version shows as a change', async () => {
    const inputs = await mountInputs({ path: "ob-read" });
    const created = (await authMount.create(inputs)).outs as AuthMountOutputs;
    // The state claims a version the server does not run (as an enable that sent it beside `type` left it).
    const claimed = { ...created, pluginVersion: "v0.21.0" };
    const read = await authMount.read("ob-read", claimed);
    expect(read.props).toMatchObject({ pluginVersion: "" });
    const news = await mountInputs({ path: "ob-read", pluginVersion: "v0.21.0" });
    expect(await authMount.diff("ob-read", read.props as AuthMountOutputs, news)).toEqual({ changes: true });
    // The update tunes to it, and the server's catalog refuses it: the user sees why.
    await expect(authMount.update("ob-read", read.props as AuthMountOutputs, news)).rejects.toThrow(
      /plugin not found in the catalog: azure, version=v0\.21\.0/,
    );
  });
});

describe("AuthConfig workload identity on OpenBao 2.6.2 (its azure plugin has none and drops it with 204)", () => {
  const TENANT = "00000000-0000-4000-8000-00000000bbbb";
  async function configInputs(mount: string, extra: Record<string, unknown>): Promise<AuthConfigInputs> {
    const r = await authConfig.check(
      {},
      { mount, tenantId: TENANT, resource: "https://management.example/", ...extra },
    );
    expect(r.failures ?? []).toEqual([]);
    return r.inputs as AuthConfigInputs;
  }

  it("a create with identityTokenAudience fails, saying the server does not keep it, and the state keeps it unfinished", async () => {
    await authMount.create(await mountInputs({ path: "ob-wif" }));
    const inputs = await configInputs("ob-wif", {
      identityTokenAudience: "api://AzureADTokenExchange",
      identityTokenTtl: "10m",
    });
    const err = await authConfig.create(inputs).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ResourceInitError);
    expect((err as Error).message).toMatch(
      /accepted identityTokenAudience and identityTokenTtl but does not keep them .*no workload identity/,
    );
    expect((err as ResourceInitError).properties).toMatchObject({ incomplete: true });
    // The next `up` updates the unfinished config: still refused while the program sets it, fine without.
    const unfinished = (err as ResourceInitError).properties as unknown as AuthConfigOutputs;
    expect(await authConfig.diff("auth/ob-wif/config", unfinished, inputs)).toMatchObject({ changes: true });
    await expect(authConfig.update("auth/ob-wif/config", unfinished, inputs)).rejects.toThrow(/does not keep them/);
    const plain = await configInputs("ob-wif", {});
    const done = await authConfig.update("auth/ob-wif/config", unfinished, plain);
    expect(done.outs).not.toHaveProperty("incomplete");
    expect(done.outs).not.toHaveProperty("identityTokenAudience");
  });

  it("an update adding identityTokenTtl alone fails the same way", async () => {
    await authMount.create(await mountInputs({ path: "ob-wif-ttl" }));
    const created = (await authConfig.create(await configInputs("ob-wif-ttl", {}))).outs as AuthConfigOutputs;
    await expect(
      authConfig.update("auth/ob-wif-ttl/config", created, await configInputs("ob-wif-ttl", { identityTokenTtl: 600 })),
    ).rejects.toThrow(/accepted identityTokenTtl but does not keep it \(its config read has no identity_token_ttl\)/);
  });
});
