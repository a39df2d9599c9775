/**
 * Connection settings for both services, resolved in one order: explicit options first, then the
 * environment. Everything is parsed into locals and returned whole, so a bad value never leaves a
 * half-resolved connection behind. The settings themselves (one row each, with its stack config key and
 * variable) are the table in ./setting-table.ts; the header names of each style, ./header-names.ts.
 */
import { readFileSync } from "node:fs";
import { definedDeep } from "../defined";
import { ConfigError, type ServiceName } from "../errors";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry";
import { REAL_HEADERS, SPEC_HEADERS, type HeaderNames, type HeaderStyle } from "./header-names";
import {
  CONFIG_NAMESPACE,
  SETTINGS,
  row,
  settingOf,
  type ConnectionSettings,
  type Setting,
  type SettingName,
  type Table,
} from "./setting-table";

/**
 * Who built the connection options: a program using the typed clients directly (`client`, the default), or
 * the Pulumi providers from stack config (`stack-config`). Messages name the option or the stack config key
 * accordingly, and the environment variable in both cases.
 */
export type OptionsOrigin = "client" | "stack-config" | "connection";

/** Where one resolved setting came from. */
type SettingOrigin = "option" | "stack-config" | "env" | "connection";

/**
 * The stack config key of a setting, e.g. `pulumi-secrets-scheduler:schedulerToken`.
 */
function stackConfigKey(service: ServiceName, setting: SettingName): string {
  return `${CONFIG_NAMESPACE}:${row(setting, service).configKey}`;
}

/** The environment variable of a setting, when it has one. */
function envName(service: ServiceName, setting: SettingName): string | undefined {
  return row(setting, service).env;
}

/** Names where a setting came from: "stack config `…`", "the `…` option" or the environment variable. */
function describeOrigin(service: ServiceName, setting: SettingName, origin: SettingOrigin): string {
  if (origin === "stack-config") return `stack config \`${stackConfigKey(service, setting)}\``;
  if (origin === "connection") return connectionInputName(setting);
  if (origin === "env") return envName(service, setting) ?? setting;
  return `the \`${row(setting, service).option}\` option`;
}

/** Says how to set a setting: the option (typed clients) or the stack config key (providers), or the variable. */
export function howToSet(service: ServiceName, setting: SettingName, from: OptionsOrigin): string {
  // A resource's connection is the whole connection: neither stack config nor the environment fill it in.
  if (from === "connection") return connectionInputName(setting);
  const explicit =
    from === "stack-config"
      ? `stack config \`${stackConfigKey(service, setting)}\``
      : `the \`${row(setting, service).option}\` option`;
  const variable = envName(service, setting);
  return variable === undefined ? explicit : `${explicit} or the ${variable} environment variable`;
}

/** Names a setting of a resource's `connection` input, for messages. */
function connectionInputName(setting: SettingName): string {
  return `the resource's \`connection.${setting}\` input`;
}

/** Options that take a setting's text as is. */
type TextOption = { [K in SettingName]: Table[K]["kind"] extends "url" | "text" | "pem" ? K : never }[SettingName];
/** Options that take a boolean. */
type FlagOption = { [K in SettingName]: Table[K]["kind"] extends "flag" ? K : never }[SettingName];

