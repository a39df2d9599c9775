// Job diffs in the scheduler's wire shape (spec "Diff structures"). The rules follow the real server's
// structural diff: primitive fields are flattened to strings ("Meta[k]", "Count"), nested blocks become
// objects, lists of blocks are compared as sets (an edited constraint shows as Deleted plus Added), and
// the job/group/task levels list only changed primitive fields while objects carry unchanged fields too
// ("contextual"). Job JSON is compared as sent, so fields this devserver does not model still count.
import { deepEqual, isObject, obj, objs, str, strs, type Json, type JsonObject } from "./json";

export type DiffType = "None" | "Added" | "Deleted" | "Edited";

export interface FieldDiff {
  Type: DiffType;
  Name: string;
  Old: string;
  New: string;
  Annotations: string[] | null;
}

export interface ObjectDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
}

export interface TaskDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Annotations: string[] | null;
}

export interface TaskGroupDiff {
  Type: DiffType;
  Name: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  Tasks: TaskDiff[] | null;
  Updates: Record<string, number> | null;
}

export interface JobDiff {
  Type: DiffType;
  ID: string;
  Fields: FieldDiff[] | null;
  Objects: ObjectDiff[] | null;
  TaskGroups: TaskGroupDiff[] | null;
}

type Flat = Record<string, string>;

/** Object-valued fields that are maps (flattened as `Name[key]`); every other object is a nested block. */
const MAP_FIELDS = new Set(["Meta", "Env", "GetterOptions", "GetterHeaders", "Target", "TaggedAddresses"]);

const JOB_FILTER = [
  "ID", "Status", "StatusDescription", "Version", "Stable", "CreateIndex", "ModifyIndex", "JobModifyIndex",
  "Update", "SubmitTime", "SvcTokenID", "SecretsToken", "Payload",
];

/** Group fields that are optional durations: shown only when both sides exist, as "" when unset. */
const GROUP_OPTIONAL = ["ShutdownDelay", "StopAfterClientDisconnect", "MaxClientDisconnect"];

function fmt(v: Json): string | undefined {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return undefined;
}

