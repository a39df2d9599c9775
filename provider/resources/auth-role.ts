/**
 * AuthRole: a role of an auth method mount, tying cloud identities and constraints to token policies.
 *
 * The service merges role writes (an omitted key keeps its stored value), so every write sends every field,
 * `[]` and zeros included: removing a list from the program really clears it on the service (the
 * Terraform provider's #884 left it in place forever).
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { UsageError } from "../errors";
import { canonicalRoleName, trimMountPath } from "../clients/secrets/normalize";
import { cleanList } from "../values";
import type { RoleRead, RoleWrite } from "../schemas/secrets";
import {
  checkObjectInputs,
  mountFollow,
  mountMissingHint,
  reportWarnings,
  secretsClient,
  sendWhenRouted,
  whenRouted,
  warn,
} from "./auth-common";
import { MOVED, connectionChange, type Connection } from "./connection";
import {
  canonicalJson,
  copyInputs,
  containsUnknown,
  definedDeep,
  hasForeignPrototype,
  type ProviderImpl,
} from "./common";
import { inputsSchema, replaceKeys, settingKeys, type InputsOf, type OutputsOf } from "./definition";
import { refreshedSetting, sameValue, seconds as secs, wireBody } from "./setting-values";
import { authRoleDefinition as DEF } from "./definitions/auth-role";
import { WRITE_AGAIN, confirmedWrite, movedWithMount, recordProvider, refuseUnlessOwn, stateOf } from "./record";

const RESOURCE = DEF.name;
const FIELDS = DEF.fields;

/** The inputs of an AuthRole after `check`: lists are arrays, the name is lowercase. */
const AuthRoleInputsSchema = inputsSchema(DEF);

/**
 * The inputs of an AuthRole.
 */
type AuthRoleInputs = InputsOf<typeof DEF>;

/**
 * The outputs (state) of an AuthRole: every input, `schemaVersion`, and `incomplete` after an unknown outcome.
 */
type AuthRoleOutputs = OutputsOf<typeof DEF>;

const REPLACE_KEYS = replaceKeys(DEF);
const SETTINGS = settingKeys(DEF);
const BOUND_KEYS = [
  "boundServicePrincipalIds",
  "boundGroupIds",
  "boundLocations",
  "boundSubscriptionIds",
  "boundResourceGroups",
  "boundScaleSets",
] as const satisfies readonly (keyof AuthRoleInputs)[];

/**
 * Checks AuthRole inputs against what the service refuses (name rule, no bound constraint, ttl above
 * max ttl, batch tokens with a period or a use count, negative values); warns (../log.ts) about a role the
 * service saves but that can never log in. Failures name the property.
 */
