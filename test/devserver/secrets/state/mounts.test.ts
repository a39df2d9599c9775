import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { secretsControls, type SecretsControls } from "../../../../devserver/secrets";
import { call, data, DENIED, errors } from "../http";

let server: DevServer;
let base: string;
let root: string;
let controls: SecretsControls;

beforeAll(async () => {
  server = await startDevServer();
  base = server.urls.secrets;
  root = server.rootTokens.secrets;
  controls = await secretsControls(server);
});

afterAll(async () => {
  await server.close();
});

describe("sys/auth mount table", () => {
  it("lists the built-in token mount keyed with a trailing slash, in data and at the top level", async () => {
    const r = await call(base, "GET", "/v1/sys/auth", { token: root });
    expect(r.status).toBe(200);
    const token = data(r)["token/"] as Record<string, unknown>;
    expect(token.type).toBe("token");
    expect(token.accessor).toMatch(/^auth_token_[0-9a-f]{8}$/);
    expect((r.body as Record<string, unknown>)["token/"]).toEqual(token);
  });

  it("enables a method with 204 and shows it in the list and the sudo read", async () => {
    const enable = await call(base, "POST", "/v1/sys/auth/cloud", {
      token: root,
      body: {
        type: "cloud",
        description: "machines",
        config: { default_lease_ttl: "1h", max_lease_ttl: "2h", listing_visibility: "hidden" },
        local: true,
        seal_wrap: true,
      },
    });
    expect(enable.status).toBe(204);
    const list = data(await call(base, "GET", "/v1/sys/auth", { token: root }));
    const entry = list["cloud/"] as Record<string, unknown>;
    expect(entry).toMatchObject({
      type: "cloud",
      description: "machines",
      local: true,
      seal_wrap: true,
      external_entropy_access: false,
    });
    expect(entry.accessor).toMatch(/^auth_cloud_[0-9a-f]{8}$/);
    expect(entry.config).toEqual({
      default_lease_ttl: 3600,
      force_no_cache: false,
      max_lease_ttl: 7200,
      token_type: "default-service",
      listing_visibility: "hidden",
    });
    const read = await call(base, "GET", "/v1/sys/auth/cloud", { token: root });
    expect(read.status).toBe(200);
    expect(data(read)).toEqual(entry);
  });

  it("refuses a second enable at the same path, a parent or a child with 400 'path is already in use at'", async () => {
    for (const path of ["cloud", "cloud/", "cloud/sub"]) {
      const r = await call(base, "POST", `/v1/sys/auth/${path}`, { token: root, body: { type: "cloud" } });
      expect(r.status).toBe(400);
      expect(errors(r)).toEqual(["path is already in use at cloud/"]);
    }
    await call(base, "POST", "/v1/sys/auth/deep/er", { token: root, body: { type: "cloud" } });
    const parent = await call(base, "POST", "/v1/sys/auth/deep", { token: root, body: { type: "cloud" } });
    expect(errors(parent)).toEqual(["path is already in use at deep/er/"]);
    const tokenPath = await call(base, "POST", "/v1/sys/auth/token", { token: root, body: { type: "cloud" } });
    expect(errors(tokenPath)).toEqual(["path is already in use at token/"]);
  });

  it("refuses an unknown or missing type and bad TTLs with the real texts", async () => {
    const cases: [unknown, string][] = [
      [{ type: "kubernetes" }, "plugin not found in the catalog: kubernetes"],
      [{}, "backend type must be specified as a string"],
      [
        { type: "cloud", config: { default_lease_ttl: "2h", max_lease_ttl: "1h" } },
        "given default lease TTL greater than given max lease TTL",
      ],
      [
        { type: "cloud", config: { default_lease_ttl: "800h" } },
        "given default lease TTL greater than system max lease TTL of 2764800",
      ],
      [
        { type: "cloud", config: { default_lease_ttl: "soon" } },
        'unable to parse default TTL of soon: time: invalid duration "soon"',
      ],
      [{ type: "cloud", config: { token_type: "weird" } }, 'invalid value for "token_type"'],
      [{ type: "cloud", config: { listing_visibility: "public" } }, "invalid listing_visibility public"],
    ];
    for (const [body, text] of cases) {
      const r = await call(base, "POST", "/v1/sys/auth/refused", { token: root, body });
      expect(r.status, text).toBe(400);
      expect(errors(r)).toEqual([text]);
    }
    expect(data(await call(base, "GET", "/v1/sys/auth", { token: root }))["refused/"]).toBeUndefined();
  });

  it("reads a missing mount as 400 'No auth engine at <path>/'", async () => {
    const r = await call(base, "GET", "/v1/sys/auth/nothing/here", { token: root });
    expect(r.status).toBe(400);
    expect(errors(r)).toEqual(["No auth engine at nothing/here/"]);
  });

  it("serves nested mount paths", async () => {
    expect(
      (await call(base, "POST", "/v1/sys/auth/team/a/cloud", { token: root, body: { type: "cloud" } })).status,
    ).toBe(204);
    expect(data(await call(base, "GET", "/v1/sys/auth/team/a/cloud", { token: root })).type).toBe("cloud");
    const cfg = await call(base, "POST", "/v1/auth/team/a/cloud/config", {
      token: root,
      body: { tenant_id: "00000000-0000-0000-0000-000000000001", resource: "https://management.azure.com/" },
    });
    expect(cfg.status).toBe(204);
    expect(data(await call(base, "GET", "/v1/auth/team/a/cloud/config", { token: root })).tenant_id).toBe(
      "00000000-0000-0000-0000-000000000001",
    );
  });
});

