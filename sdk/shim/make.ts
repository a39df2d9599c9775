/**
 * The thin provider shims passed to Pulumi. A shim captures nothing but a kind name and loads the real
 * implementation with `require` when the engine calls it, so the text Pulumi serializes into state stays tiny
 * and stable across releases, and fixes reach old state. Each kind's shim is the `module.exports` of its own
 * file under `shim/` (generated from the registry by `npm run generate`), which Pulumi serializes as a bare
 * `require("pulumi-secrets-scheduler/shim/<module>")`.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import type * as ProviderModule from "../../provider";
import type { ProviderKind } from "../../provider";

/** Builds the shim of one resource kind. */
export function makeShim(kind: ProviderKind): dynamic.ResourceProvider {
  return {
    configure: (req) => providerEntry().configure(req),
    check: (olds, news) => providerEntry().provider(kind).check(olds, news),
    diff: (id, olds, news) => providerEntry().provider(kind).diff(id, olds, news),
    create: (inputs) => providerEntry().provider(kind).create(inputs),
    read: (id, props) => providerEntry().provider(kind).read(id, props),
    update: (id, olds, news) => providerEntry().provider(kind).update(id, olds, news),
    delete: (id, props) => providerEntry().provider(kind).delete(id, props),
  };
}

/**
 * The provider entry, by the package's own name, never a relative path: a shim serialized by value (a
 * program that does not load this library from node_modules) is evaluated far from this file.
 *
 * Installed, the name resolves from node_modules. A program inside this package's own directory (the
 * repository's root Pulumi.yaml) loads the library through the package's self-reference; the host then
 * evaluates the shim in a module that has no file name, and Node resolves a self-reference only from a
 * module's file. The host runs in the program's directory, so the name is looked up again from there: a
 * file in that directory resolves `pulumi-secrets-scheduler/provider` through node_modules or through the
 * self-reference of the package.json it sits in.
 */
function providerEntry(): typeof ProviderModule {
  // Resolved once per process: a resolve costs about 40 µs, and the engine calls a shim several times per resource.
  if (entry === undefined) entry = loadEntry();
  return entry;
}

let entry: typeof ProviderModule | undefined;

function loadEntry(): typeof ProviderModule {
  let resolved: string;
  try {
    resolved = require.resolve("pulumi-secrets-scheduler/provider");
  } catch (e) {
    if ((e as { code?: unknown } | null)?.code !== "MODULE_NOT_FOUND") throw e;
    const nodeModule = require("node:module") as typeof import("node:module");
    const nodePath = require("node:path") as typeof import("node:path");
    resolved = nodeModule
      .createRequire(nodePath.join(process.cwd(), "[pulumi-program]"))
      .resolve("pulumi-secrets-scheduler/provider");
  }
  return require(resolved) as typeof ProviderModule;
}
