/**
 * Pieces the three auth-method resources share: the client built from stack config then environment,
 * warnings (through ../log.ts) and the "already exists" refusal (the rule that a refreshed value keeps the
 * user's spelling, `refreshed`, is in ./common.ts: the resource definitions use it, and every resource loads them).
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { z } from "zod";
import { isApiError } from "../errors";
import { trimMountPath } from "../clients/secrets/normalize";
import { isUnrouted } from "../clients/secrets/write";
import { providerClient } from "../config";
import { SecretsClient } from "../clients/secrets";
import { missingSettled } from "./mount-missing";
import { checkInputs, containsUnknown, readUntil, type ReadYourWritePolicy } from "./common";
import { settingsOf, type Connection } from "./connection";
import { field } from "./definition";
import { warn as showWarning } from "../log";

/**
 * Returns the secrets-service client of a resource's connection (one per distinct connection in this
 * process); without one, from stack config, then the environment.
 */
export function secretsClient(connection?: Connection<"secrets">): SecretsClient {
  return providerClient(
    "secrets",
    (o) => new SecretsClient(o),
    connection === undefined ? undefined : settingsOf(connection),
  );
}

/** Shows a warning about one object (../log.ts: one engine message per CLI run). Never pass secret values. */
export function warn(resource: string, id: string, message: string): Promise<void> {
  return showWarning(`${resource} ${id}: ${message}`);
}

/** Shows the service's warnings of a write. */
export function reportWarnings(resource: string, id: string, warnings: readonly string[]): void {
  for (const w of warnings) void warn(resource, id, w);
}

/** Returns `e` with a hint for a 404 on a path under a mount: the method is probably not enabled there. */
export function mountMissingHint(e: unknown, mount: string): unknown {
  if (!isApiError(e, "not_found")) return e;
  return e.with({ hint: `no auth method is enabled at "${mount}/"; create the AuthMount first` });
}

/**
 * Sends a write under a mount, again while the node that took it does not route the mount yet: a standby
 * whose mount table lags the active node answers 404 `no handler for route` for a mount enabled a moment ago
 * (seen on a three-node OpenBao 2.6.2 after an active-node change). Nothing was applied, so the write goes
 * again, bounded as a read of the provider's own write is (readUntil); a mount really missing fails after it.
 */
export async function sendWhenRouted(send: () => Promise<void>, policy: ReadYourWritePolicy): Promise<void> {
  let last: unknown;
  const sent = await readUntil(
    async () => {
      try {
        await send();
        return true;
      } catch (e) {
        if (!isUnrouted(e)) throw e;
        last = e;
        return false;
      }
    },
    (done) => done,
    policy,
  );
  if (!sent) throw last;
}

/**
 * Whether the mount list shows `mount`, asked after a 404 `no handler for route` (a list without it asked
 * again in a cluster: see missingSettled); undefined when this token may not read the list.
 */
async function mountListed(client: SecretsClient, mount: string): Promise<boolean | undefined> {
  try {
    return ((await client.mounts.find(mount)) ?? (await missingSettled(client, mount))) !== undefined;
  } catch (e) {
    if (isApiError(e, "permission_denied")) return undefined;
    throw e;
  }
}

/**
 * Runs a read or delete of an object under `mount` that rejects on a 404 `no handler for route` (the client's
 * `unroutedThrows`) and resolves to what it answers. Such a 404 is a mount gone, or a standby whose mount
 * table lags the active node (see isUnrouted): the mount list tells (see mountListed). A mount the list does
 * not show (or a list this token may not read) resolves to `gone`, as a 404 always did. A mount the list
 * shows is sent to again, bounded as sendWhenRouted is, and never reported gone: when the bound is spent it
 * fails, saying so.
 */
export async function whenRouted<T>(client: SecretsClient, mount: string, send: () => Promise<T>, gone: T): Promise<T> {
  try {
    return await send();
  } catch (e) {
    if (!isUnrouted(e)) throw e;
    if ((await mountListed(client, mount)) !== true) return gone;
    let last = e;
    const answered = await readUntil(
      async () => {
        try {
          return { value: await send() };
        } catch (again) {
          if (!isUnrouted(again)) throw again;
          last = again;
          return undefined;
        }
      },
      (r) => r !== undefined,
      client.http.connection.retry,
    );
    if (answered !== undefined) return answered.value;
    throw last.with({
      hint:
        `the mount list shows "${trimMountPath(mount)}/", but the node that answered still did not route it ` +
        "(a standby whose mount table lags the active node); nothing was concluded. Run the command again",
    });
  }
}