describe("tune", () => {
  it("reads effective integer-second TTLs and default-service when the mount sets none", async () => {
    await call(base, "POST", "/v1/sys/auth/plain", { token: root, body: { type: "cloud" } });
    const r = await call(base, "GET", "/v1/sys/auth/plain/tune", { token: root });
    expect(r.status).toBe(200);
    expect(data(r)).toEqual({
      default_lease_ttl: 2764800,
      description: "",
      force_no_cache: false,
      max_lease_ttl: 2764800,
      token_type: "default-service",
    });
    const own = data(await call(base, "GET", "/v1/sys/auth/plain", { token: root })).config as Record<string, unknown>;
    expect(own.default_lease_ttl).toBe(0);
  });

  it("applies only the fields present", async () => {
    await call(base, "POST", "/v1/sys/auth/tuned", {
      token: root,
      body: { type: "cloud", description: "before", config: { default_lease_ttl: "30m" } },
    });
    expect(
      (await call(base, "POST", "/v1/sys/auth/tuned/tune", { token: root, body: { max_lease_ttl: "2h" } })).status,
    ).toBe(204);
    let t = data(await call(base, "GET", "/v1/sys/auth/tuned/tune", { token: root }));
    expect(t).toMatchObject({
      default_lease_ttl: 1800,
      max_lease_ttl: 7200,
      description: "before",
      token_type: "default-service",
    });
    await call(base, "POST", "/v1/sys/auth/tuned/tune", {
      token: root,
      body: { description: "after", token_type: "batch", audit_non_hmac_request_keys: ["a", "b"] },
    });
    t = data(await call(base, "GET", "/v1/sys/auth/tuned/tune", { token: root }));
    expect(t).toMatchObject({
      default_lease_ttl: 1800,
      max_lease_ttl: 7200,
      description: "after",
      token_type: "batch",
      audit_non_hmac_request_keys: ["a", "b"],
    });
    await call(base, "POST", "/v1/sys/auth/tuned/tune", {
      token: root,
      body: { audit_non_hmac_request_keys: [""], default_lease_ttl: "system" },
    });
    t = data(await call(base, "GET", "/v1/sys/auth/tuned/tune", { token: root }));
    expect(t.audit_non_hmac_request_keys).toBeUndefined();
    expect(t.default_lease_ttl).toBe(2764800);
  });

  it("refuses a max below the default", async () => {
    const r = await call(base, "POST", "/v1/sys/auth/tuned/tune", {
      token: root,
      body: { default_lease_ttl: "3h", max_lease_ttl: "1h" },
    });
    expect(r.status).toBe(400);
    expect(errors(r)).toEqual(["backend max lease TTL of 3600 would be less than backend default lease TTL of 10800"]);
  });

  it("serves the same data without sudo at sys/mounts/auth/<path>/tune", async () => {
    controls.putPolicy("tune-reader", { "sys/mounts/auth/*": ["read"], "sys/auth/*": ["read"] });
    const reader = server.createToken("secrets", { policies: ["tune-reader"] });
    const viaMounts = await call(base, "GET", "/v1/sys/mounts/auth/tuned/tune", { token: reader });
    expect(viaMounts.status).toBe(200);
    expect(data(viaMounts)).toEqual(data(await call(base, "GET", "/v1/sys/auth/tuned/tune", { token: root })));
    const viaSudo = await call(base, "GET", "/v1/sys/auth/tuned/tune", { token: reader });
    expect(viaSudo.status).toBe(403);
    expect(errors(viaSudo)).toEqual([DENIED]);
  });

  it("reports a missing mount", async () => {
    const r = await call(base, "GET", "/v1/sys/auth/absent/tune", { token: root });
    expect(r.status).toBe(400);
    expect(errors(r)).toEqual(['cannot fetch sysview for path "auth/absent/"']);
  });
});

