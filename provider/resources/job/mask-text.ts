/**
 * Applies a Job's secret mask (./secrets.ts) to what the provider shows: a plan field's value and name, the
 * names of groups and tasks, free text (notes, refusals, errors) and an error in place. In free text a masked
 * text of 4 or more characters is replaced wherever it appears; a shorter one only where it stands as a whole
 * word (no letter or digit right before or after it), so that a one-letter secret does not wipe every message
 * while a short value a message quotes is still masked. With nothing secret every function returns at once.
 */
import { masksAnything, type SecretMask } from "./secrets";

/** How Pulumi shows a secret value. */
export const SECRET_SHOWN = "[secret]";

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

/** The shortest masked text replaced wherever it appears in a text (shorter ones only as whole words). */
const MIN_TEXT_MASK = 4;

/**
 * True when a plan field (its full name, e.g. `Env[DB_PASSWORD]`, `Config.args[0]`) carries configuration.
 */
function isSensitiveField(name: string): boolean {
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
  return mask.values.some((s) => (s.length >= MIN_TEXT_MASK ? value.includes(s) : wordRegex(s).test(value)));
}

/** Returns a name from the job (a group's, a task's), or `[secret]` when the whole job is secret. */
export function maskName(name: string, mask: SecretMask): string {
  return mask.everything ? SECRET_SHOWN : name;
}

/** Returns a plan field's name with the map keys in it (`Env[KEY]`) masked when the whole job is secret. */
export function maskFieldName(name: string, mask: SecretMask): string {
  return mask.everything ? name.replace(/\[[^\]]*\]/g, `[${SECRET_SHOWN}]`) : name;
}

const PLACEHOLDER = "\u0000";

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * A short masked text is masked where no letter or digit (of any script) touches it on either side: every
 * other character is a word edge, `=`, `/`, `-`, `@`, `_` and `+` included (`PW=ab1`, `user:ab1@host`).
 */
const WORD_CHAR = "\\p{L}\\p{N}";

function wordRegex(s: string): RegExp {
  return new RegExp(`(?<![${WORD_CHAR}])${escapeRegex(s)}(?![${WORD_CHAR}])`, "gu");
}

/**
 * Returns `text` with every masked text replaced by `[secret]`: those of 4 or more characters wherever they
 * appear, shorter ones where they stand as a whole word; with `quoted`, every quoted text but the job's identity.
 */
export function maskText(text: string, mask: SecretMask): string {
  if (!masksAnything(mask) || text === "") return text;
  let out = text;
  if (mask.quoted === true) {
    const shown = new Set(mask.shown ?? []);
    out = out.replace(/"((?:[^"\\\n]|\\.)*)"/g, (all, inner: string) => (shown.has(inner) ? all : `"${PLACEHOLDER}"`));
  }
  for (const s of mask.values) {
    if (s.length >= MIN_TEXT_MASK) out = out.split(s).join(PLACEHOLDER);
    else if (out.includes(s)) out = out.replace(wordRegex(s), PLACEHOLDER);
  }
  return out.split(PLACEHOLDER).join(SECRET_SHOWN);
}

/** Masks an error's message, stack and reasons in place (the host prints the stack); returns it. */
export function maskError(e: unknown, mask: SecretMask): unknown {
  if (!masksAnything(mask) || e === null || typeof e !== "object") return e;
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
