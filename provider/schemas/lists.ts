/**
 * The comma-or-array list of the secrets service's API, apart from ./secrets.ts so that the resource
 * definitions (loaded by every resource, the Job's included) do not load the service's wire records.
 */
import { z } from "zod";

/** Splits a comma-separated string into trimmed, non-empty items. */
export function splitCommaList(s: string): string[] {
  return s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
}

/** A list sent either as a comma-separated string (CLI form) or as an array (API form); parsed to an array. */
export const StringOrListSchema = z
  .union([z.string(), z.array(z.string())])
  .transform((v) => (typeof v === "string" ? splitCommaList(v) : v));
