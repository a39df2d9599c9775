/**
 * The text of a secrets-service ACL policy read into path rules: HCL (`path "<p>" { capabilities = [...] }`,
 * with `#` and `//` line comments) or JSON, each capability checked against the service's list. Linear in
 * the text's length (./acl.ts keeps the policies and evaluates them).
 */
import { DevHttpError } from "../../core/errors";

/** Capabilities a policy rule may grant. */
const CAPABILITIES = [
  "create",
  "read",
  "update",
  "patch",
  "delete",
  "list",
  "sudo",
  "deny",
  "subscribe",
  "recover",
] as const;
const KNOWN_CAPS: ReadonlySet<string> = new Set(CAPABILITIES);

/** One path rule of a policy. */
export interface PathRule {
  readonly path: string;
  readonly capabilities: readonly string[];
}

/** Counts the characters a policy parse looked at (tests check that it stays linear). */
interface ParseStats {
  steps: number;
}

const SPACE = /\s/;

function isSpace(c: string | undefined): boolean {
  return c !== undefined && SPACE.test(c);
}

/** Removes `#` and `//` comments (at a line's start or after a space) up to the end of their line. */
function stripComments(text: string, stats: ParseStats): string {
  const lines = text.split("\n");
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n] as string;
    for (let k = 0; k < line.length; k++) {
      stats.steps++;
      const c = line[k];
      if ((c === "#" || (c === "/" && line[k + 1] === "/")) && (k === 0 || isSpace(line[k - 1]))) {
        stats.steps += line.length - k;
        lines[n] = line.slice(0, k - (k > 0 ? 1 : 0));
        break;
      }
    }
  }
  return lines.join("\n");
}

/**
 * Parses a policy written as HCL (`path "x" { capabilities = [...] }`) or its JSON form. The HCL form is
 * read in one pass that looks at each character a bounded number of times (a stored policy is parsed again
 * at every start, so no text may make this slow); `stats` counts the steps, for a test of that.
 */
export function parsePolicy(text: string, stats: ParseStats = { steps: 0 }): PathRule[] {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) return parseJsonPolicy(trimmed);
  const src = stripComments(trimmed, stats);
  const rules: PathRule[] = [];
  const n = src.length;
  let i = 0;
  const skipSpace = (): void => {
    while (i < n && isSpace(src[i])) {
      stats.steps++;
      i++;
    }
  };
  const unexpected = (at: number): DevHttpError =>
    new DevHttpError(400, `failed to parse policy: unexpected text ${JSON.stringify(src.slice(at, at + 40).trim())}`);
  for (;;) {
    skipSpace();
    if (i >= n) return rules;
    const blockStart = i;
    stats.steps += 4;
    if (!src.startsWith("path", i) || !isSpace(src[i + 4])) throw unexpected(blockStart);
    i += 4;
    skipSpace();
    if (src[i] !== '"') throw unexpected(blockStart);
    const close = src.indexOf('"', i + 1);
    stats.steps += (close === -1 ? n : close) - i;
    if (close === -1) throw unexpected(blockStart);
    const path = src.slice(i + 1, close);
    i = close + 1;
    skipSpace();
    if (src[i] !== "{") throw unexpected(blockStart);
    const end = src.indexOf("}", i + 1);
    stats.steps += (end === -1 ? n : end) - i;
    if (end === -1) throw unexpected(blockStart);
    rules.push(checkRule(path, capabilitiesOf(src.slice(i + 1, end), stats)));
    i = end + 1;
  }
}

/** The quoted names in a rule body's first `capabilities = [ ... ]` (none when its `]` is missing). */
function capabilitiesOf(body: string, stats: ParseStats): string[] {
  let from = 0;
  for (;;) {
    const k = body.indexOf("capabilities", from);
    stats.steps += (k === -1 ? body.length : k) - from + 1;
    if (k === -1) return [];
    let j = k + "capabilities".length;
    while (isSpace(body[j])) j++;
    if (body[j] === "=") {
      j++;
      while (isSpace(body[j])) j++;
      if (body[j] === "[") {
        const close = body.indexOf("]", j + 1);
        stats.steps += (close === -1 ? body.length : close) - k;
        if (close === -1) return [];
        return [...body.slice(j + 1, close).matchAll(/"([^"]*)"/g)].map((c) => c[1] ?? "");
      }
    }
    stats.steps += j - k;
    from = k + 1;
  }
}

function parseJsonPolicy(text: string): PathRule[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new DevHttpError(400, `failed to parse policy: ${err instanceof Error ? err.message : String(err)}`);
  }
  const paths = typeof doc === "object" && doc !== null ? (doc as Record<string, unknown>).path : undefined;
  if (typeof paths !== "object" || paths === null || Array.isArray(paths)) {
    throw new DevHttpError(400, 'failed to parse policy: expected a "path" object');
  }
  return Object.entries(paths as Record<string, unknown>).map(([path, rule]) => {
    const caps = typeof rule === "object" && rule !== null ? (rule as Record<string, unknown>).capabilities : undefined;
    if (!Array.isArray(caps) || !caps.every((c): c is string => typeof c === "string")) {
      throw new DevHttpError(
        400,
        `failed to parse policy: path ${JSON.stringify(path)}: capabilities must be a list of strings`,
      );
    }
    return checkRule(path, caps);
  });
}

function checkRule(path: string, caps: readonly string[]): PathRule {
  for (const c of caps) {
    if (!KNOWN_CAPS.has(c))
      throw new DevHttpError(
        400,
        `failed to parse policy: path ${JSON.stringify(path)}: invalid capability ${JSON.stringify(c)}`,
      );
  }
  return { path: path.replace(/^\//, ""), capabilities: [...caps] };
}
