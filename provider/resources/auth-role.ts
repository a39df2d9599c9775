/**
 * AuthRole: a role of an auth method mount, tying cloud identities and constraints to token policies.
 *
 * The service merges role writes (an omitted key keeps its stored value), so every write sends every field,
 * `[]` and zeros included: removing a list from the program really clears it on the service (the
 * Terraform provider's #884 left it in place forever).
 */
import { isIP } from "node:net";
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { z } from "zod";
import { ResourceError, UsageError } from "../errors";
import {
  canonicalCidr,
  canonicalRoleName,
  cleanList,
  durationSeconds,
  sameSet,
  trimMountPath,
} from "../clients/secrets/normalize";
import { StringOrListSchema, type RoleRead, type RoleWrite } from "../schemas/secrets";
import {
  checkObjectInputs,
  mountMissingHint,
  mountPathSchema,
  refreshed,
  reportWarnings,
  secretsClient,
  warn,
  wholeNumber,
} from "./auth-common";
import { MOVED, connectionChange, connectionSchema, type Connection } from "./connection";
import {
  ResourceInitError,
  canonicalJson,
  copyInputs,
  containsUnknown,
  definedDeep,
  hasForeignPrototype,
  writeWithReadBack,
  type ProviderImpl,
  type ReadBack,
} from "./common";
import { SCHEMA_VERSION } from "./migrate";

const RESOURCE = "AuthRole";

// The service's name rule: word characters, '-' and '.', starting and ending with a word character.
const NAME_PATTERN = /^\w(?:[\w.-]*\w)?$/;

const duration = z
  .union([z.number().int(), z.string()])
  .refine((v) => durationSeconds(v) !== undefined, 'must be a duration: seconds, or a string such as "90s" or "1h"')
  .refine((v) => (durationSeconds(v) ?? 0) >= 0, "must not be negative");
const list = StringOrListSchema.transform(cleanList);

function isCidr(s: string): boolean {
  const [addr, bits, ...rest] = s.split("/");
  if (rest.length > 0 || addr === undefined) return false;
  const family = isIP(addr);
  if (family === 0) return false;
  if (bits === undefined) return true;
  if (!/^\d+$/.test(bits)) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}

/** The inputs of an AuthRole after `check`: lists are arrays, the name is lowercase. */
export const AuthRoleInputsSchema = z.object({
  mount: mountPathSchema('must be the path of an auth mount, such as "cloud"'),
  name: z
    .string()
    .regex(NAME_PATTERN, "must be letters, digits, '_', '-' and '.', starting and ending with a letter, digit or '_'")
    .transform(canonicalRoleName),
  /** The spec's name for the role's policies; the same list as `tokenPolicies`, which it fills. */
  policies: list.optional(),
  tokenPolicies: list.optional(),
  boundServicePrincipalIds: list.optional(),
  boundGroupIds: list.optional(),
  boundLocations: list.optional(),
  boundSubscriptionIds: list.optional(),
  boundResourceGroups: list.optional(),
  boundScaleSets: list.optional(),
  tokenTtl: duration.optional(),
  tokenMaxTtl: duration.optional(),
  tokenExplicitMaxTtl: duration.optional(),
  tokenPeriod: duration.optional(),
  tokenNumUses: wholeNumber().optional(),
  tokenBoundCidrs: list.pipe(z.array(z.string().refine(isCidr, "must be an IP address or a CIDR block"))).optional(),
  tokenNoDefaultPolicy: z.boolean().optional(),
  tokenType: z.enum(["default", "service", "batch"]).optional(),
  adopt: z.boolean().optional(),
  /** Where the role lives (see ./connection.ts); without one, stack config then the environment. */
  connection: connectionSchema("secrets").optional(),
});

/** The inputs of an AuthRole. */
export type AuthRoleInputs = z.infer<typeof AuthRoleInputsSchema>;

/** The outputs (state) of an AuthRole: every input. */
export interface AuthRoleOutputs extends AuthRoleInputs {
  /** Set when the last write's outcome is unknown: the next `up` writes the role again. */
  incomplete?: boolean;
  schemaVersion: number;
}

