// Building blocks of the scheduler's structural diff: flattening blocks into string fields ("Meta[k]",
// "args[0]"), field diffs with None/Added/Deleted/Edited, typing an object diff from its fields, set
// diffs of string lists and of blocks, and the sort order the server uses (name, then type order).
import { deepEqual, isObject, type Json, type JsonObject } from "../state/json";

/** Kind of change (the server uses exactly these four words). */
export type DiffType = "None" | "Added" | "Deleted" | "Edited";

/** Change of one flattened field; Old and New are the values as strings. */
export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

/** Change of a nested block (restart policy, service, config, ...). */
export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

/** Change of a task; Annotations say what the change forces (plan only). */
export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

/** Change of a task group; Updates counts what the scheduler would do (plan only). */
export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  Updates: Record<string, number> | null;
}

/** Change of a whole job. */
export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

/** A block flattened to field name → string value. */
export type Flat = Record<string, string>;

/** Object-valued fields that are maps (flattened as `Name[key]`); every other object is a nested block. */
const MAP_FIELDS = new Set(["Meta", "Env", "GetterOptions", "GetterHeaders", "Target", "TaggedAddresses"]);

function fmt(v: Json): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** Flattens the primitive fields of a block (and its map fields) the way the server's diff does. */
export function flatPrimitive(o: JsonObject | undefined, filter: readonly string[] = []): Flat {
  const out: Flat = {};
  if (o === undefined) return out;
  for (const [k, v] of Object.entries(o)) {
    if (filter.includes(k)) continue;
    const p = fmt(v);
    if (p !== undefined) {
      out[k] = p;
    } else if (isObject(v) && MAP_FIELDS.has(k)) {
      for (const [mk, mv] of Object.entries(v)) {
        const mp = fmt(mv);
        if (mp !== undefined) out[`${k}[${mk}]`] = mp;
      }
    }
  }
  return out;
}

/** Flattens a free-form map (task config) completely: `a`, `list[0]`, `map[key]`. */
export function flatDeep(v: Json | undefined, prefix: string, out: Flat): Flat {
  if (v === undefined || v === null) return out;
  const p = fmt(v);
  if (p !== undefined) {
    out[prefix] = p;
  } else if (Array.isArray(v)) {
    v.forEach((x, i) => flatDeep(x, `${prefix}[${i}]`, out));
  } else {
    for (const [k, x] of Object.entries(v)) flatDeep(x, prefix === "" ? k : `${prefix}[${k}]`, out);
  }
  return out;
}

const TYPE_ORDER: Record<DiffType, number> = { Edited: 0, Added: 1, Deleted: 2, None: 3 };

/** Returns the diff of one flattened field; undefined when unchanged and not contextual. */
function fieldDiff(oldV: string, newV: string, name: string, contextual: boolean): FieldDiff | undefined {
  if (oldV === newV) {
    return contextual ? { Type: "None", Name: name, Old: oldV, New: newV, Annotations: null } : undefined;
  }
  if (oldV === "") return { Type: "Added", Name: name, Old: "", New: newV, Annotations: null };
  if (newV === "") return { Type: "Deleted", Name: name, Old: oldV, New: "", Annotations: null };
  return { Type: "Edited", Name: name, Old: oldV, New: newV, Annotations: null };
}

/** Sorts field diffs by name, then old value, then new value. */
function sortFields(f: FieldDiff[]): FieldDiff[] {
  return f.sort((a, b) => cmp(a.Name, b.Name) || cmp(a.Old, b.Old) || cmp(a.New, b.New));
}

/** Compares two strings by code unit, like Go's string ordering. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Returns the sorted field diffs between two flattened blocks. */
export function fieldDiffs(oldF: Flat, newF: Flat, contextual: boolean): FieldDiff[] {
  const out: FieldDiff[] = [];
  for (const [k, v] of Object.entries(oldF)) {
    const d = fieldDiff(v, newF[k] ?? "", k, contextual);
    if (d) out.push(d);
  }
  for (const [k, v] of Object.entries(newF)) {
    if (k in oldF) continue;
    const d = fieldDiff("", v, k, contextual);
    if (d) out.push(d);
  }
  return sortFields(out);
}

/** Sorts object diffs by name, then diff type, then size. */
export function sortObjects(o: ObjectDiff[]): ObjectDiff[] {
  return o.sort(
    (a, b) =>
      cmp(a.Name, b.Name) ||
      TYPE_ORDER[a.Type] - TYPE_ORDER[b.Type] ||
      (a.Fields?.length ?? 0) - (b.Fields?.length ?? 0) ||
      (a.Objects?.length ?? 0) - (b.Objects?.length ?? 0) ||
      cmp(JSON.stringify(a.Fields), JSON.stringify(b.Fields)),
  );
}

