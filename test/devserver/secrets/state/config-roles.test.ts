import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { secretsControls, type SecretsControls } from "../../../../devserver/secrets";
import { call, data, DENIED, errors } from "../http";

let server: DevServer;
let base: string;
let root: string;
let controls: SecretsControls;

const TENANT = "11111111-2222-3333-4444-555555555555";
const CLIENT = "66666666-7777-8888-9999-000000000000";
const SECRET = "very-secret-value";

beforeAll(async () => {
  server = await startDevServer();
  base = server.urls.secrets;
  root = server.rootTokens.secrets;
  controls = await secretsControls(server);
  expect((await call(base, "POST", "/v1/sys/auth/cloud", { token: root, body: { type: "cloud" } })).status).toBe(204);
});

afterAll(async () => {
  await server.close();
});

describe("auth/<mount>/config", () => {
  it("reads 404 with an empty error list before any write", async () => {
    const r = await call(base, "GET", "/v1/auth/cloud/config", { token: root });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
  });

  it("writes with 204 and reads back without client_secret, retry delays in nanoseconds", async () => {
    const w = await call(base, "POST", "/v1/auth/cloud/config", {
      token: root,
      body: {
        tenant_id: TENANT,
        resource: "https://management.azure.com/",
        client_id: CLIENT,
        client_secret: SECRET,
        max_retries: 5,
        retry_delay: "10s",
      },
    });
    expect(w.status).toBe(204);
    const r = await call(base, "GET", "/v1/auth/cloud/config", { token: root });
    expect(r.status).toBe(200);
    const d = data(r);
    expect(d).toMatchObject({
      tenant_id: TENANT,
      resource: "https://management.azure.com/",
      environment: "",
      client_id: CLIENT,
      root_password_ttl: 15768000,
      max_retries: 5,
      retry_delay: 10_000_000_000,
      max_retry_delay: 60_000_000_000,
    });
    expect(d).not.toHaveProperty("client_secret");
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
  });

  it("keeps identity fields when omitted but resets the retry settings to their defaults", async () => {
    expect(
      (await call(base, "PUT", "/v1/auth/cloud/config", { token: root, body: { environment: "azurepubliccloud" } }))
        .status,
    ).toBe(204);
    const d = data(await call(base, "GET", "/v1/auth/cloud/config", { token: root }));
    expect(d).toMatchObject({
      tenant_id: TENANT,
      client_id: CLIENT,
      environment: "azurepubliccloud",
      max_retries: 3,
      retry_delay: 4_000_000_000,
    });
  });

  it("refuses client_secret together with identity_token_audience (400)", async () => {
    const r = await call(base, "POST", "/v1/auth/cloud/config", {
      token: root,
      body: { identity_token_audience: "vault" },
    });
    expect(r.status).toBe(400);
    expect(errors(r)).toEqual(["only one of 'client_secret' or 'identity_token_audience' can be set"]);
  });

  it("refuses an unknown environment with the plain-error status of the real method", async () => {
    const r = await call(base, "POST", "/v1/auth/cloud/config", {
      token: root,
      body: { environment: "AzureGermanCloud" },
    });
    expect(r.status).toBe(500);
    expect(errors(r)).toEqual(['err: no cloud configuration matching the name "AZUREGERMANCLOUD"']);
    expect(data(await call(base, "GET", "/v1/auth/cloud/config", { token: root })).environment).toBe(
      "azurepubliccloud",
    );
  });

  it("refuses a first write without tenant_id or resource with 500", async () => {
    await call(base, "POST", "/v1/sys/auth/empty", { token: root, body: { type: "cloud" } });
    const noTenant = await call(base, "POST", "/v1/auth/empty/config", {
      token: root,
      body: { resource: "https://r/" },
    });
    expect(noTenant.status).toBe(500);
    expect(errors(noTenant)).toEqual(["tenant_id is required"]);
    const noResource = await call(base, "POST", "/v1/auth/empty/config", { token: root, body: { tenant_id: TENANT } });
    expect(errors(noResource)).toEqual(["resource is required"]);
    expect((await call(base, "GET", "/v1/auth/empty/config", { token: root })).status).toBe(404);
  });

  it("never echoes a client_secret in a conversion error", async () => {
    const r = await call(base, "POST", "/v1/auth/cloud/config", {
      token: root,
      body: { client_secret: { nested: SECRET } },
    });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.body)).not.toContain(SECRET);
  });

  it("warns about unknown parameters with 200", async () => {
    const r = await call(base, "POST", "/v1/auth/cloud/config", {
      token: root,
      body: { tenant_id: TENANT, colour: "blue" },
    });
    expect(r.status).toBe(200);
    expect((r.body as { warnings: string[] }).warnings).toEqual([
      "Endpoint ignored these unrecognized parameters: [colour]",
    ]);
  });

  it("deletes with 204 (also when nothing is stored)", async () => {
    await call(base, "POST", "/v1/sys/auth/del", { token: root, body: { type: "cloud" } });
    await call(base, "POST", "/v1/auth/del/config", { token: root, body: { tenant_id: TENANT, resource: "r" } });
    expect((await call(base, "DELETE", "/v1/auth/del/config", { token: root })).status).toBe(204);
    expect((await call(base, "GET", "/v1/auth/del/config", { token: root })).status).toBe(404);
    expect((await call(base, "DELETE", "/v1/auth/del/config", { token: root })).status).toBe(204);
  });

  it("answers 404 'no handler for route' for a path that is not mounted", async () => {
    const r = await call(base, "GET", "/v1/auth/unmounted/config", { token: root });
    expect(r.status).toBe(404);
    expect(errors(r)).toEqual(['no handler for route "auth/unmounted/config". route entry not found.']);
  });
});

