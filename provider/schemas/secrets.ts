/**
 * Wire records of the secrets service's cloud-identity auth method (spec: secrets-cloud-auth.md) and of
 * the `sys/auth` mount API and the instance metadata service it depends on. Server records are loose:
 * unknown fields are kept, so a newer server never breaks a read.
 */
import { z } from "zod";
import { StringOrListSchema, splitCommaList } from "../values";

/** A list the server returns as `null` when never set; parsed to an array (`null` → `[]`). */
const ServerListSchema = z
  .union([z.string(), z.array(z.string()), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined ? [] : typeof v === "string" ? splitCommaList(v) : v));

/** A duration as the service accepts it: integer seconds or a duration string ("90s", "1h30m", "768h"). */
const DurationSchema = z.union([z.number(), z.string()]);

/** Reads the `data` object of a response envelope, or the top-level object when there is no `data`. */
function enveloped<S extends z.ZodType>(inner: S) {
  return z.preprocess((v) => {
    if (v !== null && typeof v === "object" && "data" in v) {
      const d = (v as { data: unknown }).data;
      if (d !== null && typeof d === "object") return d;
    }
    return v;
  }, inner);
}

/** Fields every response envelope may carry. */
const EnvelopeSchema = z.looseObject({
  request_id: z.string().optional(),
  warnings: z.array(z.string()).nullable().optional(),
});

/** The body of a write that answered 200 (warnings) or 204 (nothing). */
export const WriteResponseSchema = EnvelopeSchema.optional();
export type WriteResponse = z.infer<typeof WriteResponseSchema>;

// ---------------------------------------------------------------------------------------------------------
// sys/auth: mounts

/** The `config` block of a mount as the mount list returns it: TTLs in seconds, 0 = inherit. */
export const MountConfigSchema = z.looseObject({
  default_lease_ttl: z.number().optional(),
  max_lease_ttl: z.number().optional(),
  force_no_cache: z.boolean().optional(),
  token_type: z.string().optional(),
  listing_visibility: z.string().optional(),
  audit_non_hmac_request_keys: ServerListSchema,
  audit_non_hmac_response_keys: ServerListSchema,
  passthrough_request_headers: ServerListSchema,
  allowed_response_headers: ServerListSchema,
});

/** One entry of `GET /v1/sys/auth` (keyed `<path>/`). */
export const MountEntrySchema = z.looseObject({
  type: z.string(),
  description: z.string().optional().default(""),
  accessor: z.string().optional().default(""),
  config: MountConfigSchema.optional(),
  local: z.boolean().optional().default(false),
  seal_wrap: z.boolean().optional().default(false),
  external_entropy_access: z.boolean().optional(),
  options: z.record(z.string(), z.string()).nullable().optional(),
  uuid: z.string().optional(),
  plugin_version: z.string().optional(),
  /** The version the mount runs (`v0.24.0+builtin`); servers before 1.12 leave it out. */
  running_plugin_version: z.string().optional(),
});
export type MountEntry = z.infer<typeof MountEntrySchema>;

/**
 * `GET /v1/sys/auth`: mounts keyed `<path>/`. Older servers put them at the top level as well as under
 * `data`; only objects with a `type` are taken from the top level.
 */
export const MountListSchema = z.preprocess(
  (v) => {
    if (v === null || typeof v !== "object") return v;
    const o = v as Record<string, unknown>;
    const d = o.data;
    if (d !== null && typeof d === "object") return d;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(o)) {
      if (k.endsWith("/") && x !== null && typeof x === "object" && "type" in x) out[k] = x;
    }
    return out;
  },
  z.record(z.string(), MountEntrySchema),
);
export type MountList = z.infer<typeof MountListSchema>;

/** The tune settings a caller can send (`POST /v1/sys/auth/<path>/tune`, and `config` on enable). */
export const TuneRequestSchema = z.looseObject({
  description: z.string().optional(),
  default_lease_ttl: DurationSchema.optional(),
  max_lease_ttl: DurationSchema.optional(),
  listing_visibility: z.enum(["", "hidden", "unauth"]).optional(),
  token_type: z.enum(["default-service", "default-batch", "service", "batch"]).optional(),
  audit_non_hmac_request_keys: z.array(z.string()).optional(),
  audit_non_hmac_response_keys: z.array(z.string()).optional(),
  passthrough_request_headers: z.array(z.string()).optional(),
  allowed_response_headers: z.array(z.string()).optional(),
  plugin_version: z.string().optional(),
});
export type TuneRequest = z.infer<typeof TuneRequestSchema>;

/** `POST /v1/sys/auth/<path>`: enables an auth method. */
export const EnableRequestSchema = z.looseObject({
  type: z.string().min(1),
  description: z.string().optional(),
  /** Tune settings, and `plugin_version`: servers read an enable's plugin version here only. */
  config: TuneRequestSchema.omit({ description: true }).optional(),
  local: z.boolean().optional(),
  seal_wrap: z.boolean().optional(),
  external_entropy_access: z.boolean().optional(),
  options: z.record(z.string(), z.string()).optional(),
});
export type EnableRequest = z.infer<typeof EnableRequestSchema>;

