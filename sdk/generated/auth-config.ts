// Generated from provider/resources/definitions/auth-config.ts by `npm run generate`: do not edit.
import * as pulumi from "@pulumi/pulumi";
import type { SecretsConnection } from "../connection";
// A default import of the shim's `export =` object: the same object as `require("../shim/auth-config")` once compiled.
import shim from "../shim/auth-config";
import { pauseStackTraces, resumeStackTraces } from "../stacks";

/** Arguments of an {@link AuthConfig}. */
export interface AuthConfigArgs {
  /**
   * Path of the auth mount (default `cloud`); pass `mount.path` of the AuthMount. A change replaces the config, unless
   * `mountAccessor` shows the mount moved with it (`sys/remount`): then it is an update that writes nothing.
   */
  mount?: pulumi.Input<string>;
  /**
   * Accessor of the mount (pass `mount.accessor` of the AuthMount, with `mount.path` as `mount`). With it, a new
   * `mount` whose accessor is the one in state (the AuthMount moved with `sys/remount`, keeping its config and roles)
   * is an update that reads the moved object and writes nothing; without it, or with another accessor, a new `mount`
   * replaces. Adding it to an existing resource is an update (state only).
   */
  mountAccessor?: pulumi.Input<string>;
  /** Directory tenant whose tokens are accepted (a UUID, with or without dashes). */
  tenantId: pulumi.Input<string>;
  /**
   * Resource the managed-identity tokens are requested for: an absolute URI, such as an http(s) URL or an application
   * ID URI (`api://<application id>`). It must equal the tokens' audience exactly, trailing slash included: a mismatch
   * shows only as a failing login.
   */
  resource: pulumi.Input<string>;
  /** Client ID of the directory application (a UUID). */
  clientId?: pulumi.Input<string>;
  /**
   * Client secret of the directory application. Always handled as a Pulumi secret; the outputs keep only a salted hash
   * of it, and it is sent on create and when it changes. Pulumi keeps this input, encrypted, in the state; use
   * `clientSecretVersion` for a secret the state never holds. The service never returns it, so a secret rotated on the
   * service makes this value stale (applying it again undoes the rotation).
   */
  clientSecret?: pulumi.Input<string>;
  /**
   * Write-only client secret: a number you bump when the secret should be sent again. The secret is read when `up`
   * applies the resource, from `clientSecretEnv` or `clientSecretConfigKey`, and never reaches the state (no input, no
   * output, no hash): it is sent on create and when this number changes, so a changed secret under the same number is
   * not noticed. Excludes `clientSecret`.
   */
  clientSecretVersion?: pulumi.Input<number>;
  /**
   * With `clientSecretVersion`: the environment variable of the `pulumi` command that holds the secret (the provider
   * runs with the command's environment).
   */
  clientSecretEnv?: pulumi.Input<string>;
  /**
   * With `clientSecretVersion`: the stack config key (`<namespace>:<name>`) that holds the secret, set with `pulumi
   * config set --secret <namespace>:<name>`; kept encrypted in the stack's config file, not the state.
   */
  clientSecretConfigKey?: pulumi.Input<string>;
  /**
   * Workload identity (servers that support it, such as the enterprise edition): the audience of the identity token the
   * plugin presents instead of a client secret. Excludes a client secret.
   */
  identityTokenAudience?: pulumi.Input<string>;
  /** Workload identity: lifetime of the plugin's identity token, seconds or a duration (default 1h). */
  identityTokenTtl?: pulumi.Input<number | string>;
  /** `AzurePublicCloud`, `AzureUSGovernmentCloud` or `AzureChinaCloud` (any case). */
  environment?: pulumi.Input<string>;
  /** Retries of the method's calls to the cloud APIs (default 3; always sent, since omitting it resets it). */
  maxRetries?: pulumi.Input<number>;
  /** First retry delay: seconds or a duration (default 4 s). */
  retryDelay?: pulumi.Input<number | string>;
  /** Longest retry delay: seconds or a duration (default 60 s). */
  maxRetryDelay?: pulumi.Input<number | string>;
  /** Lifetime of rotated root passwords: seconds or a duration (default 4380h). */
  rootPasswordTtl?: pulumi.Input<number | string>;
  /** Take over an existing configuration instead of failing (it is overwritten with these settings). */
  adopt?: pulumi.Input<boolean>;
  /**
   * The secrets service this lives on, made with `secretsConnection({...})`; default: stack config, then the
   * environment. Kept in state, so refresh and destroy reach it even after the program or stack config changed. Another
   * address (or secrets namespace) replaces the resource: created there, then deleted here. A new token, TLS setting,
   * header style or timeout is an update that writes the object to the service again with it.
   */
  connection?: pulumi.Input<SecretsConnection>;
}

