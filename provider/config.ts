/**
 * Connection settings from stack config. The engine hands a dynamic provider the whole stack config in
 * `configure`; the values are kept here, in this module's state (serialized closures cannot share state),
 * and turned into explicit connection options. Anything unset falls back to the environment.
 */
import type { ServiceName } from "./errors";
import { CONFIG_NAMESPACE, ENV, SETTINGS, setFromStackConfig, type ConnectionOptions } from "./http/settings";

// The settings table (http/settings.ts) names every key; these stay exported from here for users' code.
export { CONFIG_KEYS, CONFIG_NAMESPACE } from "./http/settings";

/** The part of Pulumi's ConfigureRequest this module reads. */
export interface ConfigSource {
  config: { get(key: string): string | undefined };
}

let stackConfig: Record<string, string> = {};
/** Reads any key of the whole stack config the engine sent to `configure` (values stay in this process). */
let anyStackConfig: (key: string) => string | undefined = () => undefined;
let overrides: Pick<ConnectionOptions, "retry" | "timeoutMs"> = {};
/** Moves whenever the stored stack config or the overrides are replaced: a client made before may be stale. */
let settingsGeneration = 0;

/** Stores the stack config values this library reads; called by every provider's `configure`. */
export async function configure(req: ConfigSource): Promise<void> {
  const next: Record<string, string> = {};
  for (const { configKey } of SETTINGS) {
    const v = req.config.get(`${CONFIG_NAMESPACE}:${configKey}`);
    if (v !== undefined && v !== "") next[configKey] = v;
  }
  stackConfig = next;
  anyStackConfig = (key) => req.config.get(key);
  settingsGeneration++;
}

/**
 * Returns the value of any stack config key (`<namespace>:<name>`, secret ones decrypted) as the engine sent
 * it to `configure`; undefined when unset or when no `configure` came. For values a resource reads at apply
 * time by name, such as a write-only client secret.
 */
export function stackConfigValue(key: string): string | undefined {
  const v = anyStackConfig(key);
  return v === undefined || v === "" ? undefined : v;
}

/** Returns the connection options set by stack config for a service (the environment fills the rest). */
export function connectionOptions(service: ServiceName): ConnectionOptions {
  // Messages then name the stack config keys rather than the typed clients' options.
  const opts: ConnectionOptions = { optionsFrom: "stack-config" };
  for (const s of SETTINGS) {
    const text = s.service === service ? stackConfig[s.configKey] : undefined;
    if (text !== undefined) setFromStackConfig(opts, s, text);
  }
  if (overrides.retry !== undefined) opts.retry = overrides.retry;
  if (opts.timeoutMs === undefined && overrides.timeoutMs !== undefined) opts.timeoutMs = overrides.timeoutMs;
  return opts;
}

/**
 * Sets connection settings stack config does not carry (the retry policy; a timeout when stack config sets
 * none) for every provider connection of this process: tests and scripts that drive providers directly.
 */
export function setConnectionOverrides(values: Pick<ConnectionOptions, "retry" | "timeoutMs">): void {
  overrides = { ...values };
  settingsGeneration++;
}

/** Replaces the stored stack config (tests): this library's keys by name, `any` by full key. */
export function setStackConfig(values: Record<string, string>, any: Record<string, string> = {}): void {
  stackConfig = { ...values };
  const all = { ...any };
  anyStackConfig = (key) => all[key];
  settingsGeneration++;
}

const clients = new Map<ServiceName, { generation: number; env: string; key: string; client: unknown }>();

/**
 * The providers' client of a service for this process (each service has one client class), made by
 * `make` from stack config (then the environment). A provider host runs a whole command: its calls share one client (its settings resolved
 * once, its pool taken once) as long as the stack config, the connection overrides and the service's
 * environment variables are what they were; any change makes a new one. A client that cannot be made
 * (a setting missing or wrong) throws on every call, as before.
 */
export function providerClient<T>(service: ServiceName, make: (options: ConnectionOptions) => T): T {
  let env = "";
  for (const variable of Object.values(ENV[service])) env += "\0" + (process.env[variable] ?? "\u0001");
  const known = clients.get(service);
  // Every call of a command lands here: the options are built again only when something they come from moved.
  if (known !== undefined && known.generation === settingsGeneration && known.env === env) return known.client as T;
  const options = connectionOptions(service);
  const key = JSON.stringify(options) + env;
  if (known !== undefined && known.key === key) {
    clients.set(service, { ...known, generation: settingsGeneration, env });
    return known.client as T;
  }
  const client = make(options);
  clients.set(service, { generation: settingsGeneration, env, key, client });
  return client;
}
