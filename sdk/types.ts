/**
 * Input types the generated SDK files (./generated) share.
 */
import type * as pulumi from "@pulumi/pulumi";

/** A list given as an array or as a comma-separated string. */
export type ListInput = pulumi.Input<string | pulumi.Input<string>[]>;
