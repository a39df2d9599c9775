import { randomBytes } from "node:crypto";
import { DevHttpError } from "../../core/errors";
import type { DevRequest, DevResponse } from "../../core/types";
import { login } from "../ops/login";
import { readConfig, writeConfig } from "../state/method-config";
import { effectiveMaxTtl, type AuthMount } from "../state/mounts";
import { readRole, ROLE_NAME, writeRole } from "../state/roles";
import { bodyObject, envelope } from "../state/values";
import type { BackendPath, PathHandler } from "./backend";

type MountHandler = PathHandler<AuthMount>;
import type { RouteDeps } from "./deps";

/**
 * Paths of the cloud auth method below `auth/<mount>/`: its config, its roles (listed, read, written, deleted)
 * and login, the only path reached without a token. A mount of another type than the one this server runs
 * (restored from a server configured otherwise) keeps the table but no login.
 */

/** Metadata the secrets module keeps on tokens it issues at login. */
interface LoginTokenMeta {
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

/** Returns the paths of the cloud method; `withLogin` false leaves login without operations. */
export function methodPaths(deps: RouteDeps, withLogin: boolean): BackendPath<AuthMount>[] {
  const { state, ctx, limits } = deps;

  const readConfigPath: MountHandler = (_req, mount) => {
    const config = state.method(mount).config;
    if (config === undefined) throw new DevHttpError(404, []);
    return { json: envelope(readConfig(config, limits.release)) };
  };
  const readRolePath: MountHandler = (_req, mount, { name = "" }) => {
    const role = state.method(mount).roles.get(name.toLowerCase());
    if (role === undefined) throw new DevHttpError(404, []);
    return { json: envelope(readRole(role)) };
  };

  return [
    {
      pattern: /^config$/,
      exists: (mount) => state.method(mount).config !== undefined,
      operations: {
        read: readConfigPath,
        head: readConfigPath,
        write: (req, mount) => {
          const method = state.method(mount);
          const { config, warnings } = writeConfig(method.config, bodyObject(req.json()), limits.release);
          method.config = config;
          ctx.nextIndex();
          return warnings.length > 0 ? { json: envelope(null, { warnings }) } : {};
        },
        delete: (_req, mount) => {
          state.method(mount).config = undefined;
          ctx.nextIndex();
          return {};
        },
      },
    },
    {
      pattern: /^role$/,
      operations: {
        list: (_req, mount) => {
          const keys = [...state.method(mount).roles.keys()].sort();
          if (keys.length === 0) throw new DevHttpError(404, []);
          return { json: envelope({ keys }) };
        },
      },
    },
    {
      // Any name reaches the path (a write to it needs `create` unless the role exists); only the
      // service's role names are served, others are an unsupported path.
      pattern: /^role\/(?<name>.*)$/s,
      valid: ({ name = "" }) => ROLE_NAME.test(name),
      exists: (mount, { name = "" }) => state.method(mount).roles.has(name.toLowerCase()),
      operations: {
        read: readRolePath,
        head: readRolePath,
        write: (req, mount, { name = "" }) => {
          const roles = state.method(mount).roles;
          const key = name.toLowerCase();
          const { role, warnings } = writeRole(roles.get(key), bodyObject(req.json()), effectiveMaxTtl(mount, limits));
          roles.set(key, role);
          ctx.nextIndex();
          return warnings.length > 0 ? { json: envelope(null, { warnings }) } : {};
        },
        delete: (_req, mount, { name = "" }) => {
          state.method(mount).roles.delete(name.toLowerCase());
          ctx.nextIndex();
          return {};
        },
      },
    },
    withLogin
      ? { pattern: /^login$/, unauthenticated: true, operations: { write: (req, mount) => doLogin(deps, req, mount) } }
      : { pattern: /^login$/, operations: {} },
  ];
}

async function doLogin(deps: RouteDeps, req: DevRequest, mount: AuthMount): Promise<DevResponse> {
  const { state, ctx, limits } = deps;
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
}
