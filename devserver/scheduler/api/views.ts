// Read models derived from the store: job list stubs, summaries, allocation stubs, scale status,
// service registrations of running allocations, and the job's actions.
import { findGroup } from "../sim/cluster";
import type { Node } from "../sim/types";
import { isObject, num, obj, objs, str, strs, type JsonObject } from "../state/json";
import type { AllocRecord, JobEntry, Store } from "../state/store";
import { allocTerminal, type Allocation } from "../state/types";

/**
 * Returns the job summary (scheduler-jobs-api.md, "Job summary"); `withNamespace` false for the standalone endpoint.
 */
export function jobSummary(store: Store, entry: JobEntry, withNamespace: boolean): JsonObject {
  const summary: Record<string, Record<string, number>> = {};
  for (const g of objs(entry.job, "TaskGroups")) {
    summary[str(g, "Name")] = { Queued: 0, Complete: 0, Failed: 0, Running: 0, Starting: 0, Lost: 0, Unknown: 0 };
  }
  for (const r of store.jobAllocs(entry.namespace, entry.id)) {
    const s = summary[r.alloc.TaskGroup];
    if (s === undefined) continue;
    const key = (
      {
        pending: "Starting",
        running: "Running",
        complete: "Complete",
        failed: "Failed",
        lost: "Lost",
        unknown: "Unknown",
      } as Record<string, string>
    )[r.alloc.ClientStatus];
    if (key !== undefined) s[key] = (s[key] ?? 0) + 1;
  }
  const blocked = store.jobEvals(entry.namespace, entry.id).find((e) => e.Status === "blocked");
  for (const [g, m] of Object.entries(blocked?.FailedTGAllocs ?? {})) {
    const s = summary[g];
    if (s) s.Queued = (s.Queued ?? 0) + m.CoalescedFailures + 1;
  }
  const children = { Pending: 0, Running: 0, Dead: 0 };
  // Only a periodic or parameterized job launches children, and a registered job cannot change that nature:
  // the scan of every job is left to those (a list reads every listed job's summary).
  const launches = obj(entry.job, "Periodic") !== undefined || obj(entry.job, "ParameterizedJob") !== undefined;
  for (const c of launches ? store.children(entry.namespace, entry.id) : []) {
    const st = str(c.job, "Status");
    if (st === "running") children.Running++;
    else if (st === "dead") children.Dead++;
    else children.Pending++;
  }
  return {
    JobID: entry.id,
    ...(withNamespace ? { Namespace: entry.namespace } : {}),
    Summary: summary,
    Children: children,
    CreateIndex: num(entry.job, "CreateIndex"),
    ModifyIndex: Math.max(entry.summaryIndex, num(entry.job, "CreateIndex")),
  };
}

/** Returns a job list stub (scheduler-jobs-api.md, "Job stub"); Meta only when asked. */
export function jobStub(store: Store, entry: JobEntry, withMeta: boolean): JsonObject {
  const j = entry.job;
  const stub: JsonObject = {
    ID: entry.id,
    ParentID: str(j, "ParentID"),
    Name: str(j, "Name"),
    Namespace: entry.namespace,
    Datacenters: strs(j, "Datacenters"),
    Multiregion: isObject(j.Multiregion) ? j.Multiregion : null,
    Type: str(j, "Type"),
    Priority: num(j, "Priority"),
    NodePool: str(j, "NodePool"),
    Periodic: obj(j, "Periodic") !== undefined,
    ParameterizedJob: obj(j, "ParameterizedJob") !== undefined,
    Stop: j.Stop === true,
    Status: str(j, "Status"),
    StatusDescription: str(j, "StatusDescription"),
    JobSummary: jobSummary(store, entry, true),
    CreateIndex: num(j, "CreateIndex"),
    ModifyIndex: num(j, "ModifyIndex"),
    JobModifyIndex: num(j, "JobModifyIndex"),
    SubmitTime: num(j, "SubmitTime"),
  };
  if (withMeta) stub.Meta = isObject(j.Meta) ? j.Meta : null;
  return stub;
}

/** Returns the list form of an allocation (no embedded job, no resources). */
export function allocStub(a: Allocation): JsonObject {
  const { AllocatedResources: _resources, AllocModifyIndex: _ami, ...rest } = a;
  return { ...(rest as unknown as JsonObject), AllocatedResources: null };
}

