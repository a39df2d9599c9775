/**
 * AuthMount: an auth method enabled at a path of the secrets service. Type, local and seal-wrap can only be
 * set when the method is enabled, so changing them replaces the mount (deleting its config and roles);
 * description, tune settings and the plugin version change in place, and a new path moves the mount with
 * `sys/remount` (config and roles move with it; the tokens it issued are revoked). Where the server has no
 * remount (releases before 1.10), or `disableRemount` is set, a new path replaces the mount.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { z } from "zod";
import {
  isMountInUse,
  isRemountUnsupported,
  type FoundMount,
  type MountList,
  type SecretsClient,
} from "../clients/secrets";
import { trimMountPath } from "../clients/secrets/normalize";
import { durationWire } from "../values";
import { isLeaderChange } from "../http/core";
import type { TuneRequest } from "../schemas/secrets";
import { checkObjectInputs, reportWarnings, secretsClient, warn } from "./auth-common";
import { ResourceError, isOutcomeUnknown, outcomeUnknown } from "../errors";
import {
  READ_YOUR_WRITE_MS,
  ResourceInitError,
  backoff,
  canonicalJson,
  containsUnknown,
  definedDeep,
  readUntil,
  type ProviderImpl,
} from "./common";
import { SCHEMA_VERSION } from "./migrate";
import { MOVED, connectionChange } from "./connection";
import {
  inputsSchema,
  refreshedSetting,
  replaceKeys,
  sameValue,
  settingDiffers,
  settingKeys,
  subSettingKeys,
  subWireBody,
  wireBody,
  wireBodyOf,
  type InputsOf,
  type OutputsOf,
} from "./definition";
import { authMountDefinition as DEF } from "./definitions/auth-mount";

const RESOURCE = DEF.name;

/** Tune settings of a mount; only the ones set are managed. TTLs are seconds or duration strings. */
export type MountTune = NonNullable<z.infer<typeof DEF.fields.tune.schema>>;

/** The inputs of an AuthMount after `check`. */
export const AuthMountInputsSchema = inputsSchema(DEF);

/** The inputs of an AuthMount. */
export type AuthMountInputs = InputsOf<typeof DEF>;

/** The outputs (state) of an AuthMount: every input plus the accessor, and `incomplete` after an unfinished create. */
export type AuthMountOutputs = OutputsOf<typeof DEF>;

const REPLACE_KEYS = replaceKeys(DEF);
/** The mount's settings in its record (the mount list's entry): the ones fixed at enable time, and the description. */
const SETTINGS = settingKeys(DEF);
/** The top-level settings a tune changes (the ones fixed at enable time replace the mount instead). */
const TUNED = SETTINGS.filter(([, f]) => !f.replaceOnChange);
/** The settings that change in place, compared only where the program sets them (see `whenUnset`). */
const UPDATE_KEYS = (Object.keys(AuthMountInputsSchema.shape) as (keyof AuthMountInputs)[]).filter(
  (k) => DEF.fields[k].kind === "setting" && !DEF.fields[k].replaceOnChange,
);
type TuneKey = keyof MountTune;
const TUNE = subSettingKeys<TuneKey>(DEF.fields.tune);
/** Tune settings as the server writes them (a tune read's answer, or a mount list entry's `config`). */
type TuneValues = Partial<Record<string, unknown>>;

/**
 * Returns the tune request for the tune fields set in `tune` (see `subWireBody`). The tune endpoint takes
 * its TTLs as duration strings, and clears a list only when sent `[""]`.
 */
function tuneRequest(tune: MountTune | undefined): TuneRequest {
  const out = subWireBody(DEF.fields.tune, tune);
  for (const [, f] of TUNE) {
    const v = out[f.wire];
    if (f.type === "duration" && typeof v === "number") out[f.wire] = durationWire(v);
    else if (f.type === "list" && Array.isArray(v) && v.length === 0) out[f.wire] = [""];
  }
  return out as TuneRequest;
}

