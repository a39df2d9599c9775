import { randomBytes } from "node:crypto";
import { DevHttpError, multiErrorText } from "../../core/errors";
import { presentedToken } from "../../core/request";
import type { Router } from "../../core/router";
import type { TokenRecord } from "../../core/tokens";
import type { DevRequest, DevResponse } from "../../core/types";
import { login } from "../ops/login";
import { readConfig, writeConfig } from "../state/method-config";
import { effectiveMaxTtl, matchMount, type AuthMount } from "../state/mounts";
import { readRole, ROLE_NAME, writeRole } from "../state/roles";
import { methodCapability, type RouteDeps } from "./sys-routes";
import { bodyObject, envelope } from "../state/values";

/**
 * `auth/` routes: one catch-all that resolves the mount by longest prefix (mount paths may be nested),
 * then serves the cloud method's config, roles and login, or the built-in token mount's self paths.
 * Login is the only path reachable without a token.
 */

const UNSUPPORTED_PATH = (): DevHttpError => new DevHttpError(404, multiErrorText("unsupported path"));
const UNSUPPORTED_OPERATION = (): DevHttpError => new DevHttpError(405, multiErrorText("unsupported operation"));

/** Metadata the secrets module keeps on tokens it issues at login. */
export interface LoginTokenMeta {
  readonly mountAccessor: string;
  readonly path: string;
  readonly displayName: string;
  readonly entityId: string;
  readonly metadata: Readonly<Record<string, string>>;
  readonly createdAt: number;
  readonly ttl: number;
  readonly renewable: boolean;
  readonly tokenType: string;
  readonly numUses: number;
  readonly explicitMaxTtl: number;
  readonly period: number;
}

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

