/**
 * Conformance of the secrets client (cloud-identity auth method) over real HTTP: mounts, tune, method
 * configuration and roles. Runs against the devserver by default and against a real cluster with
 * CONFORMANCE_TARGET=env (`npm run conformance`); objects are named per run and removed afterwards.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { SecretsClient, isMountInUse, type SecretsClientOptions } from "../../provider/clients/secrets";
import type { RoleWrite } from "../../provider/schemas/secrets";
import { isApiError } from "../../provider/errors";
import { devserverOr, openTarget, requestRecord, type ConformanceTarget } from "./target";

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
let target: ConformanceTarget;
let client: SecretsClient;
const record = requestRecord();

/** Builds a client of the target's secrets service whose requests land in `record`. */
function newClient(extra: SecretsClientOptions = {}): SecretsClient {
  return new SecretsClient({ ...target.secrets, hooks: record.hooks, ...extra });
}

/** Enables the method at a path unique to the run and schedules its removal; resolves to the path. */
async function freshMount(label: string): Promise<string> {
  const path = target.name(label);
  await client.mounts.enable(path, { type: target.methodType });
  target.cleanup(() => client.mounts.disable(path));
  return path;
}

function escaped(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

beforeAll(async () => {
  target = await openTarget();
  client = newClient();
});
afterAll(() => target?.close());
beforeEach(() => {
  record.clear();
});

describe("leader status", () => {
  it("answers GET /v1/sys/leader without a token, saying whether the node is in a cluster and which node is active", async () => {
    // The env target resolves its address as a user's program does, from SECRETS_ADDR.
    const address = target.kind === "env" ? process.env.SECRETS_ADDR : target.secrets.address;
    const res = await fetch(String(address).replace(/\/+$/, "") + "/v1/sys/leader");
    expect(res.status).toBe(200);
    const body = (await res.json()) as { ha_enabled?: unknown; leader_address?: unknown };
    expect(typeof body.ha_enabled).toBe("boolean");
    if (body.ha_enabled === true) expect(typeof body.leader_address).toBe("string");
    // What the client concludes from it (a single node's mount list settles whether a mount is gone).
    expect(await client.mounts.clustered()).toBe(body.ha_enabled);
  });
});

describe("AuthMounts", () => {
  it("enables, finds through the mount list, tunes and disables a mount", async () => {
    const c = client;
    const m1 = target.name("m1");
    target.cleanup(() => c.mounts.disable(m1));
    await c.mounts.enable(m1, {
      type: target.methodType,
      description: "first",
      config: { default_lease_ttl: "3600s" },
    });
    const found = await c.mounts.find(m1);
    expect(found).toMatchObject({
      path: m1,
      type: target.methodType,
      description: "first",
      local: false,
      seal_wrap: false,
    });
    expect(found?.accessor).toMatch(/^auth_/);
    expect(record.sent).toContain("GET /v1/sys/auth");

    const tune = await c.mounts.readTune(m1);
    expect(tune.default_lease_ttl).toBe(3600);
    expect(tune.max_lease_ttl).toBeGreaterThan(0);

    await c.mounts.tune(m1, { description: "second", max_lease_ttl: "7200s", audit_non_hmac_request_keys: ["a"] });
    const tuned = await c.mounts.readTune(m1);
    expect(tuned).toMatchObject({
      description: "second",
      default_lease_ttl: 3600,
      max_lease_ttl: 7200,
      audit_non_hmac_request_keys: ["a"],
    });
    expect((await c.mounts.find(m1))?.description).toBe("second");

    await c.mounts.disable(m1);
    expect(await c.mounts.find(m1)).toBeUndefined();
  });

  it("reports a taken path as a conflict the resource can recognise", async () => {
    const m2 = await freshMount("m2");
    const err = await client.mounts.enable(m2, { type: target.methodType }).catch((e: unknown) => e);
    expect(isMountInUse(err)).toBe(true);
    expect(String((err as Error).message)).toMatch(new RegExp(`path is already in use at ${escaped(m2)}/`));
  });

  it("disabling a mount that is gone is not an error", async () => {
    await expect(client.mounts.disable(target.name("never-there"))).resolves.toBeTypeOf("boolean");
  });

  it("supports nested mount paths", async () => {
    const nested = `${target.name("team")}/cloud`;
    target.cleanup(() => client.mounts.disable(nested));
    await client.mounts.enable(nested, { type: target.methodType });
    expect((await client.mounts.find(nested))?.path).toBe(nested);
    await client.roles.write(nested, "r", { bound_group_ids: ["g"] });
    expect(await client.roles.list(nested)).toEqual(["r"]);
    await client.mounts.disable(nested);
  });

  it("is refused with 403 for a token without the rights", async (t) => {
    const dev = devserverOr(t, target, "mints a token without policies");
    const weak = newClient({ token: dev.createToken("secrets", { policies: [] }) });
    const m3 = target.name("m3");
    target.cleanup(() => client.mounts.disable(m3));
    const err = await weak.mounts.enable(m3, { type: target.methodType }).catch((e: unknown) => e);
    expect(isApiError(err, "permission_denied")).toBe(true);
  });
});

describe("AuthMounts.remount (1.10 and later, OpenBao)", () => {
  it("tells that the server has remount, moves a mount with its accessor and config, and polls the migration to success", async () => {
    expect(await client.mounts.hasRemount()).toBe(true);
    const from = await freshMount("rm-from");
    const to = target.name("rm-to");
    target.cleanup(() => client.mounts.disable(to));
    const accessor = (await client.mounts.find(from))?.accessor;
    await client.config.write(from, { tenant_id: TENANT, resource: "https://management.azure.com/" });
    const result = await client.mounts.remountAndWait(from, to, { pollMs: 20, timeoutMs: 30_000 });
    expect(result.migrationId).not.toBe("");
    expect(result.status).toBe("success");
    expect(await client.mounts.find(from)).toBeUndefined();
    expect(await client.mounts.find(to)).toMatchObject({ accessor });
    expect(await client.config.read(to)).toMatchObject({ tenantId: TENANT });
    expect(await client.mounts.remountStatus(result.migrationId)).toMatchObject({
      migration_info: { status: "success" },
    });
  });

  it("refuses a destination in use as a conflict, before anything moves", async () => {
    const a = await freshMount("rm-a");
    const b = await freshMount("rm-b");
    const err = await client.mounts.remount(a, b).catch((e: unknown) => e);
    expect(isApiError(err, "conflict")).toBe(true);
    expect(await client.mounts.find(a)).toBeDefined();
  });
});

describe("MethodConfig", () => {
  let cfg: string;
  beforeAll(async () => {
    cfg = await freshMount("cfg");
  });

  it("writes and reads the config: no client_secret back, delays in seconds", async () => {
    const c = client;
    expect(await c.config.read(cfg)).toBeUndefined();
    await c.config.write(cfg, {
      tenant_id: TENANT,
      resource: "https://management.azure.com/",
      client_id: "00000002-0000-0000-c000-000000000000",
      client_secret: "client-secret-value",
      max_retries: 5,
      retry_delay: 7,
      max_retry_delay: 90,
      root_password_ttl: 3600,
    });
    const rec = await c.config.read(cfg);
    expect(rec).toMatchObject({
      tenantId: TENANT,
      resource: "https://management.azure.com/",
      maxRetries: 5,
      retryDelay: 7,
      maxRetryDelay: 90,
      rootPasswordTtl: 3600,
    });
    expect(JSON.stringify(rec)).not.toContain("client-secret-value");
    await c.config.delete(cfg);
    expect(await c.config.read(cfg)).toBeUndefined();
  });

  it("resets the retry settings that a write leaves out", async () => {
    const c = client;
    await c.config.write(cfg, { tenant_id: TENANT, resource: "https://r/", max_retries: 9 });
    await c.config.write(cfg, { tenant_id: TENANT, resource: "https://r/" });
    expect((await c.config.read(cfg))?.maxRetries).toBe(3);
  });
});

describe("Roles", () => {
  let rl: string;
  beforeAll(async () => {
    rl = await freshMount("rl");
  });

  it("lists no roles as an empty list (the service answers 404)", async () => {
    expect(await client.roles.list(rl)).toEqual([]);
    expect(record.answered).toEqual([`GET /v1/auth/${rl}/role 404`]);
  });

  it("lists roles with ?list=true on the wire", async () => {
    expect(await client.roles.list(rl)).toEqual([]);
    expect(record.requests.filter((e) => e.path === `/v1/auth/${rl}/role`).map((e) => e.query)).toEqual(["list=true"]);
    expect(record.answered.filter((e) => e.split(" ")[1] === `/v1/auth/${rl}/role`)).toEqual([
      `GET /v1/auth/${rl}/role 404`,
    ]);
  });

  it("writes, reads case-insensitively, lists lowercase and deletes", async () => {
    const c = client;
    await c.roles.write(rl, "Web", { bound_service_principal_ids: ["sp"], token_policies: ["web"], token_ttl: 60 });
    expect(await c.roles.list(rl)).toEqual(["web"]);
    const r = await c.roles.read(rl, "WEB");
    expect(r).toMatchObject({
      bound_service_principal_ids: ["sp"],
      bound_group_ids: [],
      token_policies: ["web"],
      token_ttl: 60,
    });
    await c.roles.delete(rl, "web");
    expect(await c.roles.read(rl, "web")).toBeUndefined();
  });

  it("merges writes: an explicit [] clears a list, an omitted key keeps it", async () => {
    const c = client;
    await c.roles.write(rl, "m", { bound_service_principal_ids: ["sp"], bound_group_ids: ["g"] });
    await c.roles.write(rl, "m", { bound_service_principal_ids: ["sp2"] });
    expect(await c.roles.read(rl, "m")).toMatchObject({ bound_service_principal_ids: ["sp2"], bound_group_ids: ["g"] });
    await c.roles.write(rl, "m", { bound_group_ids: [] });
    expect((await c.roles.read(rl, "m"))?.bound_group_ids).toEqual([]);
  });

  it("accepts the comma-string form of lists", async () => {
    await client.roles.write(rl, "csv", { bound_service_principal_ids: "a,b" });
    expect((await client.roles.read(rl, "csv"))?.bound_service_principal_ids).toEqual(["a", "b"]);
  });

  it("reads a role of a mount that is gone as undefined", async () => {
    const gone = target.name("no-such-mount");
    expect(await client.roles.read(gone, "x")).toBeUndefined();
    expect(await client.roles.list(gone)).toEqual([]);
  });
});

describe("the service as the reference describes it", () => {
  let ref: string;
  beforeAll(async () => {
    ref = await freshMount("ref");
  });

  it("tune reports effective values: the system default TTLs and default-service when unset", async () => {
    const t = await client.mounts.readTune(ref);
    expect(t).toMatchObject({ default_lease_ttl: 2764800, max_lease_ttl: 2764800, token_type: "default-service" });
  });

  it.each<{ name: string; body: RoleWrite; message: RegExp }>([
    { name: "no bound constraint", body: { token_policies: ["p"] }, message: /at least one bound constraint/ },
    {
      name: "ttl above max ttl",
      body: { bound_group_ids: ["g"], token_ttl: 7200, token_max_ttl: 3600 },
      message: /ttl/i,
    },
    {
      name: "batch with a period",
      body: { bound_group_ids: ["g"], token_type: "batch", token_period: 60 },
      message: /batch|period/i,
    },
    {
      name: "batch with a use count",
      body: { bound_group_ids: ["g"], token_type: "batch", token_num_uses: 2 },
      message: /batch|num_uses|uses/i,
    },
    { name: "negative ttl", body: { bound_group_ids: ["g"], token_ttl: -1 }, message: /negative|ttl/i },
  ])("refuses a role with $name (400), as check does", async ({ body, message }) => {
    const err = await client.roles.write(ref, "bad", body).catch((e: unknown) => e);
    expect(isApiError(err, "bad_request")).toBe(true);
    expect((err as Error).message).toMatch(message);
  });

  it("accepts a role whose max ttl exceeds the mount's, with a warning", async () => {
    const res = await client.roles.write(ref, "capped", { bound_group_ids: ["g"], token_max_ttl: 10 * 2764800 });
    expect(res.warnings.length).toBeGreaterThan(0);
  });

  it("disabling a mount deletes its config and roles", async () => {
    const wipe = await freshMount("wipe");
    await client.config.write(wipe, { tenant_id: TENANT, resource: "https://r/" });
    await client.roles.write(wipe, "r", { bound_group_ids: ["g"] });
    await client.mounts.disable(wipe);
    await client.mounts.enable(wipe, { type: target.methodType });
    expect(await client.config.read(wipe)).toBeUndefined();
    expect(await client.roles.list(wipe)).toEqual([]);
  });
});