const LISTS = {
  tokenPolicies: "token_policies",
  boundServicePrincipalIds: "bound_service_principal_ids",
  boundGroupIds: "bound_group_ids",
  boundLocations: "bound_locations",
  boundSubscriptionIds: "bound_subscription_ids",
  boundResourceGroups: "bound_resource_groups",
  boundScaleSets: "bound_scale_sets",
  tokenBoundCidrs: "token_bound_cidrs",
} as const;
type ListKey = keyof typeof LISTS;
const LIST_KEYS = Object.keys(LISTS) as ListKey[];
const BOUND_KEYS: readonly ListKey[] = [
  "boundServicePrincipalIds",
  "boundGroupIds",
  "boundLocations",
  "boundSubscriptionIds",
  "boundResourceGroups",
  "boundScaleSets",
];

const DURATIONS = {
  tokenTtl: "token_ttl",
  tokenMaxTtl: "token_max_ttl",
  tokenExplicitMaxTtl: "token_explicit_max_ttl",
  tokenPeriod: "token_period",
} as const;
type DurationKey = keyof typeof DURATIONS;
const DURATION_KEYS = Object.keys(DURATIONS) as DurationKey[];

function secs(v: string | number | undefined): number {
  return v === undefined ? 0 : (durationSeconds(v) ?? 0);
}

function sameList(key: ListKey, a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  if (key === "tokenBoundCidrs") return sameSet(cleanList(a).map(canonicalCidr), cleanList(b).map(canonicalCidr));
  return sameSet(a, b);
}

/**
 * Checks AuthRole inputs against what the service refuses (name rule, no bound constraint, ttl above
 * max ttl, batch tokens with a period or a use count, negative values); warns (../log.ts) about a role the
 * service saves but that can never log in. Failures name the property.
 */
export function checkAuthRole(
  given: Record<string, unknown>,
  options: { warnLoginRule?: boolean } = {},
): dynamic.CheckResult<AuthRoleInputs> {
  // Own keys only: a `__proto__` key is refused by name, never read through.
  let news = copyInputs(given);
  if (hasForeignPrototype(given)) return checkObjectInputs(RESOURCE, AuthRoleInputsSchema, given);
  // `policies` (the spec's name) and `tokenPolicies` (the service's current name) are one list.
  const samePolicies = JSON.stringify(news["policies"]) === JSON.stringify(news["tokenPolicies"]);
  if (news["policies"] !== undefined && news["tokenPolicies"] !== undefined && !samePolicies) {
    return {
      failures: [{ property: "policies", reason: "set either policies or tokenPolicies (the same list), not both" }],
    };
  }
  if (news["policies"] !== undefined) news = { ...copyInputs(news), tokenPolicies: news["policies"] };
  const res = checkObjectInputs(RESOURCE, AuthRoleInputsSchema, news);
  if (res.inputs === undefined) return res;
  const i = res.inputs;
  const failures: dynamic.CheckFailure[] = [];
  const known = (...keys: (keyof AuthRoleInputs)[]) => keys.every((k) => !containsUnknown(i[k]));
  if (known(...BOUND_KEYS) && BOUND_KEYS.every((k) => cleanList(i[k]).length === 0)) {
    failures.push({
      property: "boundServicePrincipalIds",
      reason:
        "a role needs at least one bound constraint (boundServicePrincipalIds, boundGroupIds, boundLocations, boundSubscriptionIds, boundResourceGroups or boundScaleSets)",
    });
  }
  if (known("tokenTtl", "tokenMaxTtl") && secs(i.tokenMaxTtl) > 0 && secs(i.tokenTtl) > secs(i.tokenMaxTtl)) {
    failures.push({ property: "tokenTtl", reason: "must not be greater than tokenMaxTtl" });
  }
  if (known("tokenType", "tokenPeriod", "tokenNumUses") && i.tokenType === "batch") {
    if (secs(i.tokenPeriod) > 0)
      failures.push({
        property: "tokenPeriod",
        reason: 'batch tokens cannot be periodic; remove tokenPeriod or use tokenType "service"',
      });
    if ((i.tokenNumUses ?? 0) > 0)
      failures.push({
        property: "tokenNumUses",
        reason: 'batch tokens cannot have a use limit; remove tokenNumUses or use tokenType "service"',
      });
  }
  if (failures.length > 0) return { failures };
  const problem = loginRuleProblem(i);
  if (problem !== undefined && options.warnLoginRule !== false)
    void warn(
      RESOURCE,
      i.name,
      `${problem}: the service saves it, but every login with it is refused by plugins ${LOGIN_RULE_SINCE.join(".")} and later`,
    );
  return res;
}

