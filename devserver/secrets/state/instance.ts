import { randomBytes, randomUUID } from "node:crypto";
import { restoreRecord } from "../../core/migrate";
import { issuerFor, TOKEN_LIFETIME_SECONDS } from "./directory";

/**
 * The fake cloud instance the devserver's metadata service describes: a plain virtual machine or a
 * scale-set instance (uniform or flexible orchestration) with system- and/or user-assigned managed
 * identities. It is also the devserver's "resource manager" knowledge for login's resource checks.
 */

/** One managed identity of the instance. */
export interface ManagedIdentity {
  readonly kind: "system" | "user";
  /** Object id of the identity's service principal (the token's `oid`). */
  readonly principalId: string;
  /** Client (application) id of the identity (the token's `appid`). */
  readonly clientId: string;
  /** Name of a user-assigned identity resource. */
  readonly name?: string;
  /** Resource group of a user-assigned identity (default: the instance's). */
  readonly resourceGroupName?: string;
}

/** Scale-set membership of the instance. */
interface ScaleSetInfo {
  readonly name: string;
  readonly orchestration: "uniform" | "flexible";
}

/** The fake instance. */
export interface FakeInstance {
  readonly tenantId: string;
  readonly subscriptionId: string;
  readonly resourceGroupName: string;
  readonly location: string;
  readonly vmId: string;
  /** `compute.name`: the VM name, or `<scale set>_<n>` for a scale-set instance. */
  readonly name: string;
  readonly scaleSet: ScaleSetInfo | null;
  readonly identities: readonly ManagedIdentity[];
}

/** Input of `configureInstance`: any subset; `identity` is a shorthand that builds fresh identities. */
export interface FakeInstanceInput {
  readonly tenantId?: string;
  readonly subscriptionId?: string;
  readonly resourceGroupName?: string;
  readonly location?: string;
  readonly vmId?: string;
  /** VM name of a plain instance (ignored for scale-set instances, whose name is `<scale set>_<instance>`). */
  readonly vmName?: string;
  /** Makes the instance a scale-set member (`instance` defaults to 0), or a plain VM with `null`. */
  readonly scaleSet?: {
    readonly name: string;
    readonly orchestration?: "uniform" | "flexible";
    readonly instance?: number | string;
  } | null;
  /** Shorthand: `system`, `user` (one user-assigned identity named `<vm>-identity`), `both`, or `none`. */
  readonly identity?: "system" | "user" | "both" | "none";
  /** Explicit identities (win over `identity`). */
  readonly identities?: readonly ManagedIdentity[];
}

function identitiesFor(kind: "system" | "user" | "both" | "none", baseName: string): ManagedIdentity[] {
  const out: ManagedIdentity[] = [];
  if (kind === "system" || kind === "both")
    out.push({ kind: "system", principalId: randomUUID(), clientId: randomUUID() });
  if (kind === "user" || kind === "both") {
    out.push({ kind: "user", principalId: randomUUID(), clientId: randomUUID(), name: `${baseName}-identity` });
  }
  return out;
}

/** Returns a fresh plain VM with a system-assigned identity and random ids. */
export function defaultInstance(): FakeInstance {
  return {
    tenantId: randomUUID(),
    subscriptionId: randomUUID(),
    resourceGroupName: "dev-rg",
    location: "westeurope",
    vmId: randomUUID(),
    name: "dev-vm",
    scaleSet: null,
    identities: identitiesFor("system", "dev-vm"),
  };
}

/** Applies a configuration input to the current instance. */
export function configureInstance(current: FakeInstance, input: FakeInstanceInput): FakeInstance {
  let scaleSet = current.scaleSet;
  let name = input.vmName ?? current.name;
  if (input.scaleSet === null) {
    scaleSet = null;
    if (input.vmName === undefined && current.scaleSet !== null) name = "dev-vm";
  } else if (input.scaleSet !== undefined) {
    scaleSet = { name: input.scaleSet.name, orchestration: input.scaleSet.orchestration ?? "flexible" };
    name = `${input.scaleSet.name}_${input.scaleSet.instance ?? 0}`;
  }
  const identities =
    input.identities !== undefined
      ? [...input.identities]
      : input.identity !== undefined
        ? identitiesFor(input.identity, scaleSet?.name ?? name)
        : current.identities;
  return {
    tenantId: input.tenantId ?? current.tenantId,
    subscriptionId: input.subscriptionId ?? current.subscriptionId,
    resourceGroupName: input.resourceGroupName ?? current.resourceGroupName,
    location: input.location ?? current.location,
    vmId: input.vmId ?? current.vmId,
    name,
    scaleSet,
    identities,
  };
}

