/**
 * Pieces the three auth-method resources share: the client built from stack config then environment,
 * warnings (through ../log.ts) and the "already exists" refusal (the rule that a refreshed value keeps the
 * user's spelling, `refreshed`, is in ./common.ts: the resource definitions use it, and every resource loads them).
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { z } from "zod";
import { isApiError } from "../errors";
import { trimMountPath } from "../clients/secrets/normalize";
import { providerClient } from "../config";
import { SecretsClient } from "../clients/secrets";
import { checkInputs } from "./common";
import { settingsOf, type Connection } from "./connection";
import { warn as showWarning } from "../log";

/**
 * Returns the secrets-service client of a resource's connection (one per distinct connection in this
 * process); without one, from stack config, then the environment.
 */
export function secretsClient(connection?: Connection<"secrets">): SecretsClient {
  return providerClient(
    "secrets",
    (o) => new SecretsClient(o),
    connection === undefined ? undefined : settingsOf(connection),
  );
}

/** Shows a warning about one object (../log.ts: one engine message per CLI run). Never pass secret values. */
export function warn(resource: string, id: string, message: string): Promise<void> {
  return showWarning(`${resource} ${id}: ${message}`);
}

/** Shows the service's warnings of a write. */
export function reportWarnings(resource: string, id: string, warnings: readonly string[]): void {
  for (const w of warnings) void warn(resource, id, w);
}

/** Returns `e` with a hint for a 404 on a path under a mount: the method is probably not enabled there. */
export function mountMissingHint(e: unknown, mount: string): unknown {
  if (!isApiError(e, "not_found")) return e;
  return e.with({ hint: `no auth method is enabled at "${mount}/"; create the AuthMount first` });
}

/**
 * Validates inputs with an object schema: an input the resource does not have is refused by name, the
 * rest as {@link checkInputs} does (unknown values pass at preview).
 */
export function checkObjectInputs<S extends z.ZodObject>(
  resource: string,
  schema: S,
  news: Record<string, unknown>,
): { inputs?: z.infer<S>; failures: dynamic.CheckFailure[] } {
  return checkInputs(schema, news, resource);
}

const MOUNT_PATH = /^[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)*$/;

/** True when no segment of a mount path is `.` or `..` (a dot segment would address another endpoint). */
function noDotSegments(p: string): boolean {
  return p.split("/").every((s) => s !== "." && s !== "..");
}

/**
 * The schema of a mount path input (default `cloud`, surrounding slashes trimmed): segments of letters,
 * digits, `_`, `-` and `.`, none of them `.` or `..`. `shape` is the refusal text for a bad shape.
 */
export function mountPathSchema(shape: string) {
  return z
    .string()
    .default("cloud")
    .transform(trimMountPath)
    .pipe(
      z
        .string()
        .regex(MOUNT_PATH, shape)
        .refine(noDotSegments, 'must not have a "." or ".." segment: it would address another path of the service'),
    );
}

const UINT_TEXT = /^\d{1,15}$/;

/** A non-negative integer, given as a number or as decimal digits (the service parses both). */
export function wholeNumber() {
  return z
    .union([z.number(), z.string().regex(UINT_TEXT, "must be a whole number (digits only)")])
    .transform((v) => (typeof v === "string" ? Number(v) : v))
    .pipe(z.number().int("must be a whole number").nonnegative("must not be negative"));
}
