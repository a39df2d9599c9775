import { DevHttpError } from "../../core/errors";
import type { Router } from "../../core/router";
import type { DevRequest, DevResponse, ServiceContext } from "../../core/types";
import {
  buildMount,
  conflictingMount,
  mountInfo,
  normaliseMountPath,
  tuneInfo,
  tuneMount,
  type MountLimits,
} from "../state/mounts";
import type { SecretsState } from "../state/state";
import { bodyObject, envelope, readStringList } from "../state/values";

/**
 * `sys/` routes of the secrets service: the auth-method mount table (list, enable, read, disable, tune,
 * also the sudo-free `sys/mounts/auth/<path>/tune`), ACL policies and `sys/capabilities-self`.
 */

/** What the route modules share. */
export interface RouteDeps {
  readonly state: SecretsState;
  readonly ctx: ServiceContext;
  readonly limits: MountLimits;
}

/** Returns the capability a request method needs (`create` or `update` for writes, by existence). */
export function methodCapability(method: string, exists: boolean): string {
  switch (method) {
    case "GET":
    case "HEAD":
      return "read";
    case "LIST":
      return "list";
    case "DELETE":
      return "delete";
    default:
      return exists ? "update" : "create";
  }
}

/** Renders sys data the way the service does: inside `data` and repeated at the top level. */
function sysData(data: Record<string, unknown>): DevResponse {
  return { json: { ...data, ...envelope(data) } };
}

function mountParam(req: DevRequest): string {
  return normaliseMountPath(req.params.mount ?? "");
}

/** Registers the `sys/` routes. */
export function registerSysRoutes(r: Router, deps: RouteDeps): void {
  const { state, ctx, limits } = deps;
  const acl = (req: DevRequest, path: string, caps: readonly string[]): void =>
    state.policies.require(req.token, path, caps);

  // The leader status needs no token. A single node without high availability answers only that (as
  // OpenBao 2.6.2's dev server does); a cluster also names its active node in `leader_address`.
  r.get("/v1/sys/leader", () => ({ json: { ha_enabled: false } }), { auth: false });

  r.get("/v1/sys/auth", (req) => {
    acl(req, "sys/auth", ["read"]);
    const data: Record<string, unknown> = {};
    for (const m of [...state.mounts.values()].sort((a, b) => a.path.localeCompare(b.path)))
      data[`${m.path}/`] = mountInfo(m, limits);
    return sysData(data);
  });

  const tune =
    (sudo: boolean) =>
    (req: DevRequest): DevResponse => {
      const path = mountParam(req);
      const aclPath = sudo ? `sys/auth/${path}/tune` : `sys/mounts/auth/${path}/tune`;
      acl(req, aclPath, sudo ? [methodCapability(req.method, true), "sudo"] : [methodCapability(req.method, true)]);
      const mount = state.mounts.get(path);
      if (mount === undefined)
        throw new DevHttpError(400, `cannot fetch sysview for path ${JSON.stringify(`auth/${path}/`)}`);
      if (req.method === "GET" || req.method === "HEAD") return sysData(tuneInfo(mount, limits));
      state.mounts.set(path, tuneMount(mount, bodyObject(req.json()), limits));
      ctx.nextIndex();
      return {};
    };
  r.on(["GET", "POST"], "/v1/sys/auth/*mount/tune", tune(true));
  r.on(["GET", "POST"], "/v1/sys/mounts/auth/*mount/tune", tune(false));

  r.on(["GET", "POST", "DELETE"], "/v1/sys/auth/*mount", (req) => {
    const path = mountParam(req);
    acl(req, `sys/auth/${path}`, [methodCapability(req.method, true), "sudo"]);
    if (path === "") throw new DevHttpError(400, "path cannot be blank");
    const existing = state.mounts.get(path);
    if (req.method === "GET" || req.method === "HEAD") {
      if (existing === undefined) throw new DevHttpError(400, `No auth engine at ${path}/`);
      return sysData(mountInfo(existing, limits));
    }
    if (req.method === "DELETE") {
      if (existing === undefined) return {};
      if (existing.type === "token") throw new DevHttpError(400, "token credential backend cannot be disabled");
      state.mounts.delete(path);
      state.methods.delete(existing.accessor);
      ctx.tokens.revokeWhere((t) => t.meta?.mountAccessor === existing.accessor);
      ctx.nextIndex();
      return {};
    }
    const conflict = conflictingMount(state.mounts.values(), path);
    if (conflict !== undefined) throw new DevHttpError(400, `path is already in use at ${conflict.path}/`);
    const mount = buildMount(path, bodyObject(req.json()), limits);
    state.mounts.set(path, mount);
    ctx.nextIndex();
    return {};
  });

  // ACL policies (current and legacy paths).
  const readPolicy =
    (legacy: boolean) =>
    (req: DevRequest): DevResponse => {
      const name = (req.params.name ?? "").toLowerCase();
      const base = legacy ? "sys/policy" : "sys/policies/acl";
      const doc = state.policies.get(name);
      acl(req, `${base}/${name}`, [methodCapability(req.method, doc !== undefined || name === "root")]);
      if (req.method === "GET" || req.method === "HEAD") {
        if (name === "root") return { json: envelope({ name: "root", [legacy ? "rules" : "policy"]: "" }) };
        if (doc === undefined) throw new DevHttpError(404, []);
        return { json: envelope({ name: doc.name, [legacy ? "rules" : "policy"]: doc.text }) };
      }
      if (req.method === "DELETE") {
        state.policies.delete(name);
        ctx.nextIndex();
        return {};
      }
      const body = bodyObject(req.json());
      const text =
        typeof body.policy === "string" ? body.policy : legacy && typeof body.rules === "string" ? body.rules : "";
      if (text === "") throw new DevHttpError(400, "'policy' parameter not supplied or empty");
      state.policies.put(name, text);
      ctx.nextIndex();
      return {};
    };
  r.on(["GET", "POST", "DELETE"], "/v1/sys/policies/acl/:name", readPolicy(false));
  r.on(["GET", "POST", "DELETE"], "/v1/sys/policy/:name", readPolicy(true));
  r.list("/v1/sys/policies/acl", (req) => {
    acl(req, "sys/policies/acl", ["list"]);
    return { json: envelope({ keys: state.policies.names() }) };
  });
  r.get("/v1/sys/policy", (req) => {
    acl(req, "sys/policy", ["read"]);
    const names = state.policies.names();
    return sysData({ keys: names, policies: names });
  });

  r.post("/v1/sys/capabilities-self", (req) => {
    acl(req, "sys/capabilities-self", ["update"]);
    const token = req.token;
    if (token === undefined) throw new DevHttpError(403, "permission denied");
    const body = bodyObject(req.json());
    const paths =
      body.paths !== undefined
        ? readStringList("paths", body.paths)
        : body.path !== undefined
          ? readStringList("path", body.path)
          : [];
    if (paths.length === 0) throw new DevHttpError(400, "paths must be supplied");
    const data: Record<string, unknown> = {};
    for (const p of paths) data[p] = state.policies.capabilities(token, p.replace(/^\/+/, ""));
    if (paths.length === 1 && paths[0] !== undefined) data.capabilities = data[paths[0]];
    return sysData(data);
  });
}