/**
 * Validates inputs with an object schema: an input the resource does not have is refused by name, the
 * rest as {@link checkInputs} does (unknown values pass at preview).
 */
export function checkObjectInputs<S extends z.ZodObject>(
  resource: string,
  schema: S,
  news: Record<string, unknown>,
): { inputs?: z.infer<S>; failures: dynamic.CheckFailure[] } {
  return checkInputs(schema, news, resource);
}

const MOUNT_PATH = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** True when no segment of a mount path is `.` or `..` (a dot segment would address another endpoint). */
function noDotSegments(p: string): boolean {
  return p.split("/").every((s) => s !== "." && s !== "..");
}

/**
 * The schema of a mount path input (default `cloud`, surrounding slashes trimmed): segments of letters,
 * digits, `_`, `-` and `.`, none of them `.` or `..`. `shape` is the refusal text for a bad shape.
 */
export function mountPathSchema(shape: string) {
  return z
    .string()
    .default("cloud")
    .transform(trimMountPath)
    .pipe(
      z
        .string()
        .regex(MOUNT_PATH, shape)
        .refine(noDotSegments, 'must not have a "." or ".." segment: it would address another path of the service'),
    );
}

const UINT_TEXT = /^\d{1,15}$/;

/** A non-negative integer, given as a number or as decimal digits (the service parses both). */
export function wholeNumber() {
  return z
    .union([z.number(), z.string().regex(UINT_TEXT, "must be a whole number (digits only)")])
    .transform((v) => (typeof v === "string" ? Number(v) : v))
    .pipe(z.number().int("must be a whole number").nonnegative("must not be negative"));
}

/**
 * The `mountAccessor` input of AuthConfig and AuthRole: the accessor of the mount they live on, passed as
 * `mount.accessor` of the AuthMount. It tells a mount that moved (`sys/remount` keeps the accessor) from
 * another mount: a preview knows the accessor of a mount that moves and not of one that is replaced.
 */
export function mountAccessorField() {
  return field.string({
    doc:
      "Accessor of the mount (pass `mount.accessor` of the AuthMount, with `mount.path` as `mount`). With it, a " +
      "new `mount` whose accessor is the one in state (the AuthMount moved with `sys/remount`, keeping its " +
      "config and roles) is an update that reads the moved object and writes nothing; without it, or with " +
      "another accessor, a new `mount` replaces. Adding it to an existing resource is an update (state only).",
    rule: z.string().regex(/^\S+$/, "must be a mount accessor such as auth_cloud_1a2b3c4d (pass mount.accessor)"),
    change: "replaces when it names another mount; updates state only when added or removed",
  });
}

/** How a new `mount` of an AuthConfig or AuthRole is applied: see {@link mountFollow}. */
export type MountFollow = "same" | "moved" | { replaces: "mount" | "mountAccessor" };

/**
 * Compares the mount of an AuthConfig or AuthRole with its state: `moved` when the path changed and the
 * accessor the program passes (known, so not a mount being replaced) is the one in state; a replacement
 * when the path changed otherwise, or the accessor names another mount (unknown: the mount is replaced);
 * `same` when the path is the same and the accessor is too, or one side has none to compare.
 */
export function mountFollow(
  olds: { mount?: string; mountAccessor?: string },
  news: { mount: string; mountAccessor?: string },
): MountFollow {
  if (containsUnknown(news.mount)) return { replaces: "mount" };
  const now = news.mountAccessor;
  const before = olds.mountAccessor;
  const same = now !== undefined && !containsUnknown(now) && now === before;
  if (news.mount !== olds.mount) return same ? "moved" : { replaces: "mount" };
  if (now === undefined || before === undefined) return "same";
  return same ? "same" : { replaces: "mountAccessor" };
}
