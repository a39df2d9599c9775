// Generated from provider/resources/definitions/auth-mount.ts by `npm run generate`: do not edit.
import * as pulumi from "@pulumi/pulumi";
import type { SecretsConnection } from "../connection";
// A default import of the shim's `export =` object: the same object as `require("../shim/auth-mount")` once compiled.
import shim from "../shim/auth-mount";
import { pauseStackTraces, resumeStackTraces } from "../stacks";

/** Tune settings of an {@link AuthMount}; only the ones set are managed and compared. */
export interface AuthMountTuneArgs {
  /** Default lease TTL: seconds, or a duration such as `"1h"`. */
  defaultLeaseTtl?: pulumi.Input<number | string>;
  /** Maximum lease TTL: seconds, or a duration such as `"768h"`. */
  maxLeaseTtl?: pulumi.Input<number | string>;
  /** `""`, `"hidden"` or `"unauth"` (listed in the unauthenticated UI). */
  listingVisibility?: pulumi.Input<"" | "hidden" | "unauth">;
  /** `"default-service"`, `"default-batch"`, `"service"` or `"batch"`. */
  tokenType?: pulumi.Input<"default-service" | "default-batch" | "service" | "batch">;
  /** Request keys the audit log keeps unhashed. */
  auditNonHmacRequestKeys?: pulumi.Input<pulumi.Input<string>[]>;
  /** Response keys the audit log keeps unhashed. */
  auditNonHmacResponseKeys?: pulumi.Input<pulumi.Input<string>[]>;
  /** Request headers passed through to the method. */
  passthroughRequestHeaders?: pulumi.Input<pulumi.Input<string>[]>;
  /** Response headers the method may set. */
  allowedResponseHeaders?: pulumi.Input<pulumi.Input<string>[]>;
}

/** Tune settings of a mount; only the ones set are managed. TTLs are seconds or duration strings. */
export interface MountTune {
  /** Default lease TTL: seconds, or a duration such as `"1h"`. */
  defaultLeaseTtl?: number | string;
  /** Maximum lease TTL: seconds, or a duration such as `"768h"`. */
  maxLeaseTtl?: number | string;
  /** `""`, `"hidden"` or `"unauth"` (listed in the unauthenticated UI). */
  listingVisibility?: "" | "hidden" | "unauth";
  /** `"default-service"`, `"default-batch"`, `"service"` or `"batch"`. */
  tokenType?: "default-service" | "default-batch" | "service" | "batch";
  /** Request keys the audit log keeps unhashed. */
  auditNonHmacRequestKeys?: string[];
  /** Response keys the audit log keeps unhashed. */
  auditNonHmacResponseKeys?: string[];
  /** Request headers passed through to the method. */
  passthroughRequestHeaders?: string[];
  /** Response headers the method may set. */
  allowedResponseHeaders?: string[];
}

/** Arguments of an {@link AuthMount}. */
export interface AuthMountArgs {
  /**
   * Path to enable the method at, without slashes (default `cloud`). A change moves the mount in place with the
   * service's `sys/remount` (releases 1.10 and later, OpenBao): its accessor, config and roles move with it, but every
   * token issued under the old path is revoked and logins must use the new path. Where the server has no remount, or
   * `disableRemount` is set, a change replaces the mount (config and roles deleted). Pass `mount.path` to AuthConfig
   * and AuthRole so they follow it.
   */
  path?: pulumi.Input<string>;
  /** Method type (default `cloud`). A change replaces the mount, deleting its config and roles. */
  type?: pulumi.Input<string>;
  /** Description shown in the mount list; changes in place. */
  description?: pulumi.Input<string>;
  /** Tune settings; change in place. Removing one leaves the service's value as it is. */
  tune?: pulumi.Input<AuthMountTuneArgs>;
  /** Keep the mount local to this cluster (not replicated). A change replaces the mount. */
  local?: pulumi.Input<boolean>;
  /** Seal-wrap the mount's storage. A change replaces the mount. */
  sealWrap?: pulumi.Input<boolean>;
  /**
   * Plugin version the mount runs, a semantic version such as `"v0.21.0"` (registered in the server's plugin catalog).
   * Sent on enable; a change tunes the mount in place and runs after the plugin is reloaded. Removing it leaves the
   * mount's version as it is.
   */
  pluginVersion?: pulumi.Input<string>;
  /** Replace the mount on a path change instead of moving it with `sys/remount` (default false). */
  disableRemount?: pulumi.Input<boolean>;
  /**
   * Take over a method already enabled at `path` instead of failing (`pulumi import` does not work for dynamic
   * resources). Only a mount of the same type, local and sealWrap can be adopted.
   */
  adopt?: pulumi.Input<boolean>;
  /**
   * The secrets service this lives on, made with `secretsConnection({...})`; default: stack config, then the
   * environment. Kept in state, so refresh and destroy reach it even after the program or stack config changed. Another
   * address (or secrets namespace) replaces the resource: created there, then deleted here. A new token, TLS setting,
   * header style or timeout is an update that writes the object to the service again with it.
   */
  connection?: pulumi.Input<SecretsConnection>;
}