function computeBase(inst: FakeInstance, rgSegment: "resourceGroups" | "resourcegroups"): string {
  return `/subscriptions/${inst.subscriptionId}/${rgSegment}/${inst.resourceGroupName}/providers/Microsoft.Compute`;
}

/** Returns `compute.resourceId` of the instance. */
function instanceResourceId(inst: FakeInstance): string {
  const base = computeBase(inst, "resourceGroups");
  if (inst.scaleSet?.orchestration === "uniform") {
    const n = inst.name.slice(inst.scaleSet.name.length + 1);
    return `${base}/virtualMachineScaleSets/${inst.scaleSet.name}/virtualMachines/${n}`;
  }
  return `${base}/virtualMachines/${inst.name}`;
}

/** Returns the resource id of the instance's scale set, if any. */
function scaleSetResourceId(inst: FakeInstance): string | undefined {
  return inst.scaleSet === null
    ? undefined
    : `${computeBase(inst, "resourceGroups")}/virtualMachineScaleSets/${inst.scaleSet.name}`;
}

function userIdentityResourceId(inst: FakeInstance, id: ManagedIdentity): string {
  const rg = id.resourceGroupName ?? inst.resourceGroupName;
  return `/subscriptions/${inst.subscriptionId}/resourcegroups/${rg}/providers/Microsoft.ManagedIdentity/userAssignedIdentities/${id.name ?? "identity"}`;
}

/** Returns the resource-id claims a token of this identity carries (`xms_mirid`, and `xms_az_rid` for user-assigned). */
function resourceClaims(inst: FakeInstance, id: ManagedIdentity): { xms_mirid: string; xms_az_rid?: string } {
  const base = computeBase(inst, "resourcegroups");
  const compute =
    inst.scaleSet?.orchestration === "uniform"
      ? `${base}/virtualMachineScaleSets/${inst.scaleSet.name}`
      : `${base}/virtualMachines/${inst.name}`;
  return id.kind === "system"
    ? { xms_mirid: compute }
    : { xms_mirid: userIdentityResourceId(inst, id), xms_az_rid: compute };
}

/** Returns the claims of a managed-identity access token for `resource` (the audience, exactly as given). */
export function identityTokenClaims(
  inst: FakeInstance,
  id: ManagedIdentity,
  resource: string,
  nowSeconds: number,
): Record<string, unknown> {
  return {
    aud: resource,
    iss: issuerFor(inst.tenantId),
    iat: nowSeconds,
    nbf: nowSeconds,
    exp: nowSeconds + TOKEN_LIFETIME_SECONDS,
    aio: randomBytes(24).toString("base64url"),
    appid: id.clientId,
    appidacr: "2",
    idp: issuerFor(inst.tenantId),
    idtyp: "app",
    oid: id.principalId,
    rh: `0.${randomBytes(18).toString("base64url")}.`,
    sub: id.principalId,
    tid: inst.tenantId,
    uti: randomBytes(16).toString("base64url"),
    ver: "1.0",
    ...resourceClaims(inst, id),
  };
}

/** Identity selectors of the token endpoint's query. */
export interface IdentitySelector {
  readonly clientId?: string;
  readonly objectId?: string;
  readonly miResId?: string;
}

/** Picks the identity a token request asks for; returns an error description when there is none. */
export function selectIdentity(
  inst: FakeInstance,
  sel: IdentitySelector,
): ManagedIdentity | { readonly error: string } {
  const lower = (s: string | undefined): string | undefined =>
    s === undefined || s === "" ? undefined : s.toLowerCase();
  const clientId = lower(sel.clientId);
  const objectId = lower(sel.objectId);
  const miResId = lower(sel.miResId);
  if (clientId !== undefined || objectId !== undefined || miResId !== undefined) {
    const found = inst.identities.find(
      (i) =>
        (clientId !== undefined && i.clientId.toLowerCase() === clientId) ||
        (objectId !== undefined && i.principalId.toLowerCase() === objectId) ||
        (miResId !== undefined && i.kind === "user" && userIdentityResourceId(inst, i).toLowerCase() === miResId),
    );
    return found ?? { error: "Identity not found" };
  }
  const system = inst.identities.find((i) => i.kind === "system");
  if (system !== undefined) return system;
  const users = inst.identities.filter((i) => i.kind === "user");
  if (users.length === 1 && users[0] !== undefined) return users[0];
  if (users.length > 1) {
    return {
      error:
        "Multiple user assigned identities exist, please specify the clientId / resourceId of the identity in the token request",
    };
  }
  return { error: "Identity not found" };
}

