/**
 * The provider side's entry point, loaded by the SDK's shims inside the dynamic-provider host at call time.
 * Each resource's implementation is required only when first used, so the host loads just what it needs.
 */
import type { ProviderImpl } from "./resources/common";

export { configure, connectionOptions, CONFIG_KEYS, CONFIG_NAMESPACE } from "./config";
export type { ProviderImpl } from "./resources/common";

/** The five resource kinds. */
export type ProviderKind = "authMount" | "authConfig" | "authRole" | "job" | "jobVersionTag";

const MODULES: Readonly<Record<ProviderKind, string>> = Object.freeze({
  authMount: "./resources/auth-mount",
  authConfig: "./resources/auth-config",
  authRole: "./resources/auth-role",
  job: "./resources/job",
  jobVersionTag: "./resources/job-version-tag",
});

/** Returns the implementation of one resource kind. */
export function provider(kind: ProviderKind): ProviderImpl {
  const path = MODULES[kind];
  if (path === undefined) throw new TypeError(`unknown resource kind "${String(kind)}"`);
  const mod = require(path) as Record<string, ProviderImpl>;
  const impl = mod[kind];
  if (impl === undefined) throw new TypeError(`module ${path} does not export "${kind}"`);
  return impl;
}

/** The five providers' objects, to drive a resource's CRUD directly (tests, scripts). */
export const providers: Readonly<Record<ProviderKind, ProviderImpl>> = Object.freeze({
  get authMount() {
    return provider("authMount");
  },
  get authConfig() {
    return provider("authConfig");
  },
  get authRole() {
    return provider("authRole");
  },
  get job() {
    return provider("job");
  },
  get jobVersionTag() {
    return provider("jobVersionTag");
  },
});