describe("disable", () => {
  it("drops the method's config and roles and revokes its tokens; a re-enable starts empty", async () => {
    await call(base, "POST", "/v1/sys/auth/gone", { token: root, body: { type: "cloud" } });
    await call(base, "POST", "/v1/auth/gone/config", { token: root, body: { tenant_id: "t", resource: "r" } });
    await call(base, "POST", "/v1/auth/gone/role/r1", { token: root, body: { bound_group_ids: "g" } });
    const accessor = (data(await call(base, "GET", "/v1/sys/auth/gone", { token: root })) as { accessor: string })
      .accessor;
    const ctx = server.context("secrets");
    const issued = ctx.tokens.create({ policies: ["default"], meta: { mountAccessor: accessor } });
    expect((await call(base, "GET", "/v1/auth/token/lookup-self", { token: issued.token })).status).toBe(200);

    expect((await call(base, "DELETE", "/v1/sys/auth/gone", { token: root })).status).toBe(204);
    expect((await call(base, "GET", "/v1/auth/token/lookup-self", { token: issued.token })).status).toBe(403);
    expect(data(await call(base, "GET", "/v1/sys/auth", { token: root }))["gone/"]).toBeUndefined();

    await call(base, "POST", "/v1/sys/auth/gone", { token: root, body: { type: "cloud" } });
    expect((await call(base, "GET", "/v1/auth/gone/config", { token: root })).status).toBe(404);
    const roles = await call(base, "LIST", "/v1/auth/gone/role", { token: root });
    expect(roles.status).toBe(404);
    expect(roles.body).toEqual({ errors: [] });
  });

  it("succeeds with 204 for a path that is not mounted", async () => {
    expect((await call(base, "DELETE", "/v1/sys/auth/never-was", { token: root })).status).toBe(204);
  });

  it("refuses to disable the token mount", async () => {
    const r = await call(base, "DELETE", "/v1/sys/auth/token", { token: root });
    expect(r.status).toBe(400);
    expect(errors(r)).toEqual(["token credential backend cannot be disabled"]);
  });
});

describe("permissions", () => {
  it("needs read on sys/auth (not sudo) to list, and sudo for enable, read and disable", async () => {
    controls.putPolicy("lister", { "sys/auth": ["read"], "sys/auth/*": ["create", "read", "update", "delete"] });
    const lister = server.createToken("secrets", { policies: ["lister"] });
    expect((await call(base, "GET", "/v1/sys/auth", { token: lister })).status).toBe(200);
    for (const [method, path] of [
      ["POST", "/v1/sys/auth/perm"],
      ["GET", "/v1/sys/auth/cloud"],
      ["DELETE", "/v1/sys/auth/cloud"],
      ["POST", "/v1/sys/auth/cloud/tune"],
    ] as const) {
      const r = await call(base, method, path, {
        token: lister,
        body: method === "POST" ? { type: "cloud" } : undefined,
      });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(errors(r)).toEqual([DENIED]);
    }
    controls.putPolicy("admin", { "sys/auth": ["read"], "sys/auth/*": ["create", "read", "update", "delete", "sudo"] });
    const admin = server.createToken("secrets", { policies: ["admin"] });
    expect((await call(base, "POST", "/v1/sys/auth/perm", { token: admin, body: { type: "cloud" } })).status).toBe(204);
    expect((await call(base, "DELETE", "/v1/sys/auth/perm", { token: admin })).status).toBe(204);
  });

  it("refuses requests without a token or with an unknown one", async () => {
    const none = await call(base, "GET", "/v1/sys/auth");
    expect(none.status).toBe(403);
    expect(errors(none)).toEqual(["permission denied"]);
    const unknown = await call(base, "GET", "/v1/sys/auth", { token: "hvs.not-a-token" });
    expect(unknown.status).toBe(403);
  });

  it("honours grants written as '<capability>:<path>' on the token", async () => {
    const t = server.createToken("secrets", { capabilities: ["read:sys/auth"] });
    expect((await call(base, "GET", "/v1/sys/auth", { token: t })).status).toBe(200);
    expect((await call(base, "GET", "/v1/sys/auth/cloud", { token: t })).status).toBe(403);
  });
});
