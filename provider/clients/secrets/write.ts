/**
 * Pieces every write of the secrets client shares: request validation before sending, and the warnings
 * a write may answer with (200 with `warnings` instead of 204).
 */
import { z } from "zod";
import { UsageError } from "../../errors";
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
