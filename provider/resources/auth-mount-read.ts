/**
 * The refresh of an AuthMount: one mount list per refresh serves every mount of a stack, the tune settings
 * come from it where it holds what a tune read reports, and the inputs a refresh stores keep the user's
 * spelling (the plugin version too).
 */
import type { FoundMount, MountList, SecretsClient } from "../clients/secrets";
import { trimMountPath } from "../clients/secrets/normalize";
import { definedDeep } from "./common";
import { missingSettled } from "./mount-missing";
import { refreshedSetting } from "./setting-values";
import {
  SETTINGS,
  TUNE,
  type AuthMountInputs,
  type AuthMountOutputs,
  type MountTune,
  type TuneValues,
} from "./auth-mount-wire";

/** A mount as a refresh reads it: its entry in the mount list, and its tune settings when the state manages some. */
export interface MountRead {
  found: FoundMount;
  tune: TuneValues | undefined;
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

/** Reads the mount at `path` for a refresh; undefined when it is gone (see missingSettled). */
export async function readMount(
  client: SecretsClient,
  path: string,
  old: Partial<AuthMountOutputs>,
): Promise<MountRead | undefined> {
  const found = (await findForRead(client, path)) ?? (await missingSettled(client, path));
  if (found === undefined) return undefined;
  const tune =
    old.tune !== undefined && Object.keys(old.tune).length > 0
      ? (listedTune(old.tune, found) ?? (await client.mounts.readTune(path)))
      : undefined;
  return { found, tune };
}

/** Returns the inputs a refresh stores: the server's values for everything the user manages. */
export function observed(
  old: Partial<AuthMountOutputs>,
  mount: FoundMount,
  tune: TuneValues | undefined,
): AuthMountInputs {
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
