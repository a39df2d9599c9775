/**
 * Conformance of the secrets-service client (cloud-identity auth method): runs against the devserver by
 * default and against a real cluster with CONFORMANCE_TARGET=env (`npm run conformance`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SecretsClient } from "../../provider/clients/secrets";
import { setStackConfig } from "../helpers/stack-config";
import { isApiError } from "../../provider/errors";
import { authConfig } from "../../provider/resources/auth-config";
import { authMount } from "../../provider/resources/auth-mount";
import type { AuthMountInputs } from "../../provider/resources/auth-mount-wire";
import { devserverOr, openTarget, type ConformanceTarget } from "./target";
import type { AuthConfigInputs } from "../helpers/resource-types";

const TENANT = "00000000-0000-4000-8000-000000000001";
const CLIENT_ID = "00000000-0000-4000-8000-000000000002";

let target: ConformanceTarget;
let client: SecretsClient;

beforeAll(async () => {
  target = await openTarget();
  client = new SecretsClient(target.secrets);
  setStackConfig(target.stackConfig());
});
afterAll(() => target?.close());

/** Enables a fresh mount of the method and schedules its removal. */
async function freshMount(label: string): Promise<string> {
  const path = target.name(label);
  await client.mounts.enable(path, { type: target.methodType });
  target.cleanup(() => client.mounts.disable(path));
  return path;
}

describe("mounts", () => {
  it("enables the method at a path, finds it, and disables it", async () => {
    const path = target.name("mount");
    await client.mounts.enable(path, { type: target.methodType, description: "conformance" });
    const found = await client.mounts.find(path);
    expect(found?.type).toBe(target.methodType);
    expect(await client.mounts.disable(path)).toBe(true);
    expect(await client.mounts.find(path)).toBeUndefined();
  });

  it("refuses a second enable at a taken path with a conflict", async () => {
    const path = await freshMount("taken");
    const err = await client.mounts.enable(path, { type: target.methodType }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isApiError(err, "conflict")).toBe(true);
  });
});

describe("method configuration", () => {
  it("writes the configuration and reads it back without the client secret", async () => {
    const mount = await freshMount("config");
    const secret = `conformance-secret-${target.name("s")}`;
    await client.config.write(mount, {
      tenant_id: TENANT,
      resource: "https://management.example/",
      client_id: CLIENT_ID,
      client_secret: secret,
    });
    const read = await client.config.read(mount);
    expect(read?.tenantId).toBe(TENANT);
    expect(read?.clientId).toBe(CLIENT_ID);
    expect(JSON.stringify(read)).not.toContain(secret);
  });

  it("reads nothing where no configuration was written", async () => {
    const mount = await freshMount("noconfig");
    expect(await client.config.read(mount)).toBeUndefined();
  });
});

describe("roles", () => {
  it("writes, reads, lists and deletes a role", async () => {
    const mount = await freshMount("roles");
    await client.roles.write(mount, "web", { policies: ["default", "web"], bound_subscription_ids: ["sub-1"] });
    const role = await client.roles.read(mount, "web");
    expect(role).toBeDefined();
    expect(await client.roles.list(mount)).toContain("web");
    expect(await client.roles.delete(mount, "web")).toBe(true);
    expect(await client.roles.read(mount, "web")).toBeUndefined();
  });
});

describe("devserver controls", () => {
  it("retries a 503 from the service and succeeds", async (t) => {
    const dev = devserverOr(t, target, "needs fault injection");
    const path = await freshMount("retry");
    const fault = dev.faults.add({ service: "secrets", method: "GET", path: /\/v1\/sys\/auth/, status: 503, times: 1 });
    expect((await client.mounts.find(path))?.type).toBe(target.methodType);
    expect(fault.hits).toBe(1);
  });
});

/** Resolves to what a promise threw, or undefined when it resolved. */
const thrown = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => undefined,
    (e: unknown) => e,
  );

describe("resources never keep a setting the server ignored", () => {
  it("AuthMount pluginVersion: the create fails with the server's error, or the mount is pinned to that version", async () => {
    const path = target.name("pinned");
    const checked = await authMount.check({}, { path, type: target.methodType, pluginVersion: "v9.9.9" });
    expect(checked.failures ?? []).toEqual([]);
    target.cleanup(() => client.mounts.disable(path));
    const err = await thrown(authMount.create(checked.inputs as AuthMountInputs));
    const found = await client.mounts.find(path);
    if (err === undefined) expect(found?.plugin_version).toBe("v9.9.9");
    else {
      expect((err as Error).message).toMatch(/v9\.9\.9/);
      expect(found).toBeUndefined();
    }
  });

  it("AuthConfig identityTokenAudience: the write fails, or the config reads it back", async () => {
    const mount = await freshMount("wif");
    const checked = await authConfig.check(
      {},
      { mount, tenantId: TENANT, resource: "https://management.azure.com/", identityTokenAudience: "api://wif" },
    );
    expect(checked.failures ?? []).toEqual([]);
    const err = await thrown(authConfig.create(checked.inputs as AuthConfigInputs));
    const read = await client.config.read(mount);
    if (err === undefined) expect(read?.raw.identity_token_audience).toBe("api://wif");
    else expect((err as Error).message).toMatch(/workload identity/);
  });
});
