/**
 * What a definition's settings mean as values (see ./definition.ts): the value a setting writes, when two values
 * mean the same, when the program's value differs from the state's, the write body of a record and what a
 * refresh stores for one setting. The record resources and the docs (a field's shown default) derive from here.
 */
import { cleanList, durationSeconds, sameSet } from "../values";
import { containsUnknown, refreshed } from "./common";
import { settingKeys, subSettingKeys, type Field, type ResourceDefinition, type Shown } from "./definition";

/** Seconds of a duration input; 0 when unset (the service's "not set"). */
export function seconds(v: unknown): number {
  return typeof v === "number" || typeof v === "string" ? (durationSeconds(v) ?? 0) : 0;
}

/** What an unset setting means: `[]`, 0, false, or an enum's first value. */
function zeroOf(f: Field): unknown {
  if (f.unsetMeans !== undefined) return f.unsetMeans;
  switch (f.type) {
    case "list":
      return [];
    case "duration":
    case "number":
      return 0;
    case "boolean":
      return false;
    case "enum":
      return f.values?.[0];
    default:
      return f.default;
  }
}

/**
 * The documented default of a field: its `unsetMeans`, else the one `check` fills in, else, for a setting,
 * what an unset one writes.
 */
export function shownDefault(f: Field): Shown | undefined {
  if (f.unsetMeans !== undefined) return f.unsetMeans;
  if (f.default !== undefined || f.kind !== "setting") return f.default;
  return zeroOf(f) as Shown | undefined;
}

/** The value sent for a setting: a clean list, seconds, or the value (its zero when unset). */
export function wireValue(f: Field, v: unknown): unknown {
  if (f.type === "list") return cleanList(v as string[] | undefined);
  if (f.type === "duration") return v === undefined && f.unsetMeans !== undefined ? f.unsetMeans : seconds(v);
  return v ?? zeroOf(f);
}

/**
 * True when two values of a field mean the same: lists as sets, durations in seconds, unset as its zero (for a
 * `whenUnset: "leave"` field, unset only as unset).
 */
export function sameValue(f: Field, a: unknown, b: unknown): boolean {
  if (f.whenUnset === "leave" && (a === undefined || b === undefined)) return a === b;
  const c = f.canonical ?? ((s: string) => s);
  if (f.type === "list")
    return sameSet(cleanList(a as string[] | undefined).map(c), cleanList(b as string[] | undefined).map(c));
  const x = wireValue(f, a);
  const y = wireValue(f, b);
  return typeof x === "string" && typeof y === "string" ? c(x) === c(y) : x === y;
}

/**
 * True when the program's value of a setting differs from the state's (`old`), or is not known yet; a
 * `whenUnset: "leave"` setting the program leaves out never differs.
 */
export function settingDiffers(f: Field, value: unknown, old: unknown): boolean {
  if (containsUnknown(value)) return true;
  if (f.whenUnset === "leave" && value === undefined) return false;
  if (f.object !== undefined) {
    const [v, o] = [value, old] as [Record<string, unknown> | undefined, Record<string, unknown> | undefined];
    return Object.entries(f.object.fields).some(([k, sub]) => settingDiffers(sub, v?.[k], o?.[k]));
  }
  return !sameValue(f, value, old);
}

/**
 * The write body of some settings (such as {@link settingKeys}' or a part of them): every one, its unset meaning when unset, so the service holds what the
 * program says; a `whenUnset` setting left out is omitted (`"clear-if-set"`: unless `before`, the state the
 * write replaces, had it set).
 */
export function wireBodyOf(
  settings: readonly [string, Field & { wire: string }][],
  inputs: Partial<Record<string, unknown>>,
  before: Partial<Record<string, unknown>> = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [k, f] of settings) {
    const v = inputs[k];
    const was = before[k];
    if (v === undefined && f.whenUnset === "leave") continue;
    if (v === undefined && f.whenUnset === "clear-if-set" && (was === undefined || was === "")) continue;
    body[f.wire] = wireValue(f, v);
  }
  return body;
}

/** The write body of a resource's settings (see {@link wireBodyOf}); `before` is the state the write replaces. */
export function wireBody<F extends Record<string, Field>>(
  d: ResourceDefinition<F>,
  inputs: Partial<Record<keyof F, unknown>>,
  before: Partial<Record<keyof F, unknown>> = {},
): Record<string, unknown> {
  return wireBodyOf(settingKeys(d), inputs, before);
}

/** The write body of an object field's sub-settings (see {@link wireBodyOf}). */
export function subWireBody(
  f: Field,
  value: Partial<Record<string, unknown>> | undefined,
  before: Partial<Record<string, unknown>> = {},
): Record<string, unknown> {
  return wireBodyOf(subSettingKeys(f), value ?? {}, before);
}

/**
 * What a refresh stores for one setting (see `refreshed`): the program's spelling when the service's value
 * means the same; a list as the service returned it, without blanks; a value the record lacks as the
 * field's `unsetMeans`. A `whenUnset: "leave"` setting the state does not hold stays unset.
 */
export function refreshedSetting(f: Field & { wire: string }, old: unknown, record: Record<string, unknown>): unknown {
  if (f.whenUnset === "leave" && old === undefined) return undefined;
  const raw = record[f.wire] === undefined ? f.unsetMeans : record[f.wire];
  const server = f.type === "list" ? cleanList(raw as string[] | null | undefined) : raw;
  return refreshed<unknown>(
    old,
    server,
    (a, b) => sameValue(f, a, b),
    (v) => sameValue(f, undefined, v),
  );
}
