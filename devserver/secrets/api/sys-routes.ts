import { DevHttpError, multiErrorText } from "../../core/errors";
import type { Router, RouteRow } from "../../core/router";
import type { DevRequest, DevResponse } from "../../core/types";
import {
  buildMount,
  conflictingMount,
  mountInfo,
  normaliseMountPath,
  tuneInfo,
  tuneMount,
  type AuthMount,
} from "../state/mounts";
import type { PolicyDoc } from "../state/acl";
import { bodyObject, envelope, readStringList } from "../state/values";
import { methodCapability, requireAcl, type RouteDeps } from "./deps";
import { remountRoutes, type RemountOptions } from "./remount";

/**
 * `sys/` routes of the secrets service, a route table per resource: the leader status, the auth-method
 * mount table (list, enable, read, disable, tune, also the sudo-free `sys/mounts/auth/<path>/tune`), ACL
 * policies (current and legacy paths), `sys/capabilities-self`, and `sys/remount` (./remount.ts). Each
 * handler but the leader status checks the token's ACL on the path itself, before it looks at the request
 * further.
 */

/** Renders sys data the way the service does: inside `data` and repeated at the top level. */
function sysData(data: Record<string, unknown>): DevResponse {
  return { json: { ...data, ...envelope(data) } };
}

function mountParam(req: DevRequest): string {
  return normaliseMountPath(req.params.mount ?? "");
}

/**
 * The leader status, which needs no token. A single node without high availability answers only that (as
 * OpenBao 2.6.2's dev server does); a cluster also names its active node in `leader_address`.
 */
const LEADER_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/sys/leader", handler: () => ({ json: { ha_enabled: false } }), auth: false },
];

function listMounts(deps: RouteDeps, req: DevRequest): DevResponse {
  requireAcl(deps, req, "sys/auth", ["read"]);
  const data: Record<string, unknown> = {};
  for (const m of [...deps.state.mounts.values()].sort((a, b) => a.path.localeCompare(b.path)))
    data[`${m.path}/`] = mountInfo(m, deps.limits);
  return sysData(data);
}

/** The mount a request on `sys/auth/<path>` names, once the token may act on it (with `sudo`). */
function namedMount(deps: RouteDeps, req: DevRequest): { path: string; existing: AuthMount | undefined } {
  const path = mountParam(req);
  requireAcl(deps, req, `sys/auth/${path}`, [methodCapability(req.method, true), "sudo"]);
  if (path === "") throw new DevHttpError(400, "path cannot be blank");
  return { path, existing: deps.state.mounts.get(path) };
}

function readMount(deps: RouteDeps, req: DevRequest): DevResponse {
  const { path, existing } = namedMount(deps, req);
  if (existing === undefined) throw new DevHttpError(400, `No auth engine at ${path}/`);
  return sysData(mountInfo(existing, deps.limits));
}

function enableMount(deps: RouteDeps, req: DevRequest): DevResponse {
  const { path } = namedMount(deps, req);
  const conflict = conflictingMount(deps.state.mounts.values(), path);
  if (conflict !== undefined) throw new DevHttpError(400, `path is already in use at ${conflict.path}/`);
  const mount = buildMount(path, bodyObject(req.json()), deps.limits);
  deps.state.mounts.set(path, mount);
  deps.ctx.nextIndex();
  return {};
}

function disableMount(deps: RouteDeps, req: DevRequest): DevResponse {
  const { path, existing } = namedMount(deps, req);
  if (existing === undefined) return {};
  if (existing.type === "token") throw new DevHttpError(400, "token credential backend cannot be disabled");
  deps.state.mounts.delete(path);
  deps.state.methods.delete(existing.accessor);
  deps.ctx.tokens.revokeWhere((t) => t.meta?.mountAccessor === existing.accessor);
  deps.ctx.nextIndex();
  return {};
}