/** Flattens the primitive fields of a block (and its map fields) the way the server's diff does. */
function flatPrimitive(o: JsonObject | undefined, filter: readonly string[] = []): Flat {
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
function flatDeep(v: Json | undefined, prefix: string, out: Flat): Flat {
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

function fieldDiff(oldV: string, newV: string, name: string, contextual: boolean): FieldDiff | undefined {
  if (oldV === newV) {
    return contextual ? { Type: "None", Name: name, Old: oldV, New: newV, Annotations: null } : undefined;
  }
  if (oldV === "") return { Type: "Added", Name: name, Old: "", New: newV, Annotations: null };
  if (newV === "") return { Type: "Deleted", Name: name, Old: oldV, New: "", Annotations: null };
  return { Type: "Edited", Name: name, Old: oldV, New: newV, Annotations: null };
}

function sortFields(f: FieldDiff[]): FieldDiff[] {
  return f.sort((a, b) => cmp(a.Name, b.Name) || cmp(a.Old, b.Old) || cmp(a.New, b.New));
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function fieldDiffs(oldF: Flat, newF: Flat, contextual: boolean): FieldDiff[] {
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

function sortObjects(o: ObjectDiff[]): ObjectDiff[] {
  return o.sort(
    (a, b) =>
      cmp(a.Name, b.Name) ||
      TYPE_ORDER[a.Type] - TYPE_ORDER[b.Type] ||
      (a.Fields?.length ?? 0) - (b.Fields?.length ?? 0) ||
      (a.Objects?.length ?? 0) - (b.Objects?.length ?? 0) ||
      cmp(JSON.stringify(a.Fields), JSON.stringify(b.Fields)),
  );
}

function orNull<T>(list: T[]): T[] | null {
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
function objectSetDiff(oldL: JsonObject[], newL: JsonObject[], name: string, contextual: boolean, filter: readonly string[] = []): ObjectDiff[] {
  const key = (o: JsonObject): string => canonical(o);
  const oldK = new Map(oldL.map((o) => [key(o), o]));
  const newK = new Map(newL.map((o) => [key(o), o]));
  const out: ObjectDiff[] = [];
  for (const [k, o] of oldK) if (!newK.has(k)) pushDefined(out, primitiveObjectDiff(o, undefined, filter, name, contextual));
  for (const [k, o] of newK) if (!oldK.has(k)) pushDefined(out, primitiveObjectDiff(undefined, o, filter, name, contextual));
  return sortObjects(out);
}

function pushDefined<T>(list: T[], v: T | undefined): void {
  if (v !== undefined) list.push(v);
}

/** Returns a key-order-independent JSON text of a value (set identity of blocks). */
export function canonical(v: Json | undefined): string {
  if (v === undefined) return "undefined";
  if (v === null || typeof v !== "object") return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical(v[k])}`).join(",")}}`;
}

/** Diffs two string lists as sets under one name; undefined when both are empty (or equal without context). */
function stringSetDiff(oldL: string[], newL: string[], name: string, contextual: boolean): ObjectDiff | undefined {
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

function blockType(oldO: JsonObject | undefined, newO: JsonObject | undefined): DiffType {
  return oldO === undefined ? "Added" : newO === undefined ? "Deleted" : "Edited";
}

/** Diffs a block with primitive fields plus nested objects computed by `nested`. */
function nestedDiff(
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

function portDiffs(oldL: JsonObject[], newL: JsonObject[], dynamic: boolean, contextual: boolean): ObjectDiff[] {
  const name = dynamic ? "Dynamic Port" : "Static Port";
  const filter = dynamic ? ["Value"] : [];
  const oldM = new Map(oldL.map((p) => [str(p, "Label"), p]));
  const newM = new Map(newL.map((p) => [str(p, "Label"), p]));
  const out: ObjectDiff[] = [];
  for (const [label, p] of oldM) pushDefined(out, primitiveObjectDiff(p, newM.get(label), filter, name, contextual));
  for (const [label, p] of newM) if (!oldM.has(label)) pushDefined(out, primitiveObjectDiff(undefined, p, filter, name, contextual));
  return sortObjects(out);
}

function networkDiff(oldN: JsonObject | undefined, newN: JsonObject | undefined, contextual: boolean): ObjectDiff | undefined {
  return nestedDiff(oldN, newN, "Network", contextual, ["Device", "CIDR", "IP"], (o, n) => [
    ...portDiffs(objs(o, "ReservedPorts"), objs(n, "ReservedPorts"), false, contextual),
    ...portDiffs(objs(o, "DynamicPorts"), objs(n, "DynamicPorts"), true, contextual),
  ]);
}

/** Networks are matched by content, so any change is a Deleted/Added pair. */
function networkDiffs(oldL: JsonObject[], newL: JsonObject[], contextual: boolean): ObjectDiff[] {
  const oldK = new Map(oldL.map((o) => [canonical(o), o]));
  const newK = new Map(newL.map((o) => [canonical(o), o]));
  const out: ObjectDiff[] = [];
  for (const [k, o] of oldK) if (!newK.has(k)) pushDefined(out, networkDiff(o, undefined, contextual));
  for (const [k, o] of newK) if (!oldK.has(k)) pushDefined(out, networkDiff(undefined, o, contextual));
  return sortObjects(out);
}

function checkDiff(oldC: JsonObject | undefined, newC: JsonObject | undefined, contextual: boolean): ObjectDiff | undefined {
  return nestedDiff(oldC, newC, "Check", contextual, [], (o, n) => {
    const out: ObjectDiff[] = [];
    const oh = obj(o, "Header");
    const nh = obj(n, "Header");
    if (!deepEqual(oh, nh)) {
      const fields = fieldDiffs(flatDeep(oh, "", {}), flatDeep(nh, "", {}), contextual);
      out.push({ Type: blockType(oh, nh), Name: "Header", Fields: orNull(fields), Objects: null });
    }
    const restart = nestedDiff(obj(o, "CheckRestart"), obj(n, "CheckRestart"), "CheckRestart", contextual, [], () => []);
    pushDefined(out, restart);
    return out;
  });
}

function byName(list: JsonObject[]): Map<string, JsonObject> {
  return new Map(list.map((o) => [str(o, "Name"), o]));
}

function serviceDiff(oldS: JsonObject | undefined, newS: JsonObject | undefined, contextual: boolean): ObjectDiff | undefined {
  return nestedDiff(oldS, newS, "Service", contextual, [], (o, n) => {
    const out: ObjectDiff[] = [];
    pushDefined(out, stringSetDiff(strs(o, "CanaryTags"), strs(n, "CanaryTags"), "CanaryTags", contextual));
    pushDefined(out, stringSetDiff(strs(o, "Tags"), strs(n, "Tags"), "Tags", contextual));
    const oc = byName(objs(o, "Checks"));
    const nc = byName(objs(n, "Checks"));
    const checks: ObjectDiff[] = [];
    for (const [k, c] of oc) pushDefined(checks, checkDiff(c, nc.get(k), contextual));
    for (const [k, c] of nc) if (!oc.has(k)) pushDefined(checks, checkDiff(undefined, c, contextual));
    out.push(...sortObjects(checks));
    pushDefined(out, primitiveObjectDiff(obj(o, "Connect"), obj(n, "Connect"), [], "ConsulConnect", contextual));
    return out;
  });
}

/** Matches services by name, port label and position (a reordered list is not a change). */
function serviceDiffs(oldL: JsonObject[], newL: JsonObject[], contextual: boolean): ObjectDiff[] {
  if (oldL.length === 1 && newL.length === 1) {
    const d = serviceDiff(oldL[0], newL[0], contextual);
    return d ? [d] : [];
  }
  const newMatched = new Array<boolean>(newL.length).fill(false);
  const out: ObjectDiff[] = [];
  oldL.forEach((s, i) => {
    let best = -1;
    let bestScore = 0;
    newL.forEach((n, j) => {
      if (newMatched[j]) return;
      const score = (i === j ? 1 : 0) + (str(s, "PortLabel") === str(n, "PortLabel") ? 2 : 0) + (str(s, "Name") === str(n, "Name") ? 3 : 0);
      if (score > 2 && score > bestScore) {
        best = j;
        bestScore = score;
      }
    });
    if (best < 0) {
      pushDefined(out, serviceDiff(s, undefined, contextual));
      return;
    }
    newMatched[best] = true;
    pushDefined(out, serviceDiff(s, newL[best], contextual));
  });
  newL.forEach((n, j) => {
    if (!newMatched[j]) pushDefined(out, serviceDiff(undefined, n, contextual));
  });
  return sortObjects(out);
}

function configDiff(oldC: JsonObject | undefined, newC: JsonObject | undefined, contextual: boolean): ObjectDiff | undefined {
  const o = oldC ?? {};
  const n = newC ?? {};
  if (deepEqual(o, n)) return undefined;
  const type: DiffType = Object.keys(o).length === 0 ? "Added" : Object.keys(n).length === 0 ? "Deleted" : "Edited";
  return { Type: type, Name: "Config", Fields: orNull(fieldDiffs(flatDeep(o, "", {}), flatDeep(n, "", {}), contextual)), Objects: null };
}

function resourcesDiff(oldR: JsonObject | undefined, newR: JsonObject | undefined, contextual: boolean): ObjectDiff | undefined {
  return nestedDiff(oldR, newR, "Resources", contextual, [], (o, n) => {
    const devices: ObjectDiff[] = [];
    const od = byName(objs(o, "Devices"));
    const nd = byName(objs(n, "Devices"));
    for (const [k, d] of od) pushDefined(devices, nestedDiff(d, nd.get(k), "Device", contextual, [], () => []));
    for (const [k, d] of nd) if (!od.has(k)) pushDefined(devices, nestedDiff(undefined, d, "Device", contextual, [], () => []));
    return [...networkDiffs(objs(o, "Networks"), objs(n, "Networks"), contextual), ...sortObjects(devices)];
  });
}

function templateDiffs(oldL: JsonObject[], newL: JsonObject[], contextual: boolean): ObjectDiff[] {
  const key = (t: JsonObject): string => str(t, "DestPath");
  const oldM = new Map(oldL.map((t) => [key(t), t]));
  const newM = new Map(newL.map((t) => [key(t), t]));
  const out: ObjectDiff[] = [];
  for (const [k, t] of oldM) pushDefined(out, primitiveObjectDiff(t, newM.get(k), [], "Template", contextual));
  for (const [k, t] of newM) if (!oldM.has(k)) pushDefined(out, primitiveObjectDiff(undefined, t, [], "Template", contextual));
  return sortObjects(out);
}

function anyChanged(fields: readonly FieldDiff[], objects: readonly ObjectDiff[]): boolean {
  return fields.some((f) => f.Type !== "None") || objects.some((o) => o.Type !== "None");
}

/** Diffs two tasks (either side may be absent). */
export function taskDiff(oldT: JsonObject | undefined, newT: JsonObject | undefined, contextual: boolean): TaskDiff {
  const name = str(newT ?? oldT, "Name");
  const type: DiffType = oldT === undefined ? "Added" : newT === undefined ? "Deleted" : deepEqual(oldT, newT) ? "None" : "Edited";
  const fields = fieldDiffs(flatPrimitive(oldT, ["Name"]), flatPrimitive(newT, ["Name"]), false);
  const objects: ObjectDiff[] = [
    ...objectSetDiff(objs(oldT, "Constraints"), objs(newT, "Constraints"), "Constraint", contextual),
    ...objectSetDiff(objs(oldT, "Affinities"), objs(newT, "Affinities"), "Affinity", contextual),
  ];
  pushDefined(objects, configDiff(obj(oldT, "Config"), obj(newT, "Config"), contextual));
  pushDefined(objects, resourcesDiff(obj(oldT, "Resources"), obj(newT, "Resources"), contextual));
  pushDefined(objects, primitiveObjectDiff(obj(oldT, "LogConfig"), obj(newT, "LogConfig"), [], "LogConfig", contextual));
  pushDefined(objects, primitiveObjectDiff(obj(oldT, "DispatchPayload"), obj(newT, "DispatchPayload"), [], "DispatchPayload", contextual));
  objects.push(...objectSetDiff(objs(oldT, "Artifacts"), objs(newT, "Artifacts"), "Artifact", contextual));
  objects.push(...serviceDiffs(objs(oldT, "Services"), objs(newT, "Services"), contextual));
  pushDefined(objects, primitiveObjectDiff(obj(oldT, "Secrets"), obj(newT, "Secrets"), [], "Secrets", contextual));
  objects.push(...templateDiffs(objs(oldT, "Templates"), objs(newT, "Templates"), contextual));
  pushDefined(objects, primitiveObjectDiff(obj(oldT, "Lifecycle"), obj(newT, "Lifecycle"), [], "Lifecycle", contextual));
  return { Type: type, Name: name, Fields: orNull(fields), Objects: orNull(objects), Annotations: null };
}

function groupFlat(g: JsonObject | undefined, both: boolean): Flat {
  const f = flatPrimitive(g, ["Name", ...GROUP_OPTIONAL]);
  if (both) {
    for (const k of GROUP_OPTIONAL) {
      const v = g?.[k];
      f[k] = typeof v === "number" ? String(v) : "";
    }
  }
  return f;
}

/** Diffs two task groups (either side may be absent). */
export function taskGroupDiff(oldG: JsonObject | undefined, newG: JsonObject | undefined, contextual: boolean): TaskGroupDiff {
  const name = str(newG ?? oldG, "Name");
  const type: DiffType = oldG === undefined ? "Added" : newG === undefined ? "Deleted" : deepEqual(oldG, newG) ? "None" : "Edited";
  const both = oldG !== undefined && newG !== undefined;
  const fields = fieldDiffs(groupFlat(oldG, both), groupFlat(newG, both), false);
  const objects: ObjectDiff[] = [
    ...objectSetDiff(objs(oldG, "Constraints"), objs(newG, "Constraints"), "Constraint", contextual),
    ...objectSetDiff(objs(oldG, "Affinities"), objs(newG, "Affinities"), "Affinity", contextual),
  ];
  for (const [key, label] of [["RestartPolicy", "RestartPolicy"], ["ReschedulePolicy", "ReschedulePolicy"], ["EphemeralDisk", "EphemeralDisk"], ["Consul", "Consul"]] as const) {
    pushDefined(objects, primitiveObjectDiff(obj(oldG, key), obj(newG, key), [], label, contextual));
  }
  pushDefined(objects, primitiveObjectDiff(obj(oldG, "Update"), obj(newG, "Update"), ["Stagger"], "Update", contextual));
  objects.push(...networkDiffs(objs(oldG, "Networks"), objs(newG, "Networks"), contextual));
  const scaling = nestedDiff(obj(oldG, "Scaling"), obj(newG, "Scaling"), "Scaling", false, ["CreateIndex", "ModifyIndex", "ID", "Type"], (o, n) => {
    const op = obj(o, "Policy");
    const np = obj(n, "Policy");
    if (deepEqual(op, np)) return [];
    return [{ Type: blockType(op, np), Name: "Policy", Fields: orNull(fieldDiffs(flatDeep(op, "", {}), flatDeep(np, "", {}), false)), Objects: null }];
  });
  if (scaling?.Fields) {
    scaling.Fields = orNull(scaling.Fields.filter((f) => !/^Target\[(Job|Group|Namespace)\]$/.test(f.Name)));
  }
  pushDefined(objects, scaling);
  objects.push(...serviceDiffs(objs(oldG, "Services"), objs(newG, "Services"), contextual));
  const oldT = byName(objs(oldG, "Tasks"));
  const newT = byName(objs(newG, "Tasks"));
  const tasks: TaskDiff[] = [];
  for (const [k, t] of oldT) tasks.push(taskDiff(t, newT.get(k), contextual));
  for (const [k, t] of newT) if (!oldT.has(k)) tasks.push(taskDiff(undefined, t, contextual));
  tasks.sort((a, b) => cmp(a.Name, b.Name));
  return { Type: type, Name: name, Fields: orNull(fields), Objects: orNull(objects), Tasks: orNull(tasks), Updates: null };
}

function parameterizedDiff(oldP: JsonObject | undefined, newP: JsonObject | undefined, contextual: boolean): ObjectDiff | undefined {
  return nestedDiff(oldP, newP, "ParameterizedJob", contextual, [], (o, n) => {
    const out: ObjectDiff[] = [];
    pushDefined(out, stringSetDiff(strs(o, "MetaRequired"), strs(n, "MetaRequired"), "MetaRequired", contextual));
    pushDefined(out, stringSetDiff(strs(o, "MetaOptional"), strs(n, "MetaOptional"), "MetaOptional", contextual));
    return out;
  });
}

/**
 * Returns the diff from `oldJ` to `newJ` (either may be absent: Added / Deleted). `contextual` includes
 * unchanged fields inside changed objects, as plan and version listings do.
 */
export function jobDiff(oldJ: JsonObject | undefined, newJ: JsonObject | undefined, contextual = true): JobDiff {
  const id = str(newJ ?? oldJ, "ID");
  let type: DiffType = oldJ === undefined && newJ !== undefined ? "Added" : newJ === undefined && oldJ !== undefined ? "Deleted" : "None";
  const fields = fieldDiffs(flatPrimitive(oldJ, JOB_FILTER), flatPrimitive(newJ, JOB_FILTER), false);
  const objects: ObjectDiff[] = [];
  const dcs = stringSetDiff(strs(oldJ, "Datacenters"), strs(newJ, "Datacenters"), "Datacenters", contextual);
  if (dcs && dcs.Type !== "None") objects.push(dcs);
  objects.push(...objectSetDiff(objs(oldJ, "Constraints"), objs(newJ, "Constraints"), "Constraint", contextual));
  objects.push(...objectSetDiff(objs(oldJ, "Affinities"), objs(newJ, "Affinities"), "Affinity", contextual));
  const oldG = byName(objs(oldJ, "TaskGroups"));
  const newG = byName(objs(newJ, "TaskGroups"));
  const groups: TaskGroupDiff[] = [];
  for (const [k, g] of oldG) groups.push(taskGroupDiff(g, newG.get(k), contextual));
  for (const [k, g] of newG) if (!oldG.has(k)) groups.push(taskGroupDiff(undefined, g, contextual));
  groups.sort((a, b) => cmp(a.Name, b.Name));
  pushDefined(objects, primitiveObjectDiff(obj(oldJ, "Periodic"), obj(newJ, "Periodic"), [], "Periodic", contextual));
  pushDefined(objects, parameterizedDiff(obj(oldJ, "ParameterizedJob"), obj(newJ, "ParameterizedJob"), contextual));
  if (type === "None" && (anyChanged(fields, objects) || groups.some((g) => g.Type !== "None"))) type = "Edited";
  return { Type: type, ID: id, Fields: orNull(fields), Objects: orNull(objects), TaskGroups: orNull(groups) };
}
