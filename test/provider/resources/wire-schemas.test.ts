/**
 * The wire records written by hand (provider/schemas/*) are held to the definitions: each definition file's
 * `_Wire` type compiles only when its schemas name every setting's wire name. The `@ts-expect-error` lines
 * below are checked by `npm run typecheck` (which covers test/): each is a schema or a definition that must
 * not compile, so a check that stopped working fails the typecheck. The runtime cases hold the same rule to
 * the schemas' actual shapes.
 */
import { describe, expect, expectTypeOf, it } from "vitest";
import type { TagVersionRequest } from "../../../provider/clients/scheduler";
import { JobVersionTagInfoSchema } from "../../../provider/schemas/scheduler";
import {
  ConfigReadSchema,
  ConfigWriteSchema,
  EnableRequestSchema,
  MountConfigSchema,
  MountEntrySchema,
  RoleReadSchema,
  RoleWriteSchema,
  TuneRequestSchema,
  TuneResponseSchema,
} from "../../../provider/schemas/secrets";
import {
  defineResource,
  field,
  settingKeys,
  subSettingKeys,
  type WireNames,
  type WiredBy,
} from "../../../provider/resources/definition";
import { authConfigDefinition } from "../../../provider/resources/definitions/auth-config";
import { authMountDefinition } from "../../../provider/resources/definitions/auth-mount";
import { authRoleDefinition } from "../../../provider/resources/definitions/auth-role";
import { jobVersionTagDefinition } from "../../../provider/resources/definitions/job-version-tag";

type RoleWireNames = WireNames<typeof authRoleDefinition>;

// A role write schema that forgot a setting of the definition.
const RoleWriteWithoutTtl = RoleWriteSchema.omit({ token_ttl: true });
// A role read schema (enveloped, as the service answers) that forgot one.
const RoleReadWithoutType = RoleReadSchema.out.omit({ token_type: true });
// A tune request that forgot a tune setting.
const TuneWithoutMaxTtl = TuneRequestSchema.omit({ max_lease_ttl: true });

// An AuthRole with one new setting, declared in its definition only.
const roleWithNewSetting = defineResource({
  ...authRoleDefinition,
  fields: {
    ...authRoleDefinition.fields,
    tokenFoo: field.duration({ doc: "A new setting.", wire: "token_foo" }),
  },
});

// The real schemas compile (as the definitions' own `_Wire` types do), extra fields (the `policies` alias) included.
type _Role = WiredBy<[typeof RoleWriteSchema, typeof RoleReadSchema], RoleWireNames>;

// @ts-expect-error the write schema lacks token_ttl
type _RoleWriteMissing = WiredBy<[typeof RoleWriteWithoutTtl], RoleWireNames>;

// @ts-expect-error the read schema lacks token_type
type _RoleReadMissing = WiredBy<[typeof RoleWriteSchema, typeof RoleReadWithoutType], RoleWireNames>;

// @ts-expect-error a setting added to the definition is not in the wire schemas
type _NewSetting = WiredBy<[typeof RoleWriteSchema, typeof RoleReadSchema], WireNames<typeof roleWithNewSetting>>;

// @ts-expect-error the tune request lacks max_lease_ttl (a sub-setting of the mount's `tune`)
type _TuneMissing = WiredBy<[typeof TuneWithoutMaxTtl], WireNames<typeof authMountDefinition, "tune">>;

// @ts-expect-error a request type (not a schema) that lacks the tag's Description
type _TagMissing = WiredBy<[Omit<TagVersionRequest, "Description">], WireNames<typeof jobVersionTagDefinition>>;

/** The keys of a schema's shape at run time (a zod object's, or the one `enveloped` reads into). */
function shapeKeys(schema: { shape: object } | { out: { shape: object } }): string[] {
  return Object.keys("shape" in schema ? schema.shape : schema.out.shape);
}

describe("wire schemas and definitions", () => {
  it("keep each wire name as its literal type, so the check is not vacuous", () => {
    expectTypeOf<RoleWireNames>().toEqualTypeOf<
      | "token_policies"
      | "bound_service_principal_ids"
      | "bound_group_ids"
      | "bound_locations"
      | "bound_subscription_ids"
      | "bound_resource_groups"
      | "bound_scale_sets"
      | "token_ttl"
      | "token_max_ttl"
      | "token_explicit_max_ttl"
      | "token_period"
      | "token_num_uses"
      | "token_bound_cidrs"
      | "token_no_default_policy"
      | "token_type"
    >();
    expectTypeOf<WireNames<typeof authMountDefinition>>().toEqualTypeOf<"description" | "local" | "seal_wrap">();
    expectTypeOf<WireNames<typeof jobVersionTagDefinition>>().toEqualTypeOf<"Description">();
    expectTypeOf<WireNames<typeof roleWithNewSetting>>().toEqualTypeOf<RoleWireNames | "token_foo">();
  });

  it.each([
    { name: "AuthRole", wire: settingKeys(authRoleDefinition), schemas: [RoleWriteSchema, RoleReadSchema] },
    { name: "AuthConfig", wire: settingKeys(authConfigDefinition), schemas: [ConfigWriteSchema, ConfigReadSchema] },
    { name: "AuthMount", wire: settingKeys(authMountDefinition), schemas: [EnableRequestSchema, MountEntrySchema] },
    {
      name: "AuthMount tune",
      wire: subSettingKeys(authMountDefinition.fields.tune),
      schemas: [TuneRequestSchema, TuneResponseSchema, MountConfigSchema],
    },
    { name: "JobVersionTag", wire: settingKeys(jobVersionTagDefinition), schemas: [JobVersionTagInfoSchema] },
  ])("$name: every setting's wire name is a field of its wire schemas", ({ wire, schemas }) => {
    const names = wire.map(([, f]) => f.wire);
    expect(names.length).toBeGreaterThan(0);
    for (const schema of schemas) expect(shapeKeys(schema)).toEqual(expect.arrayContaining(names));
  });

  it("the runtime check finds a missing field, and a new setting the schemas lack", () => {
    const names = settingKeys(authRoleDefinition).map(([, f]) => f.wire);
    expect(shapeKeys(RoleWriteWithoutTtl)).not.toEqual(expect.arrayContaining(names));
    expect(shapeKeys(RoleReadWithoutType)).not.toEqual(expect.arrayContaining(names));
    const tune = subSettingKeys(authMountDefinition.fields.tune).map(([, f]) => f.wire);
    expect(shapeKeys(TuneWithoutMaxTtl)).not.toEqual(expect.arrayContaining(tune));
    const withNew = settingKeys(roleWithNewSetting).map(([, f]) => f.wire);
    expect(withNew).toContain("token_foo");
    expect(shapeKeys(RoleWriteSchema)).not.toEqual(expect.arrayContaining(withNew));
  });

  it("wire schemas stay loose: a field the server adds survives a read", () => {
    const read = RoleReadSchema.parse({ data: { token_type: "service", newer_field: 7 } });
    expect((read as Record<string, unknown>).newer_field).toBe(7);
    const tag = JobVersionTagInfoSchema.parse({ Name: "v1", Newer: true });
    expect((tag as Record<string, unknown>).Newer).toBe(true);
  });
});