/** The plugin release from which login requires a specific boundServicePrincipalIds or boundGroupIds. */
export const LOGIN_RULE_SINCE = [0, 21, 0] as const;

/**
 * What is wrong with a role under the login rule of newer plugins (a non-empty boundServicePrincipalIds or
 * boundGroupIds, not both `["*"]`); undefined when it follows it or a list is not known yet.
 */
export function loginRuleProblem(i: AuthRoleInputs): string | undefined {
  if (containsUnknown(i.boundServicePrincipalIds) || containsUnknown(i.boundGroupIds)) return undefined;
  const sp = cleanList(i.boundServicePrincipalIds);
  const groups = cleanList(i.boundGroupIds);
  const star = (l: string[]) => l.length === 1 && l[0] === "*";
  if (sp.length === 0 && groups.length === 0) return "the role sets neither boundServicePrincipalIds nor boundGroupIds";
  if (star(sp) && star(groups)) return 'boundServicePrincipalIds and boundGroupIds are both ["*"]';
  return undefined;
}

/** True when a plugin version (`v0.24.0+builtin`, `0.21.0`) is the release that enforces the login rule or later. */
export function enforcesLoginRule(version: string): boolean | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return undefined;
  const v = [Number(m[1]), Number(m[2]), Number(m[3])];
  for (let k = 0; k < 3; k++) if (v[k] !== LOGIN_RULE_SINCE[k]) return (v[k] ?? 0) > (LOGIN_RULE_SINCE[k] ?? 0);
  return true;
}