/** Registers the `auth/` catch-all route. */
export function registerAuthRoutes(r: Router, deps: RouteDeps): void {
  const { state, ctx, limits } = deps;
  const tokenHeader = ctx.headerNames.token.toLowerCase();

  const doLogin = async (req: DevRequest, mount: AuthMount): Promise<DevResponse> => {
    const method = state.method(mount);
    const outcome = await login(bodyObject(req.json()), {
      mount,
      limits,
      roles: method.roles,
      config: method.config,
      directory: state.directory,
      instance: state.instance,
      remoteAddress: req.remoteAddress,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    const entityId = state.entityFor(mount.accessor, outcome.objectId);
    const batch = outcome.tokenType === "batch";
    const meta: LoginTokenMeta = {
      mountAccessor: mount.accessor,
      path: `auth/${mount.path}/login`,
      displayName: `${mount.path.replace(/\//g, "-")}-${outcome.objectId}`,
      entityId,
      metadata: outcome.metadata,
      createdAt: Math.floor(Date.now() / 1000),
      ttl: outcome.leaseSeconds,
      renewable: !batch,
      tokenType: outcome.tokenType,
      numUses: outcome.numUses,
      explicitMaxTtl: outcome.explicitMaxTtl,
      period: outcome.period,
    };
    const minted = ctx.tokens.create({
      policies: outcome.policies,
      ...(outcome.leaseSeconds > 0 ? { ttlMs: outcome.leaseSeconds * 1000 } : {}),
      ...(batch ? { token: `hvb.${randomBytes(24).toString("base64url")}` } : {}),
      meta: { ...meta },
    });
    ctx.markDirty();
    return {
      json: envelope(null, {
        auth: {
          client_token: minted.token,
          accessor: batch ? "" : minted.record.accessor,
          policies: [...outcome.policies],
          token_policies: [...outcome.policies],
          metadata: { ...outcome.metadata },
          lease_duration: outcome.leaseSeconds,
          renewable: !batch,
          entity_id: entityId,
          token_type: outcome.tokenType,
          orphan: true,
          mfa_requirement: null,
          num_uses: outcome.numUses,
        },
      }),
    };
  };

  const tokenMountRoute = (req: DevRequest, rest: string, sub: string): DevResponse => {
    const record = req.token;
    if (record === undefined) throw new DevHttpError(403, "permission denied");
    state.policies.require(record, `auth/${rest}`, [methodCapability(req.method, true)]);
    if (sub === "lookup-self") {
      if (req.method !== "GET" && req.method !== "POST" && req.method !== "PUT") throw UNSUPPORTED_OPERATION();
      return { json: envelope(lookupSelf(record, presentedToken(req.headers, tokenHeader) ?? "")) };
    }
    if (sub === "revoke-self") {
      if (req.method !== "POST" && req.method !== "PUT") throw UNSUPPORTED_OPERATION();
      ctx.tokens.revokeAccessor(record.accessor);
      ctx.markDirty();
      return {};
    }
    throw UNSUPPORTED_PATH();
  };

  const cloudRoute = (req: DevRequest, mount: AuthMount, sub: string): DevResponse => {
    const method = state.method(mount);
    if (sub === "config") {
      if (req.method === "GET" || req.method === "HEAD") {
        if (method.config === undefined) throw new DevHttpError(404, []);
        return { json: envelope(readConfig(method.config, limits.release)) };
      }
      if (req.method === "DELETE") {
        method.config = undefined;
        ctx.nextIndex();
        return {};
      }
      if (req.method === "LIST") throw UNSUPPORTED_OPERATION();
      const { config, warnings } = writeConfig(method.config, bodyObject(req.json()), limits.release);
      method.config = config;
      ctx.nextIndex();
      return warnings.length > 0 ? { json: envelope(null, { warnings }) } : {};
    }
    if (sub === "role") {
      if (req.method !== "LIST") throw UNSUPPORTED_OPERATION();
      const keys = [...method.roles.keys()].sort();
      if (keys.length === 0) throw new DevHttpError(404, []);
      return { json: envelope({ keys }) };
    }
    if (sub.startsWith("role/")) {
      const name = sub.slice("role/".length);
      if (!ROLE_NAME.test(name)) throw UNSUPPORTED_PATH();
      const key = name.toLowerCase();
      if (req.method === "GET" || req.method === "HEAD") {
        const role = method.roles.get(key);
        if (role === undefined) throw new DevHttpError(404, []);
        return { json: envelope(readRole(role)) };
      }
      if (req.method === "DELETE") {
        method.roles.delete(key);
        ctx.nextIndex();
        return {};
      }
      if (req.method === "LIST") throw UNSUPPORTED_OPERATION();
      const { role, warnings } = writeRole(
        method.roles.get(key),
        bodyObject(req.json()),
        effectiveMaxTtl(mount, limits),
      );
      method.roles.set(key, role);
      ctx.nextIndex();
      return warnings.length > 0 ? { json: envelope(null, { warnings }) } : {};
    }
    if (sub === "login") throw UNSUPPORTED_OPERATION();
    throw UNSUPPORTED_PATH();
  };

  r.on(
    ["GET", "POST", "DELETE", "LIST"],
    "/v1/auth/*rest",
    async (req) => {
      const rest = req.params.rest ?? "";
      const match = matchMount(state.mounts.values(), rest);
      if (match !== undefined && match.mount.type === limits.methodType && match.sub === "login") {
        if (req.method !== "POST" && req.method !== "PUT") throw UNSUPPORTED_OPERATION();
        return doLogin(req, match.mount);
      }
      if (req.token === undefined) throw new DevHttpError(403, "permission denied");
      if (match !== undefined && match.mount.type === "token") return tokenMountRoute(req, rest, match.sub);
      let exists = true;
      if (match !== undefined && (req.method === "POST" || req.method === "PUT")) {
        const m = state.method(match.mount);
        if (match.sub === "config") exists = m.config !== undefined;
        else if (match.sub.startsWith("role/")) exists = m.roles.has(match.sub.slice(5).toLowerCase());
      }
      state.policies.require(req.token, `auth/${rest}`, [methodCapability(req.method, exists)]);
      if (match === undefined) {
        throw new DevHttpError(404, `no handler for route ${JSON.stringify(`auth/${rest}`)}. route entry not found.`);
      }
      return cloudRoute(req, match.mount, match.sub);
    },
    // Login needs no token; every other path checks the token itself (see above).
    { auth: false },
  );
}
