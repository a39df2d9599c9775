/**
 * pulumi-secrets-scheduler: Pulumi resources for a secrets service's cloud-identity auth method and a
 * workload scheduler's job API, plus typed clients for both services.
 *
 * - Resources: `AuthMount`, `AuthConfig`, `AuthRole`, `Job`, `JobVersionTag`.
 * - `clients`: `SecretsClient`, `SchedulerClient` and the error types.
 * - `providers`: the five providers' objects, to drive a resource's CRUD directly.
 * The devserver is a separate entry point: `pulumi-secrets-scheduler/devserver`.
 */
export * from "./sdk";
export * as clients from "./provider/clients";
export { providers, type ProviderKind, type ProviderImpl } from "./provider";
export { ApiError, ConfigError, UsageError, isApiError, type ApiErrorCode } from "./provider/errors";
