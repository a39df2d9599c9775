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
  server = await startDevServer({ secretsService: { remountDelayMs: 30 } });
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
  for (let i = 0; i < 100; i++) {
    const info = data(await status(id)).migration_info as Record<string, unknown>;
    if (info.status !== "in-progress") return info;
    await new Promise((r) => setTimeout(r, 10));
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
  it("an enable or tune pins the mount's own version (the mount list and tune read show it); not a version is refused", async () => {
    await ok(
      call(base, "POST", "/v1/sys/auth/pinned", { token: root, body: { type: "cloud", plugin_version: "v0.20.1" } }),
    );
    const entry = () =>
      call(base, "GET", "/v1/sys/auth", { token: root }).then((r) => data(r)["pinned/"] as Record<string, unknown>);
    expect(await entry()).toMatchObject({ plugin_version: "v0.20.1" });
    await ok(call(base, "POST", "/v1/sys/auth/pinned/tune", { token: root, body: { plugin_version: "v0.21.0" } }));
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
});
