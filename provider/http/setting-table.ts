/**
 * The table of connection settings: one row per setting, with its kind, its option and label when they differ
 * from its name, its environment variable per service, and whether it is a credential; and the views derived
 * from it (every setting of every service, the stack config keys, the variables, the type of a resource's
 * `connection` value). How options, stack config and the environment resolve into one connection is
 * ./settings.ts.
 */
import type { ServiceName } from "../errors";
import type { HeaderStyle } from "./header-names";

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

export type Table = typeof TABLE;

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

export function row(name: SettingName, service: ServiceName) {
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
export function settingOf(service: ServiceName, name: SettingName): Setting | undefined {
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
