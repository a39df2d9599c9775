// Job diffs in the scheduler's wire shape (scheduler-jobs-api.md, "Diff structures"). The rules follow the real
// server's structural diff: primitive fields are flattened to strings ("Meta[k]", "Count"), nested blocks become
// objects, lists of blocks are compared as sets (an edited constraint shows as Deleted plus Added), and the
// job/group/task levels list only changed primitive fields while objects carry unchanged fields too ("contextual").
// Job JSON is compared as sent, so fields this devserver does not model still count.
import {
  blockType,
  canonical,
  fieldDiffs,
  flatDeep,
  flatPrimitive,
  nestedDiff,
  objectSetDiff,
  orNull,
  primitiveObjectDiff,
  pushDefined,
  sortObjects,
  stringSetDiff,
  cmp,
  type DiffType,
  type FieldDiff,
  type Flat,
  type JobDiff,
  type ObjectDiff,
  type TaskDiff,
  type TaskGroupDiff,
} from "./diff-core";
import { deepEqual, obj, objs, str, strs, type JsonObject } from "../state/json";

export type { JobDiff, TaskDiff, TaskGroupDiff } from "./diff-core";

/** Job fields left out of the job-level field diff (server-managed, or diffed as blocks). */
const JOB_FILTER = [
  "ID",
  "Status",
  "StatusDescription",
  "Version",
  "Stable",
  "CreateIndex",
  "ModifyIndex",
  "JobModifyIndex",
  "Update",
  "SubmitTime",
  "SvcTokenID",
  "SecretsToken",
  "Payload",
];

/** Group fields that are optional durations: shown only when both sides exist, as "" when unset. */
const GROUP_OPTIONAL = ["ShutdownDelay", "StopAfterClientDisconnect", "MaxClientDisconnect"];

function portDiffs(oldL: JsonObject[], newL: JsonObject[], dynamic: boolean, contextual: boolean): ObjectDiff[] {
  const name = dynamic ? "Dynamic Port" : "Static Port";
  const filter = dynamic ? ["Value"] : [];
  const oldM = new Map(oldL.map((p) => [str(p, "Label"), p]));
  const newM = new Map(newL.map((p) => [str(p, "Label"), p]));
  const out: ObjectDiff[] = [];
  for (const [label, p] of oldM) pushDefined(out, primitiveObjectDiff(p, newM.get(label), filter, name, contextual));
  for (const [label, p] of newM)
    if (!oldM.has(label)) pushDefined(out, primitiveObjectDiff(undefined, p, filter, name, contextual));
  return sortObjects(out);
}