describe("auth/<mount>/role", () => {
  it("lists 404 with an empty error list when there are no roles", async () => {
    const r = await call(base, "LIST", "/v1/auth/cloud/role", { token: root });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
  });

  it("stores names lowercased, reads them case-insensitively and lists them lowercase", async () => {
    expect(
      (
        await call(base, "POST", "/v1/auth/cloud/role/Web-App.1", {
          token: root,
          body: { bound_group_ids: ["g1"], token_policies: "dev,ops" },
        })
      ).status,
    ).toBe(204);
    const r = await call(base, "GET", "/v1/auth/cloud/role/WEB-APP.1", { token: root });
    expect(r.status).toBe(200);
    expect(data(r).token_policies).toEqual(["dev", "ops"]);
    const list = await call(base, "LIST", "/v1/auth/cloud/role", { token: root });
    expect(data(list).keys).toEqual(["web-app.1"]);
  });

  it("reads bound lists as null when never set and token lists as [] when empty", async () => {
    await call(base, "POST", "/v1/auth/cloud/role/shape", {
      token: root,
      body: { bound_service_principal_ids: "sp1, sp2" },
    });
    const d = data(await call(base, "GET", "/v1/auth/cloud/role/shape", { token: root }));
    expect(d).toEqual({
      bound_service_principal_ids: ["sp1", "sp2"],
      bound_group_ids: null,
      bound_locations: null,
      bound_subscription_ids: null,
      bound_resource_groups: null,
      bound_scale_sets: null,
      token_bound_cidrs: [],
      token_explicit_max_ttl: 0,
      token_max_ttl: 0,
      token_no_default_policy: false,
      token_period: 0,
      token_policies: [],
      token_type: "default",
      token_ttl: 0,
      token_num_uses: 0,
    });
  });

  it("merges writes: omitted keys keep their value, an explicit [] clears a list", async () => {
    await call(base, "POST", "/v1/auth/cloud/role/merge", {
      token: root,
      body: { bound_group_ids: ["g1"], bound_locations: ["westeurope"], token_ttl: "1h", token_policies: ["a"] },
    });
    await call(base, "POST", "/v1/auth/cloud/role/merge", {
      token: root,
      body: { token_max_ttl: 7200, bound_locations: [] },
    });
    const d = data(await call(base, "GET", "/v1/auth/cloud/role/merge", { token: root }));
    expect(d).toMatchObject({
      bound_group_ids: ["g1"],
      bound_locations: [],
      token_ttl: 3600,
      token_max_ttl: 7200,
      token_policies: ["a"],
    });
  });

  it("keeps CIDRs, showing host addresses bare", async () => {
    await call(base, "POST", "/v1/auth/cloud/role/cidr", {
      token: root,
      body: { bound_group_ids: "g", token_bound_cidrs: ["10.0.0.0/8", "127.0.0.1/32", "::1"] },
    });
    expect(data(await call(base, "GET", "/v1/auth/cloud/role/cidr", { token: root })).token_bound_cidrs).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
      "::1",
    ]);
  });

  it.each([
    [{}, "must have at least one bound constraint when creating/updating a role"],
    [{ bound_group_ids: [] }, "must have at least one bound constraint when creating/updating a role"],
    [
      { bound_group_ids: "g", token_ttl: 7200, token_max_ttl: 3600 },
      "'token_ttl' cannot be greater than 'token_max_ttl'",
    ],
    [{ bound_group_ids: "g", ttl: 7200, max_ttl: 3600 }, "ttl should not be greater than max_ttl"],
    [
      { bound_group_ids: "g", token_type: "batch", token_period: 60 },
      "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens",
    ],
    [
      { bound_group_ids: "g", token_type: "batch", token_num_uses: 2 },
      "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count",
    ],
    [{ bound_group_ids: "g", token_ttl: -5 }, "'token_ttl' cannot be negative"],
    [{ bound_group_ids: "g", token_type: "default-service" }, "invalid 'token_type' value \"default-service\""],
    [
      { bound_group_ids: "g", token_period: "800h" },
      'token period of "800h0m0s" is greater than the backend\'s maximum lease TTL of "768h0m0s"',
    ],
    [
      { bound_group_ids: "g", token_bound_cidrs: "10.0.0.0/99" },
      'error parsing address "10.0.0.0/99": Unable to convert "10.0.0.0/99" to an IPv4 or IPv6 address, or a UNIX Socket',
    ],
    [
      { bound_group_ids: "g", token_ttl: "soon" },
      'error converting input soon for field "token_ttl": time: invalid duration "soon"',
    ],
  ])("refuses %j with 400", async (body, text) => {
    const r = await call(base, "POST", "/v1/auth/cloud/role/refused", { token: root, body });
    expect(r.status).toBe(400);
    expect(errors(r)).toEqual([text]);
    expect((await call(base, "GET", "/v1/auth/cloud/role/refused", { token: root })).status).toBe(404);
  });

  it("accepts token_max_ttl above the mount max with 200 and a warning", async () => {
    const r = await call(base, "POST", "/v1/auth/cloud/role/long", {
      token: root,
      body: { bound_group_ids: "g", token_max_ttl: "1000h" },
    });
    expect(r.status).toBe(200);
    expect((r.body as { warnings: string[] }).warnings).toEqual([
      "max_ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated",
    ]);
    expect(data(await call(base, "GET", "/v1/auth/cloud/role/long", { token: root })).token_max_ttl).toBe(3_600_000);
  });

  it("answers an invalid role name as an unsupported path (404)", async () => {
    for (const name of ["-bad", "bad-", "a%20b"]) {
      const r = await call(base, "POST", `/v1/auth/cloud/role/${name}`, {
        token: root,
        body: { bound_group_ids: "g" },
      });
      expect(r.status, name).toBe(404);
      expect(errors(r)).toEqual(["1 error occurred:\n\t* unsupported path\n\n"]);
    }
  });

  it("applies the legacy alias rules", async () => {
    await call(base, "POST", "/v1/auth/cloud/role/legacy", {
      token: root,
      body: { bound_group_ids: "g", policies: "B,a", ttl: 60, max_ttl: "2m" },
    });
    let d = data(await call(base, "GET", "/v1/auth/cloud/role/legacy", { token: root }));
    expect(d).toMatchObject({
      policies: ["a", "b"],
      token_policies: ["a", "b"],
      ttl: 60,
      token_ttl: 60,
      max_ttl: 120,
      token_max_ttl: 120,
    });
    await call(base, "POST", "/v1/auth/cloud/role/legacy", {
      token: root,
      body: { token_ttl: 30, token_policies: ["c"] },
    });
    d = data(await call(base, "GET", "/v1/auth/cloud/role/legacy", { token: root }));
    expect(d.token_ttl).toBe(30);
    expect(d.token_policies).toEqual(["c"]);
    expect(d).not.toHaveProperty("ttl");
    expect(d).not.toHaveProperty("policies");
    expect(d.max_ttl).toBe(120);
  });

  it("deletes with 204 and reads 404 afterwards", async () => {
    await call(base, "POST", "/v1/auth/cloud/role/temp", { token: root, body: { bound_group_ids: "g" } });
    expect((await call(base, "DELETE", "/v1/auth/cloud/role/TEMP", { token: root })).status).toBe(204);
    const r = await call(base, "GET", "/v1/auth/cloud/role/temp", { token: root });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
    expect((await call(base, "DELETE", "/v1/auth/cloud/role/temp", { token: root })).status).toBe(204);
  });
});

