/**
 * The rules a register must meet, checked on a job object at `check` so a bad job fails the preview with
 * the path inside it named (`job.TaskGroups[0].Count`) and nothing is sent. The rules are the scheduler's
 * own (Nomad 1.6: `Job.Validate`, `TaskGroup.Validate`, `Task.Validate`, `UpdateStrategy.Validate` and the
 * register endpoint's admission checks), applied to what the user wrote: a field left out takes the
 * server's default, so only values that are present are judged. Failure texts never repeat a value.
 */
import type * as dynamic from "@pulumi/pulumi/dynamic";
import { jobIdProblem } from "../../clients/scheduler/base";
import { REGISTER_REFUSED_JOB_FIELDS } from "../../clients/scheduler/jobs";
import { hasForeignPrototype, isRecord, propertyPath } from "../common";

/** Job types a register accepts (`core` is the server's own). */
const JOB_TYPES: ReadonlySet<string> = new Set(["service", "batch", "system", "sysbatch"]);
/** Types that may be periodic or parameterized. */
const BATCH_TYPES: ReadonlySet<string> = new Set(["batch", "sysbatch"]);
/** The scheduler's default largest job priority (server option `job_max_priority`). */
const MAX_PRIORITY = 100;
const HEALTH_CHECKS: ReadonlySet<string> = new Set(["checks", "task_states", "manual"]);
const PAYLOAD_RULES: ReadonlySet<string> = new Set(["optional", "required", "forbidden"]);

/**
 * Fields only the scheduler may set that a register refuses: the client's REGISTER_REFUSED_JOB_FIELDS
 * (`Dispatched`: "job can't be submitted with 'Dispatched' set") and `Payload` ("job can't be submitted
 * with a payload, only dispatched"; not server-managed: a dispatched job keeps what its dispatch sent). The
 * other server-managed fields (Status, Version, the indexes, SubmitTime, Stable, VersionTag) the scheduler
 * overwrites, and the normal form a register sends leaves them out, so a job copied from a read still works.
 */
const REFUSED_SERVER_FIELDS: readonly string[] = [...REGISTER_REFUSED_JOB_FIELDS, "Payload"];

type Path = Array<string | number>;

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

/** True for a zero value: what the server sees when the field is left out. */
function isZero(v: unknown): boolean {
  if (!present(v) || v === false || v === 0 || v === "") return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isRecord(v)) return Object.values(v).every(isZero);
  return false;
}

class Failures {
  readonly list: dynamic.CheckFailure[] = [];
  add(path: Path, reason: string): void {
    this.list.push({ property: propertyPath(path), reason });
  }
}

/** Checks an integer field when present: a whole number, at least `min` (and at most `max`). */
function integer(
  f: Failures,
  o: Record<string, unknown>,
  key: string,
  path: Path,
  min: number,
  max?: number,
  why?: string,
): void {
  const v = o[key];
  if (!present(v) || typeof v !== "number") return; // the schema reports a wrong type
  const at = [...path, key];
  if (!Number.isInteger(v)) f.add(at, "must be a whole number");
  else if (v < min) f.add(at, why ?? (min === 0 ? "must not be negative" : `must be at least ${min}`));
  else if (max !== undefined && v > max) f.add(at, why ?? `must be at most ${max}`);
}

/** Checks a name when present: not empty, no NUL character. */
function name(
  f: Failures,
  o: Record<string, unknown>,
  key: string,
  path: Path,
  required: boolean,
  what: string,
): string | undefined {
  const v = o[key];
  if (!present(v)) {
    if (required) f.add([...path, key], `${what} is required`);
    return undefined;
  }
  if (typeof v !== "string") return undefined;
  if (v === "") f.add([...path, key], `${what} must not be empty`);
  else if (v.includes("\u0000")) f.add([...path, key], `${what} must not contain a NUL character`);
  return v;
}

/** Refuses `__proto__` keys anywhere: they cannot be carried through a JavaScript object safely. */
function protoKeys(f: Failures, v: unknown, path: Path, depth: number): void {
  if (depth > 32) return;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) protoKeys(f, v[i], [...path, i], depth + 1);
    return;
  }
  if (!isRecord(v)) return;
  if (hasForeignPrototype(v)) f.add([...path, "__proto__"], 'a key named "__proto__" cannot be sent; remove it');
  for (const k of Object.keys(v)) {
    if (k === "__proto__") f.add([...path, k], 'a key named "__proto__" cannot be sent; remove it');
    else protoKeys(f, v[k], [...path, k], depth + 1);
  }
}

/** Update policy: counts and durations (nanoseconds) may not be negative; group deadlines must be set. */
function update(f: Failures, u: unknown, path: Path, group: boolean): void {
  if (!isRecord(u)) return;
  integer(f, u, "MaxParallel", path, 0);
  integer(f, u, "Canary", path, 0);
  integer(f, u, "MinHealthyTime", path, 0);
  integer(f, u, "ProgressDeadline", path, 0);
  // A group's policy is validated as given; zero deadlines are only harmless in an unused job-level policy.
  integer(
    f,
    u,
    "HealthyDeadline",
    path,
    group ? 1 : 0,
    undefined,
    group ? "must be greater than zero (nanoseconds)" : undefined,
  );
  integer(
    f,
    u,
    "Stagger",
    path,
    group ? 1 : 0,
    undefined,
    group ? "must be greater than zero (nanoseconds)" : undefined,
  );
  const hc = u.HealthCheck;
  if (typeof hc === "string" && !HEALTH_CHECKS.has(hc))
    f.add([...path, "HealthCheck"], 'must be "checks", "task_states" or "manual"');
}

