/**
 * When a mount the list does not show counts as gone: the rule a refresh of an AuthMount and the reads and
 * deletes under a mount (./auth-common.ts) share, in a module of its own that loads no resource code.
 */
import type { FoundMount, SecretsClient } from "../clients/secrets";
import { readUntil } from "./common";

/**
 * After a mount list without the mount at `path`: undefined (gone) when the service is a single node, whose
 * list settles it. In a cluster the list may have come from a standby whose mount table lags the active
 * node's (OpenBao answers reads on a standby from its own tables, and 2.6.2 has no header asking for the
 * active node's view), so the list is asked again, bounded as a read of the provider's own write is
 * (readUntil), before the mount counts as gone. A leader status that cannot be read counts as a cluster.
 */
export async function missingSettled(client: SecretsClient, path: string): Promise<FoundMount | undefined> {
  if (!(await client.mounts.clustered().catch(() => true))) return undefined;
  return readUntil(
    () => client.mounts.find(path),
    (f) => f !== undefined,
    client.http.connection.retry,
  );
}
