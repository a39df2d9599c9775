import type { TokenRecord } from "../../core/tokens";
import { DevHttpError, multiErrorText } from "../../core/errors";

/**
 * ACL policies of the secrets service: named documents of path rules with capabilities, evaluated the way
 * the real service does (exact path first, else the highest-priority glob / `+` match; `deny` wins).
 *
 * Tokens carry policy names (resolved here) and may also carry direct grants as `"<capability>:<path>"`
 * strings (for example `"read:sys/auth"`, `"sudo:sys/auth/*"`), or `"*"` for everything.
 */

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
interface PathRule {
  readonly path: string;
  readonly capabilities: readonly string[];
}

/** A stored policy: its text as written and its parsed rules. */
export interface PolicyDoc {
  readonly name: string;
  readonly text: string;
  readonly rules: readonly PathRule[];
}

// Mirrors the built-in default policy's self-service paths that matter to a token holder here.
const DEFAULT_POLICY_TEXT = `path "auth/token/lookup-self" {
  capabilities = ["read"]
}
path "auth/token/renew-self" {
  capabilities = ["update"]
}
path "auth/token/revoke-self" {
  capabilities = ["update"]
}
path "sys/capabilities-self" {
  capabilities = ["update"]
}
`;

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
 * at every start, so no text may make this slow).
 * @internal for tests: the parse's step count, which no request shows (it must stay linear).
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

/** Returns whether a rule path matches a request path (`*` suffix is a prefix glob, `+` one segment). */
function rulePathMatches(pattern: string, path: string): boolean {
  const glob = pattern.endsWith("*");
  const body = glob ? pattern.slice(0, -1) : pattern;
  if (!body.includes("+")) return glob ? path.startsWith(body) : path === body;
  const source = body
    .split("/")
    .map((seg) => (seg === "+" ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")))
    .join("/");
  return new RegExp(`^${source}${glob ? "" : "$"}`).test(path);
}

function firstWildcard(p: string): number {
  const idx = [p.indexOf("+"), p.endsWith("*") ? p.length - 1 : -1].filter((i) => i >= 0);
  return idx.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...idx);
}

/** Returns true when pattern `a` has lower priority than `b` (the real service's documented order). */
function lowerPriority(a: string, b: string): boolean {
  const wa = firstWildcard(a);
  const wb = firstWildcard(b);
  if (wa !== wb) return wa < wb;
  const ga = a.endsWith("*");
  const gb = b.endsWith("*");
  if (ga !== gb) return ga;
  const pa = a.split("/").filter((s) => s === "+").length;
  const pb = b.split("/").filter((s) => s === "+").length;
  if (pa !== pb) return pa > pb;
  if (a.length !== b.length) return a.length < b.length;
  return a < b;
}

/** Keeps the named policies; `default` exists from the start and `root` is implicit. */
export class PolicyStore {
  private readonly docs = new Map<string, PolicyDoc>();

  constructor() {
    this.docs.set("default", { name: "default", text: DEFAULT_POLICY_TEXT, rules: parsePolicy(DEFAULT_POLICY_TEXT) });
  }

  /** Stores a policy (text in HCL or JSON); throws 400 when it cannot be parsed or is `root`. */
  put(name: string, text: string): PolicyDoc {
    const key = name.toLowerCase();
    if (key === "root") throw new DevHttpError(400, 'cannot update "root" policy');
    const doc: PolicyDoc = { name: key, text, rules: parsePolicy(text) };
    this.docs.set(key, doc);
    return doc;
  }

  /** Deletes a policy; `default` and `root` cannot be deleted. */
  delete(name: string): void {
    const key = name.toLowerCase();
    if (key === "default" || key === "root") throw new DevHttpError(400, `cannot delete ${JSON.stringify(key)} policy`);
    this.docs.delete(key);
  }

  /** Returns a stored policy. */
  get(name: string): PolicyDoc | undefined {
    return this.docs.get(name.toLowerCase());
  }

  /** Returns the sorted policy names (`root` included, as the real list does). */
  names(): string[] {
    return [...this.docs.keys(), "root"].sort();
  }

  /** Returns a policy's rules as `"<cap>:<path>"` grant strings (for the core's policy hook). */
  grants(name: string): string[] | undefined {
    const doc = this.docs.get(name.toLowerCase());
    if (doc === undefined) return undefined;
    return doc.rules.flatMap((r) => r.capabilities.map((c) => `${c}:${r.path}`));
  }

  /** Returns the capabilities a token holds on a path ("root" for root and `*` grants). */
  capabilities(record: TokenRecord, path: string): string[] {
    if (record.root || record.capabilities.includes("*") || record.policies.includes("root")) return ["root"];
    const merged = new Map<string, Set<string>>();
    const add = (rulePath: string, cap: string): void => {
      let set = merged.get(rulePath);
      if (set === undefined) merged.set(rulePath, (set = new Set()));
      set.add(cap);
    };
    for (const grant of record.capabilities) {
      const i = grant.indexOf(":");
      if (i > 0) add(grant.slice(i + 1).replace(/^\//, ""), grant.slice(0, i));
    }
    for (const p of record.policies) {
      for (const r of this.docs.get(p.toLowerCase())?.rules ?? []) for (const c of r.capabilities) add(r.path, c);
    }
    let best: string | undefined;
    for (const pattern of merged.keys()) {
      if (!rulePathMatches(pattern, path)) continue;
      if (best === undefined || lowerPriority(best, pattern)) best = pattern;
    }
    const caps = best === undefined ? undefined : merged.get(best);
    if (caps === undefined || caps.has("deny")) return ["deny"];
    return [...caps].sort();
  }

  /** Returns whether a token holds every one of `needed` on `path`. */
  allows(record: TokenRecord, path: string, needed: readonly string[]): boolean {
    const caps = this.capabilities(record, path);
    if (caps.includes("root")) return true;
    return needed.every((c) => caps.includes(c));
  }

  /** Throws the service's 403 unless the token holds every one of `needed` on `path`. */
  require(record: TokenRecord | undefined, path: string, needed: readonly string[]): void {
    if (record === undefined) throw new DevHttpError(403, "permission denied");
    if (!this.allows(record, path, needed)) throw new DevHttpError(403, multiErrorText("permission denied"));
  }

  /** Returns the stored custom policies for persistence. */
  snapshot(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [name, doc] of this.docs) out[name] = doc.text;
    return out;
  }

  /** Replaces the policies from a snapshot (unparseable entries are skipped). */
  restore(data: Readonly<Record<string, unknown>>): void {
    for (const [name, text] of Object.entries(data)) {
      if (typeof text !== "string") continue;
      try {
        if (name === "default") this.docs.set("default", { name, text, rules: parsePolicy(text) });
        else this.put(name, text);
      } catch {
        // A policy the current parser rejects is dropped rather than blocking start-up.
      }
    }
  }
}
