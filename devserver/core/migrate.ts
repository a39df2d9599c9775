/**
 * Layouts of persisted state: the state file, and each service module's part of it, carry `version`, the
 * layout they were written in. Before anything reads them, {@link migrateLayout} brings them to the current
 * layout, one step per version, so restoring code knows one layout only.
 *
 * Adding a field to a record is no new layout: restoring gives a record without it the field's default (a
 * record is dropped only when a field it does hold has the wrong type). A rename, a removal, a changed meaning
 * or a record the current code never holds is: bump the version and add a step. Steps describe layouts once
 * written, so they name stored keys literally and never change afterwards. A file of a version newer than the
 * code fails with a message to upgrade, never half-read.
 */

/** Receives what a restore or a step could not keep (shown on the devserver's standard error by default). */
export type RestoreWarn = (message: string) => void;

/** Drops the warnings of a restore (of a snapshot just taken in memory, which has nothing to warn about). */
export const ignoreWarnings: RestoreWarn = () => undefined;

/** One step from version n to n + 1: takes data of version n, returns it in the layout of version n + 1. */
export type MigrationStep = (data: Record<string, unknown>, warn: RestoreWarn) => Record<string, unknown>;

/** A persisted layout: its current version and the steps to it (`steps[n - 1]` brings version n to n + 1). */
export interface Layout {
  /** What the data is, for messages ("devserver state file", "scheduler service state"). */
  readonly what: string;
  readonly version: number;
  readonly steps: readonly MigrationStep[];
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Checks that a layout has exactly one step per version below its current one (a forgotten step fails here). */
export function layout(what: string, version: number, steps: readonly MigrationStep[]): Layout {
  if (steps.length !== version - 1)
    throw new TypeError(`${what}: layout version ${version} needs ${version - 1} migration steps, has ${steps.length}`);
  return { what, version, steps };
}

/**
 * Returns `data` migrated to the current layout, `version` set to it. `unversioned` is the version of data
 * written before its layout carried a version (none: such data is refused). Throws for data of a newer or
 * unknown version, naming both versions.
 */
export function migrateLayout(
  l: Layout,
  data: unknown,
  warn: RestoreWarn,
  unversioned?: number,
): Record<string, unknown> {
  if (!isRecord(data)) throw new Error(`${l.what} has an unknown layout (not a JSON object)`);
  const found = data.version === undefined ? unversioned : data.version;
  if (typeof found !== "number" || !Number.isInteger(found) || found < 1) {
    throw new Error(
      `${l.what} has an unknown layout (version ${JSON.stringify(data.version ?? null)}; this devserver reads versions 1 to ${l.version})`,
    );
  }
  if (found > l.version) {
    throw new Error(
      `${l.what} was written by a newer devserver (layout version ${found}; this one reads versions 1 to ${l.version}): ` +
        "upgrade the devserver, or start it without that state file",
    );
  }
  let out: Record<string, unknown> = { ...data, version: found };
  for (let v = found; v < l.version; v++) {
    const step = l.steps[v - 1];
    if (step === undefined) throw new TypeError(`${l.what}: no migration step from version ${v}`);
    out = { ...step(out, warn), version: v + 1 };
  }
  return out;
}

/** Field checks of {@link restoreRecord} that differ from "the same kind as the default". */
type FieldChecks<T> = { readonly [K in keyof T]?: (value: unknown) => boolean };

function sameKind(fallback: unknown, value: unknown): boolean {
  if (fallback === null) return value === null;
  if (Array.isArray(fallback)) return Array.isArray(value) && value.every((x) => typeof x === "string");
  if (typeof fallback === "object") return isRecord(value);
  return typeof value === typeof fallback;
}

/**
 * Restores one persisted record over `defaults`: a field the record lacks (it was written before the field
 * existed) keeps its default; a field it holds must be of the default's kind (a string array for an array,
 * `null` for `null`, unless `checks` says otherwise), else the record is malformed and undefined is returned.
 */
export function restoreRecord<T extends object>(
  defaults: T,
  data: unknown,
  checks: FieldChecks<T> = {},
): T | undefined {
  if (!isRecord(data)) return undefined;
  for (const key of Object.keys(defaults) as (keyof T & string)[]) {
    const value = data[key];
    if (value === undefined) continue;
    const check = checks[key];
    if (!(check !== undefined ? check(value) : sameKind(defaults[key], value))) return undefined;
  }
  return { ...defaults, ...(data as Partial<T>) };
}
