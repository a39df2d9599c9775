/**
 * The AuthRole resource class: a role of an auth method mount. Its arguments and output properties are
 * generated from the provider's definition (provider/resources/definitions/auth-role.ts) into
 * ./generated/auth-role.ts.
 */
import type * as pulumi from "@pulumi/pulumi";
// A default import of the shim's `export =` object: the same object as `require("./shim/auth-role")` once
// compiled, and loadable by the test runner too.
import authRoleShim from "./shim/auth-role";
import { AuthRoleResource, authRoleProps, type AuthRoleArgs } from "./generated/auth-role";
import { pauseStackTraces, resumeStackTraces } from "./stacks";

export type { AuthRoleArgs };

/** A role of an auth method mount of the secrets service. */
export class AuthRole extends AuthRoleResource {
  /** Declares a role; `up` writes it with every field, so the stored role equals the declaration. */
  constructor(name: string, args: AuthRoleArgs, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ./stacks.
    const limit = pauseStackTraces();
    try {
      super(authRoleShim, name, authRoleProps(args), opts, "pulumi-secrets-scheduler", "AuthRole");
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthRole);
    } finally {
      resumeStackTraces(limit);
    }
  }
}
