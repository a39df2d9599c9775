/**
 * The AuthRole's fields (see ../definition.ts): one line per field; the SDK class, `check`, the diff, the
 * write body, the refresh and docs/reference/auth-role.md all come from here.
 */
import { isIP } from "node:net";
import { z } from "zod";
import { canonicalRoleName } from "../../clients/secrets/normalize";
import { canonicalCidr } from "../../values";
import { mountAccessorField, mountPathSchema, wholeNumber } from "../auth-common";
import type { RoleReadSchema, RoleWriteSchema } from "../../schemas/secrets";
import { defineResource, field, listOf, type WireNames, type WiredBy } from "../definition";

// The service's name rule: word characters, '-' and '.', starting and ending with a word character.
const NAME_PATTERN = /^\w(?:[\w.-]*\w)?$/;

function isCidr(s: string): boolean {
  const [addr, bits, ...rest] = s.split("/");
  if (rest.length > 0 || addr === undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** The AuthRole: every field, in the order the SDK and the reference page list them. */
export const authRoleDefinition = defineResource({
  name: "AuthRole",
  module: "auth-role",
  doc: "A role of an auth method mount of the secrets service: cloud identities and constraints tied to token policies.",
  argsDoc: "Arguments of an {@link AuthRole}. Every list is sent on every write, so removing one clears it.",
  id: "auth/<mount>/role/<name>",
  replaceOrder: "create-first",
  notes:
    'At least one `bound*` list must be set (`boundServicePrincipalIds`, `boundGroupIds`, `boundLocations`, `boundSubscriptionIds`, `boundResourceGroups` or `boundScaleSets`): `check` refuses a role with none, as the service does. For logins to work with auth plugins 0.21.0 and later, set `boundServicePrincipalIds` or `boundGroupIds`, not both `["*"]` (see [Login rule of newer plugins](../resources.md#login-rule-of-newer-plugins)). ' +
    "Every write sends every list and token setting (`[]` and zeros included): the service merges role writes, so removing a field from the program really clears it. Settings compare by meaning: lists as sets, durations in seconds, bare IPs in `tokenBoundCidrs` as /32 or /128.",
  fields: {
    mount: field.string({
      doc:
        "Path of the auth mount (default `cloud`); pass `mount.path` of the AuthMount. A change replaces the role, " +
        "unless `mountAccessor` shows the mount moved with it (`sys/remount`): then it is an update that writes nothing.",
      kind: "source",
      rule: mountPathSchema('must be the path of an auth mount, such as "cloud"'),
      required: true,
      default: "cloud",
      replaceOnChange: true,
      change: "replaces; updates (nothing written) when the mount moved, see `mountAccessor`",
    }),
    mountAccessor: mountAccessorField(),
    name: field.string({
      doc: "Role name: letters, digits, `_`, `-`, `.`; stored lowercase. A change replaces the role.",
      outputDoc: "Role name, lowercase.",
      kind: "source",
      rule: z
        .string()
        .regex(
          NAME_PATTERN,
          "must be letters, digits, '_', '-' and '.', starting and ending with a letter, digit or '_'",
        )
        .transform(canonicalRoleName),
      required: true,
      replaceOnChange: true,
      canonical: canonicalRoleName,
    }),
    policies: field.list({
      doc: "Policies granted by the role: the tokens its logins issue carry them.",
      kind: "setting",
    }),
    tokenPolicies: field.list({
      doc: "The same list under the service's current name (`token_policies`); set this or `policies`, not both.",
      wire: "token_policies",
    }),
    boundServicePrincipalIds: field.list({
      doc: "Object IDs of service principals that may log in (`*` for any).",
      wire: "bound_service_principal_ids",
    }),
    boundGroupIds: field.list({
      doc: "Group IDs of which a member may log in (`*` for any).",
      wire: "bound_group_ids",
    }),
    boundLocations: field.list({ doc: "Locations the instance must be in.", wire: "bound_locations" }),
    boundSubscriptionIds: field.list({ doc: "Subscriptions the instance must be in.", wire: "bound_subscription_ids" }),
    boundResourceGroups: field.list({ doc: "Resource groups the instance must be in.", wire: "bound_resource_groups" }),
    boundScaleSets: field.list({ doc: "Scale sets the instance must belong to.", wire: "bound_scale_sets" }),
    tokenTtl: field.duration({ doc: "Token TTL: seconds or a duration; 0 = the mount's default.", wire: "token_ttl" }),
    tokenMaxTtl: field.duration({
      doc: "Longest token lifetime with renewals: seconds or a duration.",
      wire: "token_max_ttl",
    }),
    tokenExplicitMaxTtl: field.duration({
      doc: "Hard cap on the token lifetime: seconds or a duration.",
      wire: "token_explicit_max_ttl",
    }),
    tokenPeriod: field.duration({ doc: "Period of periodic tokens: seconds or a duration.", wire: "token_period" }),
    tokenNumUses: field.number({ doc: "Uses per token; 0 = unlimited.", rule: wholeNumber(), wire: "token_num_uses" }),
    tokenBoundCidrs: field.list({
      doc: "CIDRs the token may be used from (bare IPs mean /32 or /128).",
      rule: listOf(z.string().refine(isCidr, "must be an IP address or a CIDR block")),
      wire: "token_bound_cidrs",
      canonical: canonicalCidr,
    }),
    tokenNoDefaultPolicy: field.boolean({
      doc: "Leave the `default` policy off the tokens.",
      wire: "token_no_default_policy",
    }),
    tokenType: field.enum(["default", "service", "batch"], {
      doc: "`default`, `service` or `batch`.",
      wire: "token_type",
    }),
    adopt: field.boolean({
      doc: "Take over an existing role of this name instead of failing (it is overwritten with these settings).",
    }),
    connection: field.connection("secrets", "writes"),
    incomplete: field.boolean({
      doc: "Set when the last write's outcome is unknown: the next `up` writes the role again.",
      kind: "output",
      sdkOutput: false,
    }),
    schemaVersion: field.number({ doc: "The version of the state's shape.", kind: "output", required: true }),
  },
});

/** The role record's wire schemas, written by hand, name every setting above (one they lack fails the typecheck). */
type _Wire = WiredBy<[typeof RoleWriteSchema, typeof RoleReadSchema], WireNames<typeof authRoleDefinition>>;