/** The body of a tune: the top-level settings, the tune settings set, and a new plugin version. */
function tuneBody(news: AuthMountInputs, pluginVersion: { plugin_version?: string }): TuneRequest {
  return { ...wireBodyOf(TUNED, news), ...tuneRequest(news.tune), ...pluginVersion } as TuneRequest;
}

/** Checks and normalises AuthMount inputs; failures name the property. */
export function checkAuthMount(news: Record<string, unknown>): dynamic.CheckResult<AuthMountInputs> {
  return checkObjectInputs(RESOURCE, AuthMountInputsSchema, news);
}

/** True when checked inputs equal the old ones, leaving out the accessor and the engine's `__provider`. */
function sameInputs(olds: Record<string, unknown>, news: AuthMountInputs): boolean {
  const strip = (o: Record<string, unknown>) => {
    const { accessor: _a, __provider: _p, ...rest } = o;
    return rest;
  };
  return canonicalJson(strip(olds)) === canonicalJson(strip(news as Record<string, unknown>));
}

/**
 * `check` of an existing mount: the accessor joins the checked inputs while path and type stay, so that it is
 * known in a preview (the engine takes the checked inputs as the outputs of an update it previews; an output
 * not among them is unknown). It comes from the old inputs, or once from the service.
 */
async function withAccessor(
  olds: Record<string, unknown>,
  res: dynamic.CheckResult<AuthMountInputs>,
): Promise<dynamic.CheckResult<AuthMountInputs>> {
  const i = res.inputs;
  if (i === undefined || (res.failures ?? []).length > 0 || containsUnknown(i.path) || containsUnknown(i.type))
    return res;
  if (olds.type !== i.type || olds.path === undefined) return res; // new, or replaced: a new accessor
  let accessor = typeof olds.accessor === "string" && olds.accessor !== "" ? olds.accessor : undefined;
  if (olds.path !== i.path) {
    // A move keeps the accessor (known from the old inputs here); a replacement gets a new one.
    const replaced = (olds.local ?? false) !== (i.local ?? false) || (olds.sealWrap ?? false) !== (i.sealWrap ?? false);
    if (replaced || (await pathChange(i)).how !== "remount") return res;
    // The inputs stored by a create lack it: the mount at the old path tells it (the dependents that pass
    // `mountAccessor` follow a move only when the preview knows it).
    accessor ??= await accessorAt(i, String(olds.path));
    return accessor === undefined ? res : { ...res, inputs: { ...i, accessor } as AuthMountInputs };
  }
  // Unchanged inputs (the first preview after a create: the inputs stored then lack the accessor) need no
  // lookup: the engine then shows the old outputs, accessor included, and a no-change preview sends nothing.
  if (accessor === undefined && !sameInputs(olds, i)) accessor = await accessorAt(i, i.path);
  return accessor === undefined ? res : { ...res, inputs: { ...i, accessor } as AuthMountInputs };
}

/** The accessor of the mount of this type at `path`, from the mount list; undefined when not found or not read. */
async function accessorAt(i: AuthMountInputs, path: string): Promise<string | undefined> {
  try {
    const found = await secretsClient(i.connection).mounts.find(path);
    return found !== undefined && found.type === i.type && found.accessor !== "" ? found.accessor : undefined;
  } catch {
    return undefined; // the preview shows it unknown; `diff` and `update` report the service's error
  }
}

/** How a path change is carried out: moved by `sys/remount`, or replaced (and why). */
export type PathChange = { how: "remount" } | { how: "replace"; why: string };

/**
 * Decides how a new path is applied: `disableRemount` replaces; otherwise the server is asked once whether
 * it has `sys/remount` (see `AuthMounts.hasRemount`). Only a clear "no" replaces: an unclear answer counts as
 * "has remount", and `update` then finds out for sure and refuses without changing anything.
 */
