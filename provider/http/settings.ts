/**
 * Connection settings for both services, resolved in one order: explicit options first, then the
 * environment. Everything is parsed into locals and returned whole, so a bad value never leaves a
 * half-resolved connection behind.
 */
import { readFileSync } from "node:fs";
import { ConfigError, type ServiceName } from "../errors";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry";

/** Environment variables read by the core, by service. */
export const ENV = Object.freeze({
  secrets: Object.freeze({
    address: "SECRETS_ADDR",
    token: "SECRETS_TOKEN",
    namespace: "SECRETS_NAMESPACE",
    caCert: "SECRETS_CACERT",
    clientCert: "SECRETS_CLIENT_CERT",
    clientKey: "SECRETS_CLIENT_KEY",
    headerStyle: "SECRETS_HEADER_STYLE",
    tokenHeader: "SECRETS_TOKEN_HEADER",
  }),
  scheduler: Object.freeze({
    address: "SCHEDULER_ADDR",
    token: "SCHEDULER_TOKEN",
    namespace: "SCHEDULER_NAMESPACE",
    region: "SCHEDULER_REGION",
    caCert: "SCHEDULER_CACERT",
    clientCert: "SCHEDULER_CLIENT_CERT",
    clientKey: "SCHEDULER_CLIENT_KEY",
    headerStyle: "SCHEDULER_HEADER_STYLE",
    tokenHeader: "SCHEDULER_TOKEN_HEADER",
    anonymous: "SCHEDULER_ANONYMOUS",
  }),
});

/** Names of the headers the core sends and reads; each can be overridden to talk to a real cluster. */
export interface HeaderNames {
  /** Carries the service token. */
  token: string;
  /** Carries the secrets-service namespace, when one is set. */
  namespace: string;
  /** Paging continuation token of list responses. */
  nextToken: string;
  /** Blocking-query index of read responses. */
  index: string;
  knownLeader: string;
  lastContact: string;
  /** Secrets service: marks a request as coming from a client library (`true`); empty for none. */
  requestMarker: string;
}

/** The spec's header names, the default for both services. */
export const SPEC_HEADERS: Readonly<HeaderNames> = Object.freeze({
  token: "X-Svc-Token",
  namespace: "X-Svc-Namespace",
  nextToken: "X-Svc-NextToken",
  index: "X-Svc-Index",
  knownLeader: "X-Svc-KnownLeader",
  lastContact: "X-Svc-LastContact",
  requestMarker: "X-Svc-Request",
});

/** The real services' header names (headerStyle "real"). */
export const REAL_HEADERS: Readonly<Record<ServiceName, Readonly<HeaderNames>>> = Object.freeze({
  secrets: Object.freeze({
    token: "X-Vault-Token",
    namespace: "X-Vault-Namespace",
    nextToken: "X-Vault-NextToken",
    index: "X-Vault-Index",
    knownLeader: "X-Vault-KnownLeader",
    lastContact: "X-Vault-LastContact",
    // The real CLI and SDK always send it, and a proxy configured with require_request_header demands it.
    requestMarker: "X-Vault-Request",
  }),
  scheduler: Object.freeze({
    token: "X-Nomad-Token",
    namespace: "X-Nomad-Namespace",
    nextToken: "X-Nomad-NextToken",
    index: "X-Nomad-Index",
    knownLeader: "X-Nomad-KnownLeader",
    lastContact: "X-Nomad-LastContact",
    requestMarker: "",
  }),
});

/** Which set of header names to start from. */
export type HeaderStyle = "spec" | "real";

/** Counts what the core does on the wire; used by tests and benchmarks. */
export interface HttpHooks {
  /** Called once per attempt, before it is sent. No headers or bodies are passed. */
  onRequest?(info: { service: ServiceName; method: string; path: string; query: string; attempt: number }): void;
  /** Called after each attempt with its status (undefined on a network failure). */
  onResponse?(info: { service: ServiceName; method: string; path: string; attempt: number; status?: number; ms: number }): void;
  /** Called before waiting to retry, with the wait chosen (backoff or the server's `Retry-After`). */
  onRetry?(info: { service: ServiceName; method: string; path: string; attempt: number; delayMs: number; status?: number; code?: string }): void;
  /** Called when the pool opens a new connection to the service. */
  onConnect?(info: { service: ServiceName; origin: string }): void;
}

/** Connection options a user or the stack config passes; anything unset falls back to the environment. */
export interface ConnectionOptions {
  /** Base URL, e.g. `https://secrets.example:8200`. Env: SECRETS_ADDR / SCHEDULER_ADDR. */
  address?: string;
  /**
   * Service token. Env: SECRETS_TOKEN / SCHEDULER_TOKEN. The secrets service needs one; for the scheduler an
   * unset token means no token header (clusters with ACLs off), as the scheduler's own CLI and API client do.
   */
  token?: string;
  /** Scheduler: default namespace of requests. Secrets: namespace header, when set. */
  namespace?: string;
  /** Scheduler only: region query of requests. Env: SCHEDULER_REGION. */
  region?: string;
  /** CA bundle: PEM text or a file path. Env: SECRETS_CACERT / SCHEDULER_CACERT. */
  caCert?: string;
  /** Client certificate for mutual TLS: PEM text or a file path. */
  clientCert?: string;
  /** Client key for mutual TLS: PEM text or a file path. */
  clientKey?: string;
  /** TLS server name to verify, when it differs from the address's host. */
  tlsServerName?: string;
  /** Turns off TLS certificate verification. Only for throwaway test clusters; never read from the environment. */
  dangerouslySkipTlsVerify?: boolean;
  /**
   * Scheduler only: send no token even when one is set (option, stack config or SCHEDULER_TOKEN). An unset
   * token already sends none; this is the explicit way to say so. Env: SCHEDULER_ANONYMOUS=1.
   */
  anonymous?: boolean;
  /** `spec` (default) or `real` header names. Env: SECRETS_HEADER_STYLE / SCHEDULER_HEADER_STYLE. */
  headerStyle?: HeaderStyle;
  /** Per-header overrides on top of the style. Env (token header only): SECRETS_TOKEN_HEADER / SCHEDULER_TOKEN_HEADER. */
  headerNames?: Partial<HeaderNames>;
  /** Timeout of one attempt in ms (blocking queries add their wait). Default 30 s. */
  timeoutMs?: number;
  /** Retry policy overrides. */
  retry?: Partial<RetryPolicy>;
  /** Request and connection counters. */
  hooks?: HttpHooks;
  /** Environment to read instead of `process.env` (tests). */
  env?: Readonly<Record<string, string | undefined>>;
}

