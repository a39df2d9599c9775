import { BlockList, isIPv4 } from "node:net";
import { DevHttpError } from "../../core/errors";
import { issuerFor, TokenVerificationError, type Directory, type TokenClaims } from "../state/directory";
import {
  armById,
  armScaleSet,
  armVirtualMachine,
  userAssignedClientIds,
  type ArmResource,
  type FakeInstance,
} from "../state/instance";
import { settingsError, type MethodConfig } from "../state/method-config";
import { effectiveDefaultTtl, effectiveMaxTtl, type AuthMount, type MountLimits } from "../state/mounts";
import { effectiveRole, type Role } from "../state/roles";
import { goQuote, goTime, goValue, listContainsFold, readString, sanitizePolicies } from "../state/values";

/**
 * The cloud auth method's login, step by step in the real order: required fields, bound CIDRs, input
 * formats, token verification (500 on failure, like the real plain errors), service principal and group
 * claims, and, only for roles with subscription / resource-group / location / scale-set bounds, the
 * resource checks against the fake resource manager (the devserver's fake instance).
 */

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/;
const VM_NAME = /^[a-zA-Z][a-zA-Z0-9.\-_]*[a-zA-Z0-9_]$/;
const ARM = "https://management.azure.com";
const RULE = "-".repeat(80);

/** What a successful login yields; the route turns it into a token and the `auth` block. */
export interface LoginOutcome {
  readonly roleName: string;
  readonly objectId: string;
  readonly groups: readonly string[];
  readonly policies: readonly string[];
  readonly metadata: Readonly<Record<string, string>>;
  readonly leaseSeconds: number;
  readonly tokenType: "service" | "batch";
  readonly numUses: number;
  readonly explicitMaxTtl: number;
  readonly period: number;
}

/** Everything login reads besides the request. */
export interface LoginContext {
  readonly mount: AuthMount;
  readonly limits: MountLimits;
  readonly roles: ReadonlyMap<string, Role>;
  readonly config: MethodConfig | undefined;
  readonly directory: Directory;
  readonly instance: FakeInstance;
  readonly remoteAddress: string;
  readonly nowSeconds: number;
}

function field(body: Readonly<Record<string, unknown>>, key: string): string {
  const v = body[key];
  return v === undefined ? "" : readString(key, v);
}

/** Returns whether an address lies in one of the CIDRs (bare addresses are single hosts). */
function addressAllowed(address: string, cidrs: readonly string[]): boolean {
  const addr = address.startsWith("::ffff:") && isIPv4(address.slice(7)) ? address.slice(7) : address;
  const family = isIPv4(addr) ? "ipv4" : "ipv6";
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split("/");
    if (net === undefined) continue;
    const netFamily = isIPv4(net) ? "ipv4" : "ipv6";
    list.addSubnet(net, bits === undefined ? (netFamily === "ipv4" ? 32 : 128) : Number(bits), netFamily);
  }
  return list.check(addr, family);
}

function plain(message: string): DevHttpError {
  return new DevHttpError(500, message);
}

function notFound(kind: string, url: string): DevHttpError {
  return plain(
    `unable to retrieve ${kind} metadata: GET ${url}\n${RULE}\nRESPONSE 404: 404 Not Found\nERROR CODE: ResourceNotFound\n${RULE}\n`,
  );
}

function stringClaim(claims: TokenClaims, key: string): string {
  const v = claims[key];
  return typeof v === "string" ? v : "";
}

function groupsClaim(claims: TokenClaims): string[] {
  const v = claims.groups;
  return Array.isArray(v) ? v.filter((g): g is string => typeof g === "string") : [];
}

/** Returns whether any resource-id claim names `/<kind>/<name>` as a whole segment (case-insensitive). */
function claimNames(ids: readonly string[], kind: string, name: string, prefixOnly = false): boolean {
  const needle = `/${kind}/${name}`.toLowerCase();
  return ids.some((id) => {
    const l = id.toLowerCase();
    const at = l.indexOf(needle);
    if (at < 0) return false;
    if (prefixOnly) return true;
    const next = l.charAt(at + needle.length);
    return next === "" || next === "/";
  });
}

function verifyClaims(claims: TokenClaims, role: Role, now: number): void {
  const nbf = claims.nbf;
  if (typeof nbf === "number" && nbf > now) throw plain(`token is not yet valid (Token Not Before: ${goTime(nbf)})`);
  const sps = role.bound_service_principal_ids ?? [];
  const groups = role.bound_group_ids ?? [];
  const star = (l: readonly string[]): boolean => l.length === 1 && l[0] === "*";
  if (star(sps) && star(groups)) {
    throw plain("expected specific bound_group_ids or bound_service_principal_ids; both cannot be '*'");
  }
  if (sps.length === 0 && groups.length === 0) {
    throw plain("expected specific bound_group_ids or bound_service_principal_ids; both cannot be empty");
  }
  const oid = stringClaim(claims, "oid");
  if (!star(sps) && sps.length > 0 && !listContainsFold(sps, oid))
    throw plain(`service principal not authorized: ${oid}`);
  const tokenGroups = groupsClaim(claims);
  if (!star(groups) && groups.length > 0 && !tokenGroups.some((g) => listContainsFold(groups, g))) {
    throw plain(`groups not authorized: ${goValue(tokenGroups)}`);
  }
}

