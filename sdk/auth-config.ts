/**
 * The AuthConfig resource class: the configuration of an auth method mount. Its arguments, output
 * properties and which of them are secret are generated from the provider's definition
 * (provider/resources/definitions/auth-config.ts) into ./generated/auth-config.ts.
 */
import type * as pulumi from "@pulumi/pulumi";
// A default import of the shim's `export =` object: the same object as `require("./shim/auth-config")` once
// compiled, and loadable by the test runner too.
import authConfigShim from "./shim/auth-config";
import { AuthConfigResource, authConfigOptions, authConfigProps, type AuthConfigArgs } from "./generated/auth-config";
import { pauseStackTraces, resumeStackTraces } from "./stacks";

export type { AuthConfigArgs };

/** The configuration of an auth method mount of the secrets service. */
export class AuthConfig extends AuthConfigResource {
  /** Declares the configuration of an auth method; `up` writes it. */
  constructor(name: string, args: AuthConfigArgs, opts?: pulumi.CustomResourceOptions) {
    // Registered with stack capture off: see ./stacks.
    const limit = pauseStackTraces();
    try {
      super(
        authConfigShim,
        name,
        authConfigProps(args),
        authConfigOptions(opts),
        "pulumi-secrets-scheduler",
        "AuthConfig",
      );
    } catch (e) {
      throw resumeStackTraces(limit, e, AuthConfig);
    } finally {
      resumeStackTraces(limit);
    }
  }
}
