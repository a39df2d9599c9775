/**
 * The thin provider shims passed to Pulumi. A shim captures nothing but a kind name and loads the real
 * implementation with `require` when the engine calls it, so the text Pulumi serializes into state stays tiny
 * and stable across releases, and fixes reach old state. Each kind's shim is the `module.exports` of its own
 * file under `shim/`, which Pulumi serializes as a bare `require("pulumi-secrets-scheduler/shim/<kind>")`.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type { ProviderKind } from "../../provider";

/** Builds the shim of one resource kind. */
export function makeShim(kind: ProviderKind): dynamic.ResourceProvider {
  // The package's own name, not a relative path: a shim serialized by value (a program that links this
  // library instead of installing it) is evaluated far from this file and resolves it from the program.
  return {
    configure: (req) => require("pulumi-secrets-scheduler/provider").configure(req),
    check: (olds, news) => require("pulumi-secrets-scheduler/provider").provider(kind).check(olds, news),
    diff: (id, olds, news) => require("pulumi-secrets-scheduler/provider").provider(kind).diff(id, olds, news),
    create: (inputs) => require("pulumi-secrets-scheduler/provider").provider(kind).create(inputs),
    read: (id, props) => require("pulumi-secrets-scheduler/provider").provider(kind).read(id, props),
    update: (id, olds, news) => require("pulumi-secrets-scheduler/provider").provider(kind).update(id, olds, news),
    delete: (id, props) => require("pulumi-secrets-scheduler/provider").provider(kind).delete(id, props),
  };
}