/** Where a mount's tune is reached: `sys/auth/<path>/tune` needs `sudo`, `sys/mounts/auth/<path>/tune` does not. */
type TunePath = "sys/auth" | "sys/mounts/auth";

/** The mount path a tune request names, once the token may send its method to it through `at`. */
function tunePath(deps: RouteDeps, req: DevRequest, at: TunePath): string {
  const path = mountParam(req);
  const sudo = at === "sys/auth";
  const cap = methodCapability(req.method, true);
  requireAcl(deps, req, `${at}/${path}/tune`, sudo ? [cap, "sudo"] : [cap]);
  return path;
}

/** The mount a tune request names, once the token may tune it through `at`. */
function tunedMount(deps: RouteDeps, req: DevRequest, at: TunePath): { path: string; mount: AuthMount } {
  const path = tunePath(deps, req, at);
  const mount = deps.state.mounts.get(path);
  if (mount === undefined)
    throw new DevHttpError(400, `cannot fetch sysview for path ${JSON.stringify(`auth/${path}/`)}`);
  return { path, mount };
}

const readTune =
  (at: TunePath) =>
  (deps: RouteDeps, req: DevRequest): DevResponse =>
    sysData(tuneInfo(tunedMount(deps, req, at).mount, deps.limits));

/**
 * A tune path has a read and an update, nothing else: another method (a DELETE) answers 405 `unsupported
 * operation` once the token may send it there, and never reaches the mount (OpenBao routes
 * `sys/auth/<path>/tune` before `sys/auth/<path>`, so such a DELETE is no disable of a mount named `.../tune`).
 */
const tuneUnsupported =
  (at: TunePath) =>
  (deps: RouteDeps, req: DevRequest): DevResponse => {
    tunePath(deps, req, at);
    throw new DevHttpError(405, multiErrorText("unsupported operation"));
  };

const writeTune =
  (at: TunePath) =>
  (deps: RouteDeps, req: DevRequest): DevResponse => {
    const { path, mount } = tunedMount(deps, req, at);
    deps.state.mounts.set(path, tuneMount(mount, bodyObject(req.json()), deps.limits));
    deps.ctx.nextIndex();
    return {};
  };

/**
 * The auth-method mount table: `sys/auth`, each mount and its tune (the tune rows before the mount's, as a
 * mount path may end in `/tune`).
 */
const MOUNT_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/sys/auth", handler: listMounts },
  { method: "GET", path: "/v1/sys/auth/*mount/tune", handler: readTune("sys/auth") },
  { method: "POST", path: "/v1/sys/auth/*mount/tune", handler: writeTune("sys/auth") },
  { method: "GET", path: "/v1/sys/mounts/auth/*mount/tune", handler: readTune("sys/mounts/auth") },
  { method: "POST", path: "/v1/sys/mounts/auth/*mount/tune", handler: writeTune("sys/mounts/auth") },
  { method: "DELETE", path: "/v1/sys/auth/*mount/tune", handler: tuneUnsupported("sys/auth") },
  { method: "DELETE", path: "/v1/sys/mounts/auth/*mount/tune", handler: tuneUnsupported("sys/mounts/auth") },
  { method: "GET", path: "/v1/sys/auth/*mount", handler: readMount },
  { method: "POST", path: "/v1/sys/auth/*mount", handler: enableMount },
  { method: "DELETE", path: "/v1/sys/auth/*mount", handler: disableMount },
];

/** The two paths of an ACL policy: the current one and the legacy one, whose text is called `rules`. */
interface PolicyApi {
  readonly base: "sys/policies/acl" | "sys/policy";
  readonly text: "policy" | "rules";
}
const CURRENT: PolicyApi = { base: "sys/policies/acl", text: "policy" };
const LEGACY: PolicyApi = { base: "sys/policy", text: "rules" };

