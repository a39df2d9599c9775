/**
 * pulumi-secrets-scheduler: Pulumi resources for a secrets service's cloud-identity auth method and a
 * workload scheduler's job API, plus typed clients for both services.
 *
 * - Resources: `AuthMount`, `AuthConfig`, `AuthRole`, `Job`, `JobVersionTag`.
 * - `clients`: `SecretsClient`, `SchedulerClient` and the error types.
 * - `providers`: the five providers' objects, to drive a resource's CRUD directly.
 * The devserver is a separate entry point: `pulumi-secrets-scheduler/devserver`.
 */
import type * as ClientsModule from "./provider/clients";

export * from "./sdk";
export { providers, type ProviderKind, type ProviderImpl } from "./provider";
export {
  ApiError,
  ConfigError,
  PssError,
  ResourceError,
  UsageError,
  isApiError,
  type ApiErrorCode,
  type PssErrorCode,
  type ResourceErrorCode,
} from "./provider/errors";

/**
 * The typed clients of both services (also `pulumi-secrets-scheduler/clients`). Loaded on first use: a
 * Pulumi program that only declares resources never loads the HTTP client and the schemas, which run in
 * the provider host instead.
 */
export const clients: typeof ClientsModule = lazyModule(() => require("./provider/clients") as typeof ClientsModule);

function lazyModule<T extends object>(load: () => T): T {
  let mod: T | undefined;
  const get = (): T => (mod === undefined ? (mod = load()) : mod);
  return new Proxy({} as T, {
    get: (_t, key) => Reflect.get(get(), key),
    has: (_t, key) => Reflect.has(get(), key),
    ownKeys: () => Reflect.ownKeys(get()),
    getOwnPropertyDescriptor: (_t, key) => {
      const d = Reflect.getOwnPropertyDescriptor(get(), key);
      return d === undefined ? undefined : { ...d, configurable: true };
    },
  });
}