function task(f: Failures, t: unknown, path: Path, seen: Map<string, number>, index: number): boolean {
  if (!isRecord(t)) return false;
  const n = name(f, t, "Name", path, true, "the task name");
  if (n !== undefined && n !== "") {
    if (/[/\\]/.test(n)) f.add([...path, "Name"], "the task name must not contain a slash or a backslash");
    const before = seen.get(n);
    if (before !== undefined) f.add([...path, "Name"], `the task name repeats the name of task ${before}`);
    else seen.set(n, index);
  }
  const driver = t.Driver;
  if (!present(driver) || driver === "") f.add([...path, "Driver"], "every task needs a driver");
  integer(f, t, "KillTimeout", path, 0);
  integer(f, t, "ShutdownDelay", path, 0);
  return t.Leader === true;
}

function taskGroup(f: Failures, g: unknown, path: Path, type: string, seen: Map<string, number>, index: number): void {
  if (!isRecord(g)) return;
  const n = name(f, g, "Name", path, true, "the task group name");
  if (n !== undefined && n !== "") {
    const before = seen.get(n);
    if (before !== undefined) f.add([...path, "Name"], `the task group name repeats the name of task group ${before}`);
    else seen.set(n, index);
  }
  integer(f, g, "Count", path, 0);
  if (type === "system" && typeof g.Count === "number" && g.Count > 1)
    f.add([...path, "Count"], "a system job runs one allocation per node: Count cannot exceed 1");
  integer(f, g, "ShutdownDelay", path, 0);
  integer(f, g, "MaxClientDisconnect", path, 0);
  integer(f, g, "StopAfterClientDisconnect", path, 0);
  update(f, g.Update, [...path, "Update"], true);
  const tasks = g.Tasks;
  if (!Array.isArray(tasks) || tasks.length === 0) {
    if (!Array.isArray(tasks) && present(tasks)) return; // the schema reports a wrong type
    f.add([...path, "Tasks"], "a task group needs at least one task");
    return;
  }
  const names = new Map<string, number>();
  let leaders = 0;
  for (let i = 0; i < tasks.length; i++) if (task(f, tasks[i], [...path, "Tasks", i], names, i)) leaders++;
  if (leaders > 1) f.add([...path, "Tasks"], "only one task of a group may be the leader");
}

/**
 * Returns the failures of a job object (none when a register would pass these rules). `prefix` is the
 * input's name (`job`).
 */
export function checkJobObject(job: Record<string, unknown>, prefix = "job"): dynamic.CheckFailure[] {
  const f = new Failures();
  const root: Path = [prefix];
  protoKeys(f, job, root, 0);

  const id = job.ID;
  if (typeof id === "string" && id !== "") {
    if (id.includes(" ")) f.add([prefix, "ID"], "the job ID must not contain a space");
    else if (id.includes("\u0000")) f.add([prefix, "ID"], "the job ID must not contain NUL characters");
    else {
      const problem = jobIdProblem(id);
      if (problem !== undefined) f.add([prefix, "ID"], `the job ID ${problem}`);
    }
  }
  name(f, job, "Name", root, false, "the job name");

  const rawType = job.Type;
  if (typeof rawType === "string" && !JOB_TYPES.has(rawType)) {
    f.add([prefix, "Type"], 'must be "service", "batch", "system" or "sysbatch" (lowercase)');
  }
  // The server's default type.
  const type = typeof rawType === "string" && rawType !== "" ? rawType : "service";

  // 0 means "the server's default priority".
  integer(
    f,
    job,
    "Priority",
    root,
    0,
    MAX_PRIORITY,
    `must be a whole number from 1 to ${MAX_PRIORITY} (0 or unset: the scheduler's default)`,
  );

  const dcs = job.Datacenters;
  if (Array.isArray(dcs))
    dcs.forEach((dc, i) => {
      if (dc === "") f.add([prefix, "Datacenters", i], "a datacenter must not be empty");
    });

  for (const k of REFUSED_SERVER_FIELDS) {
    if (!isZero(job[k]))
      f.add(
        [prefix, k],
        `${k} is set by the scheduler when it dispatches a job; a register that sets it is refused, so remove it`,
      );
  }

  update(f, job.Update, [prefix, "Update"], false);

  const groups = job.TaskGroups;
  if (Array.isArray(groups) && groups.length > 0) {
    const seen = new Map<string, number>();
    for (let i = 0; i < groups.length; i++) taskGroup(f, groups[i], [prefix, "TaskGroups", i], type, seen, i);
  } else if (!present(groups) || Array.isArray(groups)) {
    f.add([prefix, "TaskGroups"], "a job needs at least one task group, each with at least one task");
  }

  const periodic = job.Periodic;
  if (isRecord(periodic) && periodic.Enabled !== false) {
    if (!BATCH_TYPES.has(type)) f.add([prefix, "Periodic"], 'only a "batch" or "sysbatch" job can be periodic');
    if (typeof periodic.Spec !== "string" || periodic.Spec.trim() === "")
      f.add([prefix, "Periodic", "Spec"], "a periodic job needs a Spec (a cron expression)");
  }
  const param = job.ParameterizedJob;
  if (isRecord(param)) {
    if (!BATCH_TYPES.has(type))
      f.add([prefix, "ParameterizedJob"], 'only a "batch" or "sysbatch" job can be parameterized');
    const payload = param.Payload;
    if (typeof payload === "string" && !PAYLOAD_RULES.has(payload))
      f.add([prefix, "ParameterizedJob", "Payload"], 'must be "optional", "required" or "forbidden"');
  }
  return f.list;
}