export async function pathChange(news: AuthMountInputs, client?: SecretsClient): Promise<PathChange> {
  if (news.disableRemount === true) return { how: "replace", why: "disableRemount is set" };
  const c = client ?? secretsClient(news.connection);
  // One probe per client (one per server and settings in a provider host): check and diff both ask.
  let probe = remountProbes.get(c);
  if (probe === undefined) {
    probe = c.mounts.hasRemount().catch(() => undefined);
    remountProbes.set(c, probe);
  }
  const has = await probe;
  return has === false
    ? { how: "replace", why: "the server has no sys/remount (releases before 1.10)" }
    : { how: "remount" };
}

const remountProbes = new WeakMap<SecretsClient, Promise<boolean | undefined>>();

/**
 * Compares desired inputs with the state. Type, local and sealWrap replace (delete first: one path holds
 * one mount); a new path moves the mount (`sys/remount`) unless {@link pathChange} says it cannot, then it
 * replaces too; description, tune fields and the plugin version the user set update in place. `adopt`
 * only matters at create, `disableRemount` only when the path changes.
 */
export async function diffAuthMount(
  olds: AuthMountOutputs,
  news: AuthMountInputs,
  decide: (n: AuthMountInputs) => Promise<PathChange> = pathChange,
): Promise<dynamic.DiffResult> {
  const replaces: string[] = [];
  const connection = connectionChange("secrets", olds.connection, news.connection);
  if (connection === "moved") return MOVED;
  if (olds.incomplete === true) return { changes: true };
  const pathChanged = containsUnknown(news.path) || news.path !== olds.path;
  for (const k of REPLACE_KEYS)
    if (containsUnknown(news[k]) || !sameValue(DEF.fields[k], news[k], olds[k])) replaces.push(k);
  let remount: PathChange | undefined;
  if (pathChanged) {
    // An unknown path, or one that changes with settings that replace anyway, is part of the replacement.
    remount =
      replaces.length > 0 || containsUnknown(news.path) || containsUnknown(news.disableRemount)
        ? { how: "replace", why: "" }
        : await decide(news);
    if (remount.how === "replace") replaces.unshift("path");
  }
  const changes =
    replaces.length > 0 ||
    pathChanged ||
    connection === "settings" ||
    UPDATE_KEYS.some((k) => settingDiffers(DEF.fields[k], news[k], olds[k]));
  if (replaces.length > 0) {
    const why = remount?.how === "replace" && remount.why !== "" ? ` (the path cannot move: ${remount.why})` : "";
    await warn(
      RESOURCE,
      olds.path,
      `changing ${replaces.join(", ")} disables and re-enables the auth method at "${olds.path}/"${why}: ` +
        "its config and roles are deleted with it and every token it issued is revoked",
    );
    return { changes: true, replaces, deleteBeforeReplace: true };
  }
  if (pathChanged) {
    await warn(
      RESOURCE,
      olds.path,
      `the auth method moves from "${olds.path}/" to "${news.path}/" (sys/remount): its config and roles move with it, ` +
        `but every token issued under "${olds.path}/" is revoked, and logins must use the new path`,
    );
  }
  return { changes };
}

function outputs(inputs: AuthMountInputs, accessor: string): AuthMountOutputs {
  return definedDeep({ ...inputs, accessor, schemaVersion: SCHEMA_VERSION });
}

/** Returns the inputs a refresh stores: the server's values for everything the user manages. */
function observed(old: Partial<AuthMountOutputs>, mount: FoundMount, tune: TuneValues | undefined): AuthMountInputs {
  const t: Record<string, unknown> = {};
  if (old.tune !== undefined && tune !== undefined)
    for (const [k, f] of TUNE) t[k] = refreshedSetting(f, old.tune[k], tune);
  const out: Record<string, unknown> = {
    path: mount.path,
    type: mount.type,
    tune: old.tune !== undefined ? (t as MountTune) : undefined,
    // The version the mount is pinned to is read from two fields of its record (see pinnedVersion).
    pluginVersion: old.pluginVersion !== undefined ? pinnedVersion(old.pluginVersion, mount) : undefined,
    disableRemount: old.disableRemount,
    adopt: old.adopt,
    connection: old.connection,
  };
  for (const [k, f] of SETTINGS) out[k] = refreshedSetting(f, old[k], mount);
  return definedDeep(out) as AuthMountInputs;
}

