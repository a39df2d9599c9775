import { randomBytes, randomUUID } from "node:crypto";
import { DevHttpError } from "../../core/errors";
import { restoreRecord } from "../../core/migrate";
import type { SecretsRelease } from "./release";
import { durationSeconds, has, readBool, readString, readStringList } from "./values";

/**
 * The auth-method mount table (`sys/auth`): enable, read, list, tune and disable, with the real service's
 * validation and wording (reference/secrets-service.md §1). The built-in `token/` mount is always present and cannot be disabled.
 */

/** Lease TTL the service uses when neither the mount nor the role sets one: 768h. */
export const SYSTEM_DEFAULT_LEASE_TTL = 2_764_800;
/** Largest lease TTL when the mount sets none: 768h. */
export const SYSTEM_MAX_LEASE_TTL = 2_764_800;

const TOKEN_TYPES = new Set(["default-service", "default-batch", "service", "batch"]);
const LISTING = new Set(["", "hidden", "unauth"]);
const LIST_CONFIG_KEYS = [
  "audit_non_hmac_request_keys",
  "audit_non_hmac_response_keys",
  "passthrough_request_headers",
  "allowed_response_headers",
] as const;
type ListConfigKey = (typeof LIST_CONFIG_KEYS)[number];

/** Tunable settings of a mount (TTLs in seconds, 0 = inherit the system value). */
interface MountConfig {
  default_lease_ttl: number;
  max_lease_ttl: number;
  /** "" reads back as `default-service`. */
  token_type: string;
  listing_visibility?: string;
  audit_non_hmac_request_keys?: string[];
  audit_non_hmac_response_keys?: string[];
  passthrough_request_headers?: string[];
  allowed_response_headers?: string[];
  identity_token_key?: string;
  user_lockout_config?: Record<string, unknown>;
}

/** One enabled auth method. */
export interface AuthMount {
  /** Mount path without the trailing slash (may be nested: `a/b`). */
  path: string;
  type: string;
  description: string;
  accessor: string;
  uuid: string;
  local: boolean;
  seal_wrap: boolean;
  external_entropy_access: boolean;
  options: Record<string, string> | null;
  plugin_version: string;
  config: MountConfig;
}

/** Settings of the mount table that come from the server's options. */
export interface MountLimits {
  readonly methodType: string;
  readonly systemDefaultLeaseTtl: number;
  readonly systemMaxLeaseTtl: number;
  /** The server played: its plugin catalog and what a mount reports of the plugin it runs. */
  readonly release: SecretsRelease;
}

function accessorFor(type: string): string {
  return `auth_${type}_${randomBytes(4).toString("hex")}`;
}

/** Returns the built-in token mount. */
export function tokenMount(): AuthMount {
  return {
    path: "token",
    type: "token",
    description: "token based credentials",
    accessor: accessorFor("token"),
    uuid: randomUUID(),
    local: false,
    seal_wrap: false,
    external_entropy_access: false,
    options: null,
    plugin_version: "",
    config: { default_lease_ttl: 0, max_lease_ttl: 0, token_type: "" },
  };
}

/**
 * Restores a persisted mount: a field it or its config lacks (written before the field existed) gets the
 * default of a new mount; undefined without a path, type and accessor, or when a field has the wrong type.
 */
export function restoreMount(data: unknown): AuthMount | undefined {
  const fresh = tokenMount();
  const mount = restoreRecord({ ...fresh, path: "", type: "", accessor: "" }, data, {
    options: (v) => v === null || (typeof v === "object" && !Array.isArray(v)),
  });
  if (mount === undefined || mount.path === "" || mount.type === "" || mount.accessor === "") return undefined;
  const config = restoreRecord(fresh.config, mount.config);
  return config === undefined ? undefined : { ...mount, config };
}

/** Trims slashes from a mount path as the service does (`cloud/` and `/cloud` are `cloud`). */
export function normaliseMountPath(path: string): string {
  return path.replace(/^\/+/, "").replace(/\/+$/, "");
}

/** Finds the mount that serves `rest` (`<mount>/<sub path>`) by longest prefix. */
export function matchMount(mounts: Iterable<AuthMount>, rest: string): { mount: AuthMount; sub: string } | undefined {
  let best: AuthMount | undefined;
  for (const m of mounts) {
    if (rest === m.path || rest.startsWith(`${m.path}/`)) {
      if (best === undefined || m.path.length > best.path.length) best = m;
    }
  }
  return best === undefined ? undefined : { mount: best, sub: rest.slice(best.path.length + 1) };
}

/** Returns the mount whose path conflicts with `path` (same, parent or child), if any. */
export function conflictingMount(mounts: Iterable<AuthMount>, path: string): AuthMount | undefined {
  for (const m of mounts) {
    if (m.path === path || path.startsWith(`${m.path}/`) || m.path.startsWith(`${path}/`)) return m;
  }
  return undefined;
}

