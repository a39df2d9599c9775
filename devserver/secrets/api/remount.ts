import { randomUUID } from "node:crypto";
import { DevHttpError, multiErrorText } from "../../core/errors";
import type { Router, RouteRow } from "../../core/router";
import type { DevRequest, DevResponse } from "../../core/types";
import { conflictingMount, normaliseMountPath } from "../state/mounts";
import { bodyObject, envelope, readString } from "../state/values";
import { requireAcl, type RouteDeps } from "./deps";

/**
 * `sys/remount` (servers 1.10 and later): moves an auth method to another path, keeping its accessor and so
 * its config and roles, and revokes the tokens it issued. The move runs after the answer, which carries a
 * migration ID; `sys/remount/status/<id>` reports `in-progress`, then `success` or `failure`. A server
 * started with `remount: false` plays an older release: the path is unknown (404 `unsupported path`).
 */

/** What one migration reports. */
interface Migration {
  readonly source_mount: string;
  readonly target_mount: string;
  status: "in-progress" | "success" | "failure";
}

/** Options of the remount routes. */
export interface RemountOptions {
  /** Serve `sys/remount` (default true); false answers 404 `unsupported path` as releases before 1.10 do. */
  readonly enabled: boolean;
  /** Milliseconds a move stays `in-progress` before it runs (default 0: on the next turn of the loop). */
  readonly delayMs: number;
}

const AUTH_PREFIX = "auth/";

/** Returns a remount path without its surrounding slashes, requiring the `auth/` prefix of an auth mount. */
function authPath(field: "from" | "to", value: unknown): { full: string; mount: string } {
  const raw = value === undefined ? "" : readString(field, value);
  if (raw !== raw.trim()) throw new DevHttpError(400, `'${field}' path cannot contain trailing whitespace`);
  const full = normaliseMountPath(raw);
  return { full, mount: full.startsWith(AUTH_PREFIX) ? full.slice(AUTH_PREFIX.length) : "" };
}

/** The remount routes' dependencies: the shared ones, the options and the migrations reported so far. */
interface RemountDeps extends RouteDeps {
  readonly options: RemountOptions;
  readonly migrations: Map<string, Migration>;
}

/** Answers as a release before 1.10 does when the server plays one. */
function requireRemount(deps: RemountDeps): void {
  if (!deps.options.enabled) throw new DevHttpError(404, multiErrorText("unsupported path"));
}

function remount(deps: RemountDeps, req: DevRequest): DevResponse {
  const { state, ctx, options, migrations } = deps;
  requireRemount(deps);
  requireAcl(deps, req, "sys/remount", ["update", "sudo"]);
  const body = bodyObject(req.json());
  if (body.from === undefined || body.to === undefined || body.from === "" || body.to === "") {
    throw new DevHttpError(400, "both 'from' and 'to' path must be specified as a string");
  }
  const from = authPath("from", body.from);
  const to = authPath("to", body.to);
  if (from.mount === "") throw new DevHttpError(400, `no matching mount at ${JSON.stringify(`${from.full}/`)}`);
  if (to.mount === "")
    throw new DevHttpError(400, `cannot remount auth mount to non-auth mount ${JSON.stringify(`${to.full}/`)}`);
  if (from.mount === "token" || from.mount.startsWith("token/"))
    throw new DevHttpError(400, `cannot remount ${JSON.stringify(`${from.full}/`)}`);
  if (to.mount === "token" || to.mount.startsWith("token/"))
    throw new DevHttpError(400, `cannot remount to destination ${JSON.stringify(`${to.full}/`)}`);
  const entry = state.mounts.get(from.mount);
  if (entry === undefined) throw new DevHttpError(400, `no matching mount at ${JSON.stringify(`${from.full}/`)}`);
  const others = [...state.mounts.values()].filter((m) => m !== entry);
  const conflict = conflictingMount(others, to.mount) ?? (to.mount === from.mount ? entry : undefined);
  if (conflict !== undefined)
    throw new DevHttpError(400, `path already in use at ${JSON.stringify(`${AUTH_PREFIX}${conflict.path}/`)}`);

  const id = randomUUID();
  const migration: Migration = { source_mount: `${from.full}/`, target_mount: `${to.full}/`, status: "in-progress" };
  migrations.set(id, migration);
  setTimeout(() => {
    // The path may have been taken, or the mount disabled, while the move waited.
    const still = state.mounts.get(from.mount);
    if (
      still !== entry ||
      conflictingMount(
        [...state.mounts.values()].filter((m) => m !== entry),
        to.mount,
      ) !== undefined
    ) {
      migration.status = "failure";
      return;
    }
    state.mounts.delete(from.mount);
    // The accessor moves with the mount: its config and roles (kept by accessor) come along.
    state.mounts.set(to.mount, { ...entry, path: to.mount });
    ctx.tokens.revokeWhere((t) => t.meta?.mountAccessor === entry.accessor);
    migration.status = "success";
    ctx.nextIndex();
  }, options.delayMs).unref();
  return {
    json: envelope(
      { migration_id: id },
      {
        warnings: [
          "Mount move has been queued. Progress will be reported in the server log, tagged with the returned migration_id",
        ],
      },
    ),
  };
}

function remountStatus(deps: RemountDeps, req: DevRequest): DevResponse {
  requireRemount(deps);
  const id = req.params.id ?? "";
  requireAcl(deps, req, `sys/remount/status/${id}`, ["read"]);
  const migration = deps.migrations.get(id);
  if (migration === undefined) throw new DevHttpError(404, []);
  return { json: envelope({ migration_id: id, migration_info: { ...migration } }) };
}

/** Moving a mount and the status of each move. */
const REMOUNT_ROUTES: readonly RouteRow<RemountDeps>[] = [
  { method: "POST", path: "/v1/sys/remount", handler: remount },
  { method: "GET", path: "/v1/sys/remount/status/:id", handler: remountStatus },
];

/** Registers `POST /v1/sys/remount` and `GET /v1/sys/remount/status/<id>`, with a table of migrations of their own. */
export function remountRoutes(r: Router, deps: RouteDeps, options: RemountOptions): void {
  r.table<RemountDeps>({ ...deps, options, migrations: new Map() }, REMOUNT_ROUTES);
}
