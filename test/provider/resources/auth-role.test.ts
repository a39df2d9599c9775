/** The AuthRole provider's methods called directly against the devserver over real HTTP. */
import { beforeEach, describe, expect, it } from "vitest";
import { authRole } from "../../../provider/resources/auth-role";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { capturingStderr, withSecretsEnv, type SecretsEnv } from "./auth-helpers";
import type { AuthRoleInputs, AuthRoleOutputs } from "../../helpers/resource-types";

let env: SecretsEnv;
withSecretsEnv("cloud", (started) => (env = started));
beforeEach(() => {
  env.dev.resetLog();
});

async function checked(news: Record<string, unknown>): Promise<AuthRoleInputs> {
  const res = await authRole.check({}, news);
  expect(res.failures ?? []).toEqual([]);
  return res.inputs as AuthRoleInputs;
}

async function created(news: Record<string, unknown>) {
  const inputs = await checked(news);
  const res = await authRole.create(inputs);
  return { id: res.id, outs: res.outs as AuthRoleOutputs, inputs };
}

const full = {
  boundServicePrincipalIds: ["sp-1", "sp-2"],
  boundGroupIds: "g-1",
  boundSubscriptionIds: ["sub-1"],
  boundResourceGroups: ["rg-1"],
  boundLocations: ["westeurope"],
  boundScaleSets: ["ss-1"],
  tokenPolicies: ["web", "ops"],
  tokenTtl: "1h",
  tokenMaxTtl: 7200,
  tokenBoundCidrs: ["10.0.0.1", "10.1.0.0/16"],
  tokenNumUses: 5,
  tokenType: "service",
};

