// The contract between the core and a service implementation, apart from the request and context types
// (types.ts) so that the router, which only needs those, and this interface, which needs the router, do not
// import each other.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { ServiceName } from "./errors";
import type { RestoreWarn } from "./migrate";
import type { Router } from "./router";
import type { ServiceContext } from "./types";

/**
 * One service implementation plugged into the devserver. `routes` is called once at start-up, before
 * `restore`. Handlers throw `DevHttpError` for failures.
 */
export interface ServiceModule {
  readonly name: ServiceName;
  routes(router: Router, ctx: ServiceContext): void;
  /** Returns JSON-serialisable state for persistence. */
  snapshot?(): unknown;
  /**
   * Restores state written by `snapshot`, of this or an older release: migrate an older layout (see
   * migrate.ts), throw for a newer one, and tell `warn` what could not be kept (none: a snapshot just taken
   * in memory, restored as it was).
   */
  restore?(data: unknown, warn?: RestoreWarn): void;
  /** Maps a policy name on a token to capabilities (used by the core's capability checks). */
  policyCapabilities?(policy: string): readonly string[] | undefined;
  /** Handles an HTTP upgrade (WebSocket); return false to let the core refuse it with 400. */
  upgrade?(req: IncomingMessage, socket: Duplex, head: Buffer, ctx: ServiceContext): boolean;
  /** Releases timers and sockets on server close. */
  close?(): void | Promise<void>;
}
