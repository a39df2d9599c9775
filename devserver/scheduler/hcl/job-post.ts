// Normalisations the real jobspec decoder applies after decoding a block: constraint and affinity
// shorthands (Operand "=" by default), static ports moved to ReservedPorts, template, change_script and
// vault defaults, periodic SpecType, scaling policy types, and vault blocks inherited by tasks.

import type { PostStep } from "./job-schema";
import { formatDiag } from "./values";

type Out = Record<string, unknown>;

/** Where post steps report problems. */
export interface PostContext {
  readonly diags: string[];
}

const DURATION_5S = 5_000_000_000;

function withDefaults(out: Out, defaults: Out): Out {
  const r = { ...out };
  for (const [k, v] of Object.entries(defaults)) if (!(k in r)) r[k] = v;
  return r;
}

function shorthand(out: Out, names: readonly string[]): Out {
  let operand = typeof out["operator"] === "string" ? out["operator"] : "";
  let r = typeof out["value"] === "string" ? out["value"] : "";
  for (const n of names) {
    if (typeof out[n] === "string" && out[n] !== "") {
      operand = n;
      r = out[n] as string;
    }
  }
  return { LTarget: typeof out["attribute"] === "string" ? out["attribute"] : "", RTarget: r, Operand: operand };
}

/** Post-decode steps by name (see BlockSpec.post). */
export const POST: Readonly<Record<PostStep, (out: Out, ctx: PostContext) => Out>> = {
  constraint: (out) => {
    const c = shorthand(out, ["version", "semver", "regexp", "set_contains"]);
    if (out["distinct_hosts"] === true) c["Operand"] = "distinct_hosts";
    if (typeof out["distinct_property"] === "string" && out["distinct_property"] !== "") {
      c["Operand"] = "distinct_property";
      c["LTarget"] = out["distinct_property"];
    }
    if (c["Operand"] === "") c["Operand"] = "=";
    return c;
  },
  affinity: (out) => {
    const a = shorthand(out, ["version", "semver", "regexp", "set_contains_any", "set_contains_all", "set_contains"]);
    if (a["Operand"] === "") a["Operand"] = "=";
    if (typeof out["weight"] === "number") a["Weight"] = out["weight"];
    return a;
  },
  network: (out) => {
    const ports = out["DynamicPorts"] as Out[] | undefined;
    if (!ports?.length) return out;
    const full = ports.map((p) => ({
      Label: p["Label"],
      Value: p["Value"] ?? 0,
      To: p["To"] ?? 0,
      HostNetwork: p["HostNetwork"] ?? "",
      ...p,
    }));
    const reserved = full.filter((p) => (p.Value as number) > 0);
    const dynamic = full.filter((p) => !((p.Value as number) > 0));
    const { DynamicPorts: _d, ReservedPorts: _r, ...rest } = out;
    return {
      ...rest,
      ...(reserved.length ? { ReservedPorts: reserved } : {}),
      ...(dynamic.length ? { DynamicPorts: dynamic } : {}),
    };
  },
  template: (out) =>
    withDefaults(out, { ChangeMode: "restart", Perms: "0644", Splay: DURATION_5S, ErrMissingKey: false }),
  changeScript: (out) => withDefaults(out, { Args: [], Timeout: DURATION_5S, FailOnError: false }),
  secrets: (out) => withDefaults(out, { Env: true, ChangeMode: "restart" }),
  periodic: (out) => ("Spec" in out || "Specs" in out ? { ...out, SpecType: "cron" } : out),
  groupScaling: (out) => ({ ...out, Type: out["Type"] ?? "horizontal" }),
  taskScaling: (out, ctx) => {
    const { Name: label, ...rest } = out;
    const type = label === "cpu" ? "vertical_cpu" : label === "mem" ? "vertical_mem" : undefined;
    if (!type)
      ctx.diags.push(
        formatDiag(undefined, "Invalid scaling policy name", 'scaling policy name must be "cpu" or "mem"'),
      );
    else if (rest["Type"] !== undefined && rest["Type"] !== type) {
      ctx.diags.push(
        formatDiag(
          undefined,
          "Invalid scaling policy type",
          `Invalid policy type, expected "${String(rest["Type"])}" but found "${type}"`,
        ),
      );
    }
    return { ...rest, Type: type ?? rest["Type"] };
  },
  group: (out) => inheritSecrets(out, out["Secrets"]),
};

/** Gives tasks without their own vault block the enclosing one; the enclosing struct has no such field. */
export function inheritSecrets(holder: Out, secrets: unknown): Out {
  const { Secrets: _s, ...rest } = holder;
  if (secrets === undefined) return rest;
  const tasks = rest["Tasks"] as Out[] | undefined;
  if (tasks) rest["Tasks"] = tasks.map((t) => ("Secrets" in t ? t : { ...t, Secrets: secrets }));
  return rest;
}