/** Returns the list, or null when empty (Go encodes an empty slice field as null). */
export function orNull<T>(list: T[]): T[] | null {
  return list.length === 0 ? null : list;
}

/** Types a diff from its field changes: Edited, Added, Deleted, or undefined when nothing changed. */
function typeFromFields(fields: readonly FieldDiff[]): DiffType | undefined {
  let added = false;
  let deleted = false;
  for (const f of fields) {
    if (f.Type === "Edited") return "Edited";
    if (f.Type === "Added") added = true;
    if (f.Type === "Deleted") deleted = true;
  }
  if (added && deleted) return "Edited";
  if (added) return "Added";
  if (deleted) return "Deleted";
  return undefined;
}

/** Diffs the primitive fields of one block; undefined when nothing changed. */
export function primitiveObjectDiff(
  oldO: JsonObject | undefined,
  newO: JsonObject | undefined,
  filter: readonly string[],
  name: string,
  contextual: boolean,
): ObjectDiff | undefined {
  const fields = fieldDiffs(flatPrimitive(oldO, filter), flatPrimitive(newO, filter), contextual);
  const type = typeFromFields(fields);
  if (type === undefined) return undefined;
  return { Type: type, Name: name, Fields: orNull(fields), Objects: null };
}

/** Diffs two lists of blocks as sets keyed by content: only added and deleted blocks appear. */
export function objectSetDiff(
  oldL: JsonObject[],
  newL: JsonObject[],
  name: string,
  contextual: boolean,
  filter: readonly string[] = [],
): ObjectDiff[] {
  const key = (o: JsonObject): string => canonical(o);
  const oldK = new Map(oldL.map((o) => [key(o), o]));
  const newK = new Map(newL.map((o) => [key(o), o]));
  const out: ObjectDiff[] = [];
  for (const [k, o] of oldK)
    if (!newK.has(k)) pushDefined(out, primitiveObjectDiff(o, undefined, filter, name, contextual));
  for (const [k, o] of newK)
    if (!oldK.has(k)) pushDefined(out, primitiveObjectDiff(undefined, o, filter, name, contextual));
  return sortObjects(out);
}

/** Appends `v` unless it is undefined. */
export function pushDefined<T>(list: T[], v: T | undefined): void {
  if (v !== undefined) list.push(v);
}

/** Returns a key-order-independent JSON text of a value (set identity of blocks). */
export function canonical(v: Json | undefined): string {
  if (v === undefined) return "undefined";
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`)
    .join(",")}}`;
}

/** Diffs two string lists as sets under one name; undefined when both are empty (or equal without context). */
export function stringSetDiff(
  oldL: string[],
  newL: string[],
  name: string,
  contextual: boolean,
): ObjectDiff | undefined {
  const oldS = new Set(oldL);
  const newS = new Set(newL);
  const fields: FieldDiff[] = [];
  let added = false;
  let removed = false;
  for (const k of oldS) {
    if (!newS.has(k)) {
      pushDefined(fields, fieldDiff(k, "", name, contextual));
      removed = true;
    } else if (contextual) {
      pushDefined(fields, fieldDiff(k, k, name, contextual));
    }
  }
  for (const k of newS) {
    if (!oldS.has(k)) {
      pushDefined(fields, fieldDiff("", k, name, contextual));
      added = true;
    }
  }
  if (!added && !removed && (!contextual || fields.length === 0)) return undefined;
  const type: DiffType = added && removed ? "Edited" : added ? "Added" : removed ? "Deleted" : "None";
  return { Type: type, Name: name, Fields: orNull(sortFields(fields)), Objects: null };
}

/** Returns Added, Deleted or Edited for a block present on one or both sides. */
export function blockType(oldO: JsonObject | undefined, newO: JsonObject | undefined): DiffType {
  return oldO === undefined ? "Added" : newO === undefined ? "Deleted" : "Edited";
}

/** Diffs a block with primitive fields plus nested objects computed by `nested`. */
export function nestedDiff(
  oldO: JsonObject | undefined,
  newO: JsonObject | undefined,
  name: string,
  contextual: boolean,
  filter: readonly string[],
  nested: (o: JsonObject | undefined, n: JsonObject | undefined) => ObjectDiff[],
): ObjectDiff | undefined {
  if (deepEqual(oldO, newO) || (oldO === undefined && newO === undefined)) return undefined;
  const fields = fieldDiffs(flatPrimitive(oldO, filter), flatPrimitive(newO, filter), contextual);
  return { Type: blockType(oldO, newO), Name: name, Fields: orNull(fields), Objects: orNull(nested(oldO, newO)) };
}