/** An auth method mount of the secrets service. */
export class AuthMount extends pulumi.dynamic.Resource {
  /** Path of the mount, without slashes. */
  declare readonly path: pulumi.Output<string>;
  /** Method type. */
  declare readonly type: pulumi.Output<string>;
  /** Description shown in the mount list; changes in place. */
  declare readonly description: pulumi.Output<string | undefined>;
  /** Tune settings; change in place. Removing one leaves the service's value as it is. */
  declare readonly tune: pulumi.Output<MountTune | undefined>;
  /** Keep the mount local to this cluster (not replicated). A change replaces the mount. */
  declare readonly local: pulumi.Output<boolean | undefined>;
  /** Seal-wrap the mount's storage. A change replaces the mount. */
  declare readonly sealWrap: pulumi.Output<boolean | undefined>;
  /**
   * Plugin version the mount runs, a semantic version such as `"v0.21.0"` (registered in the server's plugin catalog).
   * Sent on enable; a change tunes the mount in place and runs after the plugin is reloaded. Removing it leaves the
   * mount's version as it is.
   */
  declare readonly pluginVersion: pulumi.Output<string | undefined>;
  /** Replace the mount on a path change instead of moving it with `sys/remount` (default false). */
  declare readonly disableRemount: pulumi.Output<boolean | undefined>;
  /**
   * Take over a method already enabled at `path` instead of failing (`pulumi import` does not work for dynamic
   * resources). Only a mount of the same type, local and sealWrap can be adopted.
   */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** Accessor of the mount (`auth_<type>_<hex>`), for policies and identity aliases. */
  declare readonly accessor: pulumi.Output<string>;
  /** The version of the state's shape. */
  declare readonly schemaVersion: pulumi.Output<number>;

  /**
   * Declares the AuthMount `name` of the stack; `pulumi up` makes the service match `args`. A key of `args` the
   * AuthMount does not have (a typo in JavaScript) is refused by the provider's `check`, which names it.
   */
  constructor(name: string, args: AuthMountArgs = {}, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ../stacks.
    const limit = pauseStackTraces();
    try {
      super(shim, name, authMountProps(args), opts, "pulumi-secrets-scheduler", "AuthMount");
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthMount);
    } finally {
      resumeStackTraces(limit);
    }
  }
}

/**
 * The props an {@link AuthMount} registers: every output property seeded (only keys present in props become outputs),
 * every key of `args` (one the resource does not have reaches `check`, which refuses it by name), then every input as
 * the provider takes it (a secret one wrapped with `pulumi.secret`).
 */
function authMountProps(args: AuthMountArgs): Record<string, unknown> {
  return {
    accessor: undefined,
    schemaVersion: undefined,
    ...args,
    path: args.path,
    type: args.type,
    description: args.description,
    tune: args.tune,
    local: args.local,
    sealWrap: args.sealWrap,
    pluginVersion: args.pluginVersion,
    disableRemount: args.disableRemount,
    adopt: args.adopt,
    connection: args.connection,
  };
}