interface ResourceRequest {
  readonly subscriptionId: string;
  readonly resourceGroup: string;
  readonly vmName: string;
  readonly vmssName: string;
  readonly resourceId: string;
}

function verifyResource(
  req: ResourceRequest,
  claims: TokenClaims,
  role: Role,
  ctx: LoginContext,
  config: MethodConfig,
): void {
  const bound = (l: string[] | null): string[] => l ?? [];
  const rgs = bound(role.bound_resource_groups);
  const subs = bound(role.bound_subscription_ids);
  const locations = bound(role.bound_locations);
  const scaleSets = bound(role.bound_scale_sets);
  if (rgs.length === 0 && subs.length === 0 && locations.length === 0 && scaleSets.length === 0) return;
  if (req.subscriptionId === "" || req.resourceGroup === "")
    throw plain("subscription_id and resource_group_name are required");

  const ids = [stringClaim(claims, "xms_az_rid"), stringClaim(claims, "xms_mirid")].filter((s) => s !== "");
  const base = `${ARM}/subscriptions/${req.subscriptionId}/resourceGroups/${req.resourceGroup}/providers/Microsoft.Compute`;
  // Resource-manager calls need the method's credentials; without them the real call cannot authenticate.
  const needCredentials = (kind: string): void => {
    if (config.client_id === "" || config.client_secret === "") {
      throw plain(
        `unable to retrieve ${kind} metadata: ClientSecretCredential: client_id and client_secret are required outside the cloud`,
      );
    }
  };
  let resource: ArmResource | undefined;
  if (req.vmssName !== "") {
    if (
      !claimNames(ids, "virtualMachines", `${req.vmssName}_`, true) &&
      !claimNames(ids, "virtualMachineScaleSets", req.vmssName)
    ) {
      throw plain(`xms_mirid token claim does not match vmss_name ${goQuote(req.vmssName)}`);
    }
    needCredentials("virtual machine scale set");
    resource = armScaleSet(ctx.instance, req.subscriptionId, req.resourceGroup, req.vmssName);
    if (resource === undefined)
      throw notFound("virtual machine scale set", `${base}/virtualMachineScaleSets/${req.vmssName}`);
    if (scaleSets.length > 0 && !listContainsFold(scaleSets, req.vmssName)) throw plain("scale set not authorized");
  } else if (req.vmName !== "") {
    if (!claimNames(ids, "virtualMachines", req.vmName))
      throw plain(`xms_mirid token claim does not match vm_name ${goQuote(req.vmName)}`);
    needCredentials("virtual machine");
    resource = armVirtualMachine(ctx.instance, req.subscriptionId, req.resourceGroup, req.vmName);
    if (resource === undefined) throw notFound("virtual machine", `${base}/virtualMachines/${req.vmName}`);
    if (scaleSets.length > 0) throw plain("bound scale set defined but this vm isn't in a scale set");
  } else if (req.resourceId !== "") {
    if (scaleSets.length > 0) throw plain("scale set requires the vmss_name field to be set");
    needCredentials("resource");
    resource = armById(ctx.instance, req.resourceId);
    if (resource === undefined) throw notFound("resource", `${ARM}${req.resourceId}`);
  } else if (stringClaim(claims, "appid") === "") {
    throw plain("one of vm_name, vmss_name, resource_id, or an appid JWT claim must be provided");
  }

  const rgNeedle = `/resourcegroups/${req.resourceGroup.toLowerCase()}/`;
  const rgSource = req.resourceId !== "" ? [req.resourceId] : req.vmName !== "" || req.vmssName !== "" ? ids : [];
  if (rgSource.length > 0 && !rgSource.some((s) => s.toLowerCase().includes(rgNeedle))) {
    throw plain(`resource group ${goQuote(req.resourceGroup)} does not match the token claims`);
  }

  let matchedByAppId = false;
  const oid = stringClaim(claims, "oid");
  if (resource === undefined || !resource.principalIds.some((p) => p.toLowerCase() === oid.toLowerCase())) {
    const appid = stringClaim(claims, "appid");
    if (appid === "") throw plain("token object id does not match expected identities, and no app id was found");
    const clientIds = [req.resourceGroup, ...rgs].flatMap((rg) =>
      userAssignedClientIds(ctx.instance, req.subscriptionId, rg),
    );
    if (!listContainsFold(clientIds, appid))
      throw plain("neither token object id nor token app id match expected identities");
    matchedByAppId = true;
  }
  if (subs.length > 0 && !listContainsFold(subs, req.subscriptionId)) throw plain("subscription not authorized");
  if (!matchedByAppId && rgs.length > 0 && !listContainsFold(rgs, req.resourceGroup))
    throw plain("resource group not authorized");
  if (locations.length > 0) {
    if (resource === undefined) throw plain("location is empty");
    if (!listContainsFold(locations, resource.location)) throw plain("location not authorized");
  }
}