/** Fully resolved settings of one connection. */
export interface ResolvedConnection {
  service: ServiceName;
  origin: string;
  /** Path prefix of the address (usually empty), without a trailing slash. */
  basePath: string;
  token: string | undefined;
  /** True when the caller asked to send no token even if one is set (scheduler only). */
  anonymous: boolean;
  /** Where the token is set, for messages about it. */
  tokenSource: string;
  namespace: string | undefined;
  region: string | undefined;
  tls: { ca?: string; cert?: string; key?: string; servername?: string; rejectUnauthorized: boolean };
  headers: HeaderNames;
  timeoutMs: number;
  retry: RetryPolicy;
  hooks: HttpHooks;
}

const LABEL: Record<ServiceName, string> = { secrets: "secrets service", scheduler: "scheduler" };
const CONFIG_KEY: Record<ServiceName, string> = { secrets: "secrets", scheduler: "scheduler" };

/** Resolves options and environment into one connection; throws ConfigError naming the option and variable. */
export function resolveConnection(service: ServiceName, options: ConnectionOptions = {}): ResolvedConnection {
  const env = options.env ?? process.env;
  const names = ENV[service];
  const pick = (opt: string | undefined, envName: string): string | undefined => {
    if (opt !== undefined && opt !== "") return opt;
    const v = env[envName];
    return v === undefined || v === "" ? undefined : v;
  };

  const address = pick(options.address, names.address);
  if (address === undefined) {
    throw new ConfigError(
      `The ${LABEL[service]} address is not set: pass the \`address\` option, set stack config ` +
        `\`pulumi-secrets-scheduler:${CONFIG_KEY[service]}Address\`, or set the ${names.address} environment variable.`,
    );
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new ConfigError(`The ${LABEL[service]} address is not a URL (from the \`address\` option or ${names.address}).`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`The ${LABEL[service]} address must start with http:// or https:// (${names.address}).`);
  }

  const anonymousEnv = service === "scheduler" ? env[ENV.scheduler.anonymous] : undefined;
  const anonymous = options.anonymous ?? (anonymousEnv === "1" || anonymousEnv === "true");
  const token = anonymous ? undefined : pick(options.token, names.token);

  const style = (options.headerStyle ?? env[names.headerStyle] ?? "spec") as string;
  if (style !== "spec" && style !== "real") {
    throw new ConfigError(`${names.headerStyle} must be "spec" or "real", not "${style}".`);
  }
  const base = style === "real" ? REAL_HEADERS[service] : SPEC_HEADERS;
  const tokenHeader = options.headerNames?.token ?? env[names.tokenHeader];
  const headers: HeaderNames = { ...base, ...definedOnly(options.headerNames ?? {}), ...(tokenHeader ? { token: tokenHeader } : {}) };

  const ca = readPem(pick(options.caCert, names.caCert), "caCert", names.caCert);
  const cert = readPem(pick(options.clientCert, names.clientCert), "clientCert", names.clientCert);
  const key = readPem(pick(options.clientKey, names.clientKey), "clientKey", names.clientKey);
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError(
      `Mutual TLS needs both a client certificate and a client key (${names.clientCert} and ${names.clientKey}); only one is set.`,
    );
  }
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new ConfigError("timeoutMs must be a positive number of milliseconds.");

  return {
    service,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    token,
    anonymous,
    tokenSource: `the \`token\` option, stack config \`pulumi-secrets-scheduler:${CONFIG_KEY[service]}Token\`, or ${names.token}`,
    namespace: pick(options.namespace, names.namespace),
    region: service === "scheduler" ? pick(options.region, ENV.scheduler.region) : undefined,
    tls: {
      ...(ca !== undefined ? { ca } : {}),
      ...(cert !== undefined ? { cert } : {}),
      ...(key !== undefined ? { key } : {}),
      ...(options.tlsServerName ? { servername: options.tlsServerName } : {}),
      rejectUnauthorized: options.dangerouslySkipTlsVerify !== true,
    },
    headers,
    timeoutMs,
    retry: { ...DEFAULT_RETRY, ...definedOnly(options.retry ?? {}) },
    hooks: options.hooks ?? {},
  };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Accepts PEM text as is and reads anything else as a file path. */
function readPem(value: string | undefined, option: string, envName: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.includes("-----BEGIN")) return value;
  try {
    return readFileSync(value, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(`Cannot read the ${option} file given by the \`${option}\` option or ${envName}: ${code}.`);
  }
}