/** The configuration of an auth method mount of the secrets service. */
export class AuthConfig extends pulumi.dynamic.Resource {
  /**
   * Path of the auth mount (default `cloud`); pass `mount.path` of the AuthMount. A change replaces the config, unless
   * `mountAccessor` shows the mount moved with it (`sys/remount`): then it is an update that writes nothing.
   */
  declare readonly mount: pulumi.Output<string>;
  /**
   * Accessor of the mount (pass `mount.accessor` of the AuthMount, with `mount.path` as `mount`). With it, a new
   * `mount` whose accessor is the one in state (the AuthMount moved with `sys/remount`, keeping its config and roles)
   * is an update that reads the moved object and writes nothing; without it, or with another accessor, a new `mount`
   * replaces. Adding it to an existing resource is an update (state only).
   */
  declare readonly mountAccessor: pulumi.Output<string | undefined>;
  /** Directory tenant whose tokens are accepted (a UUID, with or without dashes). */
  declare readonly tenantId: pulumi.Output<string>;
  /**
   * Resource the managed-identity tokens are requested for: an absolute URI, such as an http(s) URL or an application
   * ID URI (`api://<application id>`). It must equal the tokens' audience exactly, trailing slash included: a mismatch
   * shows only as a failing login.
   */
  declare readonly resource: pulumi.Output<string>;
  /** Client ID of the directory application (a UUID). */
  declare readonly clientId: pulumi.Output<string | undefined>;
  /**
   * Write-only client secret: a number you bump when the secret should be sent again. The secret is read when `up`
   * applies the resource, from `clientSecretEnv` or `clientSecretConfigKey`, and never reaches the state (no input, no
   * output, no hash): it is sent on create and when this number changes, so a changed secret under the same number is
   * not noticed. Excludes `clientSecret`.
   */
  declare readonly clientSecretVersion: pulumi.Output<number | undefined>;
  /**
   * With `clientSecretVersion`: the environment variable of the `pulumi` command that holds the secret (the provider
   * runs with the command's environment).
   */
  declare readonly clientSecretEnv: pulumi.Output<string | undefined>;
  /**
   * With `clientSecretVersion`: the stack config key (`<namespace>:<name>`) that holds the secret, set with `pulumi
   * config set --secret <namespace>:<name>`; kept encrypted in the stack's config file, not the state.
   */
  declare readonly clientSecretConfigKey: pulumi.Output<string | undefined>;
  /**
   * Workload identity (servers that support it, such as the enterprise edition): the audience of the identity token the
   * plugin presents instead of a client secret. Excludes a client secret.
   */
  declare readonly identityTokenAudience: pulumi.Output<string | undefined>;
  /** Workload identity: lifetime of the plugin's identity token, seconds or a duration (default 1h). */
  declare readonly identityTokenTtl: pulumi.Output<number | string | undefined>;
  /** `AzurePublicCloud`, `AzureUSGovernmentCloud` or `AzureChinaCloud` (any case). */
  declare readonly environment: pulumi.Output<string | undefined>;
  /** Retries of the method's calls to the cloud APIs (default 3; always sent, since omitting it resets it). */
  declare readonly maxRetries: pulumi.Output<number | undefined>;
  /** First retry delay: seconds or a duration (default 4 s). */
  declare readonly retryDelay: pulumi.Output<number | string | undefined>;
  /** Longest retry delay: seconds or a duration (default 60 s). */
  declare readonly maxRetryDelay: pulumi.Output<number | string | undefined>;
  /** Lifetime of rotated root passwords: seconds or a duration (default 4380h). */
  declare readonly rootPasswordTtl: pulumi.Output<number | string | undefined>;
  /** Take over an existing configuration instead of failing (it is overwritten with these settings). */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /**
   * Salted scrypt hash of the client secret (a secret output), used only to notice a change; absent when no secret was
   * given.
   */
  declare readonly clientSecretHash: pulumi.Output<string | undefined>;
  /** The version of the state's shape. */
  declare readonly schemaVersion: pulumi.Output<number>;

  /**
   * Declares the AuthConfig `name` of the stack; `pulumi up` makes the service match `args`. A key of `args` the
   * AuthConfig does not have (a typo in JavaScript) is refused by the provider's `check`, which names it.
   */
  constructor(name: string, args: AuthConfigArgs, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ../stacks.
    const limit = pauseStackTraces();
    try {
      super(shim, name, authConfigProps(args), authConfigOptions(opts), "pulumi-secrets-scheduler", "AuthConfig");
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthConfig);
    } finally {
      resumeStackTraces(limit);
    }
  }
}

/**
 * The props an {@link AuthConfig} registers: every output property seeded (only keys present in props become outputs),
 * every key of `args` (one the resource does not have reaches `check`, which refuses it by name), then every input as
 * the provider takes it (a secret one wrapped with `pulumi.secret`).
 */
function authConfigProps(args: AuthConfigArgs): Record<string, unknown> {
  return {
    clientSecretHash: undefined,
    schemaVersion: undefined,
    ...args,
    mount: args.mount,
    mountAccessor: args.mountAccessor,
    tenantId: args.tenantId,
    resource: args.resource,
    clientId: args.clientId,
    clientSecret: args.clientSecret === undefined ? undefined : pulumi.secret(args.clientSecret),
    clientSecretVersion: args.clientSecretVersion,
    clientSecretEnv: args.clientSecretEnv,
    clientSecretConfigKey: args.clientSecretConfigKey,
    identityTokenAudience: args.identityTokenAudience,
    identityTokenTtl: args.identityTokenTtl,
    environment: args.environment,
    maxRetries: args.maxRetries,
    retryDelay: args.retryDelay,
    maxRetryDelay: args.maxRetryDelay,
    rootPasswordTtl: args.rootPasswordTtl,
    adopt: args.adopt,
    connection: args.connection,
  };
}

/**
 * The options an {@link AuthConfig} registers with: the caller's, and every secret field ("clientSecret",
 * "clientSecretHash") among the additional secret outputs.
 */
function authConfigOptions(opts?: pulumi.CustomResourceOptions): pulumi.CustomResourceOptions {
  return {
    ...opts,
    additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), "clientSecret", "clientSecretHash"],
  };
}
