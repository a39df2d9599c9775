/**
 * The hand-written part of the Job class (its class is generated into ./generated/job.ts): which of a Job's
 * sources are secret. The provider host gets secrets unwrapped and needs this to keep their values out of the
 * plan it shows (provider/resources/job/secrets.ts); the class sends it as the input `__secretInputs`
 * (`sdkComputed` in provider/resources/definitions/job.ts), left out when nothing is secret. Its name starts
 * with `__`, so the engine leaves it out of previews and diffs (the user never wrote it).
 */
import * as pulumi from "@pulumi/pulumi";
import type { JobArgs } from "./generated/job";

/**
 * Resolves to the names of the secret sources of a Job (`jobspec`, `job`, `variables`, `variables.<name>`
 * for one secret value of a plain variables map; `triggers`, `triggers.<key>` likewise), or undefined when
 * none is secret. The names hold no value, so they are not secret themselves. A source whose secretness
 * cannot be read counts as secret.
 */
export async function secretInputsOf(
  args: Pick<JobArgs, "jobspec" | "job" | "variables" | "triggers">,
): Promise<string[] | undefined> {
  const names: string[] = [];
  if (args.jobspec !== undefined && (await isSecretInput(args.jobspec))) names.push("jobspec");
  if (args.job !== undefined && (await isSecretInput(args.job))) names.push("job");
  names.push(...(await secretMapNames("variables", args.variables)));
  names.push(...(await secretMapNames("triggers", args.triggers)));
  return names.length > 0 ? names : undefined;
}

/** The secret names of a map input: `<name>.<key>` per secret value of a plain map, `<name>` for a secret whole. */
async function secretMapNames(name: string, map: unknown): Promise<string[]> {
  if (map === undefined || map === null) return [];
  if (!isPlainMap(map)) return (await isSecretInput(map)) ? [name] : [];
  const out: string[] = [];
  for (const key of Object.keys(map).sort()) if (await isSecretInput(map[key])) out.push(`${name}.${key}`);
  return out;
}

async function isSecretInput(v: unknown): Promise<boolean> {
  if (v === undefined || v === null) return false;
  // A plain value (no Output or promise anywhere inside) is never secret: no output is built for it.
  if (isPlainValue(v)) return false;
  try {
    return await pulumi.isSecret(pulumi.output(v));
  } catch {
    return true;
  }
}

/**
 * True when `v` holds no Output and no promise at any depth (strings, numbers, plain objects and arrays).
 * Deeper than any job (or a cycle): false, and the slow check decides.
 */
function isPlainValue(v: unknown, depth = 0): boolean {
  if (v === null || typeof v !== "object") return typeof v !== "function";
  if (depth > 64) return false;
  if (Array.isArray(v)) return v.every((x) => isPlainValue(x, depth + 1));
  const proto: unknown = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(v).every((x) => isPlainValue(x, depth + 1));
}

function isPlainMap(v: unknown): v is Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v) || pulumi.Output.isInstance(v)) return false;
  if (typeof (v as { then?: unknown }).then === "function") return false;
  const proto: unknown = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
