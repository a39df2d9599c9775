import { isIP } from "node:net";
import { DevHttpError } from "../../core/errors";
import { restoreRecord } from "../../core/migrate";
import {
  goDuration,
  goQuote,
  has,
  readBool,
  readDuration,
  readInt,
  readString,
  readStringList,
  sanitizePolicies,
  unknownFieldsWarning,
} from "./values";

/**
 * Roles of the cloud auth method (`auth/<mount>/role/<name>`): names are stored lowercased, writes merge
 * (an omitted key keeps its value; an explicit `[]` clears a list), the token settings follow the shared
 * token-field rules, and the deprecated aliases (policies, ttl, max_ttl, period, num_uses) keep working.
 */

/** Role name pattern of the real service (word characters, `-` and `.`, word characters at both ends). */
export const ROLE_NAME = /^[A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?$/;

/** The six bound lists. */
const BOUND_KEYS = [
  "bound_service_principal_ids",
  "bound_group_ids",
  "bound_locations",
  "bound_subscription_ids",
  "bound_resource_groups",
  "bound_scale_sets",
] as const;

/** A stored role (durations in seconds); a bound list is null until a write sets it. */
export interface Role {
  bound_service_principal_ids: string[] | null;
  bound_group_ids: string[] | null;
  bound_locations: string[] | null;
  bound_subscription_ids: string[] | null;
  bound_resource_groups: string[] | null;
  bound_scale_sets: string[] | null;
  token_bound_cidrs: string[];
  token_explicit_max_ttl: number;
  token_max_ttl: number;
  token_no_default_policy: boolean;
  token_num_uses: number;
  token_period: number;
  token_policies: string[];
  token_ttl: number;
  /** `default`, `service` or `batch`. */
  token_type: string;
  policies: string[];
  num_uses: number;
  ttl: number;
  max_ttl: number;
  period: number;
}

const TOKEN_FIELDS = [
  "token_bound_cidrs",
  "token_explicit_max_ttl",
  "token_max_ttl",
  "token_no_default_policy",
  "token_num_uses",
  "token_period",
  "token_policies",
  "token_ttl",
  "token_type",
];
const LEGACY_FIELDS = ["policies", "num_uses", "ttl", "max_ttl", "period"];
const KNOWN_FIELDS: ReadonlySet<string> = new Set([...BOUND_KEYS, ...TOKEN_FIELDS, ...LEGACY_FIELDS, "name"]);

function newRole(): Role {
  return {
    bound_service_principal_ids: null,
    bound_group_ids: null,
    bound_locations: null,
    bound_subscription_ids: null,
    bound_resource_groups: null,
    bound_scale_sets: null,
    token_bound_cidrs: [],
    token_explicit_max_ttl: 0,
    token_max_ttl: 0,
    token_no_default_policy: false,
    token_num_uses: 0,
    token_period: 0,
    token_policies: [],
    token_ttl: 0,
    token_type: "default",
    policies: [],
    num_uses: 0,
    ttl: 0,
    max_ttl: 0,
    period: 0,
  };
}

/** Parses one bound-CIDR entry; returns its canonical text (a host address without `/32` or `/128`). */
function parseCidr(text: string): string | undefined {
  const [addr, prefix, extra] = text.trim().split("/");
  if (addr === undefined || extra !== undefined) return undefined;
  const family = isIP(addr);
  if (family === 0) return undefined;
  if (prefix === undefined) return addr.toLowerCase();
  if (!/^[0-9]{1,3}$/.test(prefix)) return undefined;
  const bits = Number(prefix);
  const full = family === 4 ? 32 : 128;
  if (bits > full) return undefined;
  return bits === full ? addr.toLowerCase() : `${addr.toLowerCase()}/${bits}`;
}

function readCidrs(value: unknown): string[] {
  return readStringList("token_bound_cidrs", value)
    .filter((s) => s !== "")
    .map((s) => {
      const parsed = parseCidr(s);
      if (parsed === undefined) {
        throw new DevHttpError(
          400,
          `error parsing address ${goQuote(s)}: Unable to convert ${goQuote(s)} to an IPv4 or IPv6 address, or a UNIX Socket`,
        );
      }
      return parsed;
    });
}

/** Returns the role with the legacy values folded into the token fields, as the method reads it. */
export function effectiveRole(stored: Role): Role {
  const r = { ...stored };
  if (r.token_ttl === 0 && r.ttl > 0) r.token_ttl = r.ttl;
  if (r.token_max_ttl === 0 && r.max_ttl > 0) r.token_max_ttl = r.max_ttl;
  if (r.token_period === 0 && r.period > 0) r.token_period = r.period;
  if (r.token_num_uses === 0 && r.num_uses > 0) r.token_num_uses = r.num_uses;
  if (r.token_policies.length === 0 && r.policies.length > 0) r.token_policies = r.policies;
  return r;
}

function upgrade<K extends "ttl" | "max_ttl" | "period" | "num_uses">(
  role: Role,
  body: Readonly<Record<string, unknown>>,
  oldKey: K,
  newKey: "token_ttl" | "token_max_ttl" | "token_period" | "token_num_uses",
  parse: (field: string, v: unknown) => number,
): void {
  if (!has(body, newKey)) {
    if (has(body, oldKey)) {
      role[oldKey] = parse(oldKey, body[oldKey]);
      role[newKey] = role[oldKey];
    }
  } else {
    role[oldKey] = has(body, oldKey) ? role[newKey] : 0;
  }
}

/**
 * Applies a role write to the stored role (undefined when creating); resolves to the new role and warnings.
 * `mountMaxTtl` is the mount's effective max lease TTL in seconds. Throws 400 with the real texts.
 */
export function writeRole(
  existing: Role | undefined,
  body: Readonly<Record<string, unknown>>,
  mountMaxTtl: number,
): { role: Role; warnings: string[] } {
  const role: Role = existing === undefined ? newRole() : { ...existing };

  // Shared token fields first, in the order the real parser checks them.
  if (has(body, "token_bound_cidrs")) role.token_bound_cidrs = readCidrs(body.token_bound_cidrs);
  if (has(body, "token_explicit_max_ttl"))
    role.token_explicit_max_ttl = readDuration("token_explicit_max_ttl", body.token_explicit_max_ttl);
  if (has(body, "token_max_ttl")) role.token_max_ttl = readDuration("token_max_ttl", body.token_max_ttl);
  if (role.token_max_ttl < 0) throw new DevHttpError(400, "'token_max_ttl' cannot be negative");
  if (has(body, "token_no_default_policy"))
    role.token_no_default_policy = readBool("token_no_default_policy", body.token_no_default_policy);
  if (has(body, "token_period")) role.token_period = readDuration("token_period", body.token_period);
  if (role.token_period < 0) throw new DevHttpError(400, "'token_period' cannot be negative");
  if (has(body, "token_policies")) role.token_policies = readStringList("token_policies", body.token_policies);
  if (has(body, "token_type")) {
    const t = readString("token_type", body.token_type);
    if (t === "" || t === "default") role.token_type = "default";
    else if (t === "service" || t === "batch") role.token_type = t;
    else throw new DevHttpError(400, `invalid 'token_type' value ${goQuote(t)}`);
  }
  if (has(body, "token_num_uses")) role.token_num_uses = readInt("token_num_uses", body.token_num_uses);
  if (role.token_num_uses < 0) throw new DevHttpError(400, "'token_num_uses' cannot be negative");
  if (role.token_type === "batch") {
    if (role.token_period !== 0) {
      throw new DevHttpError(
        400,
        "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens",
      );
    }
    if (role.token_num_uses !== 0) {
      throw new DevHttpError(
        400,
        "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count",
      );
    }
  }
  if (has(body, "token_ttl")) role.token_ttl = readDuration("token_ttl", body.token_ttl);
  if (role.token_ttl < 0) throw new DevHttpError(400, "'token_ttl' cannot be negative");
  if (role.token_ttl > 0 && role.token_max_ttl > 0 && role.token_ttl > role.token_max_ttl) {
    throw new DevHttpError(400, "'token_ttl' cannot be greater than 'token_max_ttl'");
  }

  // Deprecated aliases: a legacy key alone sets both; a token_* key zeroes the legacy one unless both came.
  if (!has(body, "token_policies")) {
    if (has(body, "policies")) {
      role.policies = sanitizePolicies(readStringList("policies", body.policies), false);
      role.token_policies = role.policies;
    }
  } else {
    role.policies = has(body, "policies") ? role.token_policies : [];
  }
  upgrade(role, body, "num_uses", "token_num_uses", readInt);
  upgrade(role, body, "ttl", "token_ttl", readDuration);
  upgrade(role, body, "max_ttl", "token_max_ttl", readDuration);
  upgrade(role, body, "period", "token_period", readDuration);

  if (role.token_period > mountMaxTtl) {
    throw new DevHttpError(
      400,
      `token period of ${goQuote(goDuration(role.token_period))} is greater than the backend's maximum lease TTL of ${goQuote(goDuration(mountMaxTtl))}`,
    );
  }
  if (role.token_num_uses < 0) throw new DevHttpError(400, "token num uses cannot be negative");

  for (const key of BOUND_KEYS) if (has(body, key)) role[key] = readStringList(key, body[key]);
  if (BOUND_KEYS.every((k) => (role[k] ?? []).length === 0)) {
    throw new DevHttpError(400, "must have at least one bound constraint when creating/updating a role");
  }
  if (role.token_max_ttl > 0 && role.token_ttl > role.token_max_ttl) {
    throw new DevHttpError(400, "ttl should not be greater than max_ttl");
  }
  const warnings = unknownFieldsWarning(body, KNOWN_FIELDS);
  if (role.token_max_ttl > mountMaxTtl) {
    warnings.push(
      "max_ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated",
    );
  }
  return { role, warnings };
}

/** Returns a role as a read shows it. */
export function readRole(stored: Role): Record<string, unknown> {
  const r = effectiveRole(stored);
  const out: Record<string, unknown> = {};
  for (const key of BOUND_KEYS) out[key] = r[key] === null ? null : [...r[key]];
  out.token_bound_cidrs = [...r.token_bound_cidrs];
  out.token_explicit_max_ttl = r.token_explicit_max_ttl;
  out.token_max_ttl = r.token_max_ttl;
  out.token_no_default_policy = r.token_no_default_policy;
  out.token_period = r.token_period;
  out.token_policies = [...r.token_policies];
  out.token_type = r.token_type;
  out.token_ttl = r.token_ttl;
  out.token_num_uses = r.token_num_uses;
  if (stored.policies.length > 0) out.policies = [...r.token_policies];
  if (stored.ttl > 0) out.ttl = stored.ttl;
  if (stored.max_ttl > 0) out.max_ttl = stored.max_ttl;
  if (stored.period > 0) out.period = stored.period;
  if (stored.num_uses > 0) out.num_uses = stored.num_uses;
  return out;
}

const isStringList = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === "string");
const isBoundList = (v: unknown): boolean => v === null || isStringList(v);

/**
 * Restores a persisted role: a field it lacks (written before the field existed) gets the default of a new
 * role; undefined when a field it holds has the wrong type.
 */
export function restoreRole(data: unknown): Role | undefined {
  return restoreRecord(newRole(), data, Object.fromEntries(BOUND_KEYS.map((k) => [k, isBoundList])));
}
