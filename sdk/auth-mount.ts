/**
 * The AuthMount resource class: an auth method enabled at a path of the secrets service. Its arguments and
 * output properties are generated from the provider's definition
 * (provider/resources/definitions/auth-mount.ts) into ./generated/auth-mount.ts.
 */
import type * as pulumi from "@pulumi/pulumi";
// A default import of the shim's `export =` object: the same object as `require("./shim/auth-mount")` once
// compiled, and loadable by the test runner too.
import authMountShim from "./shim/auth-mount";
import { AuthMountResource, authMountProps, type AuthMountArgs, type AuthMountTuneArgs } from "./generated/auth-mount";
import { pauseStackTraces, resumeStackTraces } from "./stacks";

export type { AuthMountArgs, AuthMountTuneArgs };

/** An auth method mount of the secrets service. */
export class AuthMount extends AuthMountResource {
  /** Declares an auth method mount; `up` enables it (or adopts it when asked). */
  constructor(name: string, args: AuthMountArgs = {}, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ./stacks.
    const limit = pauseStackTraces();
    try {
      super(authMountShim, name, authMountProps(args), opts, "pulumi-secrets-scheduler", "AuthMount");
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthMount);
    } finally {
      resumeStackTraces(limit);
    }
  }
}
