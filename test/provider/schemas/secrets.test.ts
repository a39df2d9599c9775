import { describe, expect, it } from "vitest";
import {
  ConfigReadSchema,
  LoginResponseSchema,
  MetadataInstanceSchema,
  MetadataTokenSchema,
  MountListSchema,
  RoleListSchema,
  RoleReadSchema,
  RoleWriteSchema,
  TuneResponseSchema,
  WriteResponseSchema,
} from "../../../provider/schemas/secrets";
import { StringOrListSchema } from "../../../provider/values";

const mount = {
  type: "cloud",
  description: "",
  accessor: "auth_cloud_1a2b3c4d",
  config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, token_type: "default-service" },
  local: false,
  seal_wrap: false,
  external_entropy_access: false,
  options: null,
  uuid: "f1c4…",
  plugin_version: "",
  running_plugin_version: "v0.24.0+builtin",
};

describe("secrets schemas", () => {
  it("reads the mount list from data, keeping unknown fields", () => {
    const list = MountListSchema.parse({
      request_id: "x",
      data: { "cloud/": mount, "token/": { ...mount, type: "token" } },
      "cloud/": mount,
    });
    expect(Object.keys(list).sort()).toEqual(["cloud/", "token/"]);
    expect(list["cloud/"]?.accessor).toBe("auth_cloud_1a2b3c4d");
    expect((list["cloud/"] as Record<string, unknown>).running_plugin_version).toBe("v0.24.0+builtin");
  });

  it("reads an old mount list that has only top-level entries", () => {
    const list = MountListSchema.parse({ "cloud/": mount, request_id: "x", lease_duration: 0 });
    expect(Object.keys(list)).toEqual(["cloud/"]);
  });

  it("reads tune with effective integer TTLs and lists that may be missing", () => {
    const t = TuneResponseSchema.parse({
      data: {
        description: "d",
        default_lease_ttl: 2764800,
        max_lease_ttl: 2764800,
        force_no_cache: false,
        token_type: "default-service",
      },
    });
    expect(t.default_lease_ttl).toBe(2764800);
    expect(t.audit_non_hmac_request_keys).toEqual([]);
  });

  it("reads the config without client_secret and with nanosecond delays", () => {
    const c = ConfigReadSchema.parse({
      data: {
        tenant_id: "t",
        resource: "https://management.azure.com/",
        client_id: "c",
        environment: "",
        root_password_ttl: 15768000,
        max_retries: 3,
        retry_delay: 4_000_000_000,
        max_retry_delay: 60_000_000_000,
      },
    });
    expect(c.retry_delay).toBe(4e9);
    expect("client_secret" in c).toBe(false);
  });

  it("reads a role whose bound lists were never set (null) and keeps the legacy keys apart", () => {
    const r = RoleReadSchema.parse({
      data: {
        bound_service_principal_ids: ["sp"],
        bound_group_ids: null,
        bound_locations: null,
        bound_subscription_ids: null,
        bound_resource_groups: null,
        bound_scale_sets: null,
        token_policies: [],
        token_bound_cidrs: [],
        token_ttl: 0,
        token_max_ttl: 0,
        token_explicit_max_ttl: 0,
        token_period: 0,
        token_num_uses: 0,
        token_no_default_policy: false,
        token_type: "default",
        alias_metadata: {},
      },
    });
    expect(r.bound_group_ids).toEqual([]);
    expect(r.bound_service_principal_ids).toEqual(["sp"]);
    expect((r as Record<string, unknown>).alias_metadata).toEqual({});
  });

  it("accepts string-or-list fields in both forms", () => {
    expect(StringOrListSchema.parse("a, b,,c")).toEqual(["a", "b", "c"]);
    expect(StringOrListSchema.parse(["a", "b"])).toEqual(["a", "b"]);
    expect(RoleWriteSchema.parse({ bound_subscription_ids: "s1,s2", policies: "p" })).toMatchObject({
      bound_subscription_ids: ["s1", "s2"],
      policies: ["p"],
    });
  });

  it("reads role lists and write responses (204 or warnings)", () => {
    expect(RoleListSchema.parse({ data: { keys: ["a", "b"] } }).keys).toEqual(["a", "b"]);
    expect(WriteResponseSchema.parse(undefined)).toBeUndefined();
    expect(WriteResponseSchema.parse({ warnings: ["capped"] })?.warnings).toEqual(["capped"]);
  });

  it("reads the login response's auth block", () => {
    const r = LoginResponseSchema.parse({
      auth: {
        client_token: "hvs.x",
        accessor: "acc",
        policies: ["default", "web"],
        token_policies: ["default", "web"],
        lease_duration: 2764800,
        renewable: true,
        metadata: { role: "web" },
      },
      data: null,
    });
    expect(r.auth.policies).toEqual(["default", "web"]);
    // A login answer without a client token is refused.
    expect(
      LoginResponseSchema.safeParse({
        auth: { accessor: "a", policies: [], lease_duration: 1, renewable: true },
        data: null,
      }).success,
    ).toBe(false);
  });

  it("reads the metadata service's token and instance", () => {
    const t = MetadataTokenSchema.parse({
      access_token: "eyJ...",
      refresh_token: "",
      expires_in: "86399",
      expires_on: "1700000000",
      not_before: "1699913600",
      resource: "https://management.azure.com/",
      token_type: "Bearer",
    });
    expect(t.expires_in).toBe("86399");
    const i = MetadataInstanceSchema.parse({
      compute: { subscriptionId: "s", resourceGroupName: "rg", name: "vm1", location: "westeurope" },
      network: {},
    });
    expect(i.compute.vmScaleSetName).toBe("");
    expect(i.compute.resourceId).toBe("");
  });
});
