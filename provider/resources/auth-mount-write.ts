/**
 * The writes of an AuthMount: enable (or take over) a mount and read its accessor back, and the update:
 * move it with `sys/remount` (the remount flow) and tune it. The lifecycle around them is ./record.ts.
 */
import { isMountInUse, isRemountUnsupported, type FoundMount, type SecretsClient } from "../clients/secrets";
import { isLeaderChange } from "../http/leader";
import { ResourceError, isOutcomeUnknown, outcomeUnknown } from "../errors";
import { reportWarnings, secretsClient, warn } from "./auth-common";
import { READ_YOUR_WRITE_MS, backoff, readUntil } from "./common";
import { sameValue, wireBody } from "./setting-values";
import { authMountDefinition as DEF } from "./definitions/auth-mount";
import {
  RESOURCE,
  SETTINGS,
  pluginVersionTune,
  sameMount,
  tuneBody,
  tuneRequest,
  unfinishedMount as unfinished,
  type AuthMountInputs,
  type AuthMountOutputs,
} from "./auth-mount-wire";

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

/**
 * Enables (or, when the path is taken, adopts) the mount and resolves to its accessor, read back. An enable
 * whose outcome stays unknown rejects with it (the driver keeps the mount in state as unfinished); one read
 * back neither way is kept so here.
 */
export async function enableAndRead(inputs: AuthMountInputs): Promise<string> {
  const { path } = inputs;
  if ((await enable(inputs)) === "in-use") await adopt(inputs);
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
  return found.accessor;
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

/**
 * True when a taken path holds what an earlier, unconfirmed create of this resource enabled: the same mount,
 * with nothing configured on it yet (no config, no roles). A mount in use is someone else's, and so is one
 * the answering node does not route (404 `no handler for route`: a standby whose mount table lags), where
 * "no config, no roles" cannot be told.
 */
async function ownUnconfirmedMount(inputs: AuthMountInputs, existing: FoundMount | undefined): Promise<boolean> {
  if (existing === undefined || !sameMount(existing, inputs)) return false;
  const client = secretsClient(inputs.connection);
  try {
    const [config, roles] = await Promise.all([
      client.config.read(inputs.path, { unroutedThrows: true }),
      client.roles.list(inputs.path, { unroutedThrows: true }),
    ]);
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

/**
 * The write of an update: enables a mount whose create never took effect, moves a mount to a new path
 * (see remount), and tunes it; resolves to its accessor.
 */
export async function updateMount(news: AuthMountInputs, olds: AuthMountOutputs, id: string): Promise<string> {
  const client = secretsClient(news.connection);
  let path = olds.path ?? id;
  if (
    olds.incomplete === true &&
    (await client.mounts.find(path)) === undefined &&
    (await client.mounts.find(news.path)) === undefined
  ) {
    // The earlier create's enable never took effect: enable it now.
    return enableAndRead(news);
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
    return found?.accessor ?? olds.accessor;
  }
  return olds.accessor;
}
