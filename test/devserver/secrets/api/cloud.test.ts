import { request } from "undici";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { createSecretsService, secretsControls, type CloudControls } from "../../../../devserver/secrets";

let server: DevServer;
let cloud: CloudControls;

/** Reads a JWT's claims without verifying it. */
function decodeJwt(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
}

async function get(
  path: string,
  headers: Record<string, string> = { Metadata: "true" },
): Promise<{ status: number; body: Record<string, unknown>; headers: Record<string, unknown> }> {
  const res = await request(`${cloud.url}${path}`, { headers });
  return { status: res.statusCode, body: (await res.body.json()) as Record<string, unknown>, headers: res.headers };
}

const TOKEN_PATH = "/metadata/identity/oauth2/token?api-version=2018-02-01&resource=";

beforeAll(async () => {
  server = await startDevServer({ secretsService: { instance: { location: "northeurope" } } });
  cloud = (await secretsControls(server)).cloud;
});

afterAll(async () => {
  await server.close();
});

beforeEach(() => {
  cloud.configureInstance({ scaleSet: null, vmName: "dev-vm", identity: "system" });
  cloud.clearMetadataFaults();
  cloud.resetMetadataLog();
});

describe("metadata service: token endpoint", () => {
  it("requires the Metadata: true header", async () => {
    const r = await get(`${TOKEN_PATH}${encodeURIComponent("https://management.azure.com/")}`, {});
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "bad_request_102", error_description: "Required metadata header not specified" });
  });

  it("requires api-version and lists the newest versions", async () => {
    const r = await get("/metadata/identity/oauth2/token?resource=x");
    expect(r.status).toBe(400);
    expect(r.body["newest-versions"]).toBeInstanceOf(Array);
    expect(String(r.body.error)).toMatch(/api-version/);
  });

  it("requires a resource", async () => {
    const r = await get("/metadata/identity/oauth2/token?api-version=2018-02-01");
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_request");
  });

  it("refuses requests that went through a proxy (X-Forwarded-For)", async () => {
    const r = await get(`${TOKEN_PATH}x`, { Metadata: "true", "X-Forwarded-For": "10.1.1.1" });
    expect(r.status).toBe(400);
  });

  it("returns a directory-signed token whose audience is the resource exactly as given", async () => {
    const inst = cloud.instance();
    for (const resource of ["https://management.azure.com/", "https://management.azure.com"]) {
      const r = await get(`${TOKEN_PATH}${encodeURIComponent(resource)}`);
      expect(r.status).toBe(200);
      expect(r.body).toMatchObject({ resource, token_type: "Bearer", client_id: inst.identities[0]?.clientId });
      for (const k of ["expires_in", "expires_on", "not_before"]) expect(typeof r.body[k]).toBe("string");
      expect(Number(r.body.expires_on) - Number(r.body.not_before)).toBe(86400);
      const claims = decodeJwt(String(r.body.access_token));
      expect(claims).toMatchObject({
        aud: resource,
        iss: `https://sts.windows.net/${inst.tenantId}/`,
        tid: inst.tenantId,
        oid: inst.identities[0]?.principalId,
        xms_mirid: `/subscriptions/${inst.subscriptionId}/resourcegroups/${inst.resourceGroupName}/providers/Microsoft.Compute/virtualMachines/dev-vm`,
      });
      expect(claims.xms_az_rid).toBeUndefined();
    }
  });

  it("describes a user-assigned identity with xms_mirid = identity and xms_az_rid = VM, and selects identities", async () => {
    const inst = cloud.configureInstance({ identity: "both" });
    const user = inst.identities.find((i) => i.kind === "user");
    const system = inst.identities.find((i) => i.kind === "system");
    const byDefault = decodeJwt(String((await get(`${TOKEN_PATH}r`)).body.access_token));
    expect(byDefault.oid).toBe(system?.principalId);
    const r = await get(`${TOKEN_PATH}r&client_id=${user?.clientId ?? ""}`);
    const claims = decodeJwt(String(r.body.access_token));
    expect(claims.oid).toBe(user?.principalId);
    expect(claims.xms_mirid).toMatch(/\/Microsoft\.ManagedIdentity\/userAssignedIdentities\/dev-vm-identity$/);
    expect(claims.xms_az_rid).toMatch(/\/virtualMachines\/dev-vm$/);
    const unknown = await get(`${TOKEN_PATH}r&client_id=00000000-0000-0000-0000-000000000000`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: "invalid_request", error_description: "Identity not found" });
  });

  it("asks for a selector when several user-assigned identities exist", async () => {
    cloud.configureInstance({
      identities: [
        { kind: "user", principalId: "p1", clientId: "c1", name: "one" },
        { kind: "user", principalId: "p2", clientId: "c2", name: "two" },
      ],
    });
    const r = await get(`${TOKEN_PATH}r`);
    expect(r.status).toBe(400);
    expect(String(r.body.error_description)).toMatch(/Multiple user assigned identities/);
    expect(decodeJwt(String((await get(`${TOKEN_PATH}r&object_id=p2`)).body.access_token)).oid).toBe("p2");
  });
});