/** A plugin version as the service writes it: with a leading `v` ("" stays ""). */
function canonicalVersion(v: string | undefined): string {
  return v === undefined || v === "" || v.startsWith("v") ? (v ?? "") : `v${v}`;
}

/**
 * The plugin version a refresh stores: the one the mount is pinned to, in the user's spelling when it is
 * the same version. A mount pinned to none reports "", which differs from the user's version (so the next
 * `up` tunes it, and the server says what it thinks of that version), unless the mount runs exactly that
 * version: Vault keeps no pin for a built-in plugin's own version.
 */
function pinnedVersion(mine: string, m: FoundMount): string {
  const pinned = m.plugin_version ?? "";
  if (canonicalVersion(pinned) === canonicalVersion(mine)) return mine;
  if (pinned === "" && canonicalVersion(m.running_plugin_version) === canonicalVersion(mine)) return mine;
  return pinned;
}

/** True when a mount is what these inputs enable (the settings fixed at enable time, and the description). */
function sameMount(m: FoundMount, inputs: AuthMountInputs): boolean {
  return m.type === inputs.type && SETTINGS.every(([k, f]) => sameValue(f, inputs[k], m[f.wire]));
}

/**
 * Enables the mount. The enable is not idempotent, so it is never repeated blindly: after a failure whose
 * outcome is unknown the mount list is read, and the enable goes again only when the path is still free.
 * Resolves to "enabled" (answered, or read back as this enable's mount) or "in-use" (the path was taken).
 */
async function enable(inputs: AuthMountInputs): Promise<"enabled" | "in-use"> {
  const client = secretsClient(inputs.connection);
  const { path } = inputs;
  // The plugin version goes in `config`: that is where Vault and OpenBao read it on enable (one beside
  // `type` is silently ignored). A tune takes it at the top level.
  const config = {
    ...tuneRequest(inputs.tune),
    ...(inputs.pluginVersion !== undefined ? { plugin_version: inputs.pluginVersion } : {}),
  };
  const policy = client.http.connection.retry;
  const attempts = Math.max(1, policy.maxAttempts);
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      const res = await client.mounts.enable(path, {
        type: inputs.type,
        ...wireBody(DEF, inputs),
        ...(Object.keys(config).length > 0 ? { config } : {}),
      });
      reportWarnings(RESOURCE, path, res.warnings);
      return "enabled";
    } catch (e) {
      if (isMountInUse(e) && attempt === 1) return "in-use";
      if (!isMountInUse(e) && !isOutcomeUnknown(e)) throw e;
      let found: FoundMount | undefined;
      try {
        // "In use" after an unanswered attempt is most likely that attempt's own mount: a standby that has
        // not caught up may not list it yet.
        found = isMountInUse(e) && attempt > 1 ? await findAfterWrite(client, path) : await client.mounts.find(path);
      } catch (readError) {
        throw outcomeUnknown(`${RESOURCE} "${path}": enable`, e, readError);
      }
      // Taken after an unanswered attempt: that attempt's own mount when it is exactly what was sent.
      if (found !== undefined) return sameMount(found, inputs) ? "enabled" : "in-use";
      if (isMountInUse(e)) throw e;
      // Through a leader change the enable goes again (the list showed the path free) within the time
      // budget; other failures within the attempts.
      const electing = isLeaderChange(e) && Date.now() - started < policy.maxTotalMs;
      if (attempt >= attempts && !electing) throw e;
      await backoff(policy, Math.min(attempt, attempts));
    }
  }
}

/** The init error of a create or update that may have enabled the mount without finishing. */
function unfinished(inputs: AuthMountInputs, accessor: string, e: Error): ResourceInitError {
  return new ResourceInitError(
    `${e.message}. The mount at "${inputs.path}/" is kept in the stack as unfinished; run \`pulumi up\` again to finish.`,
    inputs.path,
    { ...outputs(inputs, accessor), incomplete: true },
  );
}

