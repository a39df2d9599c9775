/** `diff` of the three auth resources, as pure functions over inputs and state. */
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  clientSecretMatches,
  diffAuthConfig,
  hashClientSecret,
  type AuthConfigOutputs,
} from "../../../provider/resources/auth-config";
import { diffAuthMount } from "../../../provider/resources/auth-mount";
import type { AuthMountOutputs } from "../../../provider/resources/auth-mount-wire";
import { diffAuthRole, roleBody, type AuthRoleOutputs } from "../../../provider/resources/auth-role";
import { UNKNOWN } from "../../helpers/unknown";

afterEach(() => {
  vi.restoreAllMocks();
});

const mountState: AuthMountOutputs = {
  path: "cloud",
  type: "cloud",
  description: "prod",
  tune: { defaultLeaseTtl: "1h", tokenType: "default-service", auditNonHmacRequestKeys: ["a", "b"] },
  accessor: "auth_cloud_1",
  schemaVersion: 1,
};
const { accessor: _a, schemaVersion: _s, ...mountInputs } = mountState;

const noRemount = async () => ({
  how: "replace" as const,
  why: "the server has no sys/remount (releases before 1.10)",
});
const withRemount = async () => ({ how: "remount" as const });

describe("diffAuthMount", () => {
  it("finds no change for the same inputs, TTL spellings and list orders that mean the same", async () => {
    expect(await diffAuthMount(mountState, mountInputs)).toEqual({ changes: false });
    expect(
      await diffAuthMount(mountState, {
        ...mountInputs,
        tune: { defaultLeaseTtl: 3600, auditNonHmacRequestKeys: ["b", "a"] },
      }),
    ).toEqual({ changes: false });
  });

  it("compares only the tune fields the user set", async () => {
    expect(
      (await diffAuthMount({ ...mountState, tune: { ...mountState.tune, maxLeaseTtl: 7200 } }, mountInputs)).changes,
    ).toBe(false);
    expect((await diffAuthMount(mountState, { ...mountInputs, tune: { maxLeaseTtl: "2h" } })).changes).toBe(true);
  });

  it("updates description and tune in place", async () => {
    expect(await diffAuthMount(mountState, { ...mountInputs, description: "" })).toEqual({ changes: true });
    expect(await diffAuthMount(mountState, { ...mountInputs, tune: { defaultLeaseTtl: "2h" } })).toEqual({
      changes: true,
    });
    expect(await diffAuthMount(mountState, { ...mountInputs, tune: UNKNOWN as never })).toEqual({ changes: true });
  });

  it("updates a plugin version the user set in place; an old state without one and no input is no change", async () => {
    expect(await diffAuthMount(mountState, { ...mountInputs, pluginVersion: "v0.21.0" })).toEqual({ changes: true });
    expect(
      await diffAuthMount({ ...mountState, pluginVersion: "v0.21.0" }, { ...mountInputs, pluginVersion: "v0.21.0" }),
    ).toEqual({ changes: false });
    expect(await diffAuthMount({ ...mountState, pluginVersion: "v0.21.0" }, mountInputs)).toEqual({ changes: false });
    expect(await diffAuthMount(mountState, { ...mountInputs, disableRemount: true })).toEqual({ changes: false });
  });

  it.each([
    { field: "type", news: { type: "other" } },
    { field: "local", news: { local: true } },
    { field: "sealWrap", news: { sealWrap: true } },
    { field: "path", news: { path: "cloud2" } },
    { field: "path", news: { path: UNKNOWN } },
  ])(
    "replaces on $field (delete first) when the path cannot move, and warns that config and roles go with it",
    async ({ field, news }) => {
      const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
      const res = await diffAuthMount(mountState, { ...mountInputs, ...news }, noRemount);
      expect(res).toEqual({ changes: true, replaces: [field], deleteBeforeReplace: true });
      expect(spy).toHaveBeenCalledTimes(1);
      expect(String(spy.mock.calls[0]?.[0])).toMatch(/config and roles are deleted/);
    },
  );

  it("moves a new path in place (remount), warning that tokens under the old path are revoked", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(await diffAuthMount(mountState, { ...mountInputs, path: "cloud2" }, withRemount)).toEqual({ changes: true });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(String(spy.mock.calls[0]?.[0])).toMatch(
      /moves from "cloud\/" to "cloud2\/" \(sys\/remount\).*config and roles move with it.*token issued under "cloud\/" is revoked/,
    );
  });

  it("says why a path change replaces: disableRemount, or a server without remount", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await diffAuthMount(mountState, { ...mountInputs, path: "cloud2", disableRemount: true });
    expect(res).toEqual({ changes: true, replaces: ["path"], deleteBeforeReplace: true });
    expect(String(spy.mock.calls[0]?.[0])).toMatch(/cannot move: disableRemount is set/);
    await diffAuthMount(mountState, { ...mountInputs, path: "cloud2" }, noRemount);
    expect(String(spy.mock.calls[1]?.[0])).toMatch(/cannot move: the server has no sys\/remount/);
  });

  it("a path change with a type change is one replacement, with no remount question", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const decide = vi.fn(withRemount);
    expect(await diffAuthMount(mountState, { ...mountInputs, path: "cloud2", type: "other" }, decide)).toEqual({
      changes: true,
      replaces: ["path", "type"],
      deleteBeforeReplace: true,
    });
    expect(decide).not.toHaveBeenCalled();
  });

  it("ignores adopt and treats an unset local as false", async () => {
    expect((await diffAuthMount({ ...mountState, local: false }, { ...mountInputs, adopt: true })).changes).toBe(false);
  });
});

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";