describe("metadata service: instance endpoint", () => {
  it("describes a plain VM", async () => {
    const inst = cloud.instance();
    const r = await get("/metadata/instance?api-version=2021-02-01");
    expect(r.status).toBe(200);
    expect(r.body.compute).toMatchObject({
      subscriptionId: inst.subscriptionId,
      resourceGroupName: inst.resourceGroupName,
      name: "dev-vm",
      vmScaleSetName: "",
      location: "northeurope",
      vmId: inst.vmId,
      resourceId: `/subscriptions/${inst.subscriptionId}/resourceGroups/${inst.resourceGroupName}/providers/Microsoft.Compute/virtualMachines/dev-vm`,
    });
  });

  it("describes a flexible scale-set instance and leaves out fields older api-versions lack", async () => {
    cloud.configureInstance({ scaleSet: { name: "web", orchestration: "flexible", instance: 7 } });
    const r = await get("/metadata/instance?api-version=2021-02-01");
    const compute = r.body.compute as Record<string, unknown>;
    expect(compute).toMatchObject({ name: "web_7", vmScaleSetName: "web" });
    expect(compute.virtualMachineScaleSet).toEqual({ id: expect.stringMatching(/virtualMachineScaleSets\/web$/) });
    const old = (await get("/metadata/instance?api-version=2017-08-01")).body.compute as Record<string, unknown>;
    expect(old).not.toHaveProperty("vmScaleSetName");
    expect(old).not.toHaveProperty("resourceId");
    expect((await get("/metadata/instance/compute?api-version=2021-02-01")).body.name).toBe("web_7");
  });

  it("requires the Metadata header here too", async () => {
    expect((await get("/metadata/instance?api-version=2021-02-01", {})).status).toBe(400);
  });
});

describe("metadata service: faults and log", () => {
  it("fails the next N requests with the given status, then answers normally", async () => {
    const handle = cloud.failMetadata({ status: 503, times: 2, endpoint: "token", retryAfter: 1 });
    const first = await get(`${TOKEN_PATH}r`);
    expect(first.status).toBe(503);
    expect(first.headers["retry-after"]).toBe("1");
    expect((await get("/metadata/instance?api-version=2021-02-01")).status).toBe(200);
    expect((await get(`${TOKEN_PATH}r`)).status).toBe(503);
    expect((await get(`${TOKEN_PATH}r`)).status).toBe(200);
    expect(handle.hits).toBe(2);
    expect(cloud.metadataLog().map((e) => [e.path, e.status, e.fault === true])).toEqual([
      ["/metadata/identity/oauth2/token", 503, true],
      ["/metadata/instance", 200, false],
      ["/metadata/identity/oauth2/token", 503, true],
      ["/metadata/identity/oauth2/token", 200, false],
    ]);
    expect(cloud.metadataLog()[0]?.metadataHeader).toBe("true");
  });
});

describe("directory", () => {
  it("publishes discovery and a key set that verify its tokens (issuer per tenant)", async () => {
    const inst = cloud.instance();
    const disc = await get(`/${inst.tenantId}/.well-known/openid-configuration`, {});
    expect(disc.status).toBe(200);
    expect(disc.body.issuer).toBe(`https://sts.windows.net/${inst.tenantId}/`);
    expect(disc.body.id_token_signing_alg_values_supported).toEqual(["RS256"]);
    const keys = await get(new URL(String(disc.body.jwks_uri)).pathname, {});
    expect((keys.body.keys as unknown[]).length).toBe(1);
    expect(keys.body).toEqual(cloud.jwks());

    // jose is ESM-only; the test file compiles as CommonJS.
    const { createRemoteJWKSet, jwtVerify } = await import("jose");
    const jwks = createRemoteJWKSet(new URL(String(disc.body.jwks_uri)));
    const token = await cloud.mintToken({ groups: ["g1"] }, { resource: "api://vault" });
    const { payload } = await jwtVerify(token, jwks, { issuer: String(disc.body.issuer), audience: "api://vault" });
    expect(payload.groups).toEqual(["g1"]);
    await expect(jwtVerify(await cloud.mintToken({}, { foreignKey: true }), jwks)).rejects.toThrow();
  });

  it("mints tokens with claims removed when set to undefined", async () => {
    const claims = decodeJwt(await cloud.mintToken({ nbf: undefined, oid: "x" }));
    expect(claims.nbf).toBeUndefined();
    expect(claims.oid).toBe("x");
  });
});

