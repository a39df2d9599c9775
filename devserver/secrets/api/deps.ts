import type { DevRequest, ServiceContext } from "../../core/types";
import type { MountLimits } from "../state/mounts";
import type { SecretsState } from "../state/state";

/** What the route tables of the secrets service share (`sys/` and `auth/`). */
export interface RouteDeps {
  readonly state: SecretsState;
  readonly ctx: ServiceContext;
  readonly limits: MountLimits;
}

/** Returns the capability a request method needs (`create` or `update` for writes, by existence). */
export function methodCapability(method: string, exists: boolean): string {
  switch (method) {
    case "GET":
    case "HEAD":
      return "read";
    case "LIST":
      return "list";
    case "DELETE":
      return "delete";
    default:
      return exists ? "update" : "create";
  }
}

/** Requires the request's token to hold one of `caps` on `path` (403 otherwise). */
export function requireAcl(deps: RouteDeps, req: DevRequest, path: string, caps: readonly string[]): void {
  deps.state.policies.require(req.token, path, caps);
}
