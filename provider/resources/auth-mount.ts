/**
 * AuthMount: an auth method enabled at a path of the secrets service. Type, local and seal-wrap can only be
 * set when the method is enabled, so changing them replaces the mount (deleting its config and roles);
 * description, tune settings and the plugin version change in place, and a new path moves the mount with
 * `sys/remount` (config and roles move with it; the tokens it issued are revoked). Where the server has no
 * remount (releases before 1.10), or `disableRemount` is set, a new path replaces the mount.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { SecretsClient } from "../clients/secrets";
import { trimMountPath } from "../clients/secrets/normalize";
import { checkObjectInputs, secretsClient, warn } from "./auth-common";
import { canonicalJson, containsUnknown, type ProviderImpl } from "./common";
import { MOVED, connectionChange } from "./connection";
import { replaceKeys } from "./definition";
import { sameValue, settingDiffers } from "./setting-values";
import { authMountDefinition as DEF } from "./definitions/auth-mount";
import { observed, readMount, type MountRead } from "./auth-mount-read";
import {
  AuthMountInputsSchema,
  RESOURCE,
  keptSentence,
  mountOutputs,
  type AuthMountInputs,
  type AuthMountOutputs,
} from "./auth-mount-wire";
import { enableAndRead, updateMount } from "./auth-mount-write";
import { recordProvider } from "./record";

const REPLACE_KEYS = replaceKeys(DEF);
/** The settings that change in place, compared only where the program sets them (see `whenUnset`). */
const UPDATE_KEYS = (Object.keys(AuthMountInputsSchema.shape) as (keyof AuthMountInputs)[]).filter(
  (k) => DEF.fields[k].kind === "setting" && !DEF.fields[k].replaceOnChange,
);

/** Checks and normalises AuthMount inputs; failures name the property. */
function checkAuthMount(news: Record<string, unknown>): dynamic.CheckResult<AuthMountInputs> {
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
type PathChange = { how: "remount" } | { how: "replace"; why: string };

/**
 * Decides how a new path is applied: `disableRemount` replaces; otherwise the server is asked once whether
 * it has `sys/remount` (see `AuthMounts.hasRemount`). Only a clear "no" replaces: an unclear answer counts as
 * "has remount", and `update` then finds out for sure and refuses without changing anything.
 */
async function pathChange(news: AuthMountInputs, client?: SecretsClient): Promise<PathChange> {
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
async function diffAuthMount(olds: AuthMountOutputs, news: AuthMountInputs): Promise<dynamic.DiffResult> {
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
        : await pathChange(news);
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

/**
 * The AuthMount provider: the record lifecycle (./record.ts) with a mount's rules: an enable that is never
 * repeated blindly, the accessor, and the remount (./auth-mount-write.ts); the refresh reads one mount list
 * for every mount (./auth-mount-read.ts).
 * @public required by name: ../index.ts loads this module and takes the export named after the kind.
 */
export const authMount: ProviderImpl<AuthMountInputs, AuthMountOutputs> = recordProvider({
  resource: RESOURCE,
  check: async (olds, news) => withAccessor(olds, checkAuthMount(news)),
  diff: (olds: AuthMountOutputs, news: AuthMountInputs) => diffAuthMount(olds, news),
  place: (i: AuthMountInputs) => i.path,
  locate: (id, props: Partial<AuthMountOutputs>) => props.path ?? trimMountPath(id),
  id: (path) => path,
  async fetch(path, connection): Promise<MountRead | undefined> {
    const found = await secretsClient(connection).mounts.find(path);
    return found === undefined ? undefined : { found, tune: undefined };
  },
  remove: (path, connection) => secretsClient(connection).mounts.disable(path),
  observed: (props, _path, rec) => observed(props, rec.found, rec.tune),
  outputs: mountOutputs,
  // The enable finds a path in use itself (it is not repeated blindly, see enable).
  create: { fetches: false, start: () => undefined },
  update: async (olds, news, id) => ({ news, from: { olds, id } }),
  write: (news, from: { olds: AuthMountOutputs; id: string } | undefined) =>
    from === undefined ? enableAndRead(news) : updateMount(news, from.olds, from.id),
  unfinished: { at: (news) => ({ id: news.path, learned: "" }), sentence: keptSentence },
  refresh: {
    fetch: (path, old) => readMount(secretsClient(old.connection), path, old),
    learned: (_props, _path, rec) => rec.found.accessor,
    // The accessor stays among the inputs, as `check` puts it there (see withAccessor).
    inputs: (inputs, _outs, _props, rec) => ({ ...inputs, accessor: rec.found.accessor }) as AuthMountOutputs,
  },
});
