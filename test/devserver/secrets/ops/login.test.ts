import { randomUUID } from "node:crypto";
import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import {
  secretsControls,
  type CloudControls,
  type FakeInstance,
  type SecretsControls,
} from "../../../../devserver/secrets";
import { call, data, DENIED, errors, type Reply } from "../http";

let server: DevServer;
let base: string;
let root: string;
let controls: SecretsControls;
let cloud: CloudControls;

const RESOURCE = "https://management.azure.com/";
const CLIENT_ID = "0f0f0f0f-1111-2222-3333-444444444444";

/** Gets a managed-identity token and the instance data from the fake metadata service, like a VM would. */
async function fromMetadata(resource = RESOURCE): Promise<{ jwt: string; compute: Record<string, string> }> {
  const headers = { Metadata: "true" };
  const tokenRes = await request(
    `${cloud.metadataUrl}/metadata/identity/oauth2/token?api-version=2018-02-01&resource=${encodeURIComponent(resource)}`,
    { headers },
  );
  const token = (await tokenRes.body.json()) as { access_token: string };
  const instRes = await request(`${cloud.metadataUrl}/metadata/instance?api-version=2021-02-01`, { headers });
  const inst = (await instRes.body.json()) as { compute: Record<string, string> };
  return { jwt: token.access_token, compute: inst.compute };
}

/** Builds the login body from metadata the way a client does (vmss_name for scale-set members). */
function loginBody(role: string, jwt: string, compute: Record<string, string>): Record<string, string> {
  const body: Record<string, string> = {
    role,
    jwt,
    subscription_id: compute.subscriptionId ?? "",
    resource_group_name: compute.resourceGroupName ?? "",
  };
  if (compute.vmScaleSetName !== undefined && compute.vmScaleSetName !== "") body.vmss_name = compute.vmScaleSetName;
  else body.vm_name = compute.name ?? "";
  return body;
}

async function loginAt(mount: string, body: Record<string, unknown>): Promise<Reply> {
  return call(base, "POST", `/v1/auth/${mount}/login`, { body });
}

async function writeRole(name: string, body: Record<string, unknown>, mount = "cloud"): Promise<void> {
  const r = await call(base, "POST", `/v1/auth/${mount}/role/${name}`, { token: root, body });
  expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
}

function principal(inst: FakeInstance): string {
  const id = inst.identities[0];
  if (id === undefined) throw new Error("instance has no identity");
  return id.principalId;
}

function expectRefusal(r: Reply, status: number, text: string | RegExp): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  const [message] = errors(r);
  if (typeof text === "string") expect(message).toBe(text);
  else expect(message).toMatch(text);
}

beforeAll(async () => {
  server = await startDevServer();
  base = server.urls.secrets;
  root = server.rootTokens.secrets;
  controls = await secretsControls(server);
  cloud = controls.cloud;
  const inst = cloud.instance();
  expect((await call(base, "POST", "/v1/sys/auth/cloud", { token: root, body: { type: "cloud" } })).status).toBe(204);
  const cfg = await call(base, "POST", "/v1/auth/cloud/config", {
    token: root,
    body: { tenant_id: inst.tenantId, resource: RESOURCE, client_id: CLIENT_ID, client_secret: "s3cret" },
  });
  expect(cfg.status).toBe(204);
});

afterAll(async () => {
  await server.close();
});