/** Enables (or, when the path is taken, adopts) the mount and reads its accessor. */
async function enableAndRead(inputs: AuthMountInputs): Promise<AuthMountOutputs> {
  const { path } = inputs;
  try {
    if ((await enable(inputs)) === "in-use") await adopt(inputs);
  } catch (e) {
    if (ResourceError.is(e, "outcome_unknown")) throw unfinished(inputs, "", e);
    throw e;
  }
  let found: FoundMount | undefined;
  try {
    found = await findAfterWrite(secretsClient(inputs.connection), path);
  } catch (e) {
    throw unfinished(
      inputs,
      "",
      new ResourceError(
        "unfinished",
        `${RESOURCE} "${path}": enabled, but reading it back failed: ${(e as Error).message}`,
        {
          cause: e,
        },
      ),
    );
  }
  if (found === undefined)
    // Enabled (the server said so) but not listed: kept in state as unfinished, so it is never left behind;
    // the next `up` looks again.
    throw unfinished(
      inputs,
      "",
      new ResourceError(
        "unfinished",
        `${RESOURCE} "${path}": enabled, but the mount list still did not show it after ${READ_YOUR_WRITE_MS / 1000} s ` +
          "(a standby node answering reads may lag the active node, or the mount was disabled meanwhile)",
      ),
    );
  return outputs(inputs, found.accessor);
}

/**
 * Reads the mount at `path` after this provider's own write until the list shows it (see readUntil: a
 * standby that answers reads lags the active node); undefined when it never did.
 */
async function findAfterWrite(client: SecretsClient, path: string): Promise<FoundMount | undefined> {
  return readUntil(
    () => client.mounts.find(path),
    (m) => m !== undefined,
    client.http.connection.retry,
  );
}

async function create(inputs: AuthMountInputs): Promise<dynamic.CreateResult<AuthMountOutputs>> {
  return { id: inputs.path, outs: await enableAndRead(inputs) };
}

/**
 * True when a taken path holds what an earlier, unconfirmed create of this resource enabled: the same mount,
 * with nothing configured on it yet (no config, no roles). A mount in use is someone else's.
 */
async function ownUnconfirmedMount(inputs: AuthMountInputs, existing: FoundMount | undefined): Promise<boolean> {
  if (existing === undefined || !sameMount(existing, inputs)) return false;
  const client = secretsClient(inputs.connection);
  try {
    const [config, roles] = await Promise.all([client.config.read(inputs.path), client.roles.list(inputs.path)]);
    return config === undefined && roles.length === 0;
  } catch {
    return false;
  }
}

/** Takes over an existing mount when asked and when it is the same kind of mount; else refuses. */
async function adopt(inputs: AuthMountInputs): Promise<void> {
  const client = secretsClient(inputs.connection);
  const { path } = inputs;
  const existing = await client.mounts.find(path);
  const what = existing ? `an auth method of type "${existing.type}"` : "an auth method";
  if (inputs.adopt !== true && (await ownUnconfirmedMount(inputs, existing))) {
    void warn(
      RESOURCE,
      path,
      "continuing with the mount an earlier, unconfirmed create of this resource enabled (same settings, nothing configured on it)",
    );
  } else if (inputs.adopt !== true) {
    throw new ResourceError(
      "already_exists",
      `${RESOURCE} "${path}": ${what} is already enabled at "${path}/". Set adopt: true to take it over ` +
        "(its description and tune settings are then set from this resource), or choose another path.",
    );
  }
  if (existing === undefined)
    throw new ResourceError(
      "already_exists",
      `${RESOURCE} "${path}": the path is in use, but not by an auth method; choose another path`,
    );
  const mismatch: string[] = [];
  if (existing.type !== inputs.type) mismatch.push(`type is "${existing.type}", not "${inputs.type}"`);
  for (const [k, f] of SETTINGS)
    if (f.replaceOnChange && !sameValue(f, inputs[k], existing[f.wire]))
      mismatch.push(`${k} is ${String(existing[f.wire])}`);
  if (mismatch.length > 0) {
    throw new ResourceError(
      "already_exists",
      `${RESOURCE} "${path}": cannot adopt the existing mount: its ${mismatch.join(", ")}. These cannot change in place.`,
    );
  }
  const res = await client.mounts.tune(path, tuneBody(inputs, pluginVersionTune(inputs, existing)));
  reportWarnings(RESOURCE, path, res.warnings);
}

