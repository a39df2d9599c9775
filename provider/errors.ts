/**
 * Errors as data, one family: every error the provider code throws is a {@link PssError} whose `code` says
 * what kind of failure it is; `PssError.is(e, ...codes)` recognises any of them (also across duplicate
 * installs of this library), and each subclass's `is` narrows to its own codes.
 *
 * - {@link ApiError}: a failed call to either service; the message says which operation failed and what to do.
 * - {@link ResourceError}: a resource refuses or cannot finish an operation for a reason of its own (the
 *   object exists already, changed outside Pulumi, needs a replace, or a write's outcome is unknown).
 * - {@link UsageError}: a caller mistake (bad options, rules broken before anything is sent).
 * - {@link ConfigError}: a setting (a connection's, or where a secret is read from) is missing or malformed.
 * - `ResourceInitError` (resources/common.ts): the object was written but the operation did not finish.
 */

/** The codes of an {@link ApiError}. */
const API_ERROR_CODES = [
  "bad_request",
  "permission_denied",
  "not_found",
  "conflict",
  "rate_limited",
  "server",
  "unavailable",
  "transport",
  "timeout",
  "aborted",
  "bad_response",
  // The connected server is an older release without this feature (the message names the release needed).
  "unsupported",
] as const;

/** What kind of failure an {@link ApiError} is; `switch (err.code)` narrows on it. */
export type ApiErrorCode = (typeof API_ERROR_CODES)[number];

/** The codes of a {@link ResourceError}. */
const RESOURCE_ERROR_CODES = [
  // `create` found the object (or its path taken) already there, and `adopt` is not set or cannot apply.
  "already_exists",
  // The object changed on the server since Pulumi last read it (a check-and-set write was refused).
  "changed_outside",
  // The change cannot be made in place and the object cannot be replaced here; the message says why.
  "replace_needed",
  // A write was sent, no answer said whether it was applied, and reading back could not tell either.
  "outcome_unknown",
  // A write was refused or failed and the object is as it was; the message says why.
  "not_applied",
  // The object is no longer on the server (deleted meanwhile); `pulumi refresh` records that.
  "gone",
  // The scheduler's plan right before a register shows changes the preview did not.
  "plan_changed",
  // The object was written, but the operation did not finish; it is kept in the stack as unfinished.
  "unfinished",
] as const;

/** What kind of refusal or failure of a resource operation a {@link ResourceError} is. */
export type ResourceErrorCode = (typeof RESOURCE_ERROR_CODES)[number];

/**
 * Every code of the family: an {@link ApiError}'s, a {@link ResourceError}'s, `invalid_usage`
 * ({@link UsageError}), `invalid_config` ({@link ConfigError}) and `internal` (a fault of this library).
 * A code names one class, so `code` alone says which.
 */
export type PssErrorCode = ApiErrorCode | ResourceErrorCode | "invalid_usage" | "invalid_config" | "internal";

const BRAND = Symbol.for("pulumi-secrets-scheduler.PssError");

/** The base of every error this library throws; never carries a token or other secret. */
export class PssError<C extends PssErrorCode = PssErrorCode> extends Error {
  override readonly name: string = "PssError";
  readonly code: C;

  constructor(code: C, message: string, options?: { cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    Object.defineProperty(this, BRAND, { value: true });
  }

  /** Tells whether `e` is one of this family (with one of `codes`, when given), also across duplicate installs. */
  static is(e: unknown, ...codes: PssErrorCode[]): e is PssError {
    return (
      typeof e === "object" &&
      e !== null &&
      (e as Record<symbol, unknown>)[BRAND] === true &&
      (codes.length === 0 || codes.includes((e as PssError).code))
    );
  }
}

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

/** A failed call to the secrets service or the scheduler. Never carries a token or other secret. */
export class ApiError extends PssError<ApiErrorCode> {
  override readonly name = "ApiError";
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
    super(fields.code, formatMessage(fields), { cause: fields.cause });
    this.service = fields.service;
    this.operation = fields.operation;
    this.method = fields.method;
    this.path = fields.path;
    this.status = fields.status;
    this.serverErrors = fields.serverErrors ?? [];
    this.attempts = fields.attempts ?? 1;
    this.hint = fields.hint;
    this.requestSent = fields.requestSent;
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

  /** Tells whether `e` is an ApiError (with one of `codes`, when given), also across duplicate installs. */
  static override is(e: unknown, ...codes: ApiErrorCode[]): e is ApiError {
    return PssError.is(e, ...(codes.length > 0 ? codes : API_ERROR_CODES));
  }
}

/** True when `e` is an ApiError with one of the given codes. */
export function isApiError(e: unknown, ...codes: ApiErrorCode[]): e is ApiError {
  return ApiError.is(e, ...codes);
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
  if (e.code === "server" || e.code === "unavailable")
    // A standby's 307 or 308 that was not followed: the active node it named may have taken the write.
    return e.status === undefined || e.status >= 500 || e.status === 307 || e.status === 308;
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
export class UsageError extends PssError<"invalid_usage"> {
  override readonly name = "UsageError";

  constructor(message: string, options?: { cause?: unknown }) {
    super("invalid_usage", message, options);
  }

  /** Tells whether `e` is a UsageError, also across duplicate installs. */
  static override is(e: unknown): e is UsageError {
    return PssError.is(e, "invalid_usage");
  }
}

/** A setting is missing or malformed; the message names the option and the variable, never a value. */
export class ConfigError extends PssError<"invalid_config"> {
  override readonly name = "ConfigError";

  constructor(message: string, options?: { cause?: unknown }) {
    super("invalid_config", message, options);
  }

  /** Tells whether `e` is a ConfigError, also across duplicate installs. */
  static override is(e: unknown): e is ConfigError {
    return PssError.is(e, "invalid_config");
  }
}

/**
 * A resource operation refused or left unfinished for a reason of the resource's own (not one failed
 * call: that is an {@link ApiError}, often the `cause`). The message names the object and what to do;
 * never a secret.
 */
export class ResourceError extends PssError<ResourceErrorCode> {
  override readonly name: string = "ResourceError";

  /** Tells whether `e` is a ResourceError (with one of `codes`, when given), also across duplicate installs. */
  static override is(e: unknown, ...codes: ResourceErrorCode[]): e is ResourceError {
    return PssError.is(e, ...(codes.length > 0 ? codes : RESOURCE_ERROR_CODES));
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