function checkAuthRole(
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
const LOGIN_RULE_SINCE = [0, 21, 0] as const;

/**
 * What is wrong with a role under the login rule of newer plugins (a non-empty boundServicePrincipalIds or
 * boundGroupIds, not both `["*"]`); undefined when it follows it or a list is not known yet.
 */
function loginRuleProblem(i: AuthRoleInputs): string | undefined {
  if (containsUnknown(i.boundServicePrincipalIds) || containsUnknown(i.boundGroupIds)) return undefined;
  const sp = cleanList(i.boundServicePrincipalIds);
  const groups = cleanList(i.boundGroupIds);
  const star = (l: string[]) => l.length === 1 && l[0] === "*";
  if (sp.length === 0 && groups.length === 0) return "the role sets neither boundServicePrincipalIds nor boundGroupIds";
  if (star(sp) && star(groups)) return 'boundServicePrincipalIds and boundGroupIds are both ["*"]';
  return undefined;
}

/**
 * True when a plugin version (`v0.24.0+builtin`, `0.21.0`) is the release that enforces the login rule or later.
 */
function enforcesLoginRule(version: string): boolean | undefined {
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

/**
 * Compares desired inputs with the state: a source field replaces; every setting updates.
 */
function diffAuthRole(olds: AuthRoleOutputs, news: AuthRoleInputs): dynamic.DiffResult {
  const connection = connectionChange("secrets", olds.connection, news.connection);
  if (connection === "moved") return MOVED;
  const follow = mountFollow(olds, news);
  const replaces = [
    ...(typeof follow === "object" ? [follow.replaces] : []),
    ...REPLACE_KEYS.filter(
      (k) => k !== "mount" && (containsUnknown(news[k]) || !sameValue(FIELDS[k], news[k], olds[k])),
    ),
  ];
  if (replaces.length > 0) return { changes: true, replaces };
  if (olds.incomplete === true || follow === "moved") return { changes: true };
  const differs =
    connection === "settings" ||
    news.mountAccessor !== olds.mountAccessor ||
    SETTINGS.some(([k, f]) => containsUnknown(news[k]) || !sameValue(f, news[k], olds[k]));
  return { changes: differs };
}

/**
 * Returns the full role: every list (`[]` when unset) and every token setting (its zero when unset).
 */
function roleBody(i: AuthRoleInputs): RoleWrite {
  return wireBody(DEF, i) as RoleWrite;
}

/** Where a role lives: its mount and its name. */
type RolePlace = { mount: string; name: string };

function roleId(p: RolePlace): string {
  return `auth/${p.mount}/role/${p.name}`;
}

/** Returns the inputs a refresh stores: the server's values, in the user's spelling where they mean the same. */
function observed(props: Partial<AuthRoleOutputs>, p: RolePlace, role: RoleRead): AuthRoleInputs {
  const out: Record<string, unknown> = {
    mount: p.mount,
    mountAccessor: props.mountAccessor,
    name: p.name,
    adopt: props.adopt,
    connection: props.connection,
  };
  for (const [k, f] of SETTINGS) out[k] = refreshedSetting(f, props[k], role);
  // A role declared with `policies` (the spec's name of `tokenPolicies`) keeps that key, holding the same list.
  if (props.policies !== undefined) out.policies = out.tokenPolicies ?? [];
  return definedDeep(out) as AuthRoleInputs;
}

/** True when a role as the service reports it holds what these inputs write. */
function sameRole(role: RoleRead, i: AuthRoleInputs): boolean {
  const seen = stateOf(observed(i, i, role));
  return !diffAuthRole(seen, i).changes;
}

function fetchRole(p: RolePlace, connection: AuthRoleInputs["connection"]): Promise<RoleRead | undefined> {
  const client = secretsClient(connection);
  return whenRouted(client, p.mount, () => client.roles.read(p.mount, p.name, { unroutedThrows: true }), undefined);
}

function locate(id: string, props: Partial<AuthRoleOutputs>): RolePlace {
  if (props.mount !== undefined && props.name !== undefined)
    return { mount: props.mount, name: canonicalRoleName(props.name) };
  const m = /^auth\/(.+)\/role\/([^/]+)$/.exec(id);
  if (!m) throw new UsageError(`${RESOURCE}: "${id}" is not an AuthRole ID (auth/<mount>/role/<name>)`);
  return { mount: trimMountPath(m[1] ?? ""), name: canonicalRoleName(m[2] ?? "") };
}

/**
 * The AuthRole provider: the record lifecycle (./record.ts) with a role's rules.
 * @public required by name: ../index.ts loads this module and takes the export named after the kind.
 */
export const authRole: ProviderImpl<AuthRoleInputs, AuthRoleOutputs> = recordProvider({
  resource: RESOURCE,
  check: checkRole,
  diff: async (olds: AuthRoleOutputs, news: AuthRoleInputs) => diffAuthRole(olds, news),
  place: (i: AuthRoleInputs): RolePlace => ({ mount: i.mount, name: i.name }),
  locate,
  id: roleId,
  fetch: fetchRole,
  remove: (p, connection) => {
    const client = secretsClient(connection);
    return whenRouted(client, p.mount, () => client.roles.delete(p.mount, p.name, { unroutedThrows: true }), false);
  },
  observed,
  outputs: (i: AuthRoleInputs, _learned: undefined): AuthRoleOutputs => stateOf(i),
  create: {
    start(news, found, p) {
      refuseUnlessOwn(
        RESOURCE,
        roleId(p),
        news,
        found,
        sameRole,
        `a role named "${news.name}" already exists on "${news.mount}/". Set adopt: true ` +
          "to take it over (it is then overwritten with this resource's settings), or choose another name.",
      );
      return found === undefined ? undefined : observed({}, p, found);
    },
  },
  async update(olds, news) {
    const moved =
      olds.incomplete !== true &&
      (await movedWithMount(
        olds,
        news,
        [],
        () => fetchRole(news, news.connection),
        (r) => sameRole(r, news),
      ));
    return moved ? { keep: undefined } : { news, from: olds.incomplete === true ? undefined : olds };
  },
  async write(news, before: AuthRoleInputs | undefined) {
    const client = secretsClient(news.connection);
    const send = async () => {
      try {
        await sendWhenRouted(async () => {
          const res = await client.roles.write(news.mount, news.name, roleBody(news));
          reportWarnings(RESOURCE, roleId(news), res.warnings);
        }, client.http.connection.retry);
      } catch (e) {
        throw mountMissingHint(e, news.mount);
      }
    };
    const readBack = { fetch: () => fetchRole(news, news.connection), holds: sameRole };
    await confirmedWrite(
      `${RESOURCE} "${roleId(news)}": write`,
      send,
      news,
      before,
      readBack,
      client.http.connection.retry,
    );
  },
  unfinished: { at: (news) => ({ id: roleId(news), learned: undefined }), sentence: () => WRITE_AGAIN },
  refresh: { learned: () => undefined },
});
