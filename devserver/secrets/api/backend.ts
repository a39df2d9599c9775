import { DevHttpError, multiErrorText } from "../../core/errors";
import type { DevRequest, DevResponse } from "../../core/types";

/**
 * Path tables of the auth methods behind `auth/<mount>/`, as the secrets service's backends declare them:
 * each path a pattern (matched against the path below the mount) with the operations it supports. A path no
 * pattern matches answers 404 `unsupported path`; an operation the path lacks, 405 `unsupported operation`.
 */

/**
 * A request's operation: GET reads, HEAD asks for a read's headers (a path declares it to answer it), LIST
 * lists, DELETE deletes, POST and PUT create or update.
 */
type Operation = "read" | "head" | "write" | "delete" | "list";

/** Handles one operation on a matched path reached through `mount`; `params` are the pattern's named groups. */
export type PathHandler<M> = (
  req: DevRequest,
  mount: M,
  params: Readonly<Record<string, string>>,
) => DevResponse | Promise<DevResponse>;

/** One path of a backend reached through mounts of type `M`. */
export interface BackendPath<M> {
  /** Anchored pattern of the path below the mount; named groups become `params`. */
  readonly pattern: RegExp;
  /** Whether matched params name a path the backend serves (default: yes); else the path is unsupported. */
  readonly valid?: (params: Readonly<Record<string, string>>) => boolean;
  readonly operations: Partial<Record<Operation, PathHandler<M>>>;
  /** Whether the record a write names exists (a write then needs `update`, else `create`); default true. */
  readonly exists?: (mount: M, params: Readonly<Record<string, string>>) => boolean;
  /** Reached without a token (login). */
  readonly unauthenticated?: boolean;
}

/** A path found in a table, with its params. */
interface PathMatch<M> {
  readonly path: BackendPath<M>;
  readonly params: Readonly<Record<string, string>>;
}

/** Returns the operation of a request method. */
function operationOf(method: string): Operation {
  switch (method) {
    case "GET":
      return "read";
    case "HEAD":
      return "head";
    case "LIST":
      return "list";
    case "DELETE":
      return "delete";
    default:
      return "write";
  }
}

/** Finds the first path of `table` matching `sub` (the path below the mount). */
export function findPath<M>(table: readonly BackendPath<M>[], sub: string): PathMatch<M> | undefined {
  for (const path of table) {
    const m = path.pattern.exec(sub);
    if (m !== null) return { path, params: { ...m.groups } };
  }
  return undefined;
}

/** Runs the operation of `req` on a matched path, or answers 404/405 as the service does. */
export function runPath<M>(
  match: PathMatch<M> | undefined,
  req: DevRequest,
  mount: M,
): DevResponse | Promise<DevResponse> {
  if (match === undefined || match.path.valid?.(match.params) === false)
    throw new DevHttpError(404, multiErrorText("unsupported path"));
  const handler = match.path.operations[operationOf(req.method)];
  if (handler === undefined) throw new DevHttpError(405, multiErrorText("unsupported operation"));
  return handler(req, mount, match.params);
}