describe("AuthRole", () => {
  it("creates a role with every field; ID and outputs carry every input", async () => {
    const { id, outs } = await created({ name: "Web", ...full });
    expect(id).toBe("auth/cloud/role/web");
    expect(outs).toMatchObject({
      mount: "cloud",
      name: "web",
      boundGroupIds: ["g-1"],
      tokenTtl: "1h",
      schemaVersion: SCHEMA_VERSION,
    });
    expect(await env.client.roles.read("cloud", "web")).toMatchObject({
      bound_service_principal_ids: ["sp-1", "sp-2"],
      bound_scale_sets: ["ss-1"],
      token_policies: ["web", "ops"],
      token_ttl: 3600,
      token_max_ttl: 7200,
      token_num_uses: 5,
      token_type: "service",
    });
  });

  it("takes the spec's `policies` as the role's token policies, and refuses both names at once", async () => {
    const { outs } = await created({ name: "spec-policies", boundGroupIds: ["g-1"], policies: ["web", "ops"] });
    expect(outs).toMatchObject({ policies: ["web", "ops"], tokenPolicies: ["web", "ops"] });
    expect((await env.client.roles.read("cloud", "spec-policies"))?.token_policies).toEqual(["web", "ops"]);
    // A refresh keeps the key the user declared, so the next diff of the same program is empty.
    const read = await authRole.read(`auth/cloud/role/spec-policies`, outs);
    expect(read.inputs).toMatchObject({ policies: ["web", "ops"], tokenPolicies: ["web", "ops"] });
    expect(await checked({ name: "spec-policies", boundGroupIds: ["g-1"], policies: ["web", "ops"] })).toEqual(
      read.inputs,
    );
    const both = await authRole.check({}, { name: "x", boundGroupIds: ["g"], policies: ["a"], tokenPolicies: ["b"] });
    expect(both.failures).toEqual([{ property: "policies", reason: expect.stringContaining("not both") }]);
    // Checked inputs carry both names with one list, and check again cleanly.
    const { schemaVersion: _v, ...again } = outs;
    expect((await authRole.check({}, again as unknown as Record<string, unknown>)).failures ?? []).toEqual([]);
  });

  it("has no diff after create → refresh → preview", async () => {
    const news = { name: "noop", ...full };
    const { id, outs } = await created(news);
    const read = await authRole.read(id, outs);
    expect(read.id).toBe(id);
    expect(read.props).toEqual(outs);
    expect(await authRole.diff(id, read.props as AuthRoleOutputs, await checked(news))).toEqual({ changes: false });
  });

  it("#884: removing lists and settings in an update clears them on the service", async () => {
    const { id, outs } = await created({ name: "clear", ...full });
    const news = await checked({ name: "clear", boundServicePrincipalIds: ["sp-1"] });
    expect(await authRole.diff(id, outs, news)).toEqual({ changes: true });
    await authRole.update(id, outs, news);
    expect(await env.client.roles.read("cloud", "clear")).toMatchObject({
      bound_service_principal_ids: ["sp-1"],
      bound_group_ids: [],
      bound_subscription_ids: [],
      bound_resource_groups: [],
      bound_locations: [],
      bound_scale_sets: [],
      token_policies: [],
      token_bound_cidrs: [],
      token_ttl: 0,
      token_max_ttl: 0,
      token_num_uses: 0,
      token_type: "default",
    });
    const read = await authRole.read(id, { ...outs, ...news, schemaVersion: 1 });
    expect(await authRole.diff(id, read.props as AuthRoleOutputs, news)).toEqual({ changes: false });
  });

  it("replaces on a new name, deletes, and deleting again succeeds", async () => {
    const { id, outs } = await created({ name: "old", boundGroupIds: ["g"] });
    expect(await authRole.diff(id, outs, await checked({ name: "new", boundGroupIds: ["g"] }))).toEqual({
      changes: true,
      replaces: ["name"],
    });
    await authRole.delete(id, outs);
    expect(await env.client.roles.read("cloud", "old")).toBeUndefined();
    await expect(authRole.delete(id, outs)).resolves.toBeUndefined();
  });

  it("refuses to create over an existing role unless adopt is set, then overwrites it", async () => {
    await env.client.roles.write("cloud", "theirs", { bound_group_ids: ["g"], token_policies: ["admin"] });
    const inputs = await checked({ name: "Theirs", boundServicePrincipalIds: ["sp"] });
    await expect(authRole.create(inputs)).rejects.toThrow(/already exists.*adopt: true/);
    await expect(authRole.create(inputs)).rejects.toMatchObject({ name: "ResourceError", code: "already_exists" });
    await authRole.create({ ...inputs, adopt: true });
    expect(await env.client.roles.read("cloud", "theirs")).toMatchObject({
      bound_service_principal_ids: ["sp"],
      bound_group_ids: [],
      token_policies: [],
    });
  });

  it("refresh picks up an out-of-band change, and the next diff shows it", async () => {
    const news = { name: "drift", boundServicePrincipalIds: ["sp"], tokenPolicies: ["web"] };
    const { id, outs } = await created(news);
    await env.client.roles.write("cloud", "drift", {
      token_policies: ["web", "admin"],
      bound_group_ids: ["g"],
      token_ttl: 60,
    });
    const read = await authRole.read(id, outs);
    expect(read.props).toMatchObject({ tokenPolicies: ["web", "admin"], boundGroupIds: ["g"], tokenTtl: 60 });
    expect(read.inputs).toMatchObject({ tokenPolicies: ["web", "admin"] });
    expect(await authRole.diff(id, read.props as AuthRoleOutputs, await checked(news))).toEqual({ changes: true });
  });

  it("refresh after deletion (of the role, or of its mount) reports it as gone", async () => {
    const { id, outs } = await created({ name: "gone", boundGroupIds: ["g"] });
    await env.client.roles.delete("cloud", "gone");
    expect((await authRole.read(id, outs)).id).toBeUndefined();
    await env.client.mounts.enable("tmp", { type: env.controls.methodType });
    const other = await created({ mount: "tmp", name: "r", boundGroupIds: ["g"] });
    await env.client.mounts.disable("tmp");
    expect((await authRole.read(other.id, other.outs)).id).toBeUndefined();
  });

  it("reads by ID alone (no stored props)", async () => {
    await created({ name: "byid", boundGroupIds: ["g"] });
    const read = await authRole.read("auth/cloud/role/byid", {} as AuthRoleOutputs);
    expect(read.props).toMatchObject({ mount: "cloud", name: "byid", boundGroupIds: ["g"] });
  });

  it("shows the service's write warnings on stderr", async () => {
    const { lines } = await capturingStderr(() =>
      created({ name: "warned", boundGroupIds: ["g"], tokenMaxTtl: "87600h" }),
    );
    expect(lines.some((l) => l.startsWith("warning: AuthRole auth/cloud/role/warned:"))).toBe(true);
  });
});
