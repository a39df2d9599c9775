/**
 * Typed clients for both services, for users who script the services directly. Both run over the same
 * HTTP core as the resources (retries, timeouts, TLS, header names, error mapping, redaction).
 */
export * as secrets from "./secrets";
export * as scheduler from "./scheduler";
export { SecretsClient, type SecretsClientOptions } from "./secrets";
export { SchedulerClient } from "./scheduler";
export {
  ApiError,
  ConfigError,
  PssError,
  UsageError,
  isApiError,
  type ApiErrorCode,
  type PssErrorCode,
  type ServiceName,
} from "../errors";
export { closeConnections } from "../http/pools";
export { type ApiResponse, type ResponseMeta } from "../http/request";
export { ENV } from "../http/setting-table";
export { REAL_HEADERS, SPEC_HEADERS, type HeaderNames, type HeaderStyle } from "../http/header-names";
export { type ConnectionOptions, type HttpHooks } from "../http/settings";
export { DEFAULT_RETRY, type RetryPolicy } from "../http/retry";
