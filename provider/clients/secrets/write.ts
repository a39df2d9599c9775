/**
 * Pieces every write of the secrets client shares: request validation before sending, and the warnings
 * a write may answer with (200 with `warnings` instead of 204).
 */
import { z } from "zod";
import { UsageError, isApiError, type ApiError } from "../../errors";
import type { WriteResponse } from "../../schemas/secrets";
import { PARSE_OPTIONS } from "../../schemas/parse-options";

/** What a write reports besides success: the service's warnings (for example a TTL it capped). */
export interface WriteResult {
  warnings: string[];
}

/** Validates a request body before it is sent; throws UsageError naming the bad field (never its value). */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, operation: string): z.output<S> {
  const parsed = schema.safeParse(value, PARSE_OPTIONS);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => `${i.path.map(String).join(".") || "(body)"}: ${i.message}`);
  throw new UsageError(`${operation}: invalid request: ${issues.join("; ")}`);
}

/** Returns the warnings of a write response (none for a 204). */
export function warningsOf(res: WriteResponse): string[] {
  return res?.warnings ?? [];
}

/**
 * True when `e` is a 404 `no handler for route`: the node that answered routes no mount at the path. The
 * mount is gone, or the node is a standby whose mount table lags the active node (seen on a three-node
 * OpenBao 2.6.2 after an active-node change); a missing object under a routed mount is a 404 without it.
 */
export function isUnrouted(e: unknown): e is ApiError {
  return isApiError(e, "not_found") && e.serverErrors.some((m) => /no handler for route/i.test(m));
}

/** How a read or delete under a mount treats a 404 `no handler for route` (see {@link isUnrouted}). */
export interface UnroutedOption {
  /** Reject with that 404 instead of reporting the object gone, so the caller can check the mount list. */
  unroutedThrows?: boolean;
}