/** The tune field that pins a new plugin version, when the user set one the mount does not have. */
function pluginVersionTune(
  news: AuthMountInputs,
  before: { pluginVersion?: string | undefined; plugin_version?: string | undefined },
): { plugin_version?: string } {
  if (news.pluginVersion === undefined || news.pluginVersion === (before.pluginVersion ?? before.plugin_version))
    return {};
  void warn(
    RESOURCE,
    news.path,
    `plugin version ${news.pluginVersion} is set; the mount runs it after the plugin is reloaded`,
  );
  return { plugin_version: news.pluginVersion };
}

/** A mount list taken for reads: while this connection writes nothing, it serves one read of each mount. */
interface MountSnapshot {
  writes: number;
  list: Promise<MountList>;
  served: Set<string>;
}

const mountSnapshots = new WeakMap<SecretsClient, MountSnapshot>();

/**
 * Finds a mount for `read` through one `sys/auth` list per refresh: the engine reads every mount of a
 * stack in one host, and the list holds them all. A second read of the same mount, or a read after this
 * connection sent a write, lists again.
 */
async function findForRead(client: SecretsClient, path: string): Promise<FoundMount | undefined> {
  const p = trimMountPath(path);
  let snap = mountSnapshots.get(client);
  if (snap === undefined || snap.writes !== client.http.writes || snap.served.has(p)) {
    const taken: MountSnapshot = { writes: client.http.writes, list: client.mounts.list(), served: new Set() };
    mountSnapshots.set(client, taken);
    taken.list.catch(() => {
      if (mountSnapshots.get(client) === taken) mountSnapshots.delete(client);
    });
    snap = taken;
  }
  snap.served.add(p);
  const entry = (await snap.list)[p + "/"];
  return entry === undefined ? undefined : { ...entry, path: p };
}

/**
 * The tune settings the mount list's entry carries, when they are what a tune read reports: the list holds
 * the mount's own values, the tune read the effective ones, and the two differ only for a TTL the mount
 * inherits (0 in the list). A TTL the user manages and the mount inherits is left to the tune read.
 */
function listedTune(tune: MountTune, found: FoundMount): TuneValues | undefined {
  const config = found.config;
  if (config === undefined) return undefined;
  for (const [k, f] of TUNE) if (f.type === "duration" && tune[k] !== undefined && !config[f.wire]) return undefined;
  return config;
}

async function read(id: string, props: AuthMountOutputs): Promise<dynamic.ReadResult<AuthMountOutputs>> {
  const old: Partial<AuthMountOutputs> = props ?? {};
  const client = secretsClient(old.connection);
  const path = old.path ?? trimMountPath(id);
  const found = await findForRead(client, path);
  if (found === undefined) return {};
  const tune =
    old.tune !== undefined && Object.keys(old.tune).length > 0
      ? (listedTune(old.tune, found) ?? (await client.mounts.readTune(path)))
      : undefined;
  const inputs = observed({ ...old, path }, found, tune);
  // Pulumi types ReadResult.inputs as the outputs type; the engine stores it as the new inputs.
  // The accessor stays among the inputs, as `check` puts it there (see withAccessor).
  return {
    id: path,
    props: outputs(inputs, found.accessor),
    inputs: { ...inputs, accessor: found.accessor } as AuthMountOutputs,
  };
}