/** The policy a request names (lower-cased), once the token may act on it. */
function namedPolicy(deps: RouteDeps, req: DevRequest, api: PolicyApi): { name: string; doc: PolicyDoc | undefined } {
  const name = (req.params.name ?? "").toLowerCase();
  const doc = deps.state.policies.get(name);
  requireAcl(deps, req, `${api.base}/${name}`, [methodCapability(req.method, doc !== undefined || name === "root")]);
  return { name, doc };
}

const readPolicy =
  (api: PolicyApi) =>
  (deps: RouteDeps, req: DevRequest): DevResponse => {
    const { name, doc } = namedPolicy(deps, req, api);
    if (name === "root") return { json: envelope({ name: "root", [api.text]: "" }) };
    if (doc === undefined) throw new DevHttpError(404, []);
    return { json: envelope({ name: doc.name, [api.text]: doc.text }) };
  };

const writePolicy =
  (api: PolicyApi) =>
  (deps: RouteDeps, req: DevRequest): DevResponse => {
    const { name } = namedPolicy(deps, req, api);
    const body = bodyObject(req.json());
    const text =
      typeof body.policy === "string"
        ? body.policy
        : api === LEGACY && typeof body.rules === "string"
          ? body.rules
          : "";
    if (text === "") throw new DevHttpError(400, "'policy' parameter not supplied or empty");
    deps.state.policies.put(name, text);
    deps.ctx.nextIndex();
    return {};
  };

const deletePolicy =
  (api: PolicyApi) =>
  (deps: RouteDeps, req: DevRequest): DevResponse => {
    const { name } = namedPolicy(deps, req, api);
    deps.state.policies.delete(name);
    deps.ctx.nextIndex();
    return {};
  };

function listPolicies(deps: RouteDeps, req: DevRequest): DevResponse {
  requireAcl(deps, req, "sys/policies/acl", ["list"]);
  return { json: envelope({ keys: deps.state.policies.names() }) };
}

function listLegacyPolicies(deps: RouteDeps, req: DevRequest): DevResponse {
  requireAcl(deps, req, "sys/policy", ["read"]);
  const names = deps.state.policies.names();
  return sysData({ keys: names, policies: names });
}

/** ACL policies, on the current and the legacy paths. */
const POLICY_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "GET", path: "/v1/sys/policies/acl/:name", handler: readPolicy(CURRENT) },
  { method: "POST", path: "/v1/sys/policies/acl/:name", handler: writePolicy(CURRENT) },
  { method: "DELETE", path: "/v1/sys/policies/acl/:name", handler: deletePolicy(CURRENT) },
  { method: "GET", path: "/v1/sys/policy/:name", handler: readPolicy(LEGACY) },
  { method: "POST", path: "/v1/sys/policy/:name", handler: writePolicy(LEGACY) },
  { method: "DELETE", path: "/v1/sys/policy/:name", handler: deletePolicy(LEGACY) },
  { method: "LIST", path: "/v1/sys/policies/acl", handler: listPolicies },
  { method: "GET", path: "/v1/sys/policy", handler: listLegacyPolicies },
];

function capabilitiesSelf(deps: RouteDeps, req: DevRequest): DevResponse {
  requireAcl(deps, req, "sys/capabilities-self", ["update"]);
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
  for (const p of paths) data[p] = deps.state.policies.capabilities(token, p.replace(/^\/+/, ""));
  if (paths.length === 1 && paths[0] !== undefined) data.capabilities = data[paths[0]];
  return sysData(data);
}

/** What the token can do on some paths. */
const CAPABILITY_ROUTES: readonly RouteRow<RouteDeps>[] = [
  { method: "POST", path: "/v1/sys/capabilities-self", handler: capabilitiesSelf },
];

/** Registers the `sys/` route tables. */
export function registerSysRoutes(r: Router, deps: RouteDeps, remount: RemountOptions): void {
  r.table(deps, LEADER_ROUTES).table(deps, MOUNT_ROUTES).table(deps, POLICY_ROUTES).table(deps, CAPABILITY_ROUTES);
  remountRoutes(r, deps, remount);
}