describe("login end to end through the fake metadata service", () => {
  beforeEach(() => {
    cloud.configureInstance({ scaleSet: null, vmName: "dev-vm", identity: "system" });
  });

  it("issues a token carrying the role's policies, lease and metadata, usable afterwards", async () => {
    const inst = cloud.instance();
    await writeRole("web", {
      bound_service_principal_ids: [principal(inst)],
      bound_subscription_ids: [inst.subscriptionId],
      bound_resource_groups: [inst.resourceGroupName],
      bound_locations: [inst.location],
      token_policies: ["role-reader"],
      token_ttl: "10m",
    });
    controls.putPolicy("role-reader", { "auth/cloud/role/*": ["read"] });
    const { jwt, compute } = await fromMetadata();
    const r = await loginAt("cloud", loginBody("web", jwt, compute));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const auth = (r.body as { auth: Record<string, unknown> }).auth;
    expect(auth).toMatchObject({
      policies: ["default", "role-reader"],
      token_policies: ["default", "role-reader"],
      lease_duration: 600,
      renewable: true,
      token_type: "service",
      metadata: {
        role: "web",
        subscription_id: inst.subscriptionId,
        resource_group_name: inst.resourceGroupName,
        vm_name: "dev-vm",
        app_id: inst.identities[0]?.clientId,
      },
    });
    expect(auth.client_token).toMatch(/^hvs\./);
    expect(typeof auth.accessor).toBe("string");
    expect(typeof auth.entity_id).toBe("string");
    const token = String(auth.client_token);

    const self = await call(base, "GET", "/v1/auth/token/lookup-self", { token });
    expect(self.status).toBe(200);
    expect(data(self)).toMatchObject({
      policies: ["default", "role-reader"],
      accessor: auth.accessor,
      path: "auth/cloud/login",
      renewable: true,
    });
    expect(Number(data(self).ttl)).toBeGreaterThan(590);
    expect((await call(base, "GET", "/v1/auth/cloud/role/web", { token })).status).toBe(200);
    const denied = await call(base, "DELETE", "/v1/auth/cloud/role/web", { token });
    expect(denied.status).toBe(403);
    expect(errors(denied)).toEqual([DENIED]);
  });

  it("gives the same entity to the same identity and the mount default lease when the role sets no TTL", async () => {
    await call(base, "POST", "/v1/sys/auth/cloud/tune", { token: root, body: { default_lease_ttl: "1h" } });
    await writeRole("sp-only", {
      bound_service_principal_ids: [principal(cloud.instance())],
      token_no_default_policy: true,
      token_policies: "x",
    });
    const { jwt } = await fromMetadata();
    const first = await loginAt("cloud", { role: "SP-ONLY", jwt });
    const second = await loginAt("cloud", { role: "sp-only", jwt });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const a1 = (first.body as { auth: Record<string, unknown> }).auth;
    const a2 = (second.body as { auth: Record<string, unknown> }).auth;
    expect(a1.lease_duration).toBe(3600);
    expect(a1.policies).toEqual(["x"]);
    expect(a1.metadata).toEqual({
      role: "SP-ONLY",
      subscription_id: "",
      resource_group_name: "",
      app_id: cloud.instance().identities[0]?.clientId,
    });
    expect(a1.entity_id).toBe(a2.entity_id);
    expect(a1.client_token).not.toBe(a2.client_token);
    await call(base, "POST", "/v1/sys/auth/cloud/tune", { token: root, body: { default_lease_ttl: "system" } });
  });

  it("logs in a flexible scale-set instance with vmss_name and checks bound_scale_sets", async () => {
    const inst = cloud.configureInstance({
      scaleSet: { name: "web", orchestration: "flexible", instance: "a1b2c3" },
      identity: "system",
    });
    expect(inst.name).toBe("web_a1b2c3");
    await writeRole("vmss", { bound_service_principal_ids: [principal(inst)], bound_scale_sets: ["web"] });
    const { jwt, compute } = await fromMetadata();
    expect(compute.vmScaleSetName).toBe("web");
    const ok = await loginAt("cloud", loginBody("vmss", jwt, compute));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect((ok.body as { auth: { metadata: Record<string, string> } }).auth.metadata.vmss_name).toBe("web");

    await writeRole("vmss-other", { bound_service_principal_ids: [principal(inst)], bound_scale_sets: ["api"] });
    expectRefusal(await loginAt("cloud", loginBody("vmss-other", jwt, compute)), 500, "scale set not authorized");
  });

  it("logs in a uniform scale-set instance whose token names the scale set", async () => {
    const inst = cloud.configureInstance({
      scaleSet: { name: "pool", orchestration: "uniform", instance: 4 },
      identity: "system",
    });
    await writeRole("uniform", {
      bound_service_principal_ids: [principal(inst)],
      bound_resource_groups: [inst.resourceGroupName],
    });
    const { jwt, compute } = await fromMetadata();
    expect(compute.resourceId).toMatch(/virtualMachineScaleSets\/pool\/virtualMachines\/4$/);
    expect((await loginAt("cloud", loginBody("uniform", jwt, compute))).status).toBe(200);
    // A uniform instance is not a standalone VM.
    const asVm = await loginAt("cloud", { ...loginBody("uniform", jwt, compute), vmss_name: "", vm_name: "pool_4" });
    expectRefusal(asVm, 500, 'xms_mirid token claim does not match vm_name "pool_4"');
  });

  it("logs in with a user-assigned identity (resource checked through xms_az_rid)", async () => {
    const inst = cloud.configureInstance({ identity: "user" });
    expect(inst.identities[0]?.kind).toBe("user");
    await writeRole("user-mi", {
      bound_service_principal_ids: [principal(inst)],
      bound_resource_groups: [inst.resourceGroupName],
    });
    const { jwt, compute } = await fromMetadata();
    const r = await loginAt("cloud", loginBody("user-mi", jwt, compute));
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  it("revokes issued tokens when the mount is disabled", async () => {
    await call(base, "POST", "/v1/sys/auth/short", { token: root, body: { type: "cloud" } });
    await call(base, "POST", "/v1/auth/short/config", {
      token: root,
      body: { tenant_id: cloud.instance().tenantId, resource: RESOURCE },
    });
    await writeRole("r", { bound_service_principal_ids: [principal(cloud.instance())] }, "short");
    const { jwt } = await fromMetadata();
    const r = await loginAt("short", { role: "r", jwt });
    const token = String((r.body as { auth: { client_token: string } }).auth.client_token);
    expect((await call(base, "GET", "/v1/auth/token/lookup-self", { token })).status).toBe(200);
    await call(base, "DELETE", "/v1/sys/auth/short", { token: root });
    expect((await call(base, "GET", "/v1/auth/token/lookup-self", { token })).status).toBe(403);
  });
});

describe("login refusals", () => {
  let inst: FakeInstance;
  let sp: string;

  beforeAll(async () => {
    inst = cloud.configureInstance({ scaleSet: null, vmName: "dev-vm", identity: "system" });
    sp = principal(inst);
    await writeRole("sp", { bound_service_principal_ids: [sp] });
    await writeRole("rg", { bound_service_principal_ids: [sp], bound_resource_groups: [inst.resourceGroupName] });
  });

  beforeEach(() => {
    inst = cloud.configureInstance({ scaleSet: null, vmName: "dev-vm", identities: inst.identities });
  });

  it("requires jwt, then role, then a known role (400)", async () => {
    expectRefusal(await loginAt("cloud", { role: "sp" }), 400, "jwt is required");
    expectRefusal(await loginAt("cloud", { jwt: "x" }), 400, "role is required");
    expectRefusal(await loginAt("cloud", { jwt: "x", role: "Nope" }), 400, 'invalid role name "Nope"');
  });

  it("checks token_bound_cidrs against the client address (403)", async () => {
    await writeRole("cidr", { bound_service_principal_ids: [sp], token_bound_cidrs: ["10.0.0.0/8"] });
    const { jwt } = await fromMetadata();
    expectRefusal(await loginAt("cloud", { role: "cidr", jwt }), 403, "permission denied");
    await writeRole("cidr", { token_bound_cidrs: ["127.0.0.0/8"] });
    expect((await loginAt("cloud", { role: "cidr", jwt })).status).toBe(200);
  });

  it.each([
    [{ subscription_id: "not-a-guid" }, 'invalid subscription id "not-a-guid"'],
    [{ resource_group_name: "bad/rg" }, 'invalid resource group name "bad/rg"'],
    [{ vmss_name: "-web" }, 'invalid vmss_name "-web"'],
    [{ vm_name: "1vm" }, 'invalid vm name "1vm"'],
  ])("checks input formats before the token (%j, 400)", async (extra, text) => {
    expectRefusal(await loginAt("cloud", { role: "sp", jwt: "not even a jwt", ...extra }), 400, text);
  });

  it("accepts scale-set instance names with the _N suffix", async () => {
    const { jwt } = await fromMetadata();
    const r = await loginAt("cloud", { role: "sp", jwt, vm_name: "web_12" });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
  });

  it("refuses a token whose audience differs from resource, trailing slash included (500)", async () => {
    const { jwt } = await fromMetadata("https://management.azure.com");
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt }),
      500,
      'oidc: expected audience "https://management.azure.com/" got ["https://management.azure.com"]',
    );
  });

  it("refuses an expired token (500)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const jwt = await cloud.mintToken({ iat: now - 7200, nbf: now - 7200, exp: now - 60 });
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt }),
      500,
      /^oidc: token is expired \(Token Expiry: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC\)$/,
    );
  });

  it("refuses a token that is not yet valid, without leeway (500)", async () => {
    const now = Math.floor(Date.now() / 1000);
    const soon = await cloud.mintToken({ nbf: now + 60 });
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt: soon }),
      500,
      /^token is not yet valid \(Token Not Before: .+ \+0000 UTC\)$/,
    );
    const later = await cloud.mintToken({ nbf: now + 3600 });
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt: later }),
      500,
      /^oidc: current time .+ before the nbf \(not before\) time: .+$/,
    );
  });

  it("refuses a token of another tenant (issuer mismatch, 500)", async () => {
    const other = randomUUID();
    const jwt = await cloud.mintToken({ iss: cloud.issuer(other), tid: other });
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt }),
      500,
      `oidc: id token issued by a different provider, expected "https://sts.windows.net/${inst.tenantId}/" got "https://sts.windows.net/${other}/"`,
    );
  });

  it("refuses a token with a bad signature or another algorithm (500)", async () => {
    const foreign = await cloud.mintToken({}, { foreignKey: true });
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt: foreign }),
      500,
      "failed to verify signature: failed to verify id token signature",
    );
    const tampered = (await cloud.mintToken()).replace(/\.[^.]+$/, ".AAAA");
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt: tampered }),
      500,
      "failed to verify signature: failed to verify id token signature",
    );
    const hs = await cloud.mintToken({}, { alg: "HS256" });
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt: hs }),
      500,
      'oidc: id token signed with unsupported algorithm, expected ["RS256"] got "HS256"',
    );
  });

  it("refuses a malformed token without echoing any part of it (500)", async () => {
    expectRefusal(
      await loginAt("cloud", { role: "sp", jwt: "abc" }),
      500,
      "oidc: malformed jwt: malformed jwt, expected 3 parts got 1",
    );
    const garbage = `eyJhbGciOiJSUzI1NiJ9.${Buffer.from("not-json-SECRETPART").toString("base64url")}.sig`;
    const r = await loginAt("cloud", { role: "sp", jwt: garbage });
    expectRefusal(r, 500, /^oidc: failed to unmarshal claims: /);
    expect(JSON.stringify(r.body)).not.toContain("SECRETPART");
  });

  it("refuses a service principal that is not bound (500)", async () => {
    const stranger = randomUUID();
    const jwt = await cloud.mintToken({ oid: stranger });
    expectRefusal(await loginAt("cloud", { role: "sp", jwt }), 500, `service principal not authorized: ${stranger}`);
  });

  it("checks groups from the token", async () => {
    await writeRole("groups", { bound_group_ids: ["g-allowed", "G-Two"] });
    const bad = await cloud.mintToken({ groups: ["g-other", "g-third"] });
    expectRefusal(
      await loginAt("cloud", { role: "groups", jwt: bad }),
      500,
      "groups not authorized: [g-other g-third]",
    );
    const good = await cloud.mintToken({ groups: ["g-two"] });
    expect((await loginAt("cloud", { role: "groups", jwt: good })).status).toBe(200);
  });

  it("refuses roles that can be saved but never log in", async () => {
    await writeRole("sub-only", { bound_subscription_ids: [inst.subscriptionId] });
    const jwt = await cloud.mintToken();
    expectRefusal(
      await loginAt("cloud", { role: "sub-only", jwt }),
      500,
      "expected specific bound_group_ids or bound_service_principal_ids; both cannot be empty",
    );
    await writeRole("stars", { bound_service_principal_ids: "*", bound_group_ids: "*" });
    expectRefusal(
      await loginAt("cloud", { role: "stars", jwt }),
      500,
      "expected specific bound_group_ids or bound_service_principal_ids; both cannot be '*'",
    );
  });

  it("requires subscription_id and resource_group_name only for resource-bound roles", async () => {
    const { jwt, compute } = await fromMetadata();
    expect((await loginAt("cloud", { role: "sp", jwt })).status).toBe(200);
    expectRefusal(
      await loginAt("cloud", { role: "rg", jwt }),
      500,
      "subscription_id and resource_group_name are required",
    );
    expectRefusal(
      await loginAt("cloud", { role: "rg", jwt, subscription_id: compute.subscriptionId }),
      500,
      "subscription_id and resource_group_name are required",
    );
  });

  it("refuses a subscription or resource group that is not bound", async () => {
    const { jwt, compute } = await fromMetadata();
    await writeRole("other-sub", { bound_service_principal_ids: [sp], bound_subscription_ids: [randomUUID()] });
    expectRefusal(await loginAt("cloud", loginBody("other-sub", jwt, compute)), 500, "subscription not authorized");
    await writeRole("other-rg", { bound_service_principal_ids: [sp], bound_resource_groups: ["other-rg"] });
    expectRefusal(await loginAt("cloud", loginBody("other-rg", jwt, compute)), 500, "resource group not authorized");
    await writeRole("other-loc", { bound_service_principal_ids: [sp], bound_locations: ["eastus"] });
    expectRefusal(await loginAt("cloud", loginBody("other-loc", jwt, compute)), 500, "location not authorized");
  });

  it("checks vm_name and vmss_name against the token's resource claims", async () => {
    const { jwt, compute } = await fromMetadata();
    expectRefusal(
      await loginAt("cloud", { ...loginBody("rg", jwt, compute), vm_name: "other-vm" }),
      500,
      'xms_mirid token claim does not match vm_name "other-vm"',
    );
    // "dev" is a prefix of "dev-vm" but not the VM's name.
    expectRefusal(
      await loginAt("cloud", { ...loginBody("rg", jwt, compute), vm_name: "dev" }),
      500,
      'xms_mirid token claim does not match vm_name "dev"',
    );
    expectRefusal(
      await loginAt("cloud", { ...loginBody("rg", jwt, compute), vmss_name: "web" }),
      500,
      'xms_mirid token claim does not match vmss_name "web"',
    );
    const elsewhere = await cloud.mintToken({
      xms_mirid: `/subscriptions/${inst.subscriptionId}/resourcegroups/elsewhere/providers/Microsoft.Compute/virtualMachines/dev-vm`,
    });
    expectRefusal(
      await loginAt("cloud", loginBody("rg", elsewhere, compute)),
      500,
      `resource group "${inst.resourceGroupName}" does not match the token claims`,
    );
    const noClaims = await cloud.mintToken({ xms_mirid: undefined });
    expectRefusal(
      await loginAt("cloud", loginBody("rg", noClaims, compute)),
      500,
      'xms_mirid token claim does not match vm_name "dev-vm"',
    );
  });

  it("refuses a VM the resource manager does not know and a principal that is not the VM's identity", async () => {
    const { compute } = await fromMetadata();
    const ghost = await cloud.mintToken({
      xms_mirid: `/subscriptions/${inst.subscriptionId}/resourcegroups/${inst.resourceGroupName}/providers/Microsoft.Compute/virtualMachines/ghost`,
    });
    expectRefusal(
      await loginAt("cloud", { ...loginBody("rg", ghost, compute), vm_name: "ghost" }),
      500,
      /^unable to retrieve virtual machine metadata: GET https:\/\/management\.azure\.com\/subscriptions\/.+\/virtualMachines\/ghost\n.*RESPONSE 404/s,
    );
    await writeRole("any-sp", { bound_group_ids: ["g"], bound_resource_groups: [inst.resourceGroupName] });
    const impostor = await cloud.mintToken({ oid: randomUUID(), appid: undefined, groups: ["g"] });
    expectRefusal(
      await loginAt("cloud", loginBody("any-sp", impostor, compute)),
      500,
      "token object id does not match expected identities, and no app id was found",
    );
  });

  it("refuses bound_scale_sets for a plain VM login", async () => {
    const { jwt, compute } = await fromMetadata();
    await writeRole("ss-vm", { bound_service_principal_ids: [sp], bound_scale_sets: ["web"] });
    expectRefusal(
      await loginAt("cloud", loginBody("ss-vm", jwt, compute)),
      500,
      "bound scale set defined but this vm isn't in a scale set",
    );
  });

  it("refuses a login before the method is configured", async () => {
    await call(base, "POST", "/v1/sys/auth/unconfigured", { token: root, body: { type: "cloud" } });
    await writeRole("r", { bound_service_principal_ids: [sp] }, "unconfigured");
    expectRefusal(
      await loginAt("unconfigured", { role: "r", jwt: await cloud.mintToken() }),
      500,
      "tenant_id is required",
    );
  });

  it("answers other methods on login as an unsupported operation", async () => {
    const r = await call(base, "GET", "/v1/auth/cloud/login", { token: root });
    expect(r.status).toBe(405);
  });
});
