import { presentedToken } from "../../core/request";
import type { TokenRecord } from "../../core/tokens";
import type { AuthMount } from "../state/mounts";
import { envelope } from "../state/values";
import type { BackendPath } from "./backend";
import type { RouteDeps } from "./deps";

/** Paths of the built-in token mount (`auth/token/`): the calling token's own lookup and revocation. */

function metaString(meta: Readonly<Record<string, unknown>> | undefined, key: string, fallback: string): string {
  const v = meta?.[key];
  return typeof v === "string" ? v : fallback;
}

function metaNumber(meta: Readonly<Record<string, unknown>> | undefined, key: string, fallback: number): number {
  const v = meta?.[key];
  return typeof v === "number" ? v : fallback;
}

function lookupSelf(record: TokenRecord, token: string): Record<string, unknown> {
  const meta = record.meta;
  const now = Date.now();
  const created = metaNumber(meta, "createdAt", Math.floor(now / 1000));
  const ttl = record.expiresAt === undefined ? 0 : Math.max(0, Math.round((record.expiresAt - now) / 1000));
  const metadata = meta?.metadata;
  return {
    accessor: record.accessor,
    creation_time: created,
    creation_ttl: metaNumber(meta, "ttl", 0),
    display_name: metaString(meta, "displayName", record.root ? "root" : "token"),
    entity_id: metaString(meta, "entityId", ""),
    expire_time: record.expiresAt === undefined ? null : new Date(record.expiresAt).toISOString(),
    explicit_max_ttl: metaNumber(meta, "explicitMaxTtl", 0),
    id: token,
    issue_time: new Date(created * 1000).toISOString(),
    meta: typeof metadata === "object" && metadata !== null ? metadata : null,
    num_uses: metaNumber(meta, "numUses", 0),
    orphan: true,
    path: metaString(meta, "path", record.root ? "auth/token/root" : "auth/token/create"),
    policies: [...record.policies],
    renewable: meta?.renewable === true,
    ttl,
    type: metaString(meta, "tokenType", "service"),
  };
}

/** Returns the token mount's paths (every one needs a token: the dispatcher has checked it is there). */
export function tokenPaths(deps: RouteDeps): BackendPath<AuthMount>[] {
  const { ctx } = deps;
  const tokenHeader = ctx.headerNames.token.toLowerCase();
  const self = (req: { readonly token: TokenRecord | undefined }): TokenRecord => {
    if (req.token === undefined) throw new TypeError("a token path was reached without a token");
    return req.token;
  };
  const readSelf: BackendPath<AuthMount>["operations"]["read"] = (req) => ({
    json: envelope(lookupSelf(self(req), presentedToken(req.headers, tokenHeader) ?? "")),
  });
  return [
    { pattern: /^lookup-self$/, operations: { read: readSelf, write: readSelf } },
    {
      pattern: /^revoke-self$/,
      operations: {
        write: (req) => {
          ctx.tokens.revokeAccessor(self(req).accessor);
          ctx.markDirty();
          return {};
        },
      },
    },
  ];
}
