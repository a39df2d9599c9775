/**
 * The engine's unknown value: what a preview passes for a value not known yet, as `@pulumi/pulumi` itself
 * defines it. Tests pass it to the providers as the engine would.
 */
import * as pulumi from "@pulumi/pulumi";

export const UNKNOWN: string = pulumi.runtime.unknownValue;