/** Runs a login; resolves to the outcome or throws the real status and text. */
export async function login(body: Readonly<Record<string, unknown>>, ctx: LoginContext): Promise<LoginOutcome> {
  const jwt = field(body, "jwt");
  if (jwt === "") throw new DevHttpError(400, "jwt is required");
  const roleName = field(body, "role");
  if (roleName === "") throw new DevHttpError(400, "role is required");
  const stored = ctx.roles.get(roleName.toLowerCase());
  if (stored === undefined) throw new DevHttpError(400, `invalid role name ${goQuote(roleName)}`);
  const role = effectiveRole(stored);

  if (role.token_bound_cidrs.length > 0 && !addressAllowed(ctx.remoteAddress, role.token_bound_cidrs)) {
    throw new DevHttpError(403, "permission denied");
  }

  const req: ResourceRequest = {
    subscriptionId: field(body, "subscription_id"),
    resourceGroup: field(body, "resource_group_name"),
    vmName: field(body, "vm_name"),
    vmssName: field(body, "vmss_name"),
    resourceId: field(body, "resource_id"),
  };
  if (req.subscriptionId !== "" && !GUID.test(req.subscriptionId)) {
    throw new DevHttpError(400, `invalid subscription id ${goQuote(req.subscriptionId)}`);
  }
  if (req.resourceGroup !== "" && !RESOURCE_GROUP.test(req.resourceGroup)) {
    throw new DevHttpError(400, `invalid resource group name ${goQuote(req.resourceGroup)}`);
  }
  if (req.vmssName !== "" && !VM_NAME.test(req.vmssName))
    throw new DevHttpError(400, `invalid vmss_name ${goQuote(req.vmssName)}`);
  if (req.vmName !== "" && !VM_NAME.test(req.vmName))
    throw new DevHttpError(400, `invalid vm name ${goQuote(req.vmName)}`);

  const config = ctx.config;
  const problem = config === undefined ? "tenant_id is required" : settingsError(config);
  if (problem !== undefined || config === undefined) throw plain(problem ?? "tenant_id is required");

  let claims: TokenClaims;
  try {
    claims = await ctx.directory.verify(
      jwt,
      { issuer: issuerFor(config.tenant_id), audience: config.resource },
      ctx.nowSeconds,
    );
  } catch (err) {
    if (err instanceof TokenVerificationError) throw plain(err.message);
    throw err;
  }
  verifyClaims(claims, role, ctx.nowSeconds);
  verifyResource(req, claims, role, ctx, config);

  const policies = sanitizePolicies(role.token_policies, !role.token_no_default_policy);
  if (policies.includes("root")) throw new DevHttpError(400, "auth methods cannot create root tokens");

  const metadata: Record<string, string> = {
    resource_group_name: req.resourceGroup,
    role: roleName,
    subscription_id: req.subscriptionId,
  };
  if (req.vmName !== "") metadata.vm_name = req.vmName;
  if (req.vmssName !== "") metadata.vmss_name = req.vmssName;
  if (req.resourceId !== "") metadata.resource_id = req.resourceId;
  const appid = stringClaim(claims, "appid");
  if (appid !== "") metadata.app_id = appid;

  const mountType = ctx.mount.config.token_type;
  const batch =
    role.token_type === "batch" ||
    (role.token_type === "default" && mountType === "default-batch") ||
    (role.token_type === "default" && mountType === "batch");
  return {
    roleName,
    objectId: stringClaim(claims, "oid"),
    groups: groupsClaim(claims).filter((g) => g !== ""),
    policies,
    metadata,
    leaseSeconds: leaseSeconds(role, ctx.mount, ctx.limits),
    tokenType: batch ? "batch" : "service",
    numUses: role.token_num_uses,
    explicitMaxTtl: role.token_explicit_max_ttl,
    period: role.token_period,
  };
}

/** Returns the lease of a token issued for a role: its TTL (or the mount default), capped by the max TTLs. */
function leaseSeconds(role: Role, mount: AuthMount, limits: MountLimits): number {
  const mountMax = effectiveMaxTtl(mount, limits);
  let max = role.token_max_ttl > 0 ? Math.min(role.token_max_ttl, mountMax) : mountMax;
  if (role.token_explicit_max_ttl > 0) max = Math.min(max, role.token_explicit_max_ttl);
  if (role.token_period > 0) {
    return role.token_explicit_max_ttl > 0
      ? Math.min(role.token_period, role.token_explicit_max_ttl)
      : role.token_period;
  }
  const ttl = role.token_ttl > 0 ? role.token_ttl : effectiveDefaultTtl(mount, limits);
  return Math.min(ttl, max);
}
