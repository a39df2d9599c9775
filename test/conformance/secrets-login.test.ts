/**
 * Conformance of login end to end over real HTTP: metadata service → login → a token with the role's
 * policies, and each refusal, whether our client refuses before sending or the service refuses. Every test
 * needs the devserver's fake metadata service and token directory (and mints tokens and policies), so
 * against a real cluster (`npm run conformance`) each one skips and says so.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { secretsControls, type SecretsControls, type StartedDevServer } from "../../devserver";
import { SecretsClient, type SecretsClientOptions } from "../../provider/clients/secrets";
import { setStackConfig } from "../helpers/stack-config";
import { ApiError, UsageError, isApiError } from "../../provider/errors";
import { HttpCore } from "../../provider/http/core";
import { authConfig } from "../../provider/resources/auth-config";
import { authMount } from "../../provider/resources/auth-mount";
import type { AuthMountInputs } from "../../provider/resources/auth-mount-wire";
import { authRole } from "../../provider/resources/auth-role";
import { devserverOr, openTarget, type ConformanceTarget } from "./target";
import type { AuthConfigInputs, AuthRoleInputs } from "../helpers/resource-types";

const NEEDS = "needs the devserver's fake metadata service and token directory";
const RESOURCE = "https://management.azure.com/";
const CLIENT_ID = "00000002-0000-0000-c000-000000000000";
const CLIENT_SECRET = "login-test-client-secret";
let target: ConformanceTarget;
let dev: StartedDevServer;
let controls: SecretsControls;
let client: SecretsClient;
let principal: string;
// The method's default mount path: metadata logins below name no mount. The devserver is this file's own.
const CLOUD = "cloud";
let noslash: string;

/** Builds a client of the target's secrets service that reaches the fake metadata service. */
function newClient(extra: SecretsClientOptions = {}): SecretsClient {
  return new SecretsClient({
    ...target.secrets,
    metadataUrl: controls.cloud.metadataUrl,
    metadataRetry: { baseDelayMs: 1, maxDelayMs: 5, goneRetryMs: 50 },
    ...extra,
  });
}

async function provision<I>(
  p: {
    check(o: Record<string, unknown>, n: Record<string, unknown>): Promise<{ inputs?: I; failures?: unknown[] }>;
    create(i: I): Promise<unknown>;
  },
  news: Record<string, unknown>,
): Promise<void> {
  const res = await p.check({}, news);
  expect(res.failures ?? []).toEqual([]);
  await p.create(res.inputs as I);
}

async function role(name: string, fields: Record<string, unknown>, mount = CLOUD): Promise<void> {
  await provision<AuthRoleInputs>(authRole, { mount, name, tokenPolicies: ["web"], ...fields });
}

const logins = () => dev.requestLog.filter((e) => e.service === "secrets" && e.path.endsWith("/login"));

beforeAll(async () => {
  target = await openTarget();
  if (target.devserver === undefined) return; // every test skips itself, saying why
  dev = target.devserver;
  controls = await secretsControls(dev);
  client = newClient();
  setStackConfig(target.stackConfig());
  noslash = target.name("noslash");
  controls.cloud.configureInstance({ scaleSet: null, identity: "system", vmName: "vm-1" });
  const inst = controls.cloud.instance();
  principal = inst.identities[0]?.principalId ?? "";
  const type = controls.methodType;
  await provision<AuthMountInputs>(authMount, { path: CLOUD, type });
  await provision<AuthConfigInputs>(authConfig, {
    mount: CLOUD,
    tenantId: inst.tenantId,
    resource: RESOURCE,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
  });
  await provision<AuthMountInputs>(authMount, { path: noslash, type });
  await provision<AuthConfigInputs>(authConfig, {
    mount: noslash,
    tenantId: inst.tenantId,
    resource: RESOURCE.replace(/\/$/, ""),
  });
  await role("web", { boundServicePrincipalIds: [principal] });
  await role("web", { boundServicePrincipalIds: [principal] }, noslash);
  controls.putPolicy("web", { "sys/auth": ["read"] });
});
afterAll(() => target?.close());
beforeEach((t) => {
  devserverOr(t, target, NEEDS);
  dev.resetLog();
  controls.cloud.resetMetadataLog();
  controls.cloud.clearMetadataFaults();
});

