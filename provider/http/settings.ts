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

/** A connection setting that messages can name. */
export type SettingName =
  | "address"
  | "token"
  | "namespace"
  | "region"
  | "caCert"
  | "clientCert"
  | "clientKey"
  | "tlsServerName"
  | "headerStyle"
  | "tokenHeader"
  | "timeoutMs"
  | "anonymous"
  | "dangerouslySkipTlsVerify";

/**
 * Who built the connection options: a program using the typed clients directly (`client`, the default), or
 * the Pulumi providers from stack config (`stack-config`). Messages name the option or the stack config key
 * accordingly, and the environment variable in both cases.
 */
export type OptionsOrigin = "client" | "stack-config";

/** Where one resolved setting came from. */
export type SettingOrigin = "option" | "stack-config" | "env";

/** The stack config key of a setting, e.g. `pulumi-secrets-scheduler:schedulerToken`. */
export function stackConfigKey(service: ServiceName, setting: SettingName): string {
  return `pulumi-secrets-scheduler:${service}${setting.charAt(0).toUpperCase()}${setting.slice(1)}`;
}

/** The environment variable of a setting, when it has one. */
export function envName(service: ServiceName, setting: SettingName): string | undefined {
  return (ENV[service] as Readonly<Record<string, string>>)[setting];
}

/** Names where a setting came from: "stack config `…`", "the `…` option" or the environment variable. */
export function describeOrigin(service: ServiceName, setting: SettingName, origin: SettingOrigin): string {
  if (origin === "stack-config") return `stack config \`${stackConfigKey(service, setting)}\``;
  if (origin === "env") return envName(service, setting) ?? setting;
  return `the \`${setting}\` option`;
}

/** Says how to set a setting: the option (typed clients) or the stack config key (providers), or the variable. */
export function howToSet(service: ServiceName, setting: SettingName, from: OptionsOrigin): string {
  const explicit =
    from === "stack-config" ? `stack config \`${stackConfigKey(service, setting)}\`` : `the \`${setting}\` option`;
  const variable = envName(service, setting);
  return variable === undefined ? explicit : `${explicit} or the ${variable} environment variable`;
}

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
  onResponse?(info: {
    service: ServiceName;
    method: string;
    path: string;
    attempt: number;
    status?: number;
    ms: number;
  }): void;
  /** Called before waiting to retry, with the wait chosen (backoff or the server's `Retry-After`). */
  onRetry?(info: {
    service: ServiceName;
    method: string;
    path: string;
    attempt: number;
    delayMs: number;
    status?: number;
    code?: string;
  }): void;
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
  /** Who set these options, for messages (default `client`); the providers pass `stack-config`. */
  optionsFrom?: OptionsOrigin;
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
  /** How to set the token (the option or stack config key, and the variable), for messages about it. */
  tokenSource: string;
  /** Who set the explicit options (typed clients or the providers' stack config). */
  optionsFrom: OptionsOrigin;
  /** Where each setting that is set came from, for messages. */
  origins: Partial<Record<SettingName, SettingOrigin>>;
  namespace: string | undefined;
  region: string | undefined;
  tls: { ca?: string; cert?: string; key?: string; servername?: string; rejectUnauthorized: boolean };
  headers: HeaderNames;
  timeoutMs: number;
  retry: RetryPolicy;
  hooks: HttpHooks;
}

const LABEL: Record<ServiceName, string> = { secrets: "secrets service", scheduler: "scheduler" };