/** Sets the option of a setting from its stack config text, read by the setting's kind. */
export function setFromStackConfig(opts: ConnectionOptions, s: Setting, text: string): void {
  if (s.kind === "ms") opts.timeoutMs = Number(text);
  else if (s.kind === "flag") {
    if (text === "true") opts[s.name as FlagOption] = true;
  } else if (s.kind === "header-style") opts.headerStyle = text as HeaderStyle;
  else if (s.kind === "header-name") opts.headerNames = { token: text };
  else opts[s.name as TextOption] = text;
}

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
  const from: OptionsOrigin = options.optionsFrom ?? "client";
  const explicit: SettingOrigin = from === "client" ? "option" : from;
  const origins: Partial<Record<SettingName, SettingOrigin>> = {};
  const source = (setting: SettingName): string => settingSource({ service, optionsFrom: from, origins }, setting);
  const what = (setting: SettingName): string => `${LABEL[service]} ${row(setting, service).label}`;
  const envValue = (setting: SettingName): string | undefined => {
    const variable = envName(service, setting);
    return variable === undefined ? undefined : env[variable];
  };
  /** A set option, else a set variable; a control character refused where the table says so. */
  const pick = (setting: SettingName, opt: string | undefined): string | undefined => {
    const fromOption = opt !== undefined && opt !== "";
    const v = fromOption ? opt : envValue(setting);
    if (v === undefined || v === "") return undefined;
    origins[setting] = fromOption ? explicit : "env";
    if (row(setting, service).refuseControl)
      refuseControlCharacters(v, `The ${what(setting)} (from ${source(setting)})`);
    return v;
  };

  const address = pick("address", options.address);
  if (address === undefined) {
    throw new ConfigError(`The ${what("address")} is not set: set ${howToSet(service, "address", from)}.`);
  }
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    throw new ConfigError(`The ${what("address")} is not a URL (from ${source("address")}).`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ConfigError(`The ${what("address")} must start with http:// or https:// (from ${source("address")}).`);
  }
  if (addressHasCredentials(address)) {
    throw new ConfigError(`The ${what("address")} (from ${source("address")}) ${CREDENTIALS_IN_ADDRESS}.`);
  }

  const anonymousEnv = envValue("anonymous");
  const anonymousFromEnv = anonymousEnv === "1" || anonymousEnv === "true";
  if (options.anonymous !== undefined) origins.anonymous = explicit;
  else if (anonymousFromEnv) origins.anonymous = "env";
  const anonymous = options.anonymous ?? anonymousFromEnv;

  const styleEnv = envValue("headerStyle");
  if (options.headerStyle !== undefined) origins.headerStyle = explicit;
  else if (styleEnv !== undefined) origins.headerStyle = "env";
  const style = (options.headerStyle ?? styleEnv ?? "spec") as string;
  if (style !== "spec" && style !== "real") {
    throw new ConfigError(
      `The ${what("headerStyle")} (from ${source("headerStyle")}) must be "spec" or "real", not "${style}".`,
    );
  }
  const base = style === "real" ? REAL_HEADERS[service] : SPEC_HEADERS;
  const tokenHeaderEnv = options.headerNames?.token === undefined ? envValue("tokenHeader") : undefined;
  const tokenHeader = options.headerNames?.token ?? tokenHeaderEnv;
  if (options.headerNames?.token !== undefined) origins.tokenHeader = explicit;
  else if (tokenHeaderEnv !== undefined && tokenHeaderEnv !== "") origins.tokenHeader = "env";
  const headers: HeaderNames = {
    ...base,
    ...definedDeep(options.headerNames ?? {}),
    ...(tokenHeader ? { token: tokenHeader } : {}),
  };
  // A header name or value that HTTP cannot carry would fail every attempt inside the HTTP library, and
  // look like a connection lost after sending: refuse it here, naming the setting and never the value.
  for (const [k, name] of Object.entries(headers) as Array<[keyof HeaderNames, string]>) {
    if (name === "" && k === "requestMarker") continue;
    if (!HEADER_NAME.test(name)) {
      const which = k === "token" ? source("tokenHeader") : `the \`headerNames.${k}\` option`;
      throw new ConfigError(
        `The ${LABEL[service]} ${k} header name (from ${which}) is not a valid HTTP header name: use letters, digits and !#$%&'*+-.^_\`|~ only.`,
      );
    }
  }
  const token = anonymous ? undefined : pick("token", options.token);

  const pem = (setting: "caCert" | "clientCert" | "clientKey"): string | undefined =>
    readPem(pick(setting, options[setting]), row(setting, service).label, source(setting));
  const ca = pem("caCert");
  const cert = pem("clientCert");
  const key = pem("clientKey");
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
      `The ${what("timeoutMs")} (${source("timeoutMs")}) must be a positive number of milliseconds.`,
    );
  }

  const namespace = pick("namespace", options.namespace);
  const region = settingOf(service, "region") === undefined ? undefined : pick("region", options.region);

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
    retry: { ...DEFAULT_RETRY, ...definedDeep(options.retry ?? {}) },
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

/** The refusal of an address with a user name or password (never repeats either). */
export const CREDENTIALS_IN_ADDRESS =
  "must not hold a user name or password (`https://user:password@host`): they are never sent, and a resource's " +
  "connection keeps its address in clear in the state; give the token with the `token` setting instead";

/** True when an address written as a URL carries a user name or password (`https://user:pass@host`). */
export function addressHasCredentials(address: string): boolean {
  try {
    const u = new URL(address);
    return u.username !== "" || u.password !== "";
  } catch {
    return false;
  }
}

/** Throws a ConfigError naming `what` (never the value) when `value` holds a control character. */
function refuseControlCharacters(value: string, what: string): void {
  if (!hasControlCharacter(value)) return;
  throw new ConfigError(
    `${what} holds a control character (a line break, CR or LF, a tab or another), which an HTTP header or query cannot carry; ` +
      "remove it (often a trailing newline from the file the value was read from).",
  );
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

/**
 * The connection options of a resource's `connection` value: exactly its settings, read by each setting's
 * kind as stack config text is. Neither stack config nor the environment fills in what it leaves out, so
 * the connection kept in a resource's state alone says where the resource lives.
 */
export function optionsFromSettings<S extends ServiceName>(
  service: S,
  settings: ConnectionSettings<S>,
): ConnectionOptions {
  const opts: ConnectionOptions = { optionsFrom: "connection", env: {} };
  const given = settings as Readonly<Record<string, string | number | boolean | undefined>>;
  for (const s of SETTINGS) {
    const v = s.service === service && Object.hasOwn(given, s.name) ? given[s.name] : undefined;
    if (v !== undefined) setFromStackConfig(opts, s, String(v));
  }
  return opts;
}
