/**
 * When a mount the list does not show counts as gone: the rule a refresh of an AuthMount and the reads and
 * deletes under a mount (./auth-common.ts) share, in a module of its own that loads no resource code.
 */
import type { FoundMount, SecretsClient } from "../clients/secrets";
import { trimMountPath } from "../clients/secrets/normalize";
import { readUntil } from "./common";

/**
 * The settlings on the way, per client and mount path: the reads and deletes of one command under a mount
 * the list lacks (every role under a disabled mount) share one leader ask and one bounded relist. An answer
 * is shared only while it is on the way, never kept: a later miss asks again.
 */
const settling = new WeakMap<SecretsClient, Map<string, Promise<FoundMount | undefined>>>();

/**
 * After a mount list without the mount at `path`: undefined (gone) when the service is a single node, whose
 * list settles it. In a cluster the list may have come from a standby whose mount table lags the active
 * node's (OpenBao answers reads on a standby from its own tables, and 2.6.2 has no header asking for the
 * active node's view), so the list is asked again, bounded as a read of the provider's own write is
 * (readUntil), before the mount counts as gone. A leader status that cannot be read counts as a cluster.
 */
export function missingSettled(client: SecretsClient, path: string): Promise<FoundMount | undefined> {
  let byPath = settling.get(client);
  if (byPath === undefined) settling.set(client, (byPath = new Map()));
  const onTheWay = byPath;
  const p = trimMountPath(path);
  let settle = onTheWay.get(p);
  if (settle === undefined) {
    settle = settleMissing(client, p).finally(() => onTheWay.delete(p));
    onTheWay.set(p, settle);
  }
  return settle;
}

async function settleMissing(client: SecretsClient, path: string): Promise<FoundMount | undefined> {
  if (!(await client.mounts.clustered().catch(() => true))) return undefined;
  return readUntil(
    () => client.mounts.find(path),
    (f) => f !== undefined,
    client.http.connection.retry,
  );
}