/** Resolves options and environment into one connection; throws ConfigError naming the option and variable. */
export function resolveConnection(service: ServiceName, options: ConnectionOptions = {}): ResolvedConnection {
  const env = options.env ?? process.env;
  const names = ENV[service];
  const from: OptionsOrigin = options.optionsFrom ?? "client";
  const explicit: SettingOrigin = from === "stack-config" ? "stack-config" : "option";
  const origins: Partial<Record<SettingName, SettingOrigin>> = {};
  const pick = (setting: SettingName, opt: string | undefined): string | undefined => {
    if (opt !== undefined && opt !== "") {
      origins[setting] = explicit;
      return opt;
    }
    const envVar = envName(service, setting);
    const v = envVar === undefined ? undefined : env[envVar];
    if (v === undefined || v === "") return undefined;
    origins[setting] = "env";
    return v;
  };
  const source = (setting: SettingName): string => {
    const o = origins[setting];
    return o === undefined ? howToSet(service, setting, from) : describeOrigin(service, setting, o);
  };

  const address = pick("address", options.address);
  if (address === undefined) {
    throw new ConfigError(`The ${LABEL[service]} address is not set: set ${howToSet(service, "address", from)}.`);
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new ConfigError(`The ${LABEL[service]} address is not a URL (from ${source("address")}).`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(
      `The ${LABEL[service]} address must start with http:// or https:// (from ${source("address")}).`,
    );
  }

  const anonymousEnv = service === "scheduler" ? env[ENV.scheduler.anonymous] : undefined;
  if (options.anonymous !== undefined) origins.anonymous = explicit;
  else if (anonymousEnv === "1" || anonymousEnv === "true") origins.anonymous = "env";
  const anonymous = options.anonymous ?? (anonymousEnv === "1" || anonymousEnv === "true");
  const token = anonymous ? undefined : pick("token", options.token);

  if (options.headerStyle !== undefined) origins.headerStyle = explicit;
  else if (env[names.headerStyle] !== undefined) origins.headerStyle = "env";
  const style = (options.headerStyle ?? env[names.headerStyle] ?? "spec") as string;
  if (style !== "spec" && style !== "real") {
    throw new ConfigError(
      `The ${LABEL[service]} header style (from ${source("headerStyle")}) must be "spec" or "real", not "${style}".`,
    );
  }
  const base = style === "real" ? REAL_HEADERS[service] : SPEC_HEADERS;
  const tokenHeaderEnv = options.headerNames?.token === undefined ? env[names.tokenHeader] : undefined;
  const tokenHeader = options.headerNames?.token ?? tokenHeaderEnv;
  if (options.headerNames?.token !== undefined) origins.tokenHeader = explicit;
  else if (tokenHeaderEnv !== undefined && tokenHeaderEnv !== "") origins.tokenHeader = "env";
  const headers: HeaderNames = {
    ...base,
    ...definedOnly(options.headerNames ?? {}),
    ...(tokenHeader ? { token: tokenHeader } : {}),
  };
  // A header name or value that HTTP cannot carry would fail every attempt inside the HTTP library, and
  // look like a connection lost after sending: refuse it here, naming the setting and never the value.
  for (const [k, name] of Object.entries(headers) as Array<[keyof HeaderNames, string]>) {
    if (name === "" && k === "requestMarker") continue;
    if (!HEADER_NAME.test(name)) {
      const which =
        k !== "token"
          ? `the \`headerNames.${k}\` option`
          : origins.tokenHeader === "option"
            ? "the `headerNames.token` option"
            : source("tokenHeader");
      throw new ConfigError(
        `The ${LABEL[service]} ${k} header name (from ${which}) is not a valid HTTP header name: use letters, digits and !#$%&'*+-.^_\`|~ only.`,
      );
    }
  }
  if (token !== undefined) refuseControlCharacters(token, `The ${LABEL[service]} token (from ${source("token")})`);

  const ca = readPem(pick("caCert", options.caCert), "CA bundle", source("caCert"));
  const cert = readPem(pick("clientCert", options.clientCert), "client certificate", source("clientCert"));
  const key = readPem(pick("clientKey", options.clientKey), "client key", source("clientKey"));
  if ((cert === undefined) !== (key === undefined)) {
    throw new ConfigError(
      `Mutual TLS needs both a client certificate and a client key; only one is set (the certificate: ` +
        `${cert === undefined ? `not set, use ${source("clientCert")}` : `from ${source("clientCert")}`}; the key: ` +
        `${key === undefined ? `not set, use ${source("clientKey")}` : `from ${source("clientKey")}`}).`,
    );
  }
  if (options.tlsServerName) origins.tlsServerName = explicit;
  if (options.dangerouslySkipTlsVerify === true) origins.dangerouslySkipTlsVerify = explicit;
  if (options.timeoutMs !== undefined) origins.timeoutMs = explicit;
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) {
    throw new ConfigError(
      `The ${LABEL[service]} timeout (${source("timeoutMs")}) must be a positive number of milliseconds.`,
    );
  }

  const namespace = pick("namespace", options.namespace);
  if (namespace !== undefined)
    refuseControlCharacters(namespace, `The ${LABEL[service]} namespace (from ${source("namespace")})`);
  const region = service === "scheduler" ? pick("region", options.region) : undefined;
  if (region !== undefined) refuseControlCharacters(region, `The ${LABEL[service]} region (from ${source("region")})`);

  return {
    service,
    origin: url.origin,
    basePath: url.pathname.replace(/\/+$/, ""),
    token,
    anonymous,
    tokenSource: howToSet(service, "token", from),
    optionsFrom: from,
    origins,
    namespace,
    region,
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

/** Names where a resolved setting came from, or how to set it when it is not set. */
export function settingSource(
  conn: Pick<ResolvedConnection, "service" | "optionsFrom" | "origins">,
  setting: SettingName,
): string {
  const o = conn.origins[setting];
  return o === undefined ? howToSet(conn.service, setting, conn.optionsFrom) : describeOrigin(conn.service, setting, o);
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

/** True when a text holds a control character (CR, LF, NUL, tab, DEL, ...), which no header value or name may. */
export function hasControlCharacter(text: string): boolean {
  // eslint-disable-next-line no-control-regex
  return /[\u0000-\u001f\u007f]/.test(text);
}

/** Throws a ConfigError naming `what` (never the value) when `value` holds a control character. */
function refuseControlCharacters(value: string, what: string): void {
  if (!hasControlCharacter(value)) return;
  throw new ConfigError(
    `${what} holds a control character (a line break, CR or LF, a tab or another), which an HTTP header or query cannot carry; ` +
      "remove it (often a trailing newline from the file the value was read from).",
  );
}

function definedOnly<T extends object>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}

/** Accepts PEM text as is and reads anything else as a file path; `from` names where the value came from. */
function readPem(value: string | undefined, what: string, from: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.includes("-----BEGIN")) return value;
  try {
    return readFileSync(value, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "unreadable";
    throw new ConfigError(
      `Cannot read the ${what} file given by ${from} (a value that is not PEM text is read as a file path): ${code}.`,
    );
  }
}
