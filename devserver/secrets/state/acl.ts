import type { TokenRecord } from "../../core/tokens";
import { DevHttpError, multiErrorText } from "../../core/errors";
import { parsePolicy, type PathRule } from "./policy-text";

/**
 * ACL policies of the secrets service: named documents of path rules with capabilities, evaluated the way
 * the real service does (exact path first, else the highest-priority glob / `+` match; `deny` wins).
 *
 * Tokens carry policy names (resolved here) and may also carry direct grants as `"<capability>:<path>"`
 * strings (for example `"read:sys/auth"`, `"sudo:sys/auth/*"`), or `"*"` for everything.
 */

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
