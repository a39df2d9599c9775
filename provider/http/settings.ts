/**
 * Connection settings for both services, resolved in one order: explicit options first, then the
 * environment. Everything is parsed into locals and returned whole, so a bad value never leaves a
 * half-resolved connection behind.
 */
import { readFileSync } from "node:fs";
import { definedDeep } from "../defined";
import { ConfigError, type ServiceName } from "../errors";
import { DEFAULT_RETRY, type RetryPolicy } from "./retry";

/** Namespace of this library's stack config keys, e.g. `pulumi-secrets-scheduler:schedulerAddress`. */
export const CONFIG_NAMESPACE = "pulumi-secrets-scheduler";

/**
 * How a setting's text (a stack config value or an environment variable) is read: `url` an http(s) base URL,
 * `text` as is, `pem` PEM text or else a file path, `header-style` "spec" or "real", `header-name` an HTTP
 * header name, `ms` a positive number of milliseconds, `flag` a boolean (stack config "true"; the
 * environment "1" or "true").
 */
type SettingKind = "url" | "text" | "pem" | "header-style" | "header-name" | "ms" | "flag";

interface SettingSpec {
  kind: SettingKind;
  /** The connection option it sets, when not the setting's name. */
  option?: string;
  /** What messages call it after the service's name ("the scheduler CA bundle"), when not the setting's name. */
  label?: string;
  /** Its environment variable in each service that reads one; none for settings set only by option or stack config. */
  env?: Partial<Record<ServiceName, string>>;
  /** The one service that has the setting; both when absent. */
  only?: ServiceName;
  /** A credential: never printed, marked "(secret)" in the README's table, set with `pulumi config set --secret`. */
  secret?: true;
  /** A control character is refused (the value goes into a header or query). */
  refuseControl?: true;
}

/**
 * The connection settings: one row per setting, with its variable per service. Everything else is derived
 * from it: the stack config keys (`<service><Setting>`, e.g. `schedulerCaCert`, see {@link CONFIG_KEYS}),
 * the variables ({@link ENV}), the keys `configure` reads, how stack config text becomes options, and the
 * names messages give a setting.
 */
const TABLE = {
  address: { kind: "url", env: { secrets: "SECRETS_ADDR", scheduler: "SCHEDULER_ADDR" } },
  token: {
    kind: "text",
    env: { secrets: "SECRETS_TOKEN", scheduler: "SCHEDULER_TOKEN" },
    secret: true,
    refuseControl: true,
  },
  namespace: {
    kind: "text",
    env: { secrets: "SECRETS_NAMESPACE", scheduler: "SCHEDULER_NAMESPACE" },
    refuseControl: true,
  },
  region: { kind: "text", env: { scheduler: "SCHEDULER_REGION" }, only: "scheduler", refuseControl: true },
  caCert: { kind: "pem", label: "CA bundle", env: { secrets: "SECRETS_CACERT", scheduler: "SCHEDULER_CACERT" } },
  clientCert: {
    kind: "pem",
    label: "client certificate",
    env: { secrets: "SECRETS_CLIENT_CERT", scheduler: "SCHEDULER_CLIENT_CERT" },
  },
  clientKey: {
    kind: "pem",
    label: "client key",
    env: { secrets: "SECRETS_CLIENT_KEY", scheduler: "SCHEDULER_CLIENT_KEY" },
    secret: true,
  },
  tlsServerName: { kind: "text" },
  headerStyle: {
    kind: "header-style",
    label: "header style",
    env: { secrets: "SECRETS_HEADER_STYLE", scheduler: "SCHEDULER_HEADER_STYLE" },
  },
  tokenHeader: {
    kind: "header-name",
    option: "headerNames.token",
    env: { secrets: "SECRETS_TOKEN_HEADER", scheduler: "SCHEDULER_TOKEN_HEADER" },
  },
  timeoutMs: { kind: "ms", label: "timeout" },
  anonymous: { kind: "flag", env: { scheduler: "SCHEDULER_ANONYMOUS" }, only: "scheduler" },
  dangerouslySkipTlsVerify: { kind: "flag" },
} as const satisfies Record<string, SettingSpec>;

