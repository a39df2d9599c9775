/**
 * Connection settings from stack config. The engine hands a dynamic provider the whole stack config in
 * `configure`; the values are kept here, in this module's state (serialized closures cannot share state),
 * and turned into explicit connection options. Anything unset falls back to the environment.
 */
import { createHash } from "node:crypto";
import type { ServiceName } from "./errors";
import { CONFIG_NAMESPACE, ENV, SETTINGS, type ConnectionSettings } from "./http/setting-table";
import { optionsFromSettings, setFromStackConfig, type ConnectionOptions } from "./http/settings";

// The settings table (http/setting-table.ts) names every key; these stay exported from here for users' code.
export { CONFIG_KEYS, CONFIG_NAMESPACE } from "./http/setting-table";

/** The part of Pulumi's ConfigureRequest this module reads. */
interface ConfigSource {
  config: { get(key: string): string | undefined };
}

let stackConfig: Record<string, string> = {};
/** Reads any key of the whole stack config the engine sent to `configure` (values stay in this process). */
let anyStackConfig: (key: string) => string | undefined = () => undefined;
/** What stack config does not carry, set for every provider connection of this process (tests, scripts). */
type Overrides = Pick<ConnectionOptions, "retry" | "timeoutMs" | "hooks">;
let overrides: Overrides = {};
/** Counts setConnectionOverrides calls: hooks are functions, which no key can hold, so a client key holds this. */
let overridesGeneration = 0;
/** Moves whenever the stored stack config or the overrides are replaced: a client made before may be stale. */
let settingsGeneration = 0;

/**
 * Stores the stack config values this library reads; called by every provider's `configure`. It stores them
 * before it returns (nothing in it waits): a script that drives the providers directly may call the next
 * method at once. The promise is the dynamic-provider interface's.
 */
export function configure(req: ConfigSource): Promise<void> {
  const next: Record<string, string> = {};
  for (const { configKey } of SETTINGS) {
    const v = req.config.get(`${CONFIG_NAMESPACE}:${configKey}`);
    if (v !== undefined && v !== "") next[configKey] = v;
  }
  stackConfig = next;
  anyStackConfig = (key) => req.config.get(key);
  settingsGeneration++;
  return Promise.resolve();
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
  return withOverrides(opts);
}

function withOverrides(opts: ConnectionOptions): ConnectionOptions {
  if (overrides.retry !== undefined) opts.retry = overrides.retry;
  if (opts.timeoutMs === undefined && overrides.timeoutMs !== undefined) opts.timeoutMs = overrides.timeoutMs;
  if (overrides.hooks !== undefined) opts.hooks = overrides.hooks;
  return opts;
}

/**
 * Sets connection settings stack config does not carry (the retry policy; a timeout when stack config or
 * the resource's connection sets none; request counters) for every provider connection of this process:
 * tests and scripts that drive providers directly (`providers` of the provider entry).
 */
export function setConnectionOverrides(values: Overrides): void {
  overrides = { ...values };
  overridesGeneration++;
  settingsGeneration++;
}

/** The providers' clients of this process, by a SHA-256 of what each is made from (see {@link providerClient}). */
const clients = new Map<string, unknown>();
/** Per service, the key of the client stack config and the environment give, while nothing they come from moved. */
const configKeys = new Map<ServiceName, { generation: number; env: string; key: string }>();

/**
 * The providers' client of a service for one connection, made by `make` and kept for the life of the
 * provider host: one client (its settings resolved once, its pool taken once) per distinct connection, so
 * 200 resources over two clusters cost what they cost over one. Callers that coalesce work per client can
 * key by the instance. The connection is a resource's `connection` value (its settings alone), or, without
 * one, stack config then the environment (a change of either, or of the connection overrides, makes a new
 * client). The key is a SHA-256 of the settings: it holds no token and is never shown. A client that
 * cannot be made (a setting missing or wrong) throws on every call.
 */
export function providerClient<S extends ServiceName, T>(
  service: S,
  make: (options: ConnectionOptions) => T,
  connection?: ConnectionSettings<S>,
): T {
  let env = "";
  if (connection === undefined) {
    for (const variable of Object.values(ENV[service as ServiceName]) as string[])
      env += "\0" + (process.env[variable] ?? "\u0001");
    // Every call of a command lands here: the options are built again only when something they come from moved.
    const known = configKeys.get(service);
    const client = known?.generation === settingsGeneration && known.env === env ? clients.get(known.key) : undefined;
    if (client !== undefined) return client as T;
  }
  const options =
    connection === undefined ? connectionOptions(service) : withOverrides(optionsFromSettings(service, connection));
  const { hooks: _hooks, ...keyed } = options;
  const key = createHash("sha256")
    .update(`${service}\0${overridesGeneration}\0${JSON.stringify(keyed)}${env}`)
    .digest("hex");
  if (connection === undefined) configKeys.set(service, { generation: settingsGeneration, env, key });
  const known = clients.get(key);
  if (known !== undefined) return known as T;
  const client = make(options);
  clients.set(key, client);
  return client;
}
