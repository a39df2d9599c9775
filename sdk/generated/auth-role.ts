// Generated from provider/resources/definitions/auth-role.ts by `npm run generate`: do not edit.
import * as pulumi from "@pulumi/pulumi";
import type { SecretsConnection } from "../connection";
// A default import of the shim's `export =` object: the same object as `require("../shim/auth-role")` once compiled.
import shim from "../shim/auth-role";
import { pauseStackTraces, resumeStackTraces } from "../stacks";
import type { ListInput } from "../types";

/** Arguments of an {@link AuthRole}. Every list is sent on every write, so removing one clears it. */
export interface AuthRoleArgs {
  /**
   * Path of the auth mount (default `cloud`); pass `mount.path` of the AuthMount. A change replaces the role, unless
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
  /** Role name: letters, digits, `_`, `-`, `.`; stored lowercase. A change replaces the role. */
  name: pulumi.Input<string>;
  /** Policies granted by the role: the tokens its logins issue carry them. */
  policies?: ListInput;
  /** The same list under the service's current name (`token_policies`); set this or `policies`, not both. */
  tokenPolicies?: ListInput;
  /** Object IDs of service principals that may log in (`*` for any). */
  boundServicePrincipalIds?: ListInput;
  /** Group IDs of which a member may log in (`*` for any). */
  boundGroupIds?: ListInput;
  /** Locations the instance must be in. */
  boundLocations?: ListInput;
  /** Subscriptions the instance must be in. */
  boundSubscriptionIds?: ListInput;
  /** Resource groups the instance must be in. */
  boundResourceGroups?: ListInput;
  /** Scale sets the instance must belong to. */
  boundScaleSets?: ListInput;
  /** Token TTL: seconds or a duration; 0 = the mount's default. */
  tokenTtl?: pulumi.Input<number | string>;
  /** Longest token lifetime with renewals: seconds or a duration. */
  tokenMaxTtl?: pulumi.Input<number | string>;
  /** Hard cap on the token lifetime: seconds or a duration. */
  tokenExplicitMaxTtl?: pulumi.Input<number | string>;
  /** Period of periodic tokens: seconds or a duration. */
  tokenPeriod?: pulumi.Input<number | string>;
  /** Uses per token; 0 = unlimited. */
  tokenNumUses?: pulumi.Input<number>;
  /** CIDRs the token may be used from (bare IPs mean /32 or /128). */
  tokenBoundCidrs?: ListInput;
  /** Leave the `default` policy off the tokens. */
  tokenNoDefaultPolicy?: pulumi.Input<boolean>;
  /** `default`, `service` or `batch`. */
  tokenType?: pulumi.Input<"default" | "service" | "batch">;
  /** Take over an existing role of this name instead of failing (it is overwritten with these settings). */
  adopt?: pulumi.Input<boolean>;
  /**
   * The secrets service this lives on, made with `secretsConnection({...})`; default: stack config, then the
   * environment. Kept in state, so refresh and destroy reach it even after the program or stack config changed. Another
   * address (or secrets namespace) replaces the resource: created there, then deleted here. A new token, TLS setting,
   * header style or timeout is an update that writes the object to the service again with it.
   */
  connection?: pulumi.Input<SecretsConnection>;
}

