/**
 * One call through the HTTP core (./core.ts) while it runs: the request every attempt sends, what each
 * attempt came to, and the words that name a service in messages.
 */
import type { ApiError, ApiErrorFields, ServiceName } from "../errors";
import type { Outcome, Safety } from "./retry";
import type { ApiResponse, RequestOptions } from "./request";

export const SERVICE_LABEL: Record<ServiceName, string> = { secrets: "secrets service", scheduler: "scheduler" };

export const CANCELLED = "the operation was cancelled";

/** The fields of a failure that the request itself does not already say. */
type FailureFields = Omit<ApiErrorFields, "service" | "operation" | "method" | "path">;

/** One request as every attempt sends it, and how its failures read. */
export interface PreparedCall<T> {
  opts: RequestOptions<T>;
  headers: Record<string, string>;
  body: string | Uint8Array | undefined;
  /** Base path, path and query, as sent. */
  path: string;
  /** The encoded query ("" or starting with "?"). */
  query: string;
  idempotent: boolean;
  /** How safe the request is to send again (from `idempotent` and `checkAndSet`). */
  safety: Safety;
  /** Set after a leader-change answer: later attempts close their connection after use (./core.ts). */
  freshConnections: boolean;
  /**
   * When the first leader-change answer came back: a leader change's time budget counts from there, so a
   * blocking query that waited minutes before the leader went away still gets the whole budget.
   */
  leaderSince?: number;
  /** Failed attempts so far: leader-change answers, and the others (only these count against maxAttempts). */
  failures: { leader: number; other: number };
  /** When the first attempt started (the retries' time budget counts from here). */
  started: number;
  /**
   * The origin the next attempt goes to instead of the configured address: the active node a standby
   * redirected to, once the cluster itself named that node (see `followTarget` in ./leader.ts). One attempt only.
   */
  target?: string;
  /** The active node the cluster last named during this call: when it changes, an election has ended. */
  namedActive?: string;
  /** Active nodes named during this call that could not be reached: never followed to again. */
  unreachable: Set<string>;
  fail(f: FailureFields): ApiError;
}

/** A failed attempt: the error to throw if no retry follows, and what the retry policy needs of it. */
export interface Failed {
  kind: "failed";
  error: ApiError;
  outcome: Outcome;
  redirect?: Redirect;
}

/** What one attempt came to. */
export type Attempt<T> = { kind: "answered"; response: ApiResponse<T> } | Failed;

/** Where a standby's 307 or 308 pointed (see `redirectOf` in ./leader.ts). */
export interface Redirect {
  /** It names this connection's own origin and the request's own path. */
  own: boolean;
  /** It names the request's own path and query (under whichever origin). */
  samePath: boolean;
  /** The origin it named (scheme, host and port only: never its path or query). */
  origin: string;
}