/**
 * Moves the mount to `news.path` with `sys/remount` and waits for the move. A server without remount
 * changes nothing and the update is refused, saying how to replace instead. When the move's outcome is not
 * reported, the mount list decides: the mount (same accessor) at the new path means it moved.
 */
async function remount(
  client: SecretsClient,
  from: string,
  olds: AuthMountOutputs,
  news: AuthMountInputs,
): Promise<void> {
  let result;
  try {
    result = await client.mounts.remountAndWait(from, news.path);
  } catch (e) {
    if (isRemountUnsupported(e)) {
      throw new ResourceError(
        "replace_needed",
        `${RESOURCE} "${from}": the server has no sys/remount (releases before 1.10), so the mount cannot move to "${news.path}/"; nothing was changed. ` +
          "Set disableRemount: true to replace it instead (its config and roles are deleted and recreated from the program, every token it issued is revoked).",
        { cause: e },
      );
    }
    if (!isOutcomeUnknown(e)) throw e;
    result = { migrationId: "", status: "unknown", warnings: [] as string[] };
  }
  reportWarnings(RESOURCE, from, result.warnings);
  if (result.status === "success") return;
  const moved = await readUntil(
    () => client.mounts.find(news.path),
    (m) => m !== undefined && (olds.accessor === "" || m.accessor === olds.accessor),
    client.http.connection.retry,
  );
  if (moved !== undefined && (olds.accessor === "" || moved.accessor === olds.accessor)) return;
  const still = await client.mounts.find(from);
  const what =
    result.migrationId === ""
      ? "the remount's answer was lost"
      : `the remount (migration ID ${result.migrationId}) reported "${result.status}"`;
  if (still !== undefined)
    throw new ResourceError(
      "not_applied",
      `${RESOURCE} "${from}": ${what}, and the mount is still at "${from}/"; see the server's log for why`,
    );
  throw unfinished(
    news,
    olds.accessor,
    new ResourceError(
      "unfinished",
      `${RESOURCE} "${from}": ${what}, and the mount is at neither "${from}/" nor "${news.path}/"`,
    ),
  );
}

async function update(
  id: string,
  olds: AuthMountOutputs,
  news: AuthMountInputs,
): Promise<dynamic.UpdateResult<AuthMountOutputs>> {
  const client = secretsClient(news.connection);
  let path = olds.path ?? id;
  if (
    olds.incomplete === true &&
    (await client.mounts.find(path)) === undefined &&
    (await client.mounts.find(news.path)) === undefined
  ) {
    // The earlier create's enable never took effect: enable it now.
    return { outs: await enableAndRead(news) };
  }
  if (news.path !== path && (await client.mounts.find(path)) !== undefined) {
    await remount(client, path, olds, news);
  }
  path = news.path;
  let res;
  try {
    res = await client.mounts.tune(path, tuneBody(news, pluginVersionTune(news, olds)));
  } catch (e) {
    // Moved but not tuned: the state follows the mount to its new path, and the next `up` tunes it.
    if (path !== (olds.path ?? id)) throw unfinished(news, olds.accessor, e as Error);
    throw e;
  }
  reportWarnings(RESOURCE, path, res.warnings);
  if (olds.incomplete === true || olds.accessor === "") {
    const found = await client.mounts.find(path);
    return { outs: outputs(news, found?.accessor ?? olds.accessor) };
  }
  return { outs: outputs(news, olds.accessor) };
}

async function remove(id: string, props: AuthMountOutputs): Promise<void> {
  await secretsClient(props?.connection).mounts.disable(props?.path ?? trimMountPath(id));
}

/**
 * The AuthMount provider.
 * @public required by name: ../index.ts loads this module and takes the export named after the kind.
 */
export const authMount: ProviderImpl<AuthMountInputs, AuthMountOutputs> = {
  check: async (olds, news) => withAccessor(olds, checkAuthMount(news)),
  diff: async (_id, olds, news) => diffAuthMount(olds, news),
  create,
  read,
  update,
  delete: remove,
};