/** A role of an auth method mount of the secrets service: cloud identities and constraints tied to token policies. */
export class AuthRole extends pulumi.dynamic.Resource {
  /**
   * Path of the auth mount (default `cloud`); pass `mount.path` of the AuthMount. A change replaces the role, unless
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
  /** Role name, lowercase. */
  declare readonly name: pulumi.Output<string>;
  /** Policies granted by the role: the tokens its logins issue carry them. */
  declare readonly policies: pulumi.Output<string[] | undefined>;
  /** The same list under the service's current name (`token_policies`); set this or `policies`, not both. */
  declare readonly tokenPolicies: pulumi.Output<string[] | undefined>;
  /** Object IDs of service principals that may log in (`*` for any). */
  declare readonly boundServicePrincipalIds: pulumi.Output<string[] | undefined>;
  /** Group IDs of which a member may log in (`*` for any). */
  declare readonly boundGroupIds: pulumi.Output<string[] | undefined>;
  /** Locations the instance must be in. */
  declare readonly boundLocations: pulumi.Output<string[] | undefined>;
  /** Subscriptions the instance must be in. */
  declare readonly boundSubscriptionIds: pulumi.Output<string[] | undefined>;
  /** Resource groups the instance must be in. */
  declare readonly boundResourceGroups: pulumi.Output<string[] | undefined>;
  /** Scale sets the instance must belong to. */
  declare readonly boundScaleSets: pulumi.Output<string[] | undefined>;
  /** Token TTL: seconds or a duration; 0 = the mount's default. */
  declare readonly tokenTtl: pulumi.Output<number | string | undefined>;
  /** Longest token lifetime with renewals: seconds or a duration. */
  declare readonly tokenMaxTtl: pulumi.Output<number | string | undefined>;
  /** Hard cap on the token lifetime: seconds or a duration. */
  declare readonly tokenExplicitMaxTtl: pulumi.Output<number | string | undefined>;
  /** Period of periodic tokens: seconds or a duration. */
  declare readonly tokenPeriod: pulumi.Output<number | string | undefined>;
  /** Uses per token; 0 = unlimited. */
  declare readonly tokenNumUses: pulumi.Output<number | undefined>;
  /** CIDRs the token may be used from (bare IPs mean /32 or /128). */
  declare readonly tokenBoundCidrs: pulumi.Output<string[] | undefined>;
  /** Leave the `default` policy off the tokens. */
  declare readonly tokenNoDefaultPolicy: pulumi.Output<boolean | undefined>;
  /** `default`, `service` or `batch`. */
  declare readonly tokenType: pulumi.Output<string | undefined>;
  /** Take over an existing role of this name instead of failing (it is overwritten with these settings). */
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  /** The version of the state's shape. */
  declare readonly schemaVersion: pulumi.Output<number>;

  /**
   * Declares the AuthRole `name` of the stack; `pulumi up` makes the service match `args`. A key of `args` the AuthRole
   * does not have (a typo in JavaScript) is refused by the provider's `check`, which names it.
   */
  constructor(name: string, args: AuthRoleArgs, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ../stacks.
    const limit = pauseStackTraces();
    try {
      super(shim, name, authRoleProps(args), opts, "pulumi-secrets-scheduler", "AuthRole");
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthRole);
    } finally {
      resumeStackTraces(limit);
    }
  }
}

/**
 * The props an {@link AuthRole} registers: every output property seeded (only keys present in props become outputs),
 * every key of `args` (one the resource does not have reaches `check`, which refuses it by name), then every input as
 * the provider takes it (a secret one wrapped with `pulumi.secret`).
 */
function authRoleProps(args: AuthRoleArgs): Record<string, unknown> {
  return {
    schemaVersion: undefined,
    ...args,
    mount: args.mount,
    mountAccessor: args.mountAccessor,
    name: args.name,
    policies: args.policies,
    tokenPolicies: args.tokenPolicies,
    boundServicePrincipalIds: args.boundServicePrincipalIds,
    boundGroupIds: args.boundGroupIds,
    boundLocations: args.boundLocations,
    boundSubscriptionIds: args.boundSubscriptionIds,
    boundResourceGroups: args.boundResourceGroups,
    boundScaleSets: args.boundScaleSets,
    tokenTtl: args.tokenTtl,
    tokenMaxTtl: args.tokenMaxTtl,
    tokenExplicitMaxTtl: args.tokenExplicitMaxTtl,
    tokenPeriod: args.tokenPeriod,
    tokenNumUses: args.tokenNumUses,
    tokenBoundCidrs: args.tokenBoundCidrs,
    tokenNoDefaultPolicy: args.tokenNoDefaultPolicy,
    tokenType: args.tokenType,
    adopt: args.adopt,
    connection: args.connection,
  };
}