/** Returns the full allocation with the job version it runs. */
export function allocFull(r: AllocRecord): JsonObject {
  return { ...(r.alloc as unknown as JsonObject), Job: r.job };
}

/** Returns the scale status of a job (scheduler-jobs-api.md, "Scale status"). */
export function scaleStatus(store: Store, entry: JobEntry): JsonObject {
  const groups: Record<string, JsonObject> = {};
  for (const g of objs(entry.job, "TaskGroups")) {
    const name = str(g, "Name");
    const events = entry.scalingEvents[name];
    groups[name] = {
      Desired: num(g, "Count"),
      Placed: 0,
      Running: 0,
      Healthy: 0,
      Unhealthy: 0,
      Events: events && events.length > 0 ? events : null,
    };
  }
  for (const r of store.jobAllocs(entry.namespace, entry.id)) {
    const a = r.alloc;
    if (a.DeploymentStatus?.Canary === true || allocTerminal(a)) continue;
    const s = groups[a.TaskGroup];
    if (s === undefined) continue;
    s.Placed = num(s, "Placed") + 1;
    if (a.ClientStatus === "running") s.Running = num(s, "Running") + 1;
    if (a.DeploymentStatus?.Healthy === true) s.Healthy = num(s, "Healthy") + 1;
    if (a.DeploymentStatus?.Healthy === false) s.Unhealthy = num(s, "Unhealthy") + 1;
  }
  return {
    JobID: entry.id,
    Namespace: entry.namespace,
    JobCreateIndex: num(entry.job, "CreateIndex"),
    JobModifyIndex: num(entry.job, "ModifyIndex"),
    JobStopped: entry.job.Stop === true,
    TaskGroups: groups,
  };
}

function portValue(a: Allocation, label: string): number {
  if (/^[0-9]+$/.test(label)) return Number(label);
  const shared = obj(a.AllocatedResources, "Shared");
  const p = objs(shared, "Ports").find((x) => str(x, "Label") === label);
  return p ? num(p, "Value") : 0;
}

/**
 * Returns the service registrations of a job's running allocations. Only services whose provider is
 * in `providers` are registered in the scheduler's own catalog (the real one keeps only "nomad" ones).
 */
export function serviceRegistrations(
  store: Store,
  entry: JobEntry,
  nodes: readonly Node[],
  providers: readonly string[],
): JsonObject[] {
  const out: JsonObject[] = [];
  for (const r of store.jobAllocs(entry.namespace, entry.id)) {
    const a = r.alloc;
    if (a.ClientStatus !== "running" || a.DesiredStatus !== "run") continue;
    const g = findGroup(r.job, a.TaskGroup);
    if (g === undefined) continue;
    const node = nodes.find((n) => n.ID === a.NodeID);
    const add = (s: JsonObject, owner: string): void => {
      const provider = str(s, "Provider") || "consul";
      if (!providers.includes(provider)) return;
      const name = str(s, "Name");
      const label = str(s, "PortLabel");
      out.push({
        ID: `_nomad-task-${a.ID}-${owner}-${name}-${label}`,
        ServiceName: name,
        Namespace: entry.namespace,
        NodeID: a.NodeID,
        Datacenter: node?.Datacenter ?? "dc1",
        JobID: entry.id,
        AllocID: a.ID,
        Tags: strs(s, "Tags"),
        Address: node?.Address ?? "127.0.0.1",
        Port: portValue(a, label),
        CreateIndex: a.CreateIndex,
        ModifyIndex: a.ModifyIndex,
      });
    };
    for (const s of objs(g, "Services")) add(s, `group-${str(g, "Name")}`);
    for (const t of objs(g, "Tasks")) for (const s of objs(t, "Services")) add(s, str(t, "Name"));
  }
  return out;
}

/** Returns the actions declared by a job's tasks (scheduler-jobs-api.md, "Job action"). */
export function jobActions(job: JsonObject): JsonObject[] {
  const out: JsonObject[] = [];
  for (const g of objs(job, "TaskGroups")) {
    for (const t of objs(g, "Tasks")) {
      for (const a of objs(t, "Actions")) {
        out.push({
          Name: str(a, "Name"),
          Command: str(a, "Command"),
          Args: strs(a, "Args"),
          TaskName: str(t, "Name"),
          TaskGroupName: str(g, "Name"),
        });
      }
    }
  }
  return out;
}
