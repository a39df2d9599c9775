// Allocation records of the simulation: a new placement (ports assigned from the dynamic range, resources
// from the task asks) and task states with the events the real client reports.
import { randomUUID } from "node:crypto";
import type { Placement } from "./cluster";
import { num, obj, objs, str, nowNanos, type JsonObject } from "../state/json";
import type { Allocation, Deployment, Evaluation, TaskEvent, TaskState } from "../state/types";

/** Returns an ISO 8601 timestamp (task state times are text). */
export function iso(ms = Date.now()): string {
  return new Date(ms).toISOString();
}

function event(type: string, fields: Partial<TaskEvent> = {}): TaskEvent {
  return {
    Type: type,
    Time: nowNanos(),
    DisplayMessage: "",
    Details: {},
    FailsTask: false,
    RestartReason: "",
    SetupError: "",
    DriverError: "",
    DriverMessage: "",
    ExitCode: 0,
    Signal: 0,
    Message: "",
    KillReason: "",
    KillTimeout: 0,
    KillError: "",
    StartDelay: 0,
    DownloadError: "",
    ValidationError: "",
    DiskLimit: 0,
    FailedSibling: "",
    SecretsError: "",
    TaskSignalReason: "",
    TaskSignal: "",
    GenericSource: "",
    ...fields,
  };
}

/** Returns the task states of freshly started tasks (Received, Task Setup, Driver, Started). */
function startedTaskStates(group: JsonObject): Record<string, TaskState> {
  const out: Record<string, TaskState> = {};
  for (const t of objs(group, "Tasks")) {
    const driver = str(t, "Driver");
    out[str(t, "Name")] = {
      State: "running",
      Failed: false,
      Restarts: 0,
      LastRestart: null,
      StartedAt: iso(),
      FinishedAt: null,
      Events: [
        event("Received", { DisplayMessage: "Task received by client" }),
        event("Task Setup", { Message: "Building Task Directory", DisplayMessage: "Building Task Directory" }),
        event("Driver", {
          DriverMessage: driver === "docker" ? "Downloading image" : `Starting ${driver} task`,
          DisplayMessage: driver === "docker" ? "Downloading image" : `Starting ${driver} task`,
        }),
        event("Started", { DisplayMessage: "Task started by client" }),
      ],
    };
  }
  return out;
}

/** Returns task states moved to dead: killed, completed (exit 0) or failed (exit 1, not restarting). */
export function finishTaskStates(
  states: Record<string, TaskState>,
  how: "killed" | "completed" | "failed",
): Record<string, TaskState> {
  const out: Record<string, TaskState> = {};
  for (const [name, s] of Object.entries(states)) {
    const events = [...s.Events];
    if (how === "killed") {
      events.push(
        event("Killing", {
          DisplayMessage: "Sent interrupt. Waiting 5s before force killing",
          KillTimeout: 5_000_000_000,
        }),
      );
      events.push(event("Killed", { DisplayMessage: "Task successfully killed" }));
    } else if (how === "completed") {
      events.push(event("Terminated", { ExitCode: 0, DisplayMessage: "Exit Code: 0" }));
    } else {
      events.push(event("Terminated", { ExitCode: 1, DisplayMessage: "Exit Code: 1" }));
      events.push(
        event("Not Restarting", {
          FailsTask: true,
          RestartReason: 'Exceeded allowed attempts 0 in interval 0s and mode is "fail"',
          DisplayMessage: 'Exceeded allowed attempts 0 in interval 0s and mode is "fail"',
        }),
      );
    }
    out[name] = { ...s, State: "dead", Failed: how === "failed", FinishedAt: iso(), Events: events };
  }
  return out;
}

/** Returns a new running allocation of group `g` placed by evaluation `e` (in deployment `d`, if any). */
export function newAllocation(
  e: Evaluation,
  job: JsonObject,
  g: JsonObject,
  pl: Placement,
  name: string,
  d: Deployment | undefined,
  index: number,
): Allocation {
  const now = nowNanos();
  const ports: { Label: string; Value: number; To: number; HostIP: string }[] = [];
  let dynamic = 20000 + Math.floor(Math.random() * 10000);
  for (const n of objs(g, "Networks")) {
    for (const p of objs(n, "ReservedPorts"))
      ports.push({ Label: str(p, "Label"), Value: num(p, "Value"), To: num(p, "To"), HostIP: pl.node.Address });
    for (const p of objs(n, "DynamicPorts"))
      ports.push({ Label: str(p, "Label"), Value: dynamic++, To: num(p, "To"), HostIP: pl.node.Address });
  }
  const tasks: JsonObject = {};
  for (const t of objs(g, "Tasks")) {
    const r = obj(t, "Resources");
    tasks[str(t, "Name")] = {
      Cpu: { CpuShares: num(r, "CPU", 100) },
      Memory: { MemoryMB: num(r, "MemoryMB", 300) },
      Networks: null,
    };
  }
  return {
    ID: randomUUID(),
    Namespace: e.Namespace,
    EvalID: e.ID,
    Name: name,
    NodeID: pl.node.ID,
    NodeName: pl.node.Name,
    JobID: e.JobID,
    JobType: str(job, "Type"),
    JobVersion: num(job, "Version"),
    TaskGroup: pl.group,
    AllocatedResources: {
      Tasks: tasks,
      Shared: { DiskMB: num(obj(g, "EphemeralDisk"), "SizeMB", 300), Networks: null, Ports: ports },
    },
    DesiredStatus: "run",
    DesiredDescription: "",
    DesiredTransition: {},
    ClientStatus: "running",
    ClientDescription: "Tasks are running",
    TaskStates: startedTaskStates(g),
    DeploymentID: d?.ID ?? "",
    DeploymentStatus: d ? { Healthy: null, Timestamp: iso(), Canary: pl.canary, ModifyIndex: index } : null,
    FollowupEvalID: "",
    RescheduleTracker: null,
    PreemptedAllocations: null,
    PreemptedByAllocation: "",
    PreviousAllocation: pl.replaces?.alloc.ID ?? "",
    NextAllocation: "",
    CreateIndex: index,
    ModifyIndex: index,
    AllocModifyIndex: index,
    CreateTime: now,
    ModifyTime: now,
  };
}