/** `GET /v1/sys/auth/<path>/tune`: effective values; TTLs in integer seconds (system default when unset). */
export const TuneResponseSchema = enveloped(
  z.looseObject({
    description: z.string().optional().default(""),
    default_lease_ttl: z.number(),
    max_lease_ttl: z.number(),
    force_no_cache: z.boolean().optional(),
    token_type: z.string().optional(),
    listing_visibility: z.string().optional(),
    audit_non_hmac_request_keys: ServerListSchema,
    audit_non_hmac_response_keys: ServerListSchema,
    passthrough_request_headers: ServerListSchema,
    allowed_response_headers: ServerListSchema,
    plugin_version: z.string().optional(),
  }),
);
export type TuneResponse = z.infer<typeof TuneResponseSchema>;

/** `POST /v1/sys/remount` (1.10+): `from` and `to` are full paths, `auth/<path>` for an auth method. */
export const RemountRequestSchema = z.looseObject({ from: z.string().min(1), to: z.string().min(1) });

/** The answer of `POST /v1/sys/remount`: the ID of the move, which runs after the answer. */
export const RemountResponseSchema = EnvelopeSchema.extend({
  data: z.looseObject({ migration_id: z.string().min(1) }),
});

/** `GET /v1/sys/remount/status/<id>` data: `status` is `in-progress`, then `success` or `failure`. */
export const RemountStatusSchema = enveloped(
  z.looseObject({
    migration_id: z.string().optional(),
    migration_info: z.looseObject({
      source_mount: z.string().optional(),
      target_mount: z.string().optional(),
      status: z.string(),
    }),
  }),
);
export type RemountStatus = z.infer<typeof RemountStatusSchema>;

// ---------------------------------------------------------------------------------------------------------
// auth/<mount>/config

/** The cloud environments the method accepts (case-insensitive on the wire). */
export const CLOUD_ENVIRONMENTS = ["AzurePublicCloud", "AzureUSGovernmentCloud", "AzureChinaCloud"] as const;

/**
 * `POST /v1/auth/<mount>/config`. `tenant_id`, `resource`, `client_id`, `client_secret` and `environment`
 * keep their stored value when omitted; `root_password_ttl`, `max_retries`, `retry_delay` and
 * `max_retry_delay` reset to their defaults when omitted, so callers always send them.
 */