describe("permissions on config and roles", () => {
  it("needs create for a new role, update for an existing one, read to read, list to list", async () => {
    controls.putPolicy("role-updater", { "auth/cloud/role/*": ["update", "read"] });
    const updater = server.createToken("secrets", { policies: ["role-updater"] });
    const create = await call(base, "POST", "/v1/auth/cloud/role/brand-new", {
      token: updater,
      body: { bound_group_ids: "g" },
    });
    expect(create.status).toBe(403);
    expect(errors(create)).toEqual([DENIED]);
    expect(
      (await call(base, "POST", "/v1/auth/cloud/role/shape", { token: updater, body: { bound_group_ids: "g" } }))
        .status,
    ).toBe(204);
    expect((await call(base, "GET", "/v1/auth/cloud/role/shape", { token: updater })).status).toBe(200);
    expect((await call(base, "LIST", "/v1/auth/cloud/role", { token: updater })).status).toBe(403);
    expect((await call(base, "DELETE", "/v1/auth/cloud/role/shape", { token: updater })).status).toBe(403);
    expect((await call(base, "GET", "/v1/auth/cloud/config", { token: updater })).status).toBe(403);
  });

  it("refuses config and role calls without a token", async () => {
    for (const path of ["/v1/auth/cloud/config", "/v1/auth/cloud/role/shape"]) {
      const r = await call(base, "GET", path);
      expect(r.status).toBe(403);
      expect(errors(r)).toEqual(["permission denied"]);
    }
  });
});