describe("metadata login", () => {
  it("gets a token carrying the role's policies, usable with them", async () => {
    const auth = await client.metadata.login({ role: "web", resource: RESOURCE });
    expect(auth.policies).toContain("web");
    expect(auth.client_token).not.toBe("");
    expect(auth.accessor).not.toBe("");
    expect(auth.lease_duration).toBeGreaterThan(0);
    expect(auth.renewable).toBe(true);
    const log = controls.cloud.metadataLog();
    expect(log.map((e) => e.path).sort()).toEqual(["/metadata/identity/oauth2/token", "/metadata/instance"]);
    expect(log.every((e) => e.metadataHeader === "true")).toBe(true);
    expect(log.find((e) => e.path.endsWith("/token"))?.query).toContain(`resource=${encodeURIComponent(RESOURCE)}`);
    // The "web" policy reads the mount list: the issued token can, a token without it cannot.
    const asWeb = newClient({ token: auth.client_token });
    expect(await asWeb.mounts.find(CLOUD)).toBeDefined();
    const none = newClient({ token: dev.createToken("secrets", { policies: [] }) });
    await expect(none.mounts.list()).rejects.toSatisfy((e: unknown) => isApiError(e, "permission_denied"));
  });

  it("sends vmss_name from a scale-set instance, and a scale-set-bound role accepts it", async () => {
    controls.cloud.configureInstance({ scaleSet: { name: "ss-1", orchestration: "uniform" } });
    try {
      const inst = controls.cloud.instance();
      await role("vmss", {
        boundServicePrincipalIds: [inst.identities[0]?.principalId ?? ""],
        boundScaleSets: ["ss-1"],
      });
      const auth = await client.metadata.login({ role: "vmss", resource: RESOURCE });
      expect(auth.policies).toContain("web");
      expect(auth.metadata).toMatchObject({ vmss_name: "ss-1" });
    } finally {
      controls.cloud.configureInstance({ scaleSet: null, identity: "system", vmName: "vm-1" });
      principal = controls.cloud.instance().identities[0]?.principalId ?? "";
      await role("web", { boundServicePrincipalIds: [principal], adopt: true });
      await role("web", { boundServicePrincipalIds: [principal], adopt: true }, noslash);
    }
  });

  it("retries the metadata service through 503s and stops at a 400", async () => {
    controls.cloud.failMetadata({ status: 503, times: 2, endpoint: "token" });
    await client.metadata.login({ role: "web", resource: RESOURCE });
    expect(
      controls.cloud
        .metadataLog()
        .filter((e) => e.path.endsWith("/token"))
        .map((e) => e.status),
    ).toEqual([503, 503, 200]);

    controls.cloud.resetMetadataLog();
    dev.resetLog();
    controls.cloud.failMetadata({
      status: 400,
      times: 5,
      endpoint: "instance",
      body: { error: "bad_request_102", error_description: "Required metadata header not specified" },
    });
    const err = await client.metadata.login({ role: "web", resource: RESOURCE }).catch((e: unknown) => e);
    expect(isApiError(err, "bad_request")).toBe(true);
    expect(controls.cloud.metadataLog()).toHaveLength(1);
    expect(logins()).toHaveLength(0);
  });

  it("keeps retrying a 410 past maxAttempts (the 70 s guidance), and gives up on a 503 at maxAttempts", async () => {
    const c = newClient({ metadataRetry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, goneRetryMs: 60_000 } });
    controls.cloud.failMetadata({ status: 410, times: 4, endpoint: "instance" });
    await c.metadata.login({ role: "web", resource: RESOURCE });
    expect(controls.cloud.metadataLog().filter((e) => e.path === "/metadata/instance")).toHaveLength(5);

    controls.cloud.resetMetadataLog();
    controls.cloud.failMetadata({ status: 503, times: 4, endpoint: "instance" });
    await expect(c.metadata.login({ role: "web", resource: RESOURCE })).rejects.toThrow(
      /returned 503.*after 2 attempts/,
    );
    expect(controls.cloud.metadataLog()).toHaveLength(2);
  });

  it("sends resource_id when asked", async () => {
    await role("byid", {
      boundServicePrincipalIds: [principal],
      boundResourceGroups: [controls.cloud.instance().resourceGroupName],
    });
    const auth = await client.metadata.login({ role: "byid", resource: RESOURCE, useResourceId: true });
    expect(auth.metadata).toMatchObject({ resource_id: expect.stringContaining("/virtualMachines/vm-1") });
  });
});