/** The plugin version the mount runs, from the mount list (no sudo needed); undefined when not told. */
async function runningPluginVersion(
  mount: string,
  connection: Connection<"secrets"> | undefined,
): Promise<string | undefined> {
  try {
    const found = await secretsClient(connection).mounts.find(mount);
    const v = found?.running_plugin_version ?? found?.plugin_version;
    return v === undefined || v === "" ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * `check` of the provider: {@link checkAuthRole}, and for a role that breaks the login rule, one read of the
 * mount list: when the mount runs a plugin that enforces the rule the role is refused (it could never log
 * in), else a warning. Unchanged inputs (every preview of a role already applied) send nothing.
 */
async function checkRole(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): Promise<dynamic.CheckResult<AuthRoleInputs>> {
  const res = checkAuthRole(news, { warnLoginRule: false });
  const i = res.inputs;
  const problem = i === undefined || (res.failures ?? []).length > 0 ? undefined : loginRuleProblem(i);
  if (i === undefined || problem === undefined) return res;
  const version =
    containsUnknown(i.mount) || sameInputs(olds, i) ? undefined : await runningPluginVersion(i.mount, i.connection);
  if (version !== undefined && enforcesLoginRule(version) === true) {
    return {
      failures: [
        {
          property: "boundServicePrincipalIds",
          reason: `${problem}: the method at "${i.mount}/" runs plugin ${version}, which refuses every login with such a role; set a specific boundServicePrincipalIds or boundGroupIds`,
        },
      ],
    };
  }
  await warn(
    RESOURCE,
    i.name,
    `${problem}: the service saves it, but every login with it is refused by plugins ${LOGIN_RULE_SINCE.join(".")} and later`,
  );
  return res;
}

/** True when checked inputs equal the old ones (the engine's `__provider` left out). */
function sameInputs(olds: Record<string, unknown>, news: AuthRoleInputs): boolean {
  const { __provider: _p, ...rest } = olds;
  return canonicalJson(rest) === canonicalJson(news);
}

/** Compares desired inputs with the state: mount or name replace; every other field updates. */
export function diffAuthRole(olds: AuthRoleOutputs, news: AuthRoleInputs): dynamic.DiffResult {
  const connection = connectionChange("secrets", olds.connection, news.connection);
  if (connection === "moved") return MOVED;
  const replaces: string[] = [];
  if (containsUnknown(news.mount) || news.mount !== olds.mount) replaces.push("mount");
  if (containsUnknown(news.name) || news.name !== canonicalRoleName(olds.name)) replaces.push("name");
  if (replaces.length > 0) return { changes: true, replaces };
  if (olds.incomplete === true) return { changes: true };
  const differs =
    connection === "settings" ||
    LIST_KEYS.some((k) => containsUnknown(news[k]) || !sameList(k, news[k], olds[k])) ||
    DURATION_KEYS.some((k) => containsUnknown(news[k]) || secs(news[k]) !== secs(olds[k])) ||
    containsUnknown(news.tokenNumUses) ||
    (news.tokenNumUses ?? 0) !== (olds.tokenNumUses ?? 0) ||
    containsUnknown(news.tokenNoDefaultPolicy) ||
    (news.tokenNoDefaultPolicy ?? false) !== (olds.tokenNoDefaultPolicy ?? false) ||
    containsUnknown(news.tokenType) ||
    (news.tokenType ?? "default") !== (olds.tokenType ?? "default");
  return { changes: differs };
}

/** Returns the full role: every list (`[]` when unset) and every token setting (its zero when unset). */
export function roleBody(i: AuthRoleInputs): RoleWrite {
  const body: Record<string, unknown> = {};
  for (const k of LIST_KEYS) body[LISTS[k]] = cleanList(i[k]);
  for (const k of DURATION_KEYS) body[DURATIONS[k]] = secs(i[k]);
  body.token_num_uses = i.tokenNumUses ?? 0;
  body.token_no_default_policy = i.tokenNoDefaultPolicy ?? false;
  body.token_type = i.tokenType ?? "default";
  return body as RoleWrite;
}

function roleId(mount: string, name: string): string {
  return `auth/${mount}/role/${name}`;
}

function outputs(i: AuthRoleInputs): AuthRoleOutputs {
  return definedDeep({ ...i, schemaVersion: SCHEMA_VERSION });
}

/** Returns the inputs a refresh stores: the server's values, in the user's spelling where they mean the same. */
function observed(props: Partial<AuthRoleOutputs>, mount: string, name: string, role: RoleRead): AuthRoleInputs {
  const out: Record<string, unknown> = { mount, name, adopt: props.adopt, connection: props.connection };
  for (const k of LIST_KEYS) {
    const server = cleanList(role[LISTS[k]]);
    out[k] = refreshed<string[]>(
      props[k],
      server,
      (a, b) => sameList(k, a, b),
      (v) => v.length === 0,
    );
  }
  for (const k of DURATION_KEYS) {
    out[k] = refreshed<string | number>(
      props[k],
      role[DURATIONS[k]],
      (a, b) => secs(a) === secs(b),
      (v) => secs(v) === 0,
    );
  }
  out.tokenNumUses = refreshed<number>(
    props.tokenNumUses,
    role.token_num_uses,
    (a, b) => (a ?? 0) === b,
    (v) => v === 0,
  );
  out.tokenNoDefaultPolicy = refreshed<boolean>(
    props.tokenNoDefaultPolicy,
    role.token_no_default_policy,
    (a, b) => (a ?? false) === b,
    (v) => !v,
  );
  out.tokenType = refreshed<string>(
    props.tokenType,
    role.token_type,
    (a, b) => (a ?? "default") === b,
    (v) => v === "default",
  );
  // A role declared with `policies` (the spec's name of `tokenPolicies`) keeps that key, holding the same list.
  if (props.policies !== undefined) out.policies = out.tokenPolicies ?? [];
  return definedDeep(out) as AuthRoleInputs;
}

async function write(i: AuthRoleInputs): Promise<void> {
  try {
    const res = await secretsClient(i.connection).roles.write(i.mount, i.name, roleBody(i));
    reportWarnings(RESOURCE, roleId(i.mount, i.name), res.warnings);
  } catch (e) {
    throw mountMissingHint(e, i.mount);
  }
}

/** True when a role as the service reports it holds what these inputs write. */
function sameRole(role: RoleRead, i: AuthRoleInputs): boolean {
  const seen = outputs(observed({}, i.mount, i.name, role));
  return !diffAuthRole(seen, i).changes;
}

/** Writes the role; when the write's outcome stays unknown, reads it back to tell whether it was applied. */
async function writeConfirmed(i: AuthRoleInputs, before: AuthRoleInputs | undefined): Promise<void> {
  const readBack = async (): Promise<ReadBack> => {
    const role = await secretsClient(i.connection).roles.read(i.mount, i.name);
    if (role === undefined) return "not-applied";
    if (sameRole(role, i)) return "applied";
    return before !== undefined && sameRole(role, before) ? "not-applied" : "unsure";
  };
  try {
    await writeWithReadBack(`${RESOURCE} "${roleId(i.mount, i.name)}": write`, () => write(i), readBack);
  } catch (e) {
    if (!ResourceError.is(e, "outcome_unknown")) throw e;
    throw new ResourceInitError(
      `${e.message}. It is kept in the stack as unfinished; run \`pulumi up\` again to write it.`,
      roleId(i.mount, i.name),
      {
        ...outputs(i),
        incomplete: true,
      },
    );
  }
}

async function create(news: AuthRoleInputs): Promise<dynamic.CreateResult<AuthRoleOutputs>> {
  const existing = await secretsClient(news.connection).roles.read(news.mount, news.name);
  // A role that holds exactly what this resource writes is the one an earlier, unconfirmed create wrote
  // (its answer lost); writing it again is safe. Any other role of that name is someone else's.
  if (existing !== undefined && news.adopt !== true && !sameRole(existing, news)) {
    throw new ResourceError(
      "already_exists",
      `${RESOURCE} "${roleId(news.mount, news.name)}": a role named "${news.name}" already exists on "${news.mount}/". Set adopt: true ` +
        "to take it over (it is then overwritten with this resource's settings), or choose another name.",
    );
  }
  await writeConfirmed(news, existing === undefined ? undefined : observed({}, news.mount, news.name, existing));
  return { id: roleId(news.mount, news.name), outs: outputs(news) };
}

async function update(
  _id: string,
  olds: AuthRoleOutputs,
  news: AuthRoleInputs,
): Promise<dynamic.UpdateResult<AuthRoleOutputs>> {
  await writeConfirmed(news, olds.incomplete === true ? undefined : olds);
  return { outs: outputs(news) };
}

function locate(id: string, props: Partial<AuthRoleOutputs> | undefined): { mount: string; name: string } {
  if (props?.mount !== undefined && props.name !== undefined)
    return { mount: props.mount, name: canonicalRoleName(props.name) };
  const m = /^auth\/(.+)\/role\/([^/]+)$/.exec(id);
  if (!m) throw new UsageError(`${RESOURCE}: "${id}" is not an AuthRole ID (auth/<mount>/role/<name>)`);
  return { mount: trimMountPath(m[1] ?? ""), name: canonicalRoleName(m[2] ?? "") };
}

async function read(id: string, props: AuthRoleOutputs): Promise<dynamic.ReadResult<AuthRoleOutputs>> {
  const { mount, name } = locate(id, props);
  const role = await secretsClient(props?.connection).roles.read(mount, name);
  if (role === undefined) return {};
  const inputs = observed(props ?? {}, mount, name, role);
  // Pulumi types ReadResult.inputs as the outputs type; the engine stores it as the new inputs.
  return { id: roleId(mount, name), props: outputs(inputs), inputs: inputs as AuthRoleOutputs };
}

async function remove(id: string, props: AuthRoleOutputs): Promise<void> {
  const { mount, name } = locate(id, props);
  await secretsClient(props?.connection).roles.delete(mount, name);
}

/** The AuthRole provider. */
export const authRole: ProviderImpl<AuthRoleInputs, AuthRoleOutputs> = {
  check: checkRole,
  diff: async (_id, olds, news) => diffAuthRole(olds, news),
  create,
  read,
  update,
  delete: remove,
};
