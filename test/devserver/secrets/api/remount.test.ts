/** `sys/remount` of the devserver's secrets service over real HTTP. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { secretsControls, type CloudControls } from "../../../../devserver/secrets";
import { call, data, errors, type Reply } from "../http";

let server: DevServer;
let base: string;
let root: string;
let cloud: CloudControls;

const RESOURCE = "https://management.azure.com/";

beforeAll(async () => {
  // Long enough that the status read right after the remount's answer sees "in-progress" on a loaded
  // machine too (30 ms was not: the read came after the move on a 2-core machine at load 24).
  server = await startDevServer({ secretsService: { remountDelayMs: 1000 } });
  base = server.urls.secrets;
  root = server.rootTokens.secrets;
  cloud = (await secretsControls(server)).cloud;
});

afterAll(async () => {
  await server.close();
});

async function ok(r: Promise<Reply>): Promise<Reply> {
  const reply = await r;
  expect(reply.status, JSON.stringify(reply.body)).toBeLessThan(300);
  return reply;
}

async function status(id: string): Promise<Reply> {
  return call(base, "GET", `/v1/sys/remount/status/${id}`, { token: root });
}

async function until(id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const info = data(await status(id)).migration_info as Record<string, unknown>;
    if (info.status !== "in-progress") return info;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("remount did not finish");
}

describe("sys/remount", () => {
  it("moves a mount with its accessor, config and roles, revokes its tokens, and reports in-progress then success", async () => {
    const inst = cloud.instance();
    await ok(call(base, "POST", "/v1/sys/auth/old", { token: root, body: { type: "cloud", description: "moving" } }));
    await ok(
      call(base, "POST", "/v1/auth/old/config", {
        token: root,
        body: { tenant_id: inst.tenantId, resource: RESOURCE },
      }),
    );
    const principal = inst.identities[0]?.principalId ?? "";
    await ok(
      call(base, "POST", "/v1/auth/old/role/web", {
        token: root,
        body: { bound_service_principal_ids: [principal], token_policies: ["web"] },
      }),
    );
    const jwt = await cloud.mintToken();
    const login = await ok(call(base, "POST", "/v1/auth/old/login", { body: { role: "web", jwt } }));
    const token = String((login.body as { auth: { client_token: string } }).auth.client_token);
    const accessor = (data(await call(base, "GET", "/v1/sys/auth", { token: root }))["old/"] as { accessor: string })
      .accessor;

    const r = await call(base, "POST", "/v1/sys/remount", { token: root, body: { from: "auth/old", to: "auth/new" } });
    expect(r.status).toBe(200);
    const id = String(data(r).migration_id);
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((r.body as { warnings: string[] }).warnings[0]).toMatch(/queued/);
    const first = data(await status(id));
    expect(first).toEqual({
      migration_id: id,
      migration_info: { source_mount: "auth/old/", target_mount: "auth/new/", status: "in-progress" },
    });
    expect(await until(id)).toMatchObject({ status: "success" });

    const list = data(await call(base, "GET", "/v1/sys/auth", { token: root }));
    expect(list["old/"]).toBeUndefined();
    expect(list["new/"]).toMatchObject({ accessor, description: "moving" });
    expect(data(await call(base, "GET", "/v1/auth/new/config", { token: root }))).toMatchObject({
      tenant_id: inst.tenantId,
    });
    expect(data(await call(base, "GET", "/v1/auth/new/role/web", { token: root }))).toMatchObject({
      token_policies: ["web"],
    });
    expect((await call(base, "GET", "/v1/auth/token/lookup-self", { token })).status).toBe(403);
  });

  it("refuses what the real service refuses, with its texts (400)", async () => {
    await ok(call(base, "POST", "/v1/sys/auth/taken", { token: root, body: { type: "cloud" } }));
    await ok(call(base, "POST", "/v1/sys/auth/src", { token: root, body: { type: "cloud" } }));
    const refuse = async (body: Record<string, unknown>, text: string) => {
      const r = await call(base, "POST", "/v1/sys/remount", { token: root, body });
      expect(r.status, JSON.stringify(r.body)).toBe(400);
      expect(errors(r)[0]).toBe(text);
    };
    await refuse({ from: "auth/src" }, "both 'from' and 'to' path must be specified as a string");
    await refuse({ from: "auth/nothing", to: "auth/x" }, 'no matching mount at "auth/nothing/"');
    await refuse({ from: "auth/src", to: "auth/taken" }, 'path already in use at "auth/taken/"');
    await refuse({ from: "auth/src", to: "secret" }, 'cannot remount auth mount to non-auth mount "secret/"');
    await refuse({ from: "auth/token", to: "auth/t2" }, 'cannot remount "auth/token/"');
    expect(
      (await call(base, "GET", "/v1/sys/remount/status/00000000-0000-0000-0000-000000000000", { token: root })).status,
    ).toBe(404);
  });

  it("needs sudo and update on sys/remount", async () => {
    const r = await call(base, "POST", "/v1/sys/remount", {
      token: "not-a-token",
      body: { from: "auth/src", to: "auth/src2" },
    });
    expect(r.status).toBe(403);
  });

  it("a server started with remount: false answers 404 unsupported path, as releases before 1.10 do", async () => {
    const old = await startDevServer({ secretsService: { remount: false } });
    try {
      const r = await call(old.urls.secrets, "POST", "/v1/sys/remount", {
        token: old.rootTokens.secrets,
        body: { from: "auth/a", to: "auth/b" },
      });
      expect(r.status).toBe(404);
      expect(errors(r)[0]).toMatch(/unsupported path/);
    } finally {
      await old.close();
    }
  });
});

describe("plugin_version", () => {
  it("an enable (in config) or tune pins the mount's own version (the mount list and tune read show it); not a version is refused", async () => {
    await ok(
      call(base, "POST", "/v1/sys/auth/pinned", {
        token: root,
        body: { type: "cloud", config: { plugin_version: "v0.20.1" } },
      }),
    );
    const entry = (path = "pinned") =>
      call(base, "GET", "/v1/sys/auth", { token: root }).then((r) => data(r)[`${path}/`] as Record<string, unknown>);
    expect(await entry()).toMatchObject({ plugin_version: "v0.20.1" });
    expect((await entry()).config).not.toHaveProperty("plugin_version");
    await ok(call(base, "POST", "/v1/sys/auth/pinned/tune", { token: root, body: { plugin_version: "0.21.0" } }));
    expect(await entry()).toMatchObject({ plugin_version: "v0.21.0" });
    expect(data(await call(base, "GET", "/v1/sys/auth/pinned/tune", { token: root }))).toMatchObject({
      plugin_version: "v0.21.0",
    });
    const bad = await call(base, "POST", "/v1/sys/auth/pinned/tune", {
      token: root,
      body: { plugin_version: "latest" },
    });
    expect(bad.status).toBe(400);
    expect(errors(bad)[0]).toBe('version "latest" is not a valid semantic version');
  });

  it("a plugin_version beside type (not in config) is not read: the mount runs the catalog's default", async () => {
    await ok(
      call(base, "POST", "/v1/sys/auth/top-level", { token: root, body: { type: "cloud", plugin_version: "v0.20.1" } }),
    );
    const list = data(await call(base, "GET", "/v1/sys/auth", { token: root }));
    expect(list["top-level/"]).toMatchObject({ plugin_version: "" });
  });
});

describe("the devserver as OpenBao 2.6.2 (release openbao-2.6.2)", () => {
  let bao: DevServer;
  let url: string;
  let token: string;
  beforeAll(async () => {
    bao = await startDevServer({ secretsService: { methodType: "azure", release: "openbao-2.6.2" } });
    url = bao.urls.secrets;
    token = bao.rootTokens.secrets;
  });
  afterAll(async () => {
    await bao.close();
  });

  it("has no plugin versions in its catalog: an enable or tune naming one is refused; the mount reports the external plugin", async () => {
    const refused = await call(url, "POST", "/v1/sys/auth/pv", {
      token,
      body: { type: "azure", config: { plugin_version: "0.21.0" } },
    });
    expect(refused.status).toBe(400);
    expect(errors(refused)).toEqual(["plugin not found in the catalog: azure, version=v0.21.0"]);
    await ok(call(url, "POST", "/v1/sys/auth/pv", { token, body: { type: "azure" } }));
    const tuned = await call(url, "POST", "/v1/sys/auth/pv/tune", { token, body: { plugin_version: "v9.9.9" } });
    expect(errors(tuned)).toEqual(["plugin not found in the catalog: azure, version=v9.9.9"]);
    const malformed = await call(url, "POST", "/v1/sys/auth/pv/tune", { token, body: { plugin_version: "latest" } });
    expect(errors(malformed)).toEqual(['version "latest" is not a valid semantic version: malformed version: latest']);
    const m = data(await call(url, "GET", "/v1/sys/auth/pv", { token }));
    expect(m).toMatchObject({ plugin_version: "", running_plugin_version: "" });
    expect(m.running_sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("ignores the workload-identity fields of the method config without a word and never reads them back", async () => {
    await ok(call(url, "POST", "/v1/sys/auth/wif", { token, body: { type: "azure" } }));
    const written = await call(url, "POST", "/v1/auth/wif/config", {
      token,
      body: {
        tenant_id: "00000000-0000-0000-0000-000000000001",
        resource: RESOURCE,
        identity_token_audience: "api://AzureADTokenExchange",
        identity_token_ttl: 600,
        client_secret: "s",
      },
    });
    expect(written.status).toBe(204);
    const read = data(await call(url, "GET", "/v1/auth/wif/config", { token }));
    expect(Object.keys(read).sort()).toEqual([
      "client_id",
      "environment",
      "max_retries",
      "max_retry_delay",
      "resource",
      "retry_delay",
      "root_password_ttl",
      "tenant_id",
    ]);
  });
});
