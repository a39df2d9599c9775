import type { FaultInjector } from "./faults";
import type { ServiceName } from "./errors";
import type { TokenSpec } from "./tokens";
import type { ServiceModule } from "./module";
import type { ServiceContext, ServiceHeaderNames } from "./types";

/** Listener and wire-name settings of one service. */
export interface ServiceEndpointOptions {
  /** Port to listen on (default 0: any free port). */
  readonly port?: number;
  /** Root token value (default: random, or the persisted one). */
  readonly rootToken?: string;
  /** Header names; defaults are the spec's (`X-Svc-Token`, `X-Svc-Index`, ...). */
  readonly headerNames?: Partial<ServiceHeaderNames>;
}

/** TLS settings shared by both listeners. */
export interface DevTlsOptions {
  readonly cert: string | Buffer;
  readonly key: string | Buffer;
  /** CA used to verify client certificates. */
  readonly ca?: string | Buffer;
  /** Require and verify a client certificate (mutual TLS). */
  readonly requestClientCert?: boolean;
}

/** Options of `startServiceHost`. */
export interface ServiceHostOptions {
  readonly services?: readonly ServiceModule[];
  /** Loopback address to bind (default 127.0.0.1); any other address is refused unless `allowNonLoopback` is set. */
  readonly host?: string;
  /**
   * Allow `host` to be a non-loopback address. This exposes both services to the network over plain HTTP
   * (unless `tls`): the root tokens' APIs to anyone holding a token, and to anyone at all the endpoints that
   * need none (health, logins, and with `acl: false` the whole scheduler API).
   */
  readonly allowNonLoopback?: boolean;
  /**
   * Names clients may use in `Host` and `Origin` besides the loopback ones and `host` itself (for example the
   * machine's name when `allowNonLoopback` binds a public address). Requests naming any other host are refused
   * with 403, against DNS rebinding.
   */
  readonly hostNames?: readonly string[];
  readonly secrets?: ServiceEndpointOptions;
  readonly scheduler?: ServiceEndpointOptions;
  /** Enforce scheduler ACLs (default true). The secrets service always checks tokens. */
  readonly acl?: boolean;
  readonly tls?: DevTlsOptions;
  /** Largest accepted request body in bytes (default 1 MiB); larger bodies get 413. */
  readonly maxBodyBytes?: number;
  /** JSON file for state across restarts; written atomically, debounced, flushed on close. */
  readonly persistPath?: string;
  /**
   * Receives what restoring `persistPath` could not keep (records the current layout no longer allows or
   * that are malformed). Default: printed on standard error.
   */
  readonly onRestoreWarning?: (message: string) => void;
  /** Debounce of persistence writes in ms (default 50). */
  readonly persistDelayMs?: number;
  /** Most request-log entries kept (default 10,000); when full, the older half is dropped. */
  readonly requestLogLimit?: number;
}

/** One handled request. Token values are never recorded. */
export interface RequestLogEntry {
  readonly service: ServiceName;
  readonly method: string;
  readonly path: string;
  /** Raw query string without `?` ("" when none). */
  readonly query: string;
  /** Response status; 0 when the connection was reset by an injected fault. */
  readonly status: number;
  readonly ms: number;
  /** True when an injected fault answered or delayed the request. */
  readonly fault?: true;
}

/** Connection and request counts of one service since start. */
export interface ServiceStats {
  readonly connections: number;
  readonly openConnections: number;
  readonly requests: number;
}

/** A running devserver. */
export interface DevServer {
  readonly urls: Readonly<Record<ServiceName, string>>;
  readonly rootTokens: Readonly<Record<ServiceName, string>>;
  /** Handled requests, oldest first (a live array; copy it to keep a view). */
  readonly requestLog: readonly RequestLogEntry[];
  readonly faults: FaultInjector;
  /** Returns a service's context (index clock, token store) for tests that drive state directly. */
  context(service: ServiceName): ServiceContext;
  /** Clears the request log. */
  resetLog(): void;
  /** Mints a token for a service; returns its value. */
  createToken(service: ServiceName, spec?: TokenSpec): string;
  /** Revokes a token by value; returns whether it existed. */
  revokeToken(service: ServiceName, token: string): boolean;
  /** Returns connection and request counts per service. */
  stats(): Record<ServiceName, ServiceStats>;
  /** Writes pending state to `persistPath` now. */
  flush(): Promise<void>;
  /** Stops both listeners, releases blocked queries, closes modules and flushes state. */
  close(): Promise<void>;
}
