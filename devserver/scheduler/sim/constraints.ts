// Placement constraints of the fake node pool: which nodes a task group's job, group and task constraints
// let through, and the key the real scheduler counts a filtered node under in `ConstraintFiltered`
// ("<LTarget> <Operand> <RTarget>"). A node is filtered by the first constraint it fails (job level, then
// group, then task), as the real feasibility checks run in that order. Node attributes known here:
// `${node.unique.id}`, `${node.unique.name}`, `${node.datacenter}`, `${node.pool}`, `${node.class}`,
// `${attr.unique.hostname}`, `${attr.kernel.name}` (linux), `${attr.cpu.arch}` (amd64); anything else is
// unset. `distinct_hosts`, `distinct_property` and `version`/`semver` are not simulated (always met).
import { RE2JS } from "re2js";
import { objs, str, type JsonObject } from "../state/json";
import type { Node } from "./types";

/** One constraint as a job holds it. */
export interface Constraint {
  readonly LTarget: string;
  readonly RTarget: string;
  readonly Operand: string;
}

/** Returns the constraints that apply to one group's allocations: the job's, the group's, then its tasks'. */
export function groupConstraints(job: JsonObject, group: JsonObject): Constraint[] {
  const all = [
    ...objs(job, "Constraints"),
    ...objs(group, "Constraints"),
    ...objs(group, "Tasks").flatMap((t) => objs(t, "Constraints")),
  ];
  return all.map((c) => ({
    LTarget: str(c, "LTarget"),
    RTarget: str(c, "RTarget"),
    Operand: str(c, "Operand") || "=",
  }));
}

/** The key a constraint is counted under in `ConstraintFiltered`. */
export function constraintKey(c: Constraint): string {
  return `${c.LTarget} ${c.Operand} ${c.RTarget}`;
}

/** Returns the first constraint `node` fails, or undefined when it meets them all. */
export function firstFailed(node: Node, constraints: readonly Constraint[]): Constraint | undefined {
  return constraints.find((c) => !meets(node, c));
}

function resolve(node: Node, target: string): string | undefined {
  const m = /^\$\{(.+)\}$/.exec(target.trim());
  if (m === null) return target;
  switch (m[1]) {
    case "node.unique.id":
      return node.ID;
    case "node.unique.name":
    case "attr.unique.hostname":
      return node.Name;
    case "node.datacenter":
      return node.Datacenter;
    case "node.pool":
      return node.NodePool;
    case "node.class":
      return "";
    case "attr.kernel.name":
      return "linux";
    case "attr.cpu.arch":
      return "amd64";
    default:
      return undefined;
  }
}

function meets(node: Node, c: Constraint): boolean {
  switch (c.Operand) {
    case "distinct_hosts":
    case "distinct_property":
    case "version":
    case "semver":
      return true;
    default:
      break;
  }
  const l = resolve(node, c.LTarget);
  const r = resolve(node, c.RTarget);
  const both = l !== undefined && r !== undefined;
  switch (c.Operand) {
    case "=":
    case "==":
    case "is":
      return both && l === r;
    case "!=":
    case "not":
      return l !== r;
    case "<":
      return both && l < r;
    case "<=":
      return both && l <= r;
    case ">":
      return both && l > r;
    case ">=":
      return both && l >= r;
    case "is_set":
      return l !== undefined;
    case "is_not_set":
      return l === undefined;
    case "regexp":
      try {
        // RE2 syntax and linear-time matching, as the real scheduler's Go regexp package gives.
        return both && RE2JS.compile(r).test(l);
      } catch {
        return false;
      }
    case "set_contains":
    case "set_contains_all":
      return both && items(r).every((x) => items(l).includes(x));
    case "set_contains_any":
      return both && items(r).some((x) => items(l).includes(x));
    default:
      return false;
  }
}

function items(s: string): string[] {
  return s
    .split(",")
    .map((x) => x.trim())
    .filter((x) => x !== "");
}
