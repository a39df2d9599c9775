import { randomBytes, randomUUID } from "node:crypto";
import type { ServiceName } from "./errors";

/** What a token may do. Secrets never appear here: the token value is only the store's map key. */
export interface TokenRecord {
  /** Non-secret identifier of the token (safe to log and to return as an accessor). */
  readonly accessor: string;
  readonly service: ServiceName;
  /** The root token passes every capability and namespace check. */
  readonly root: boolean;
  /** Policy names; the owning service module maps them to capabilities (`policyCapabilities`). */
  readonly policies: readonly string[];
  /** Capabilities granted directly; `*` grants all. */
  readonly capabilities: readonly string[];
  /** Namespaces the token may use; undefined means all. `*` in the list also means all. */
  readonly namespaces?: readonly string[];
  /** Epoch ms after which the token is invalid; undefined means never. */
  readonly expiresAt?: number;
  /** Free-form data for the service module (for example login metadata). */
  readonly meta?: Readonly<Record<string, unknown>>;
}

/** Input of `TokenStore.create` and `server.createToken`. */
export interface TokenSpec {
  readonly capabilities?: readonly string[];
  readonly policies?: readonly string[];
  readonly namespaces?: readonly string[];
  readonly ttlMs?: number;
  readonly meta?: Readonly<Record<string, unknown>>;
  /** Use this token value instead of a random one (root tokens from options, fixtures). */
  readonly token?: string;
}

/** A minted token: the secret value (hand it to the client once) and its record. */
export interface MintedToken {
  readonly token: string;
  readonly record: TokenRecord;
}

/** Persisted form of a token store. */
export interface TokenStoreSnapshot {
  readonly tokens: readonly (readonly [string, TokenRecord])[];
}

/** Generates a token value with the given prefix (`s.` style for secrets, UUID for the scheduler). */
function newTokenValue(service: ServiceName): string {
  return service === "secrets" ? `hvs.${randomBytes(18).toString("base64url")}` : randomUUID();
}

/** Keeps a service's tokens: the root token plus tokens minted by tests or by service logins. */
export class TokenStore {
  private readonly byValue = new Map<string, TokenRecord>();
  private readonly byAccessor = new Map<string, string>();

  constructor(readonly service: ServiceName) {}

  /** Mints a token; resolves to its value and record. */
  create(spec: TokenSpec = {}, root = false): MintedToken {
    const token = spec.token ?? newTokenValue(this.service);
    const record: TokenRecord = {
      accessor: randomBytes(12).toString("hex"),
      service: this.service,
      root,
      policies: root ? ["root"] : [...(spec.policies ?? [])],
      capabilities: root ? ["*"] : [...(spec.capabilities ?? [])],
      ...(spec.namespaces !== undefined ? { namespaces: [...spec.namespaces] } : {}),
      ...(spec.ttlMs !== undefined ? { expiresAt: Date.now() + spec.ttlMs } : {}),
      ...(spec.meta !== undefined ? { meta: spec.meta } : {}),
    };
    this.byValue.set(token, record);
    this.byAccessor.set(record.accessor, token);
    return { token, record };
  }

  /** Returns the live record of a token value, or undefined for unknown or expired tokens. */
  lookup(token: string): TokenRecord | undefined {
    const record = this.byValue.get(token);
    if (record === undefined) return undefined;
    if (record.expiresAt !== undefined && record.expiresAt <= Date.now()) {
      this.revoke(token);
      return undefined;
    }
    return record;
  }

  /** Revokes a token by value; returns whether it existed. */
  revoke(token: string): boolean {
    const record = this.byValue.get(token);
    if (record === undefined) return false;
    this.byValue.delete(token);
    this.byAccessor.delete(record.accessor);
    return true;
  }

  /** Revokes a token by accessor; returns whether it existed. */
  revokeAccessor(accessor: string): boolean {
    const token = this.byAccessor.get(accessor);
    return token !== undefined && this.revoke(token);
  }

  /** Revokes every token whose record matches (for example all tokens of a disabled mount); returns the count. */
  revokeWhere(predicate: (record: TokenRecord) => boolean): number {
    let n = 0;
    for (const [token, record] of [...this.byValue]) {
      if (!record.root && predicate(record) && this.revoke(token)) n++;
    }
    return n;
  }

  /** Returns the number of live tokens. */
  get size(): number {
    return this.byValue.size;
  }

  /** Returns the store's persisted form (token values included: the file is the server's own storage). */
  snapshot(): TokenStoreSnapshot {
    return { tokens: [...this.byValue] };
  }

  /** Replaces the store's content from a snapshot. */
  restore(snapshot: TokenStoreSnapshot): void {
    this.byValue.clear();
    this.byAccessor.clear();
    for (const [token, record] of snapshot.tokens) {
      this.byValue.set(token, record);
      this.byAccessor.set(record.accessor, token);
    }
  }
}

/**
 * Returns whether a token grants one of `needed` in `namespace`. `extraCapabilities` resolves the token's
 * policies through the service module. A namespace of `*` asks "in any namespace" (listing across namespaces).
 */
export function tokenAllows(
  record: TokenRecord,
  needed: readonly string[],
  namespace: string | undefined,
  policyCapabilities?: (policy: string) => readonly string[] | undefined,
): boolean {
  if (record.root) return true;
  if (namespace !== undefined && namespace !== "*" && record.namespaces !== undefined) {
    if (!record.namespaces.includes(namespace) && !record.namespaces.includes("*")) return false;
  }
  if (needed.length === 0) return true;
  const granted = new Set(record.capabilities);
  if (policyCapabilities !== undefined) {
    for (const p of record.policies) for (const c of policyCapabilities(p) ?? []) granted.add(c);
  }
  if (granted.has("*")) return true;
  return needed.some((c) => granted.has(c));
}
