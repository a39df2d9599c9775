/**
 * The provider side's entry point, loaded by the SDK's shims inside the dynamic-provider host at call time.
 * Each resource's implementation is required only when first used, so the host loads just what it needs.
 */
import { PssError, UsageError } from "./errors";
import { deferZodLocales } from "./lazy-zod-locales";
import type { ProviderImpl } from "./resources/common";
import type { ResourceKind } from "./resources/definitions";
import { migrating } from "./resources/migrate";

export { configure, connectionOptions, setConnectionOverrides, CONFIG_KEYS, CONFIG_NAMESPACE } from "./config";
export type { ProviderImpl } from "./resources/common";

/** The resource kinds: those of the registry (./resources/definitions/index.ts). */
export type ProviderKind = ResourceKind;

// Each a literal require, so that the bundle of this entry (scripts/bundle-host.js) holds every resource's
// code; a module still runs only when its kind is first used. Typed by the registry: a kind missing here, or
// one the registry does not have, fails the typecheck.
const MODULES = Object.freeze({
  authMount: () => require("./resources/auth-mount"),
  authConfig: () => require("./resources/auth-config"),
  authRole: () => require("./resources/auth-role"),
  jobVersionTag: () => require("./resources/job-version-tag"),
  job: () => require("./resources/job/entry"),
} satisfies { readonly [K in ProviderKind]: () => unknown });

const loaded = new Map<ProviderKind, ProviderImpl>();

/** Returns the implementation of one resource kind. */
export function provider(kind: ProviderKind): ProviderImpl {
  const cached = loaded.get(kind);
  if (cached !== undefined) return cached;
  const load = Object.hasOwn(MODULES, kind) ? MODULES[kind] : undefined;
  if (load === undefined) throw new UsageError(`unknown resource kind "${String(kind)}"`);
  // Before the resource's code loads zod: its translated messages need not load with it.
  deferZodLocales();
  const mod = load() as Record<string, ProviderImpl>;
  const impl = mod[kind];
  if (impl === undefined) throw new PssError("internal", `the module of "${kind}" does not export it`);
  // Every method sees state in the current layout, whichever release wrote it.
  const wrapped = keepProviderOnInitErrors(migrating(kind, impl));
  loaded.set(kind, wrapped);
  return wrapped;
}

/**
 * The engine stores an init error's `properties` as the resource's whole state, and later loads the provider
 * for refresh and destroy from that state's `__provider`; the host adds `__provider` to successful outputs
 * only. So an init error must carry the provider text of the inputs it came from.
 */
function keepProviderOnInitErrors(impl: ProviderImpl): ProviderImpl {
  const attach = (e: unknown, bag: Record<string, unknown>): unknown => {
    const err = e as { id?: unknown; properties?: Record<string, unknown> } | null;
    const text = bag["__provider"];
    if (
      err !== null &&
      typeof err === "object" &&
      typeof err.id === "string" &&
      err.id !== "" &&
      typeof text === "string"
    ) {
      err.properties = { ...(err.properties ?? {}), __provider: text };
    }
    return e;
  };
  return {
    ...impl,
    check: (olds, news) => impl.check(olds, news),
    diff: (id, olds, news) => impl.diff(id, olds, news),
    read: (id, props) => impl.read(id, props),
    delete: (id, props) => impl.delete(id, props),
    create: (inputs) => impl.create(inputs).catch((e: unknown) => Promise.reject(attach(e, inputs))),
    update: (id, olds, news) => impl.update(id, olds, news).catch((e: unknown) => Promise.reject(attach(e, news))),
  };
}

/** The providers' objects by kind, to drive a resource's CRUD directly (tests, scripts); each loads on first use. */
export const providers: Readonly<Record<ProviderKind, ProviderImpl>> = Object.freeze(
  Object.defineProperties(
    {},
    Object.fromEntries(
      (Object.keys(MODULES) as ProviderKind[]).map((kind) => [kind, { get: () => provider(kind), enumerable: true }]),
    ),
  ) as Record<ProviderKind, ProviderImpl>,
);