describe("diffAuthConfig", () => {
  it("notices a changed secret through the salted hash only", async () => {
    const hash = await hashClientSecret("cloud", "first-secret");
    expect(hash).not.toContain("first-secret");
    const state: AuthConfigOutputs = {
      mount: "cloud",
      tenantId: TENANT,
      resource: "https://r/",
      clientSecretHash: hash,
      schemaVersion: 1,
    };
    const news = { mount: "cloud", tenantId: TENANT, resource: "https://r/" };
    expect(await diffAuthConfig(state, { ...news, clientSecret: "first-secret" })).toEqual({ changes: false });
    expect(await diffAuthConfig(state, { ...news, clientSecret: "second-secret" })).toEqual({ changes: true });
    expect(await diffAuthConfig(state, news)).toEqual({ changes: true });
    expect(await diffAuthConfig(state, { ...news, clientSecret: UNKNOWN })).toEqual({ changes: true });
  });

  it("salts every hash, and a hash of another mount does not match", async () => {
    const a = await hashClientSecret("cloud", "x1234");
    const b = await hashClientSecret("cloud", "x1234");
    expect(a).not.toBe(b);
    expect(await clientSecretMatches("cloud", "x1234", a)).toBe(true);
    expect(await clientSecretMatches("other", "x1234", a)).toBe(false);
    expect(await clientSecretMatches("cloud", "x1234", "sha256:abc")).toBe(false);
  });

  it("compares the resetting fields against their defaults and replaces on a new mount", async () => {
    const state: AuthConfigOutputs = { mount: "cloud", tenantId: TENANT, resource: "https://r/", schemaVersion: 1 };
    const news = { mount: "cloud", tenantId: TENANT, resource: "https://r/" };
    expect(
      await diffAuthConfig(state, {
        ...news,
        maxRetries: 3,
        retryDelay: "4s",
        maxRetryDelay: 60,
        rootPasswordTtl: "4380h",
      }),
    ).toEqual({ changes: false });
    expect(await diffAuthConfig(state, { ...news, retryDelay: 5 })).toEqual({ changes: true });
    expect(await diffAuthConfig(state, { ...news, resource: "https://r" })).toEqual({ changes: true });
    expect(
      await diffAuthConfig({ ...state, environment: "AzurePublicCloud" }, { ...news, environment: "azurepubliccloud" }),
    ).toEqual({ changes: false });
    expect(await diffAuthConfig(state, { ...news, mount: "other" })).toEqual({ changes: true, replaces: ["mount"] });
    expect(await diffAuthConfig(state, { ...news, mount: UNKNOWN })).toEqual({ changes: true, replaces: ["mount"] });
  });
});

const roleState: AuthRoleOutputs = {
  mount: "cloud",
  name: "web",
  boundServicePrincipalIds: ["sp-1", "sp-2"],
  tokenPolicies: ["web"],
  tokenTtl: "1h",
  tokenBoundCidrs: ["10.0.0.1"],
  schemaVersion: 1,
};
const { schemaVersion: _r, ...roleInputs } = roleState;

describe("diffAuthRole", () => {
  it("finds no change for equal meaning (order, TTL spelling, bare IP vs /32, unset vs zero)", () => {
    expect(diffAuthRole(roleState, roleInputs)).toEqual({ changes: false });
    expect(
      diffAuthRole(roleState, {
        ...roleInputs,
        boundServicePrincipalIds: ["sp-2", "sp-1"],
        tokenTtl: 3600,
        tokenBoundCidrs: ["10.0.0.1/32"],
        tokenNumUses: 0,
        boundGroupIds: [],
      }),
    ).toEqual({ changes: false });
  });

  it("updates when a list is removed (it must be cleared on the service)", () => {
    expect(diffAuthRole(roleState, { ...roleInputs, tokenPolicies: undefined })).toEqual({ changes: true });
  });

  it("replaces when the mount is unknown (a replaced AuthMount takes its roles with it)", () => {
    expect(diffAuthRole(roleState, { ...roleInputs, mount: UNKNOWN })).toEqual({ changes: true, replaces: ["mount"] });
  });

  it("replaces on a new name or mount, but not on a name that only differs in case", () => {
    expect(diffAuthRole(roleState, { ...roleInputs, name: "api" })).toEqual({ changes: true, replaces: ["name"] });
    expect(diffAuthRole(roleState, { ...roleInputs, mount: "other" })).toEqual({ changes: true, replaces: ["mount"] });
    expect(diffAuthRole({ ...roleState, name: "Web" }, roleInputs)).toEqual({ changes: false });
  });

  it("#884: a write sends every list and every token setting, empty ones included", () => {
    const body = roleBody({ mount: "cloud", name: "web", boundGroupIds: ["g"] }) as Record<string, unknown>;
    for (const k of [
      "bound_service_principal_ids",
      "bound_locations",
      "bound_subscription_ids",
      "bound_resource_groups",
      "bound_scale_sets",
      "token_policies",
      "token_bound_cidrs",
    ]) {
      expect(body[k]).toEqual([]);
    }
    expect(body).toMatchObject({
      bound_group_ids: ["g"],
      token_ttl: 0,
      token_max_ttl: 0,
      token_explicit_max_ttl: 0,
      token_period: 0,
      token_num_uses: 0,
      token_no_default_policy: false,
      token_type: "default",
    });
  });
});