function networkDiff(
  oldN: JsonObject | undefined,
  newN: JsonObject | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
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

function checkDiff(
  oldC: JsonObject | undefined,
  newC: JsonObject | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  return nestedDiff(oldC, newC, "Check", contextual, [], (o, n) => {
    const out: ObjectDiff[] = [];
    const oh = obj(o, "Header");
    const nh = obj(n, "Header");
    if (!deepEqual(oh, nh)) {
      const fields = fieldDiffs(flatDeep(oh, "", {}), flatDeep(nh, "", {}), contextual);
      out.push({ Type: blockType(oh, nh), Name: "Header", Fields: orNull(fields), Objects: null });
    }
    const restart = nestedDiff(
      obj(o, "CheckRestart"),
      obj(n, "CheckRestart"),
      "CheckRestart",
      contextual,
      [],
      () => [],
    );
    pushDefined(out, restart);
    return out;
  });
}

function byName(list: JsonObject[]): Map<string, JsonObject> {
  return new Map(list.map((o) => [str(o, "Name"), o]));
}

function serviceDiff(
  oldS: JsonObject | undefined,
  newS: JsonObject | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
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
      const score =
        (i === j ? 1 : 0) +
        (str(s, "PortLabel") === str(n, "PortLabel") ? 2 : 0) +
        (str(s, "Name") === str(n, "Name") ? 3 : 0);
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

function configDiff(
  oldC: JsonObject | undefined,
  newC: JsonObject | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  const o = oldC ?? {};
  const n = newC ?? {};
  if (deepEqual(o, n)) return undefined;
  const type: DiffType = Object.keys(o).length === 0 ? "Added" : Object.keys(n).length === 0 ? "Deleted" : "Edited";
  return {
    Type: type,
    Name: "Config",
    Fields: orNull(fieldDiffs(flatDeep(o, "", {}), flatDeep(n, "", {}), contextual)),
    Objects: null,
  };
}

function resourcesDiff(
  oldR: JsonObject | undefined,
  newR: JsonObject | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
  return nestedDiff(oldR, newR, "Resources", contextual, [], (o, n) => {
    const devices: ObjectDiff[] = [];
    const od = byName(objs(o, "Devices"));
    const nd = byName(objs(n, "Devices"));
    for (const [k, d] of od)
      pushDefined(
        devices,
        nestedDiff(d, nd.get(k), "Device", contextual, [], () => []),
      );
    for (const [k, d] of nd)
      if (!od.has(k))
        pushDefined(
          devices,
          nestedDiff(undefined, d, "Device", contextual, [], () => []),
        );
    return [...networkDiffs(objs(o, "Networks"), objs(n, "Networks"), contextual), ...sortObjects(devices)];
  });
}

function templateDiffs(oldL: JsonObject[], newL: JsonObject[], contextual: boolean): ObjectDiff[] {
  const key = (t: JsonObject): string => str(t, "DestPath");
  const oldM = new Map(oldL.map((t) => [key(t), t]));
  const newM = new Map(newL.map((t) => [key(t), t]));
  const out: ObjectDiff[] = [];
  for (const [k, t] of oldM) pushDefined(out, primitiveObjectDiff(t, newM.get(k), [], "Template", contextual));
  for (const [k, t] of newM)
    if (!oldM.has(k)) pushDefined(out, primitiveObjectDiff(undefined, t, [], "Template", contextual));
  return sortObjects(out);
}

function anyChanged(fields: readonly FieldDiff[], objects: readonly ObjectDiff[]): boolean {
  return fields.some((f) => f.Type !== "None") || objects.some((o) => o.Type !== "None");
}

/** Diffs two tasks (either side may be absent). */
function taskDiff(oldT: JsonObject | undefined, newT: JsonObject | undefined, contextual: boolean): TaskDiff {
  const name = str(newT ?? oldT, "Name");
  const type: DiffType =
    oldT === undefined ? "Added" : newT === undefined ? "Deleted" : deepEqual(oldT, newT) ? "None" : "Edited";
  const fields = fieldDiffs(flatPrimitive(oldT, ["Name"]), flatPrimitive(newT, ["Name"]), false);
  const objects: ObjectDiff[] = [
    ...objectSetDiff(objs(oldT, "Constraints"), objs(newT, "Constraints"), "Constraint", contextual),
    ...objectSetDiff(objs(oldT, "Affinities"), objs(newT, "Affinities"), "Affinity", contextual),
  ];
  pushDefined(objects, configDiff(obj(oldT, "Config"), obj(newT, "Config"), contextual));
  pushDefined(objects, resourcesDiff(obj(oldT, "Resources"), obj(newT, "Resources"), contextual));
  pushDefined(
    objects,
    primitiveObjectDiff(obj(oldT, "LogConfig"), obj(newT, "LogConfig"), [], "LogConfig", contextual),
  );
  pushDefined(
    objects,
    primitiveObjectDiff(obj(oldT, "DispatchPayload"), obj(newT, "DispatchPayload"), [], "DispatchPayload", contextual),
  );
  objects.push(...objectSetDiff(objs(oldT, "Artifacts"), objs(newT, "Artifacts"), "Artifact", contextual));
  objects.push(...serviceDiffs(objs(oldT, "Services"), objs(newT, "Services"), contextual));
  pushDefined(objects, primitiveObjectDiff(obj(oldT, "Secrets"), obj(newT, "Secrets"), [], "Secrets", contextual));
  objects.push(...templateDiffs(objs(oldT, "Templates"), objs(newT, "Templates"), contextual));
  pushDefined(
    objects,
    primitiveObjectDiff(obj(oldT, "Lifecycle"), obj(newT, "Lifecycle"), [], "Lifecycle", contextual),
  );
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
function taskGroupDiff(oldG: JsonObject | undefined, newG: JsonObject | undefined, contextual: boolean): TaskGroupDiff {
  const name = str(newG ?? oldG, "Name");
  const type: DiffType =
    oldG === undefined ? "Added" : newG === undefined ? "Deleted" : deepEqual(oldG, newG) ? "None" : "Edited";
  const both = oldG !== undefined && newG !== undefined;
  const fields = fieldDiffs(groupFlat(oldG, both), groupFlat(newG, both), false);
  const objects: ObjectDiff[] = [
    ...objectSetDiff(objs(oldG, "Constraints"), objs(newG, "Constraints"), "Constraint", contextual),
    ...objectSetDiff(objs(oldG, "Affinities"), objs(newG, "Affinities"), "Affinity", contextual),
  ];
  for (const [key, label] of [
    ["RestartPolicy", "RestartPolicy"],
    ["ReschedulePolicy", "ReschedulePolicy"],
    ["EphemeralDisk", "EphemeralDisk"],
    ["Consul", "Consul"],
  ] as const) {
    pushDefined(objects, primitiveObjectDiff(obj(oldG, key), obj(newG, key), [], label, contextual));
  }
  pushDefined(
    objects,
    primitiveObjectDiff(obj(oldG, "Update"), obj(newG, "Update"), ["Stagger"], "Update", contextual),
  );
  objects.push(...networkDiffs(objs(oldG, "Networks"), objs(newG, "Networks"), contextual));
  const scaling = nestedDiff(
    obj(oldG, "Scaling"),
    obj(newG, "Scaling"),
    "Scaling",
    false,
    ["CreateIndex", "ModifyIndex", "ID", "Type"],
    (o, n) => {
      const op = obj(o, "Policy");
      const np = obj(n, "Policy");
      if (deepEqual(op, np)) return [];
      return [
        {
          Type: blockType(op, np),
          Name: "Policy",
          Fields: orNull(fieldDiffs(flatDeep(op, "", {}), flatDeep(np, "", {}), false)),
          Objects: null,
        },
      ];
    },
  );
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
  return {
    Type: type,
    Name: name,
    Fields: orNull(fields),
    Objects: orNull(objects),
    Tasks: orNull(tasks),
    Updates: null,
  };
}

function parameterizedDiff(
  oldP: JsonObject | undefined,
  newP: JsonObject | undefined,
  contextual: boolean,
): ObjectDiff | undefined {
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
  let type: DiffType =
    oldJ === undefined && newJ !== undefined ? "Added" : newJ === undefined && oldJ !== undefined ? "Deleted" : "None";
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