function ttlField(name: "default" | "max", value: unknown): number {
  if (value === undefined || value === null || value === "" || value === "system") return 0;
  const secs = durationSeconds(value);
  if (secs === undefined || secs < 0) {
    throw new DevHttpError(
      400,
      `unable to parse ${name} TTL of ${String(value)}: time: invalid duration ${JSON.stringify(String(value))}`,
    );
  }
  return secs;
}

function tokenTypeField(value: unknown): string {
  const t = readString("token_type", value);
  if (t !== "" && !TOKEN_TYPES.has(t)) throw new DevHttpError(400, 'invalid value for "token_type"');
  return t;
}

function listingField(value: unknown): string {
  const v = readString("listing_visibility", value);
  if (!LISTING.has(v)) throw new DevHttpError(400, `invalid listing_visibility ${v}`);
  return v;
}

function listField(key: ListConfigKey, value: unknown): string[] {
  const list = readStringList(key, value);
  // A single empty string is how callers ask to clear a list.
  return list.length === 1 && list[0] === "" ? [] : list;
}

const SEMVER = /^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

/**
 * A plugin version: empty (the catalog's default) or a semantic version such as `v0.24.0`, which the
 * service writes with a leading `v` and looks up in its plugin catalog.
 */
function pluginVersionField(value: unknown, type: string, limits: MountLimits): string {
  const v = readString("plugin_version", value);
  if (v === "") return v;
  if (!SEMVER.test(v))
    throw new DevHttpError(
      400,
      `version ${JSON.stringify(v)} is not a valid semantic version${limits.release.malformedVersionDetail(v)}`,
    );
  const version = v.startsWith("v") ? v : `v${v}`;
  // The built-in plugin's own version is not kept as a pin (the mount runs it without one).
  if (type !== "token" && version === limits.release.runningPluginVersion) return "";
  if (!limits.release.anyPluginVersion)
    throw new DevHttpError(400, `plugin not found in the catalog: ${type}, version=${version}`);
  return version;
}

function optionsField(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== "object" || Array.isArray(value))
    throw new DevHttpError(400, "options must be a map of strings");
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = readString(`options.${k}`, v);
  return out;
}

/** Builds a mount from an enable request body; throws 400 with the real texts for bad input. */
export function buildMount(path: string, body: Readonly<Record<string, unknown>>, limits: MountLimits): AuthMount {
  const rawConfig = body.config ?? {};
  if (typeof rawConfig !== "object" || rawConfig === null || Array.isArray(rawConfig)) {
    throw new DevHttpError(400, "unable to convert given auth config information");
  }
  const cfg = rawConfig as Record<string, unknown>;
  const config: MountConfig = {
    default_lease_ttl: ttlField("default", cfg.default_lease_ttl),
    max_lease_ttl: ttlField("max", cfg.max_lease_ttl),
    token_type: has(cfg, "token_type") ? tokenTypeField(cfg.token_type) : "",
  };
  if (config.max_lease_ttl !== 0 && config.default_lease_ttl > config.max_lease_ttl) {
    throw new DevHttpError(400, "given default lease TTL greater than given max lease TTL");
  }
  if (config.default_lease_ttl > limits.systemMaxLeaseTtl && config.max_lease_ttl === 0) {
    throw new DevHttpError(
      400,
      `given default lease TTL greater than system max lease TTL of ${limits.systemMaxLeaseTtl}`,
    );
  }
  if (has(cfg, "listing_visibility")) config.listing_visibility = listingField(cfg.listing_visibility);
  for (const key of LIST_CONFIG_KEYS) if (has(cfg, key)) config[key] = listField(key, cfg[key]);
  if (has(cfg, "identity_token_key"))
    config.identity_token_key = readString("identity_token_key", cfg.identity_token_key);

  const type = body.type === undefined ? "" : readString("type", body.type);
  if (type === "") throw new DevHttpError(400, "backend type must be specified as a string");
  if (type === "token") throw new DevHttpError(400, "token credential backend cannot be instantiated");
  if (type !== limits.methodType) throw new DevHttpError(400, `plugin not found in the catalog: ${type}`);

  return {
    path,
    type,
    description: body.description === undefined ? "" : readString("description", body.description),
    accessor: accessorFor(type),
    uuid: randomUUID(),
    local: body.local === undefined ? false : readBool("local", body.local),
    seal_wrap: body.seal_wrap === undefined ? false : readBool("seal_wrap", body.seal_wrap),
    external_entropy_access:
      body.external_entropy_access === undefined
        ? false
        : readBool("external_entropy_access", body.external_entropy_access),
    options: optionsField(body.options),
    // The version comes from `config` only: a `plugin_version` beside `type` is not read (Vault and OpenBao).
    plugin_version: cfg.plugin_version === undefined ? "" : pluginVersionField(cfg.plugin_version, type, limits),
    config,
  };
}