/** Compares API versions of the form YYYY-MM-DD. */
function versionAtLeast(version: string, min: string): boolean {
  return version.slice(0, 10) >= min;
}

/** Returns the `compute` section of `/metadata/instance` for an api-version. */
export function computeMetadata(inst: FakeInstance, apiVersion: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    azEnvironment: "AzurePublicCloud",
    location: inst.location,
    name: inst.name,
    offer: "0001-com-ubuntu-server-jammy",
    osType: "Linux",
    resourceGroupName: inst.resourceGroupName,
    sku: "22_04-lts-gen2",
    subscriptionId: inst.subscriptionId,
    tags: "",
    vmId: inst.vmId,
    vmSize: "Standard_B2s",
    zone: "",
  };
  if (versionAtLeast(apiVersion, "2017-12-01")) out.vmScaleSetName = inst.scaleSet?.name ?? "";
  if (versionAtLeast(apiVersion, "2019-03-11")) out.resourceId = instanceResourceId(inst);
  if (inst.scaleSet?.orchestration === "flexible") out.virtualMachineScaleSet = { id: scaleSetResourceId(inst) };
  return out;
}

/** What the resource manager returns for a VM or scale set: its location and identity principal ids. */
export interface ArmResource {
  readonly location: string;
  readonly principalIds: readonly string[];
}

const eq = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

function sameGroup(inst: FakeInstance, subscriptionId: string, resourceGroup: string): boolean {
  return eq(inst.subscriptionId, subscriptionId) && eq(inst.resourceGroupName, resourceGroup);
}

function armView(inst: FakeInstance): ArmResource {
  return { location: inst.location, principalIds: inst.identities.map((i) => i.principalId) };
}

/** Looks up a virtual machine (plain or flexible scale-set instance; uniform instances are not VMs). */
export function armVirtualMachine(
  inst: FakeInstance,
  subscriptionId: string,
  resourceGroup: string,
  name: string,
): ArmResource | undefined {
  if (!sameGroup(inst, subscriptionId, resourceGroup) || inst.scaleSet?.orchestration === "uniform") return undefined;
  return eq(inst.name, name) ? armView(inst) : undefined;
}

/** Looks up a scale set. */
export function armScaleSet(
  inst: FakeInstance,
  subscriptionId: string,
  resourceGroup: string,
  name: string,
): ArmResource | undefined {
  if (!sameGroup(inst, subscriptionId, resourceGroup) || inst.scaleSet === null) return undefined;
  return eq(inst.scaleSet.name, name) ? armView(inst) : undefined;
}

/** Looks up a resource by id (the instance's VM or its scale set). */
export function armById(inst: FakeInstance, resourceId: string): ArmResource | undefined {
  const wanted = resourceId.toLowerCase();
  const ids = [instanceResourceId(inst), scaleSetResourceId(inst)].filter((s): s is string => s !== undefined);
  return ids.some((id) => id.toLowerCase() === wanted) ? armView(inst) : undefined;
}

/** Returns client ids of the user-assigned identities that live in a resource group. */
export function userAssignedClientIds(inst: FakeInstance, subscriptionId: string, resourceGroup: string): string[] {
  if (!eq(inst.subscriptionId, subscriptionId)) return [];
  return inst.identities
    .filter((i) => i.kind === "user" && eq(i.resourceGroupName ?? inst.resourceGroupName, resourceGroup))
    .map((i) => i.clientId);
}

/**
 * Restores the persisted instance: a field it lacks (written before the field existed) gets the default
 * instance's; undefined when a field it holds has the wrong type.
 */
export function restoreInstance(data: unknown): FakeInstance | undefined {
  return restoreRecord(defaultInstance(), data, {
    identities: (v) => Array.isArray(v) && v.every((x) => typeof x === "object" && x !== null),
    scaleSet: (v) => v === null || (typeof v === "object" && typeof (v as Record<string, unknown>).name === "string"),
  });
}
