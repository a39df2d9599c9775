/**
 * Errors as data: every failed call to either service surfaces as one {@link ApiError} whose `code`
 * says what kind of failure it was, and whose message says which operation failed and what to do.
 * A resource that refuses or cannot finish an operation for a reason of its own (the object exists
 * already, changed outside Pulumi, needs a replace, or a write's outcome is unknown) throws one
 * {@link ResourceError}, again with a `code`. Caller mistakes (bad options, rules broken before anything
 * is sent) are {@link UsageError}s; missing connection settings are {@link ConfigError}s.
 */

/** What kind of failure an {@link ApiError} is; `switch (err.code)` narrows on it. */
export type ApiErrorCode =
  | "bad_request"
  | "permission_denied"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "server"
  | "unavailable"
  | "transport"
  | "timeout"
  | "aborted"
  | "bad_response"
  /** The connected server is an older release without this feature (the message names the release needed). */
  | "unsupported";

/** The service an error or a connection belongs to. */
export type ServiceName = "secrets" | "scheduler";

/** Fields of an {@link ApiError}. */
export interface ApiErrorFields {
  code: ApiErrorCode;
  service: ServiceName;
  operation: string;
  method: string;
  path: string;
  status?: number;
  serverErrors?: string[];
  attempts?: number;
  hint?: string;
  /**
   * False when the request never left this process (the connection could not be made), true when it was
   * sent; a failure after sending leaves the server's outcome unknown. Absent for errors made before any call.
   */
  requestSent?: boolean;
  cause?: unknown;
}

const ERROR_BRAND = Symbol.for("pulumi-secrets-scheduler.ApiError");

/** A failed call to the secrets service or the scheduler. Never carries a token or other secret. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly code: ApiErrorCode;
  readonly service: ServiceName;
  readonly operation: string;
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly serverErrors: string[];
  readonly attempts: number;
  /** What to do about it; the end of the message. */
  readonly hint: string | undefined;
  /** Whether the request was sent before it failed (see {@link ApiErrorFields.requestSent}). */
  readonly requestSent: boolean | undefined;

  constructor(fields: ApiErrorFields) {
    super(formatMessage(fields), fields.cause === undefined ? undefined : { cause: fields.cause });
    this.code = fields.code;
    this.service = fields.service;
    this.operation = fields.operation;
    this.method = fields.method;
    this.path = fields.path;
    this.status = fields.status;
    this.serverErrors = fields.serverErrors ?? [];
    this.attempts = fields.attempts ?? 1;
    this.hint = fields.hint;
    this.requestSent = fields.requestSent;
    Object.defineProperty(this, ERROR_BRAND, { value: true });
  }

  /** Returns a copy with some fields changed (a more specific hint or code from a caller that knows more). */
  with(changes: Partial<Pick<ApiErrorFields, "code" | "hint" | "attempts">>): ApiError {
    return new ApiError({
      code: this.code,
      service: this.service,
      operation: this.operation,
      method: this.method,
      path: this.path,
      ...(this.status !== undefined ? { status: this.status } : {}),
      serverErrors: this.serverErrors,
      attempts: this.attempts,
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
      ...(this.requestSent !== undefined ? { requestSent: this.requestSent } : {}),
      ...(this.cause !== undefined ? { cause: this.cause } : {}),
      ...changes,
    });
  }

  /** Tells whether `e` is an ApiError, also across duplicate installs of this library. */
  static is(e: unknown): e is ApiError {
    return typeof e === "object" && e !== null && (e as Record<symbol, unknown>)[ERROR_BRAND] === true;
  }
}

/** True when `e` is an ApiError with one of the given codes. */
export function isApiError(e: unknown, ...codes: ApiErrorCode[]): e is ApiError {
  return ApiError.is(e) && (codes.length === 0 || codes.includes(e.code));
}

/**
 * True when a failed write may still have been applied: the request was sent and no answer said what became
 * of it (the connection broke, the attempt timed out, or a 5xx came back). A refusal the server explains
 * (4xx, a check-and-set conflict, 429) or a connection never made means nothing was applied.
 */
export function isOutcomeUnknown(e: unknown): e is ApiError {
  if (!ApiError.is(e)) return false;
  if (e.code === "transport") return e.requestSent !== false;
  if (e.code === "timeout") return true;
  if (e.code === "server" || e.code === "unavailable") return e.status === undefined || e.status >= 500;
  return false;
}

function formatMessage(f: ApiErrorFields): string {
  const where = `${f.method} ${f.path}`;
  const what = f.status !== undefined ? `${where} returned ${f.status}` : `${where} failed`;
  const server = f.serverErrors && f.serverErrors.length > 0 ? `: ${f.serverErrors.join("; ")}` : "";
  const tries = f.attempts && f.attempts > 1 ? ` (after ${f.attempts} attempts)` : "";
  const hint = f.hint ? `. ${f.hint}` : "";
  return `${f.operation}: ${what}${server}${tries}${hint}`;
}

/** A caller mistake found before anything was sent; the message names the option and the rule. */
export class UsageError extends TypeError {
  override readonly name = "UsageError";
}

/** A connection setting is missing or malformed; the message names the option and the variable. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

/** What kind of refusal or failure of a resource operation a {@link ResourceError} is. */
export type ResourceErrorCode =
  /** `create` found the object already there and `adopt` is not set. */
  | "already_exists"
  /** The object changed on the server since Pulumi last read it (a check-and-set write was refused). */
  | "changed_outside"
  /** The change cannot be made in place and the object cannot be replaced here; the message says why. */
  | "replace_needed"
  /** A write was sent, no answer said whether it was applied, and reading back could not tell either. */
  | "outcome_unknown";

const RESOURCE_ERROR_BRAND = Symbol.for("pulumi-secrets-scheduler.ResourceError");

/**
 * A resource operation refused or left unfinished for a reason of the resource's own (not one failed
 * call: that is an {@link ApiError}, often the `cause`). The message names the object and what to do;
 * never a secret.
 */
export class ResourceError extends Error {
  override readonly name = "ResourceError";
  readonly code: ResourceErrorCode;

  constructor(code: ResourceErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    Object.defineProperty(this, RESOURCE_ERROR_BRAND, { value: true });
  }

  /** Tells whether `e` is a ResourceError (with one of `codes`, when given), also across duplicate installs. */
  static is(e: unknown, ...codes: ResourceErrorCode[]): e is ResourceError {
    return (
      typeof e === "object" &&
      e !== null &&
      (e as Record<symbol, unknown>)[RESOURCE_ERROR_BRAND] === true &&
      (codes.length === 0 || codes.includes((e as ResourceError).code))
    );
  }
}

/** The {@link ResourceError} of a write whose outcome neither the answer nor a read-back could tell. */
export function outcomeUnknown(what: string, writeError: unknown, readError: unknown): ResourceError {
  const read =
    typeof readError === "string"
      ? readError
      : `reading it back to see whether it was applied failed too: ${errorText(readError)}`;
  return new ResourceError("outcome_unknown", `${what}: ${errorText(writeError)}; ${read}`, { cause: writeError });
}

function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
