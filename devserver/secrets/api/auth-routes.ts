import { DevHttpError } from "../../core/errors";
import type { Router } from "../../core/router";
import { matchMount, type AuthMount } from "../state/mounts";
import { methodPaths } from "./auth-method";
import { tokenPaths } from "./auth-token";
import { findPath, runPath, type BackendPath } from "./backend";
import { methodCapability, type RouteDeps } from "./deps";

/**
 * `auth/` routes: the mount is found by longest prefix (mount paths may be nested), then the path below it in
 * the table of the mount's type (auth-token.ts for the built-in token mount, auth-method.ts for the cloud
 * method). Only a path the table marks unauthenticated (login) is reached without a token; every other one
 * needs the token's ACL to grant the operation on `auth/<path>` before the path is looked at further.
 */
export function registerAuthRoutes(r: Router, deps: RouteDeps): void {
  const { state, limits } = deps;
  const tables = {
    token: tokenPaths(deps),
    method: methodPaths(deps, true),
    // a mount of a type this server does not run (restored from a server configured with another one)
    other: methodPaths(deps, false),
  };
  const tableOf = (mount: AuthMount): readonly BackendPath<AuthMount>[] =>
    mount.type === "token" ? tables.token : mount.type === limits.methodType ? tables.method : tables.other;

  r.on(
    ["GET", "POST", "DELETE", "LIST"],
    "/v1/auth/*rest",
    (req) => {
      const rest = req.params.rest ?? "";
      const at = matchMount(state.mounts.values(), rest);
      const found = at === undefined ? undefined : findPath(tableOf(at.mount), at.sub);
      if (at !== undefined && found?.path.unauthenticated === true) return runPath(found, req, at.mount);
      if (req.token === undefined) throw new DevHttpError(403, "permission denied");
      const write = req.method === "POST" || req.method === "PUT";
      const exists =
        !write || at === undefined || found?.path.exists === undefined || found.path.exists(at.mount, found.params);
      state.policies.require(req.token, `auth/${rest}`, [methodCapability(req.method, exists)]);
      if (at === undefined) {
        throw new DevHttpError(404, `no handler for route ${JSON.stringify(`auth/${rest}`)}. route entry not found.`);
      }
      return runPath(found, req, at.mount);
    },
    // Login needs no token; every other path checks the token itself (see above).
    { auth: false },
  );
}