export const ConfigWriteSchema = z.looseObject({
  tenant_id: z.string().optional(),
  resource: z.string().optional(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
  environment: z.string().optional(),
  /** Duration; default 4380h. */
  root_password_ttl: DurationSchema.optional(),
  /** Default 3. */
  max_retries: z.number().int().optional(),
  /** Duration; default 4s. */
  retry_delay: DurationSchema.optional(),
  /** Duration; default 60s. */
  max_retry_delay: DurationSchema.optional(),
  /** Workload identity (enterprise edition): the audience of the plugin's identity token; excludes `client_secret`. */
  identity_token_audience: z.string().optional(),
  /** Duration; default 1h. */
  identity_token_ttl: DurationSchema.optional(),
});
export type ConfigWrite = z.infer<typeof ConfigWriteSchema>;

/** Defaults the config write falls back to when a resetting field is omitted. */
export const CONFIG_DEFAULTS = Object.freeze({
  maxRetries: 3,
  retryDelaySeconds: 4,
  maxRetryDelaySeconds: 60,
  rootPasswordTtlSeconds: 15_768_000,
});

/**
 * `GET /v1/auth/<mount>/config` data. `client_secret` is never returned. `retry_delay` and
 * `max_retry_delay` are Go durations: integer **nanoseconds**; `root_password_ttl` is seconds.
 */
export const ConfigReadSchema = enveloped(
  z.looseObject({
    tenant_id: z.string().optional().default(""),
    resource: z.string().optional().default(""),
    client_id: z.string().optional().default(""),
    environment: z.string().optional().default(""),
    root_password_ttl: z.number().optional(),
    max_retries: z.number().optional(),
    retry_delay: z.number().optional(),
    max_retry_delay: z.number().optional(),
    identity_token_audience: z.string().optional(),
    identity_token_ttl: z.number().optional(),
  }),
);
export type ConfigRead = z.infer<typeof ConfigReadSchema>;

// ---------------------------------------------------------------------------------------------------------
// auth/<mount>/role/<name>

/** `POST /v1/auth/<mount>/role/<name>`: a merge; an explicit `[]` clears a list, an omitted key keeps it. */
export const RoleWriteSchema = z.looseObject({
  bound_service_principal_ids: StringOrListSchema.optional(),
  bound_group_ids: StringOrListSchema.optional(),
  bound_locations: StringOrListSchema.optional(),
  bound_subscription_ids: StringOrListSchema.optional(),
  bound_resource_groups: StringOrListSchema.optional(),
  bound_scale_sets: StringOrListSchema.optional(),
  token_policies: StringOrListSchema.optional(),
  token_bound_cidrs: StringOrListSchema.optional(),
  /** Seconds or a duration string; 0 = mount default. */
  token_ttl: DurationSchema.optional(),
  token_max_ttl: DurationSchema.optional(),
  token_explicit_max_ttl: DurationSchema.optional(),
  token_period: DurationSchema.optional(),
  token_num_uses: z.number().int().optional(),
  token_no_default_policy: z.boolean().optional(),
  token_type: z.enum(["default", "service", "batch", "default-service", "default-batch"]).optional(),
  /** Legacy alias of `token_policies` (spec's role record); prefer `token_policies`. */
  policies: StringOrListSchema.optional(),
});
/** A role write as the caller gives it (lists as arrays or comma strings). */
export type RoleWrite = z.input<typeof RoleWriteSchema>;

/** `GET /v1/auth/<mount>/role/<name>` data. Bound lists are `null` when never set; TTLs in seconds. */
export const RoleReadSchema = enveloped(
  z.looseObject({
    bound_service_principal_ids: ServerListSchema,
    bound_group_ids: ServerListSchema,
    bound_locations: ServerListSchema,
    bound_subscription_ids: ServerListSchema,
    bound_resource_groups: ServerListSchema,
    bound_scale_sets: ServerListSchema,
    token_policies: ServerListSchema,
    token_bound_cidrs: ServerListSchema,
    token_ttl: z.number().optional().default(0),
    token_max_ttl: z.number().optional().default(0),
    token_explicit_max_ttl: z.number().optional().default(0),
    token_period: z.number().optional().default(0),
    token_num_uses: z.number().optional().default(0),
    token_no_default_policy: z.boolean().optional().default(false),
    token_type: z.string().optional().default("default"),
    policies: ServerListSchema,
  }),
);
export type RoleRead = z.infer<typeof RoleReadSchema>;

/** `LIST /v1/auth/<mount>/role`: role names (lowercase). */
export const RoleListSchema = enveloped(z.looseObject({ keys: z.array(z.string()).optional().default([]) }));

// ---------------------------------------------------------------------------------------------------------
// auth/<mount>/login

/** `POST /v1/auth/<mount>/login`, sent without a service token. */
export const LoginRequestSchema = z.looseObject({
  role: z.string().min(1),
  jwt: z.string().min(1),
  subscription_id: z.string().optional(),
  resource_group_name: z.string().optional(),
  vm_name: z.string().optional(),
  vmss_name: z.string().optional(),
  resource_id: z.string().optional(),
});
export type LoginRequest = z.infer<typeof LoginRequestSchema>;

/**
 * The `auth` block of a login response. `client_token` is a secret.
 */
const AuthBlockSchema = z.looseObject({
  client_token: z.string().min(1),
  accessor: z.string(),
  policies: z
    .array(z.string())
    .nullable()
    .transform((v) => v ?? []),
  token_policies: z.array(z.string()).nullable().optional(),
  lease_duration: z.number(),
  renewable: z.boolean(),
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  entity_id: z.string().optional(),
  token_type: z.string().optional(),
});
export type AuthBlock = z.infer<typeof AuthBlockSchema>;

/** A login response: the envelope with its `auth` block. */
export const LoginResponseSchema = EnvelopeSchema.extend({ auth: AuthBlockSchema });

// ---------------------------------------------------------------------------------------------------------
// Instance metadata service

/** `GET /metadata/identity/oauth2/token`. Numbers arrive as strings; `access_token` is a secret JWT. */
export const MetadataTokenSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z.union([z.string(), z.number()]).optional(),
  expires_on: z.union([z.string(), z.number()]).optional(),
  not_before: z.union([z.string(), z.number()]).optional(),
  resource: z.string().optional(),
  token_type: z.string().optional(),
  client_id: z.string().optional(),
});
export type MetadataToken = z.infer<typeof MetadataTokenSchema>;

/** The `compute` block of `GET /metadata/instance`; fields that do not apply are `""`. */
const MetadataComputeSchema = z.looseObject({
  subscriptionId: z.string(),
  resourceGroupName: z.string(),
  name: z.string(),
  vmScaleSetName: z.string().optional().default(""),
  resourceId: z.string().optional().default(""),
  location: z.string().optional(),
  vmId: z.string().optional(),
  azEnvironment: z.string().optional(),
});
export type MetadataCompute = z.infer<typeof MetadataComputeSchema>;

/** `GET /metadata/instance`. */
export const MetadataInstanceSchema = z.looseObject({ compute: MetadataComputeSchema });
export type MetadataInstance = z.infer<typeof MetadataInstanceSchema>;

/** JWT claims the method reads (checked before sending; the server verifies them again). */
export const CloudJwtClaimsSchema = z.looseObject({
  aud: z.union([z.string(), z.array(z.string())]).optional(),
  iss: z.string().optional(),
  exp: z.number().optional(),
  nbf: z.number().optional(),
  tid: z.string().optional(),
  oid: z.string().optional(),
  appid: z.string().optional(),
  groups: z.array(z.string()).optional(),
  xms_mirid: z.string().optional(),
  xms_az_rid: z.string().optional(),
});
export type CloudJwtClaims = z.infer<typeof CloudJwtClaimsSchema>;
