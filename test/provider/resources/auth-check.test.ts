/**
 * `check` of the three auth resources: every refusal names the property, nothing is sent to the service
 * (the devserver's request log stays empty), and unknown values pass at preview.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { setStackConfig } from "../../helpers/stack-config";
import { authConfig } from "../../../provider/resources/auth-config";
import { authMount } from "../../../provider/resources/auth-mount";
import { authRole } from "../../../provider/resources/auth-role";
import { UNKNOWN } from "../../helpers/unknown";

let dev: DevServer;
beforeAll(async () => {
  dev = await startDevServer();
  setStackConfig({ secretsAddress: dev.urls.secrets, secretsToken: dev.rootTokens.secrets });
});
afterAll(async () => {
  await dev.close();
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47";
const CLIENT = "00000002-0000-0000-c000-000000000000";
const goodConfig = {
  tenantId: TENANT,
  resource: "https://management.azure.com/",
  clientId: CLIENT,
  clientSecret: "s3cr3t-value",
};
const goodRole = { name: "web", boundServicePrincipalIds: ["sp-1"] };

type Case = { name: string; inputs: Record<string, unknown>; property: string; reason?: RegExp };

const cases: Array<Case & { kind: "authMount" | "authConfig" | "authRole" }> = [
  { kind: "authMount", name: "path with a space", inputs: { path: "my cloud" }, property: "path" },
  { kind: "authMount", name: "path of the token method", inputs: { path: "token" }, property: "path" },
  { kind: "authMount", name: "empty path", inputs: { path: "/" }, property: "path" },
  { kind: "authMount", name: "type with a slash", inputs: { type: "a/b" }, property: "type" },
  { kind: "authMount", name: "local not a boolean", inputs: { local: "yes" }, property: "local" },
  {
    kind: "authMount",
    name: "bad TTL",
    inputs: { tune: { defaultLeaseTtl: "soon" } },
    property: "tune.defaultLeaseTtl",
  },
  {
    kind: "authMount",
    name: "default TTL above max",
    inputs: { tune: { defaultLeaseTtl: "2h", maxLeaseTtl: "1h" } },
    property: "tune.defaultLeaseTtl",
  },
  { kind: "authMount", name: "bad token type", inputs: { tune: { tokenType: "default" } }, property: "tune.tokenType" },
  { kind: "authMount", name: "unknown input", inputs: { descripton: "typo" }, property: "descripton" },
  {
    kind: "authConfig",
    name: "tenant not a UUID",
    inputs: { ...goodConfig, tenantId: "contoso" },
    property: "tenantId",
    reason: /UUID/,
  },
  {
    kind: "authConfig",
    name: "client id not a UUID",
    inputs: { ...goodConfig, clientId: "app" },
    property: "clientId",
    reason: /UUID/,
  },
  {
    kind: "authConfig",
    name: "resource not a URL",
    inputs: { ...goodConfig, resource: "management.azure.com" },
    property: "resource",
    reason: /absolute URI/,
  },
  { kind: "authConfig", name: "missing tenant", inputs: { resource: goodConfig.resource }, property: "tenantId" },
  {
    kind: "authConfig",
    name: "unknown environment",
    inputs: { ...goodConfig, environment: "AzureGermanCloud" },
    property: "environment",
  },
  { kind: "authConfig", name: "negative retries", inputs: { ...goodConfig, maxRetries: -1 }, property: "maxRetries" },
  { kind: "authConfig", name: "empty secret", inputs: { ...goodConfig, clientSecret: "" }, property: "clientSecret" },
  { kind: "authRole", name: "name with a space", inputs: { ...goodRole, name: "web app" }, property: "name" },
  { kind: "authRole", name: "name ending with '-'", inputs: { ...goodRole, name: "web-" }, property: "name" },
  {
    kind: "authRole",
    name: "no bound constraint",
    inputs: { name: "web", tokenPolicies: ["p"] },
    property: "boundServicePrincipalIds",
    reason: /bound constraint/,
  },
  {
    kind: "authRole",
    name: "only empty bound lists",
    inputs: { name: "web", boundGroupIds: [""], boundLocations: "" },
    property: "boundServicePrincipalIds",
  },
  {
    kind: "authRole",
    name: "ttl above max ttl",
    inputs: { ...goodRole, tokenTtl: "2h", tokenMaxTtl: 3600 },
    property: "tokenTtl",
  },
  {
    kind: "authRole",
    name: "batch with a period",
    inputs: { ...goodRole, tokenType: "batch", tokenPeriod: "1h" },
    property: "tokenPeriod",
  },
  {
    kind: "authRole",
    name: "batch with a use count",
    inputs: { ...goodRole, tokenType: "batch", tokenNumUses: 3 },
    property: "tokenNumUses",
  },
  { kind: "authRole", name: "negative ttl", inputs: { ...goodRole, tokenTtl: -5 }, property: "tokenTtl" },
  { kind: "authRole", name: "negative use count", inputs: { ...goodRole, tokenNumUses: -1 }, property: "tokenNumUses" },
  {
    kind: "authRole",
    name: "bad CIDR",
    inputs: { ...goodRole, tokenBoundCidrs: ["10.0.0.0/33"] },
    property: "tokenBoundCidrs[0]",
  },
  {
    kind: "authRole",
    name: "unknown token type",
    inputs: { ...goodRole, tokenType: "default-service" },
    property: "tokenType",
  },
];

const providers = { authMount, authConfig, authRole };

describe("check refuses bad inputs without sending a request", () => {
  it.each(cases)("$kind: $name → $property", async ({ kind, inputs, property, reason }) => {
    dev.resetLog();
    vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await providers[kind].check({}, inputs);
    expect(res.inputs).toBeUndefined();
    expect(res.failures?.map((f) => f.property)).toContain(property);
    if (reason) expect(res.failures?.find((f) => f.property === property)?.reason).toMatch(reason);
    expect(dev.requestLog).toHaveLength(0);
  });

  it("never echoes the client secret in a failure", async () => {
    const res = await authConfig.check({}, { ...goodConfig, tenantId: "s3cr3t-value", clientSecret: "s3cr3t-value" });
    expect(JSON.stringify(res.failures)).not.toContain("s3cr3t-value");
  });
});

describe("check normalises and defaults", () => {
  it("defaults the mount path and type, trims slashes", async () => {
    expect((await authMount.check({}, {})).inputs).toEqual({ path: "cloud", type: "cloud" });
    expect((await authMount.check({}, { path: "/team/cloud/" })).inputs?.path).toBe("team/cloud");
  });

  it("lowercases role names and turns comma strings into lists", async () => {
    const res = await authRole.check(
      {},
      { name: "Web", boundSubscriptionIds: "s1, s2", boundServicePrincipalIds: ["sp"] },
    );
    expect(res.inputs).toMatchObject({ mount: "cloud", name: "web", boundSubscriptionIds: ["s1", "s2"] });
  });

  it("lets unknown values through at preview", async () => {
    expect((await authRole.check({}, { name: UNKNOWN, boundServicePrincipalIds: UNKNOWN })).failures).toEqual([]);
    expect((await authConfig.check({}, { ...goodConfig, tenantId: UNKNOWN })).inputs?.tenantId).toBe(UNKNOWN);
    expect((await authMount.check({}, { path: UNKNOWN })).inputs?.path).toBe(UNKNOWN);
  });
});

describe("check warns about roles that save but can never log in", () => {
  it.each([
    { name: "no principal or group bound", inputs: { name: "r", boundSubscriptionIds: ["s"] }, warned: true },
    {
      name: "both wildcards",
      inputs: { name: "r", boundServicePrincipalIds: ["*"], boundGroupIds: ["*"] },
      warned: true,
    },
    { name: "a bound principal", inputs: { name: "r", boundServicePrincipalIds: ["sp"] }, warned: false },
    {
      name: "one wildcard only",
      inputs: { name: "r", boundServicePrincipalIds: ["*"], boundGroupIds: ["g"] },
      warned: false,
    },
  ])("$name: warned=$warned", async ({ inputs, warned }) => {
    const spy = vi.spyOn(console, "error").mockImplementation(() => undefined);
    const res = await authRole.check({}, inputs);
    expect(res.failures).toEqual([]);
    expect(spy.mock.calls.some((c) => /never|refused/.test(String(c[0])))).toBe(warned);
  });
});
