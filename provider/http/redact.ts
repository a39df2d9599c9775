/**
 * Redaction, done once here: every string that leaves the core in an error passes through it.
 */

/** Replaces secrets with this. */
const REDACTED = "<redacted>";

// A compact JWS (three base64url parts, the first two starting with `eyJ`, i.e. a JSON object).
const JWT_PATTERN = /eyJ[A-Za-z0-9_-]{4,}\.eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*/g;

/** Returns `text` with every given secret (4+ characters) and anything shaped like a JWT replaced. */
export function redact(text: string, secrets: Iterable<string | undefined>): string {
  let out = text.replace(JWT_PATTERN, REDACTED);
  for (const s of secrets) {
    if (s === undefined || s.length < 4) continue;
    out = out.split(s).join(REDACTED);
  }
  return out;
}
