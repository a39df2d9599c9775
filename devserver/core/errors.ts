/** Names of the two services the devserver hosts. */
export type ServiceName = "secrets" | "scheduler";

/**
 * Signals an HTTP failure from a route handler; the core renders it in the owning service's error style
 * (secrets: `{"errors":[...]}` JSON, scheduler: `text/plain` message).
 */
export class DevHttpError extends Error {
  override readonly name = "DevHttpError";
  /** Messages for the secrets style; an empty list renders `{"errors":[]}`. */
  readonly messages: readonly string[];

  constructor(
    readonly status: number,
    message: string | readonly string[],
    readonly headers?: Readonly<Record<string, string>>,
  ) {
    super(typeof message === "string" ? message : message.join("; "));
    this.messages = typeof message === "string" ? [message] : message;
  }
}

/** Wire bytes of an error response. */
export interface RenderedError {
  readonly contentType: string;
  readonly body: string;
}

/** Renders error messages in the given service's style. */
export function renderError(service: ServiceName, messages: readonly string[]): RenderedError {
  if (service === "secrets") {
    return { contentType: "application/json", body: JSON.stringify({ errors: messages }) };
  }
  return { contentType: "text/plain; charset=utf-8", body: messages.join("\n") };
}

/** Formats one message the way the secrets service wraps multi-errors (used for capability denial). */
export function multiErrorText(message: string): string {
  return `1 error occurred:\n\t* ${message}\n\n`;
}

/** Returns the denial message of a request without a usable token, in the service's wording. */
export function missingTokenError(service: ServiceName, tokenGiven: boolean): DevHttpError {
  if (service === "secrets") return new DevHttpError(403, "permission denied");
  // Without a token the scheduler falls back to the anonymous policy, which grants nothing here.
  return new DevHttpError(403, tokenGiven ? "ACL token not found" : "Permission denied");
}

/** Returns the error for a token that lacks a capability, in the service's wording. */
export function permissionDenied(service: ServiceName): DevHttpError {
  return service === "secrets"
    ? new DevHttpError(403, multiErrorText("permission denied"))
    : new DevHttpError(403, "Permission denied");
}