function optionalConfig(c: MountConfig, out: Record<string, unknown>): void {
  if (c.listing_visibility !== undefined && c.listing_visibility !== "") out.listing_visibility = c.listing_visibility;
  for (const key of LIST_CONFIG_KEYS) {
    const v = c[key];
    if (v !== undefined && v.length > 0) out[key] = [...v];
  }
  if (c.identity_token_key !== undefined && c.identity_token_key !== "") out.identity_token_key = c.identity_token_key;
  if (c.user_lockout_config !== undefined) out.user_lockout_config = { ...c.user_lockout_config };
}

/** Returns a mount as `GET /sys/auth` and `GET /sys/auth/<path>` show it (own TTLs, 0 = inherit). */
export function mountInfo(m: AuthMount, limits: MountLimits): Record<string, unknown> {
  const config: Record<string, unknown> = {
    default_lease_ttl: m.config.default_lease_ttl,
    force_no_cache: false,
    max_lease_ttl: m.config.max_lease_ttl,
    token_type: m.config.token_type === "" ? "default-service" : m.config.token_type,
  };
  optionalConfig(m.config, config);
  return {
    accessor: m.accessor,
    config,
    deprecation_status: "supported",
    description: m.description,
    external_entropy_access: m.external_entropy_access,
    local: m.local,
    options: m.options === null ? null : { ...m.options },
    plugin_version: m.plugin_version,
    running_plugin_version: m.type === "token" ? "v1.19.0+builtin.vault" : limits.release.runningPluginVersion,
    running_sha256: m.type === "token" ? "" : limits.release.runningSha256,
    seal_wrap: m.seal_wrap,
    type: m.type,
    uuid: m.uuid,
  };
}

/** Returns a mount's tune data: effective integer-second TTLs and the effective token type. */
export function tuneInfo(m: AuthMount, limits: MountLimits): Record<string, unknown> {
  const out: Record<string, unknown> = {
    default_lease_ttl: m.config.default_lease_ttl || limits.systemDefaultLeaseTtl,
    description: m.description,
    force_no_cache: false,
    max_lease_ttl: m.config.max_lease_ttl || limits.systemMaxLeaseTtl,
    token_type: m.config.token_type === "" ? "default-service" : m.config.token_type,
  };
  optionalConfig(m.config, out);
  if (m.options !== null) out.options = { ...m.options };
  if (m.plugin_version !== "") out.plugin_version = m.plugin_version;
  return out;
}

/** Applies a tune request to a copy of the mount (only the fields present); throws 400 on bad input. */
export function tuneMount(m: AuthMount, body: Readonly<Record<string, unknown>>, limits: MountLimits): AuthMount {
  const config: MountConfig = { ...m.config };
  let def: number | undefined;
  let max: number | undefined;
  if (has(body, "default_lease_ttl") && body.default_lease_ttl !== "")
    def = ttlField("default", body.default_lease_ttl);
  if (has(body, "max_lease_ttl") && body.max_lease_ttl !== "") max = ttlField("max", body.max_lease_ttl);
  if (def !== undefined || max !== undefined) {
    const newDef = def ?? config.default_lease_ttl;
    const newMax = max ?? config.max_lease_ttl;
    if (newDef !== 0 && newMax !== 0 && newMax < newDef) {
      throw new DevHttpError(
        400,
        `backend max lease TTL of ${newMax} would be less than backend default lease TTL of ${newDef}`,
      );
    }
    config.default_lease_ttl = newDef;
    config.max_lease_ttl = newMax;
  }
  if (has(body, "token_type")) config.token_type = tokenTypeField(body.token_type);
  if (has(body, "listing_visibility")) config.listing_visibility = listingField(body.listing_visibility);
  for (const key of LIST_CONFIG_KEYS) if (has(body, key)) config[key] = listField(key, body[key]);
  if (has(body, "identity_token_key"))
    config.identity_token_key = readString("identity_token_key", body.identity_token_key);
  if (has(body, "user_lockout_config")) {
    const u = body.user_lockout_config;
    if (typeof u !== "object" || u === null || Array.isArray(u))
      throw new DevHttpError(400, "user_lockout_config must be an object");
    config.user_lockout_config = { ...(u as Record<string, unknown>) };
  }
  const out: AuthMount = { ...m, config };
  // A tune's plugin_version pins the mount's own version (the one the mount list shows), run after a reload.
  if (has(body, "plugin_version")) out.plugin_version = pluginVersionField(body.plugin_version, m.type, limits);
  if (has(body, "description")) out.description = readString("description", body.description);
  if (has(body, "options")) {
    const opts = optionsField(body.options);
    out.options = opts === null ? m.options : { ...(m.options ?? {}), ...opts };
  }
  return out;
}

/** Returns the mount's effective max lease TTL in seconds. */
export function effectiveMaxTtl(m: AuthMount, limits: MountLimits): number {
  return m.config.max_lease_ttl || limits.systemMaxLeaseTtl;
}

/** Returns the mount's effective default lease TTL in seconds. */
export function effectiveDefaultTtl(m: AuthMount, limits: MountLimits): number {
  return m.config.default_lease_ttl || limits.systemDefaultLeaseTtl;
}
