import type { ServiceName } from "./errors";
import type { TokenRecord, TokenStoreSnapshot } from "./tokens";
import type { ServiceModule } from "./module";
import type { ServiceContext } from "./types";

/** Version of the state file layout; bump it when the layout changes incompatibly. */
export const STATE_VERSION = 1;

/** The parts of a hosted service that persistence reads and writes. */
export interface PersistableService {
  readonly ctx: ServiceContext;
  readonly module: ServiceModule | undefined;
}

interface ServiceState {
  readonly index: number;
  readonly rootToken: string;
  readonly tokens: TokenStoreSnapshot["tokens"];
  readonly data?: unknown;
}

/** Returns the JSON document persisted for both services. */
export function snapshotState(
  services: Readonly<Record<ServiceName, PersistableService>>,
  rootTokens: Readonly<Record<ServiceName, string>>,
): unknown {
  const out: Record<string, ServiceState> = {};
  for (const name of Object.keys(services) as ServiceName[]) {
    const s = services[name];
    out[name] = {
      index: s.ctx.index(),
      rootToken: rootTokens[name],
      tokens: s.ctx.tokens.snapshot().tokens,
      ...(s.module?.snapshot !== undefined ? { data: s.module.snapshot() } : {}),
    };
  }
  return { version: STATE_VERSION, services: out };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isTokenEntry(v: unknown): v is readonly [string, TokenRecord] {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    typeof v[0] === "string" &&
    isObject(v[1]) &&
    typeof v[1].accessor === "string" &&
    Array.isArray(v[1].policies) &&
    Array.isArray(v[1].capabilities)
  );
}

/**
 * Restores index, tokens and module data from a persisted document; returns the persisted root tokens.
 * Hand-checked rather than zod-parsed to keep zod out of the devserver's start-up path.
 */
export function restoreState(
  doc: unknown,
  services: Readonly<Record<ServiceName, PersistableService>>,
): Partial<Record<ServiceName, string>> {
  if (!isObject(doc) || doc.version !== STATE_VERSION || !isObject(doc.services)) {
    throw new Error(`devserver state file has an unknown layout (expected version ${STATE_VERSION})`);
  }
  const roots: Partial<Record<ServiceName, string>> = {};
  for (const name of Object.keys(services) as ServiceName[]) {
    const state = doc.services[name];
    if (!isObject(state)) continue;
    const s = services[name];
    if (typeof state.index === "number") s.ctx.clock.advanceTo(state.index);
    if (Array.isArray(state.tokens)) {
      s.ctx.tokens.restore({ tokens: state.tokens.filter(isTokenEntry) });
    }
    if (typeof state.rootToken === "string") roots[name] = state.rootToken;
    if ("data" in state && s.module?.restore !== undefined) s.module.restore(state.data);
  }
  return roots;
}
