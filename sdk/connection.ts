/**
 * Connections as values: `schedulerConnection({...})` and `secretsConnection({...})` take the settings of
 * the settings table (provider/http/setting-table.ts) for their service, and every resource takes one as its
 * `connection` input, as another provider's resources take a provider instance. The resource keeps it in
 * its state, so refresh and destroy reach the cluster it lives on; moving it to another address replaces
 * it. A resource without one uses stack config, then the environment.
 */
import * as pulumi from "@pulumi/pulumi";
import type { ServiceName } from "../provider/errors";
import type { ConnectionSettings, SecretSettingName } from "../provider/http/setting-table";

/** The settings of a connection, each an input: a plain value or another resource's output. */
export type ConnectionArgs<S extends ServiceName> = {
  [K in keyof ConnectionSettings<S>]?: pulumi.Input<NonNullable<ConnectionSettings<S>[K]>>;
};

/** A scheduler connection: pass it as the `connection` of a Job or JobVersionTag. */
export type SchedulerConnection = ConnectionArgs<"scheduler"> & { readonly service: "scheduler" };
/** A secrets service connection: pass it as the `connection` of an AuthMount, AuthConfig or AuthRole. */
export type SecretsConnection = ConnectionArgs<"secrets"> & { readonly service: "secrets" };

/**
 * The settings the table marks as credentials. Typed by the table: a credential added there and not here,
 * or a name here the table does not mark, fails to compile.
 */
const CREDENTIALS: { readonly [K in SecretSettingName]: true } = { token: true, clientKey: true };

function connectionOf<S extends ServiceName>(service: S, args: ConnectionArgs<S>): ConnectionArgs<S> & { service: S } {
  const out: Record<string, unknown> = { service };
  for (const [k, v] of Object.entries(args)) {
    if (v === undefined) continue;
    // Credentials are Pulumi secrets wherever the engine keeps them: inputs, outputs, plans.
    out[k] = Object.hasOwn(CREDENTIALS, k) ? pulumi.secret(v) : v;
  }
  return out as ConnectionArgs<S> & { service: S };
}

/**
 * A connection to one scheduler: `address`, `token` (kept as a Pulumi secret), `namespace`, `region`,
 * `caCert`, `clientCert`, `clientKey` (secret), `tlsServerName`, `headerStyle`, `tokenHeader`, `timeoutMs`,
 * `anonymous`, `dangerouslySkipTlsVerify`: the settings of stack config's `schedulerX` keys. It is the whole
 * connection: what it leaves out is not read from stack config or the environment.
 */
export function schedulerConnection(settings: ConnectionArgs<"scheduler">): SchedulerConnection {
  return connectionOf("scheduler", settings);
}

/**
 * A connection to one secrets service: the settings of stack config's `secretsX` keys (`address`, `token`
 * (kept as a Pulumi secret), `namespace`, `caCert`, ...). It is the whole connection: what it leaves out is
 * not read from stack config or the environment.
 */
export function secretsConnection(settings: ConnectionArgs<"secrets">): SecretsConnection {
  return connectionOf("secrets", settings);
}
