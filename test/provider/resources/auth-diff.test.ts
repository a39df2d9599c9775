/**
 * `diff` of the three auth resources, as the engine calls it (the objects the provider entry loads by kind),
 * over inputs and state; a path change asks
 * a devserver (with or without sys/remount) whether the mount can move, and a role's write is read back from
 * one (the service merges role writes, so what it holds after a write shows every key the write sent).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import { authRole } from "../../../provider/resources/auth-role";
import type { AuthMountInputs, AuthMountOutputs } from "../../../provider/resources/auth-mount-wire";
import { UNKNOWN } from "../../helpers/unknown";
import type {
  AuthConfigInputs,
  AuthConfigOutputs,
  AuthRoleInputs,
  AuthRoleOutputs,
} from "../../helpers/resource-types";
import { startSecretsEnv, withSecretsEnv, type SecretsEnv } from "./auth-helpers";

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

/** The diff of an AuthMount at "cloud", as the engine asks it. */
const diffMount = (olds: AuthMountOutputs, news: Record<string, unknown>) =>
  authMount.diff("cloud", olds, news as AuthMountInputs);

describe("AuthMount diff on a server with sys/remount", () => {
  let env: SecretsEnv;
  beforeAll(async () => {
    env = await startSecretsEnv();
  });
  afterAll(async () => {
    await env.close();
  });

  it("finds no change for the same inputs, TTL spellings and list orders that mean the same", async () => {
    expect(await diffMount(mountState, mountInputs)).toEqual({ changes: false });
    expect(
      await diffMount(mountState, {
        ...mountInputs,
        tune: { defaultLeaseTtl: 3600, auditNonHmacRequestKeys: ["b", "a"] },
      }),
    ).toEqual({ changes: false });
  });

  it("compares only the tune fields the user set", async () => {
    expect(
      (await diffMount({ ...mountState, tune: { ...mountState.tune, maxLeaseTtl: 7200 } }, mountInputs)).changes,
    ).toBe(false);
    expect((await diffMount(mountState, { ...mountInputs, tune: { maxLeaseTtl: "2h" } })).changes).toBe(true);
  });

  it("updates description and tune in place", async () => {
    expect(await diffMount(mountState, { ...mountInputs, description: "" })).toEqual({ changes: true });
    expect(await diffMount(mountState, { ...mountInputs, tune: { defaultLeaseTtl: "2h" } })).toEqual({
      changes: true,
    });
    expect(await diffMount(mountState, { ...mountInputs, tune: UNKNOWN })).toEqual({ changes: true });
  });

  it("updates a plugin version the user set in place; an old state without one and no input is no change", async () => {
    expect(await diffMount(mountState, { ...mountInputs, pluginVersion: "v0.21.0" })).toEqual({ changes: true });
    expect(
      await diffMount({ ...mountState, pluginVersion: "v0.21.0" }, { ...mountInputs, pluginVersion: "v0.21.0" }),
    ).toEqual({ changes: false });
    expect(await diffMount({ ...mountState, pluginVersion: "v0.21.0" }, mountInputs)).toEqual({ changes: false });
    expect(await diffMount(mountState, { ...mountInputs, disableRemount: true })).toEqual({ changes: false });
  });

  // The first path change this server is asked about: the provider probes remount once per client, so the
  // probe the plain move sends shows that the type change did not ask.
  it("a path change with a type change is one replacement, with no remount question", async () => {
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    env.dev.resetLog();
    expect(await diffMount(mountState, { ...mountInputs, path: "cloud2", type: "other" })).toEqual({
      changes: true,
      replaces: ["path", "type"],
      deleteBeforeReplace: true,
    });
    expect(env.requests()).toEqual([]);
    await diffMount(mountState, { ...mountInputs, path: "cloud2" });
    expect(env.requests()).toEqual([expect.stringMatching(/^GET \/v1\/sys\/remount\/status\//)]);
  });

  it("moves a new path in place (remount), warning that tokens under the old path are revoked", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    expect(await diffMount(mountState, { ...mountInputs, path: "cloud2" })).toEqual({ changes: true });
    expect(spy).toHaveBeenCalledTimes(1);
    expect(String(spy.mock.calls[0]?.[0])).toMatch(
      /moves from "cloud\/" to "cloud2\/" \(sys\/remount\).*config and roles move with it.*token issued under "cloud\/" is revoked/,
    );
  });

  it("ignores adopt and treats an unset local as false", async () => {
    expect((await diffMount({ ...mountState, local: false }, { ...mountInputs, adopt: true })).changes).toBe(false);
  });
});

describe("AuthMount diff on a server without sys/remount (releases before 1.10)", () => {
  let env: SecretsEnv;
  beforeAll(async () => {
    env = await startSecretsEnv({ secretsService: { remount: false } });
  });
  afterAll(async () => {
    await env.close();
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
      const res = await diffMount(mountState, { ...mountInputs, ...news });
      expect(res).toEqual({ changes: true, replaces: [field], deleteBeforeReplace: true });
      expect(spy).toHaveBeenCalledTimes(1);
      expect(String(spy.mock.calls[0]?.[0])).toMatch(/config and roles are deleted/);
    },
  );

  it("says why a path change replaces: disableRemount, or a server without remount", async () => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await diffMount(mountState, { ...mountInputs, path: "cloud2", disableRemount: true });
    expect(res).toEqual({ changes: true, replaces: ["path"], deleteBeforeReplace: true });
    expect(String(spy.mock.calls[0]?.[0])).toMatch(/cannot move: disableRemount is set/);
    await diffMount(mountState, { ...mountInputs, path: "cloud2" });
    expect(String(spy.mock.calls[1]?.[0])).toMatch(/cannot move: the server has no sys\/remount/);
  });
});

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";

describe("AuthConfig diff", () => {
  withSecretsEnv("cloud");

  const ID = "auth/cloud/config";
  const diffConfig = (olds: AuthConfigOutputs, news: Record<string, unknown>) =>
    authConfig.diff(ID, olds, news as AuthConfigInputs);

  /** The hash of `secret` the state keeps after a create with it; the config is deleted again. */
  async function stateHash(secret: string): Promise<string> {
    const inputs: AuthConfigInputs = { mount: "cloud", tenantId: TENANT, resource: "https://r/", clientSecret: secret };
    const created = await authConfig.create(inputs);
    await authConfig.delete(created.id, created.outs as AuthConfigOutputs);
    const hash = (created.outs as AuthConfigOutputs).clientSecretHash;
    expect(hash).toBeDefined();
    return hash ?? "";
  }

  it("notices a changed secret through the salted hash only", async () => {
    const hash = await stateHash("first-secret");
    expect(hash).not.toContain("first-secret");
    const state: AuthConfigOutputs = {
      mount: "cloud",
      tenantId: TENANT,
      resource: "https://r/",
      clientSecretHash: hash,
      schemaVersion: 1,
    };
    const news = { mount: "cloud", tenantId: TENANT, resource: "https://r/" };
    expect(await diffConfig(state, { ...news, clientSecret: "first-secret" })).toEqual({ changes: false });
    expect(await diffConfig(state, { ...news, clientSecret: "second-secret" })).toEqual({ changes: true });
    expect(await diffConfig(state, news)).toEqual({ changes: true });
    expect(await diffConfig(state, { ...news, clientSecret: UNKNOWN })).toEqual({ changes: true });
  });

  it("salts every hash, and a hash of another mount does not match", async () => {
    const a = await stateHash("x1234");
    const b = await stateHash("x1234");
    expect(a).not.toBe(b);
    const config = { tenantId: TENANT, resource: "https://r/", schemaVersion: 1 };
    // The hash is of the state's mount and the secret: the same secret on another mount is a change.
    const onMount = (mount: string, clientSecretHash: string) =>
      diffConfig(
        { ...config, mount, clientSecretHash },
        { mount, tenantId: TENANT, resource: "https://r/", clientSecret: "x1234" },
      );
    expect(await onMount("cloud", a)).toEqual({ changes: false });
    expect(await onMount("cloud", b)).toEqual({ changes: false });
    expect(await onMount("other", a)).toEqual({ changes: true });
    expect(await onMount("cloud", "sha256:abc")).toEqual({ changes: true });
  });

  it("compares the resetting fields against their defaults and replaces on a new mount", async () => {
    const state: AuthConfigOutputs = { mount: "cloud", tenantId: TENANT, resource: "https://r/", schemaVersion: 1 };
    const news = { mount: "cloud", tenantId: TENANT, resource: "https://r/" };
    expect(
      await diffConfig(state, {
        ...news,
        maxRetries: 3,
        retryDelay: "4s",
        maxRetryDelay: 60,
        rootPasswordTtl: "4380h",
      }),
    ).toEqual({ changes: false });
    expect(await diffConfig(state, { ...news, retryDelay: 5 })).toEqual({ changes: true });
    expect(await diffConfig(state, { ...news, resource: "https://r" })).toEqual({ changes: true });
    expect(
      await diffConfig({ ...state, environment: "AzurePublicCloud" }, { ...news, environment: "azurepubliccloud" }),
    ).toEqual({ changes: false });
    expect(await diffConfig(state, { ...news, mount: "other" })).toEqual({ changes: true, replaces: ["mount"] });
    expect(await diffConfig(state, { ...news, mount: UNKNOWN })).toEqual({ changes: true, replaces: ["mount"] });
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
const diffRole = (olds: AuthRoleOutputs, news: Record<string, unknown>) =>
  authRole.diff("auth/cloud/role/web", olds, news as AuthRoleInputs);

describe("AuthRole diff", () => {
  it("finds no change for equal meaning (order, TTL spelling, bare IP vs /32, unset vs zero)", async () => {
    expect(await diffRole(roleState, roleInputs)).toEqual({ changes: false });
    expect(
      await diffRole(roleState, {
        ...roleInputs,
        boundServicePrincipalIds: ["sp-2", "sp-1"],
        tokenTtl: 3600,
        tokenBoundCidrs: ["10.0.0.1/32"],
        tokenNumUses: 0,
        boundGroupIds: [],
      }),
    ).toEqual({ changes: false });
  });

  it("updates when a list is removed (it must be cleared on the service)", async () => {
    expect(await diffRole(roleState, { ...roleInputs, tokenPolicies: undefined })).toEqual({ changes: true });
  });

  it("replaces when the mount is unknown (a replaced AuthMount takes its roles with it)", async () => {
    expect(await diffRole(roleState, { ...roleInputs, mount: UNKNOWN })).toEqual({
      changes: true,
      replaces: ["mount"],
    });
  });

  it("replaces on a new name or mount, but not on a name that only differs in case", async () => {
    expect(await diffRole(roleState, { ...roleInputs, name: "api" })).toEqual({ changes: true, replaces: ["name"] });
    expect(await diffRole(roleState, { ...roleInputs, mount: "other" })).toEqual({
      changes: true,
      replaces: ["mount"],
    });
    expect(await diffRole({ ...roleState, name: "Web" }, roleInputs)).toEqual({ changes: false });
  });
});

describe("AuthRole write", () => {
  let env: SecretsEnv;
  withSecretsEnv("cloud", (started) => (env = started));

  const LISTS = [
    "bound_service_principal_ids",
    "bound_locations",
    "bound_subscription_ids",
    "bound_resource_groups",
    "bound_scale_sets",
    "token_policies",
    "token_bound_cidrs",
  ];

  /** The role as the service reports it, in its wire names. */
  async function serverRole(): Promise<Record<string, unknown>> {
    const role = await env.client.roles.read("cloud", "web");
    expect(role).toBeDefined();
    return { ...role };
  }

  it("#884: a write sends every list and every token setting, empty ones included", async () => {
    // A role with every setting set: the service merges writes (an omitted key keeps its value), so after
    // the provider's write of a role with one list, each key holds what that write sent.
    await env.client.roles.write("cloud", "web", {
      bound_service_principal_ids: ["sp"],
      bound_group_ids: ["old"],
      bound_locations: ["westeurope"],
      bound_subscription_ids: ["sub"],
      bound_resource_groups: ["rg"],
      bound_scale_sets: ["ss"],
      token_policies: ["web"],
      token_bound_cidrs: ["10.0.0.1/32"],
      token_ttl: 60,
      token_max_ttl: 120,
      token_explicit_max_ttl: 120,
      token_period: 30,
      token_num_uses: 3,
      token_no_default_policy: true,
      token_type: "service",
    });
    const before = await serverRole();
    for (const k of LISTS) expect(before[k], k).not.toEqual([]);

    const checked = await authRole.check({}, { mount: "cloud", name: "web", boundGroupIds: ["g"], adopt: true });
    expect(checked.failures ?? []).toEqual([]);
    await authRole.create(checked.inputs as AuthRoleInputs);
    const body = await serverRole();
    for (const k of LISTS) expect(body[k], k).toEqual([]);
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
