import type { ServiceName } from "./errors";
import { layout, migrateLayout, type RestoreWarn } from "./migrate";
import type { TokenRecord, TokenStoreSnapshot } from "./tokens";
import type { ServiceModule } from "./module";
import type { ServiceContext } from "./types";

/**
 * The state file's layout (see migrate.ts): version 1, `{ version, services: { <name>: { index, rootToken,
 * tokens, data } } }`, where `data` is the module's own, versioned by the module. A change of this envelope
 * bumps the version with a step here.
 */
const STATE_LAYOUT = layout("devserver state file", 1, []);

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
  return { version: STATE_LAYOUT.version, services: out };
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
 * Restores index, tokens and module data from a persisted document, migrated from an older layout first;
 * returns the persisted root tokens. A document of a newer layout throws. Hand-checked rather than
 * zod-parsed to keep zod out of the devserver's start-up path.
 */
export function restoreState(
  persisted: unknown,
  services: Readonly<Record<ServiceName, PersistableService>>,
  warn: RestoreWarn,
): Partial<Record<ServiceName, string>> {
  const doc = migrateLayout(STATE_LAYOUT, persisted, warn);
  if (!isObject(doc.services)) throw new Error(`${STATE_LAYOUT.what} has an unknown layout (no services)`);
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
    if ("data" in state && s.module?.restore !== undefined) s.module.restore(state.data, warn);
  }
  return roots;
}