describe("HTTP control API", () => {
  it("needs the secrets root token", async () => {
    const r = await request(`${cloud.url}/_control/token`, { method: "POST", body: "{}" });
    expect(r.statusCode).toBe(403);
    await r.body.dump();
  });

  it("mints tokens and configures the instance", async () => {
    const headers = { "x-svc-token": server.rootTokens.secrets, "content-type": "application/json" };
    const minted = await request(`${cloud.url}/_control/token`, {
      method: "POST",
      headers,
      body: JSON.stringify({ claims: { aud: "a", oid: "o" } }),
    });
    const { token } = (await minted.body.json()) as { token: string };
    expect(decodeJwt(token)).toMatchObject({ aud: "a", oid: "o" });
    const put = await request(`${cloud.url}/_control/instance`, {
      method: "PUT",
      headers,
      body: JSON.stringify({ location: "eastus" }),
    });
    expect(((await put.body.json()) as { location: string }).location).toBe("eastus");
    expect(cloud.instance().location).toBe("eastus");
    const fault = await request(`${cloud.url}/_control/metadata-faults`, {
      method: "POST",
      headers,
      body: JSON.stringify({ status: 429, times: 1 }),
    });
    await fault.body.dump();
    expect((await get(`${TOKEN_PATH}r`)).status).toBe(429);
  });
});

describe("module lifecycle", () => {
  it("persists config, roles, policies, the instance and the directory key across a restart", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { join } = await import("node:path");
    const { tmpdir } = await import("node:os");
    const dir = mkdtempSync(join(tmpdir(), "secrets-persist-"));
    const file = join(dir, "state.json");
    try {
      const first = await startDevServer({ persistPath: file, persistDelayMs: 1 });
      const c1 = await secretsControls(first);
      const root = first.rootTokens.secrets;
      const post = async (path: string, body: unknown): Promise<number> => {
        const res = await request(`${first.urls.secrets}${path}`, {
          method: "POST",
          headers: { "x-svc-token": root },
          body: JSON.stringify(body),
        });
        await res.body.dump();
        return res.statusCode;
      };
      expect(await post("/v1/sys/auth/keep", { type: "cloud" })).toBe(204);
      expect(
        await post("/v1/auth/keep/config", {
          tenant_id: c1.cloud.instance().tenantId,
          resource: "r",
          client_secret: "s",
        }),
      ).toBe(204);
      expect(
        await post("/v1/auth/keep/role/r1", {
          bound_service_principal_ids: [c1.cloud.instance().identities[0]?.principalId],
        }),
      ).toBe(204);
      c1.putPolicy("kept", { "auth/keep/*": ["read"] });
      const token = await c1.cloud.mintToken({}, { resource: "r" });
      await first.close();

      const second = await startDevServer({ persistPath: file });
      try {
        const c2 = await secretsControls(second);
        expect(c2.cloud.instance().tenantId).toBe(c1.cloud.instance().tenantId);
        const res = await request(`${second.urls.secrets}/v1/auth/keep/login`, {
          method: "POST",
          body: JSON.stringify({ role: "r1", jwt: token }),
        });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
        const pol = await request(`${second.urls.secrets}/v1/sys/policies/acl/kept`, {
          headers: { "x-svc-token": root },
        });
        expect(pol.statusCode).toBe(200);
        await pol.body.dump();
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("closes its cloud listener with the devserver", async () => {
    const module = createSecretsService();
    const s = await startDevServer({ services: [module] });
    const url = (await module.controls()).cloud.url;
    await s.close();
    await expect(
      request(`${url}/metadata/instance?api-version=2021-02-01`, { headers: { Metadata: "true" } }),
    ).rejects.toThrow();
  });
});