describe("login refusals", () => {
  async function refusal(fn: () => Promise<unknown>): Promise<Error> {
    const err = await fn().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    return err as Error;
  }

  it("wrong audience: the service refuses a token whose audience lacks the configured trailing slash", async () => {
    const err = await refusal(() => client.metadata.login({ mount: noslash, role: "web", resource: RESOURCE }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toMatch(/audience/);
    expect(err.message).toMatch(/trailing slash/);
  });

  it("wrong audience: our client refuses before sending when told the configured resource", async () => {
    const err = await refusal(() =>
      client.metadata.login({ mount: noslash, role: "web", resource: RESOURCE, audience: RESOURCE.replace(/\/$/, "") }),
    );
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toMatch(/must match exactly, trailing slash included/);
    expect(logins()).toHaveLength(0);
  });

  it("expired: our client refuses before sending; the service refuses too", async () => {
    const jwt = await controls.cloud.mintToken({
      exp: Math.floor(Date.now() / 1000) - 60,
      nbf: Math.floor(Date.now() / 1000) - 3600,
    });
    const req = { role: "web", jwt };
    const err = await refusal(() => client.auth.login(CLOUD, req));
    expect(err).toBeInstanceOf(UsageError);
    expect(err.message).toMatch(/expired/);
    expect(logins()).toHaveLength(0);
    const raw = await refusal(() => rawLogin(CLOUD, req));
    expect(raw.message).toMatch(/expired/i);
  });

  it.each([
    {
      name: "wrong tenant",
      claims: () => ({
        tid: "11111111-2222-3333-4444-555555555555",
        iss: controls.cloud.issuer("11111111-2222-3333-4444-555555555555"),
      }),
      options: {},
      message: /issued by a different provider.*tenant/i,
    },
    { name: "bad signature", claims: () => ({}), options: { foreignKey: true as const }, message: /signature|verif/i },
    {
      name: "unsigned token",
      claims: () => ({}),
      options: { alg: "none" as const },
      message: /signature|verif|algorithm|alg/i,
    },
  ])("$name: the service refuses", async ({ claims, options, message }) => {
    const jwt = await controls.cloud.mintToken(claims(), options);
    const err = await refusal(() => client.auth.login(CLOUD, { role: "web", jwt }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toMatch(message);
    expect(err.message).not.toContain(jwt);
    expect(logins()).toHaveLength(1);
  });

  it("service principal not bound", async () => {
    await role("other-sp", { boundServicePrincipalIds: ["00000000-0000-0000-0000-000000000001"] });
    const err = await refusal(() => client.metadata.login({ role: "other-sp", resource: RESOURCE }));
    expect(err.message).toMatch(/service principal not authorized/);
  });

  it("group not bound", async () => {
    await role("groups", { boundGroupIds: ["group-allowed"] });
    const jwt = await controls.cloud.mintToken({ groups: ["group-other"] });
    const err = await refusal(() => client.auth.login(CLOUD, { role: "groups", jwt }));
    expect(err.message).toMatch(/groups not authorized/);
    const ok = await client.auth.login(CLOUD, {
      role: "groups",
      jwt: await controls.cloud.mintToken({ groups: ["group-allowed"] }),
    });
    expect(ok.policies).toContain("web");
  });

  it.each([
    {
      name: "subscription mismatch",
      fields: { boundSubscriptionIds: ["00000000-0000-0000-0000-00000000abcd"] },
      message: /subscription not authorized/,
    },
    {
      name: "resource group mismatch",
      fields: { boundResourceGroups: ["other-rg"] },
      message: /resource group not authorized/,
    },
    { name: "location mismatch", fields: { boundLocations: ["antarctica"] }, message: /location not authorized/ },
  ])("$name", async ({ name, fields, message }) => {
    const roleName = name.replace(/ /g, "-");
    await role(roleName, { boundServicePrincipalIds: [principal], ...fields });
    const err = await refusal(() => client.metadata.login({ role: roleName, resource: RESOURCE }));
    expect(err.message).toMatch(message);
  });

  it("missing conditional fields: a role with resource constraints needs subscription, resource group and a name", async () => {
    const rg = controls.cloud.instance().resourceGroupName;
    await role("needs-fields", { boundServicePrincipalIds: [principal], boundResourceGroups: [rg] });
    const jwt = await controls.cloud.mintToken();
    const err = await refusal(() => client.auth.login(CLOUD, { role: "needs-fields", jwt }));
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toMatch(/subscription_id|resource_group_name/);
    expect(err.message).toMatch(/send subscription_id, resource_group_name and vm_name or vmss_name/);
    // The same role logs in through the metadata service, which fills them in.
    await expect(client.metadata.login({ role: "needs-fields", resource: RESOURCE })).resolves.toMatchObject({
      policies: expect.arrayContaining(["web"]),
    });
  });

  it("unknown role", async () => {
    const jwt = await controls.cloud.mintToken();
    const err = await refusal(() => client.auth.login(CLOUD, { role: "nope", jwt }));
    expect(isApiError(err, "bad_request")).toBe(true);
    expect(err.message).toMatch(/invalid role name "nope"/);
  });
});

/** Sends a login without our client's pre-checks, to see what the service itself says. */
async function rawLogin(mount: string, body: { role: string; jwt: string }): Promise<unknown> {
  const core = new HttpCore("secrets", target.secrets);
  return core.request({
    operation: "log in",
    method: "POST",
    path: `/v1/auth/${mount}/login`,
    body,
    auth: false,
    secrets: [body.jwt],
  });
}
