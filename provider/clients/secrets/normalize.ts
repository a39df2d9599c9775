/**
 * Normal forms of the secrets service's names: mount paths without slashes, role names lowercase. What
 * values mean (durations, lists, CIDRs) is in ../../values.ts, shared by both services.
 */
import { encodeSegments } from "../../http/path";

/** Returns a mount path without leading or trailing slashes ("/cloud/" → "cloud"). */
export function trimMountPath(p: string): string {
  return p.replace(/^\/+/, "").replace(/\/+$/, "");
}

/**
 * Returns the encoded URL form of a mount path: each segment encoded on its own, so a nested mount
 * ("team/cloud") keeps its slashes. Throws UsageError for an empty path and for an empty, `.` or `..`
 * segment: those would address another endpoint.
 */
export function encodeMount(p: string): string {
  return encodeSegments(trimMountPath(p), "the mount path");
}

/** Returns a role name in the form the service stores it (lowercase). */
export function canonicalRoleName(name: string): string {
  return name.toLowerCase();
}
