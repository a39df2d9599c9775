/**
 * Keeps secret job values out of the text the Job provider shows (the scheduler's plan at preview, notes,
 * error messages).
 *
 * The dynamic-provider host receives secret inputs unwrapped (it tells the engine it does not accept
 * secrets), so the provider cannot see which inputs were secret. The program side can: the SDK's `Job`
 * adds the input `secretInputs`, the names of its secret sources: `jobspec`, `job`, `variables` (the
 * whole map or var-file text), or `variables.<name>` for one secret value of a variables map. That list
 * holds no value, so it is not secret itself.
 *
 * What is masked, shown as `[secret]` as Pulumi shows secrets:
 * - a secret `jobspec` or `job`: every field value of the plan (anything in it may come from the secret);
 * - a secret variable: every value under Env, Meta, Template, Config, artifacts and getter options, and any
 *   field value holding a secret variable's value; in the whole text (and in errors), every occurrence of a
 *   secret variable's value of 4 or more characters;
 * - a `secretInputs` unknown at preview, or one this version does not understand: as a secret jobspec.
 *
 * State written before `secretInputs` existed has none: it counts as "nothing secret", and `diff` never
 * compares it, so adding it shows no change.
 */
import { containsUnknown } from "../common";
import type { JobInputs } from "./inputs";

/** How Pulumi shows a secret value. */
export const SECRET_SHOWN = "[secret]";

/** What of a Job's text must be masked. */
export interface SecretMask {
  /** A whole source (jobspec or job) is secret, or which sources are secret is not known: mask every field value. */
  readonly everything: boolean;
  /** Some variable is secret: mask the values of the fields that carry configuration (Env, Meta, Template, Config, ...). */
  readonly sensitiveFields: boolean;
  /** The secret variables' values, as text (longest first). */
  readonly values: readonly string[];
}

/** Nothing is secret. */
export const NO_SECRETS: SecretMask = Object.freeze({
  everything: false,
  sensitiveFields: false,
  values: Object.freeze([]),
});

/** Plan field names (or name parts) whose values carry a task's configuration, where secrets usually go. */
const SENSITIVE_PARTS = new Set([
  "Env",
  "Meta",
  "Template",
  "Templates",
  "Config",
  "Artifact",
  "Artifacts",
  "GetterOptions",
  "GetterHeaders",
  "GetterSource",
  "EmbeddedTmpl",
  "Vars",
]);

/** The shortest secret value replaced wherever it appears in a text (shorter ones only in field values). */
const MIN_TEXT_MASK = 4;

/** Returns what to mask for the inputs of a Job (checked inputs or old ones from state). */
export function secretMaskOf(inputs: Partial<Pick<JobInputs, "secretInputs" | "variables">> | undefined): SecretMask {
  const raw: unknown = inputs?.secretInputs;
  if (raw === undefined || raw === null) return NO_SECRETS;
  if (containsUnknown(raw) || !Array.isArray(raw) || raw.some((n) => typeof n !== "string"))
    return everythingMask(inputs);
  const names = raw as string[];
  if (names.length === 0) return NO_SECRETS;
  let everything = false;
  let wholeVariables = false;
  const keys = new Set<string>();
  for (const n of names) {
    if (n === "jobspec" || n === "job") everything = true;
    else if (n === "variables") wholeVariables = true;
    else if (n.startsWith("variables.") && n.length > "variables.".length) keys.add(n.slice("variables.".length));
    else everything = true; // a name this version does not know: the safe side
  }
  const values = variableValues(inputs?.variables, wholeVariables ? undefined : keys);
  const sensitiveFields = wholeVariables || keys.size > 0;
  return { everything, sensitiveFields: sensitiveFields || everything, values };
}

function everythingMask(inputs: Partial<Pick<JobInputs, "variables">> | undefined): SecretMask {
  return { everything: true, sensitiveFields: true, values: variableValues(inputs?.variables, undefined) };
}

/**
 * Returns the values of the variables as text, longest first: all of them (`keys` undefined), or those of
 * the given keys. Var-file text gives the right-hand side of each `name = value` line, unquoted.
 */
export function variableValues(
  variables: JobInputs["variables"] | undefined,
  keys: ReadonlySet<string> | undefined,
): string[] {
  if (variables === undefined || variables === null || containsUnknown(variables)) return [];
  const out = new Set<string>();
  if (typeof variables === "string") {
    for (const line of variables.split(/\r?\n/)) {
      const m = /^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(.*?)\s*$/.exec(line);
      if (!m || (keys !== undefined && !keys.has(m[1] ?? ""))) continue;
      const rhs = m[2] ?? "";
      out.add(rhs);
      out.add(unquote(rhs));
    }
  } else if (typeof variables === "object") {
    for (const [k, v] of Object.entries(variables)) {
      if (keys !== undefined && !keys.has(k)) continue;
      out.add(String(v));
    }
  }
  out.delete("");
  return [...out].sort((a, b) => b.length - a.length);
}

function unquote(rhs: string): string {
  if (rhs.length >= 2 && rhs.startsWith('"') && rhs.endsWith('"')) {
    try {
      const v: unknown = JSON.parse(rhs);
      if (typeof v === "string") return v;
    } catch {
      return rhs.slice(1, -1);
    }
  }
  return rhs;
}

/** True when a plan field (its full name, e.g. `Env[DB_PASSWORD]`, `Config.args[0]`) carries configuration. */
export function isSensitiveField(name: string): boolean {
  for (const part of name.split(".")) {
    const base = part.replace(/\[.*$/, "");
    if (SENSITIVE_PARTS.has(base)) return true;
  }
  return false;
}

/** True when a field's value must be shown as `[secret]`. */
export function masksField(mask: SecretMask, name: string, value: string): boolean {
  if (mask.everything) return true;
  if (mask.sensitiveFields && isSensitiveField(name)) return true;
  return mask.values.some((s) => value.includes(s));
}

/** Returns `text` with every secret variable value (of 4 or more characters) replaced by `[secret]`. */
export function maskText(text: string, mask: SecretMask): string {
  let out = text;
  for (const s of mask.values) {
    if (s.length < MIN_TEXT_MASK) continue;
    out = out.split(s).join(SECRET_SHOWN);
  }
  return out;
}

/** Masks an error's message, stack and reasons in place (the host prints the stack); returns it. */
export function maskError(e: unknown, mask: SecretMask): unknown {
  if (mask.values.length === 0 || e === null || typeof e !== "object") return e;
  const err = e as { message?: unknown; stack?: unknown; reasons?: unknown };
  try {
    if (typeof err.message === "string") err.message = maskText(err.message, mask);
    if (typeof err.stack === "string") err.stack = maskText(err.stack, mask);
    if (Array.isArray(err.reasons))
      err.reasons = err.reasons.map((r: unknown) => (typeof r === "string" ? maskText(r, mask) : r));
  } catch {
    // a read-only property: leave it
  }
  return e;
}