type Table = typeof TABLE;

/** A connection setting that messages can name. */
export type SettingName = keyof Table;

/** The settings a service has. */
type SettingOf<S extends ServiceName> = {
  [K in SettingName]: Table[K] extends { only: infer O } ? (O extends S ? K : never) : K;
}[SettingName];

/** The value a setting of each kind takes in a resource's `connection` input. */
interface KindValue {
  url: string;
  text: string;
  pem: string;
  "header-style": HeaderStyle;
  "header-name": string;
  ms: number;
  flag: boolean;
}

/** The settings of one service as a value (a resource's `connection`), each optional, typed by its kind. */
export type ConnectionSettings<S extends ServiceName> = {
  [K in SettingOf<S>]?: KindValue[Table[K]["kind"]];
};

/** The settings the table marks as credentials (kept as Pulumi secrets wherever they are stored). */
export type SecretSettingName = { [K in SettingName]: Table[K] extends { secret: true } ? K : never }[SettingName];

const SERVICES: readonly ServiceName[] = ["secrets", "scheduler"];

/** One setting of one service: the table's row, with its option, label, stack config key and variable. */
export type Setting = ReturnType<typeof row>;

function row(name: SettingName, service: ServiceName) {
  const r: SettingSpec = TABLE[name];
  return Object.freeze({
    service,
    name,
    kind: r.kind,
    option: r.option ?? name,
    label: r.label ?? name,
    /** The service, then the setting's capitalized name; without the namespace, e.g. `schedulerToken`. */
    configKey: `${service}${name.charAt(0).toUpperCase()}${name.slice(1)}`,
    env: r.env?.[service],
    only: r.only,
    secret: r.secret === true,
    refuseControl: r.refuseControl === true,
  });
}

/** Every setting of every service, one row each (secrets first). */
export const SETTINGS: readonly Setting[] = Object.freeze(
  SERVICES.flatMap((service) =>
    (Object.keys(TABLE) as SettingName[])
      .map((name) => row(name, service))
      .filter((s) => s.only === undefined || s.only === service),
  ),
);

/** The row of a setting, or undefined when the service has no such setting. */
function settingOf(service: ServiceName, name: SettingName): Setting | undefined {
  return SETTINGS.find((s) => s.service === service && s.name === name);
}

/** A view of the table: per service, one value per setting that has one. */
function view(
  value: (s: Setting) => string | undefined,
): Readonly<Record<ServiceName, Readonly<Record<string, string>>>> {
  const out = {} as Record<ServiceName, Readonly<Record<string, string>>>;
  for (const service of SERVICES) {
    const o: Record<string, string> = {};
    for (const s of SETTINGS) {
      const v = s.service === service ? value(s) : undefined;
      if (v !== undefined) o[s.name] = v;
    }
    out[service] = Object.freeze(o);
  }
  return Object.freeze(out);
}

/** Stack config keys (without the namespace) per service, and the setting each one sets. A view of the table. */
export const CONFIG_KEYS = view((s) => s.configKey) as {
  readonly [S in ServiceName]: { readonly [K in SettingOf<S>]: `${S}${Capitalize<K>}` };
};

/** Environment variables read by the core, by service. A view of the table. */
export const ENV = view((s) => s.env) as {
  readonly [S in ServiceName]: {
    readonly [K in SettingOf<S> as Table[K] extends { env: Record<S, string> } ? K : never]: Table[K] extends {
      env: Record<S, infer E>;
    }
      ? E
      : never;
  };
};

/**
 * Who built the connection options: a program using the typed clients directly (`client`, the default), or
 * the Pulumi providers from stack config (`stack-config`). Messages name the option or the stack config key
 * accordingly, and the environment variable in both cases.
 */
export type OptionsOrigin = "client" | "stack-config" | "connection";

/** Where one resolved setting came from. */
type SettingOrigin = "option" | "stack-config" | "env" | "connection";

/** The stack config key of a setting, e.g. `pulumi-secrets-scheduler:schedulerToken`. */
export function stackConfigKey(service: ServiceName, setting: SettingName): string {
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

/** Throws a ConfigError naming `what` (never the value) when `value` holds a control character. */
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
