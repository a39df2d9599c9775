import type { IncomingHttpHeaders } from "node:http";
import type { IndexClock } from "./blocking";
import type { ServiceName } from "./errors";
import type { TokenRecord, TokenStore } from "./tokens";

/** A request as route handlers see it. */
export interface DevRequest {
  readonly service: ServiceName;
  /** Normalised method: PUT stays PUT (routes registered as POST still match), `GET ?list=true` is LIST on secrets. */
  readonly method: string;
  /** Raw path as sent (percent-encoded), without the query. */
  readonly path: string;
  /** Path params, decoded per segment (an encoded `/` in a scheduler job ID comes back as `/`). */
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  readonly headers: IncomingHttpHeaders;
  /** The body bytes as received (empty for bodiless requests). */
  readonly raw: Buffer;
  /** The namespace of the request: scheduler `?namespace=` (default `default`); secrets namespace header (default ""). */
  readonly namespace: string;
  /** The authenticated token, if one was presented and found (undefined when ACLs are off and none was sent). */
  readonly token: TokenRecord | undefined;
  /** Address of the client (for CIDR checks). */
  readonly remoteAddress: string;
  /** Parses the body as JSON once; returns undefined for an empty body; throws 400 in the service's style for bad JSON. */
  json(): unknown;
  /** Returns whether the request's token grants one of `capabilities` in `namespace` (default: the request's). */
  can(capabilities: string | readonly string[], namespace?: string): boolean;
  /** Throws the service's 403 unless `can(capabilities, namespace)`. No-op when the service does not enforce ACLs. */
  requireCapability(capabilities: string | readonly string[], namespace?: string): void;
}

/** What a handler returns. Without `json`/`text`/`raw` and without `status` the reply is 204 with no body. */
export interface DevResponse {
  readonly status?: number;
  readonly json?: unknown;
  readonly text?: string;
  readonly raw?: Buffer;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Resolved header names of a service (spec names by default; real names can be configured). */
export interface ServiceHeaderNames {
  /** Header that carries the service token (`Authorization: Bearer` is always accepted too). */
  readonly token: string;
  /** Secrets: namespace header. Scheduler: unused (namespace is a query parameter). */
  readonly namespace: string;
  readonly index: string;
  readonly knownLeader: string;
  readonly lastContact: string;
  readonly nextToken: string;
}

/** Facilities the core gives a service module. */
export interface ServiceContext {
  readonly name: ServiceName;
  readonly headerNames: ServiceHeaderNames;
  /** Whether the core enforces tokens on this service (always for secrets; `acl` option for the scheduler). */
  readonly aclEnabled: boolean;
  readonly tokens: TokenStore;
  /** The service's monotonic index; `clock.waitForChange` is the raw blocking primitive. */
  readonly clock: IndexClock;
  /** Returns the current index. */
  index(): number;
  /** Advances the index (call once per state change; it also schedules persistence); returns the new index. */
  nextIndex(): number;
  /**
   * Resolves when `currentIndexFn()` exceeds `sinceIndex` or `waitMs` elapses; resolves to the index then.
   */
  waitForChange(sinceIndex: number, waitMs: number, currentIndexFn?: () => number): Promise<number>;
  /**
   * Honours `?index=&wait=` of a blocking read: waits if asked, then resolves to `currentIndexFn()`.
   * Throws 400 "Invalid index" / "Invalid wait time".
   */
  blockingQuery(req: DevRequest, currentIndexFn?: () => number): Promise<number>;
  /** Returns the blocking-query response headers (index, known leader, last contact, optional next token). */
  queryMeta(index: number, nextToken?: string): Record<string, string>;
  /** Schedules a persistence write (writes through `nextIndex` and successful non-GET requests do this already). */
  markDirty(): void;
}
