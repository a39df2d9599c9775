/**
 * The AuthRole resource class: a role of an auth method mount.
 */
import * as pulumi from "@pulumi/pulumi";
// A default import of the shim's `export =` object: the same object as `require("./shim/auth-role")` once
// compiled, and loadable by the test runner too.
import authRoleShim from "./shim/auth-role";
import type { SecretsConnection } from "./connection";
import { pauseStackTraces, resumeStackTraces } from "./stacks";

/** A list given as an array or as a comma-separated string. */
export type ListInput = pulumi.Input<string | pulumi.Input<string>[]>;

/** Arguments of an {@link AuthRole}. Every list is sent on every write, so removing one clears it. */
export interface AuthRoleArgs {
  /** Path of the auth mount (default `cloud`). A change replaces the role. */
  mount?: pulumi.Input<string>;
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
   * The secrets service this lives on, made with \`secretsConnection({...})\`; default: stack config, then the
   * environment. Kept in state, so refresh and destroy reach it even after the program or stack config
   * changed. Another address (or secrets namespace) replaces the resource: created there, then deleted here.
   * A new token or TLS setting updates state only.
   */
  connection?: pulumi.Input<SecretsConnection>;
}

const ROLE_KEYS: ReadonlyArray<keyof AuthRoleArgs> = [
  "mount",
  "name",
  "policies",
  "tokenPolicies",
  "boundServicePrincipalIds",
  "boundGroupIds",
  "boundLocations",
  "boundSubscriptionIds",
  "boundResourceGroups",
  "boundScaleSets",
  "tokenTtl",
  "tokenMaxTtl",
  "tokenExplicitMaxTtl",
  "tokenPeriod",
  "tokenNumUses",
  "tokenBoundCidrs",
  "tokenNoDefaultPolicy",
  "tokenType",
  "adopt",
  "connection",
];

/** A role of an auth method mount of the secrets service. */
export class AuthRole extends pulumi.dynamic.Resource {
  declare readonly mount: pulumi.Output<string>;
  /** Role name, lowercase. */
  declare readonly name: pulumi.Output<string>;
  declare readonly policies: pulumi.Output<string[] | undefined>;
  declare readonly tokenPolicies: pulumi.Output<string[] | undefined>;
  declare readonly boundServicePrincipalIds: pulumi.Output<string[] | undefined>;
  declare readonly boundGroupIds: pulumi.Output<string[] | undefined>;
  declare readonly boundLocations: pulumi.Output<string[] | undefined>;
  declare readonly boundSubscriptionIds: pulumi.Output<string[] | undefined>;
  declare readonly boundResourceGroups: pulumi.Output<string[] | undefined>;
  declare readonly boundScaleSets: pulumi.Output<string[] | undefined>;
  declare readonly tokenTtl: pulumi.Output<number | string | undefined>;
  declare readonly tokenMaxTtl: pulumi.Output<number | string | undefined>;
  declare readonly tokenExplicitMaxTtl: pulumi.Output<number | string | undefined>;
  declare readonly tokenPeriod: pulumi.Output<number | string | undefined>;
  declare readonly tokenNumUses: pulumi.Output<number | undefined>;
  declare readonly tokenBoundCidrs: pulumi.Output<string[] | undefined>;
  declare readonly tokenNoDefaultPolicy: pulumi.Output<boolean | undefined>;
  declare readonly tokenType: pulumi.Output<string | undefined>;
  declare readonly adopt: pulumi.Output<boolean | undefined>;
  declare readonly schemaVersion: pulumi.Output<number>;

  /** Declares a role; `up` writes it with every field, so the stored role equals the declaration. */
  constructor(name: string, args: AuthRoleArgs, opts?: pulumi.CustomResourceOptions) {
    // Only keys present in props become outputs, so every declared output is seeded.
    const props: Record<string, unknown> = { schemaVersion: undefined };
    for (const key of ROLE_KEYS) props[key] = args[key];
    // Registered with stack capture off: see ./stacks.
    const limit = pauseStackTraces();
    try {
      super(authRoleShim, name, props, opts, "pulumi-secrets-scheduler", "AuthRole");
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthRole);
    } finally {
      resumeStackTraces(limit);
    }
  }
}
