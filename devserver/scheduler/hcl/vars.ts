// Input variables and locals of a jobspec: `variable "x" { type default validation }` and `variables {}`
// blocks, values from var-file text overriding defaults, `locals {}`, and the "Unset variable" rule
// (every declared variable needs a value, used or not), following the scheduler's HCL2 jobspec rules.

import { parseExpression, type Expr } from "./expr";
import { evaluateDeep, evaluateJsonString, type Scope } from "./eval";
import { type OutlineBlock, type OutlineItem, formatPos } from "./outline";
import { DiagnosticsError, EvalError, type HclObject, type HclValue, formatDiag, isObject, typeName } from "./values";

type VarType =
  | { readonly k: "any" | "string" | "number" | "bool" }
  | { readonly k: "list" | "set" | "map"; readonly elem: VarType }
  | { readonly k: "object"; readonly attrs: Readonly<Record<string, VarType>> }
  | { readonly k: "tuple"; readonly elems: readonly VarType[] };

interface Declared {
  readonly name: string;
  readonly type: VarType | undefined;
  readonly values: { readonly from: string; readonly value: HclValue }[];
  readonly validations: readonly { readonly condition: string; readonly message: string; readonly at: string }[];
}

class TypeError_ extends Error {}

const UNSET_DETAIL =
  "A used variable must be set or have a default value; see https://www.nomadproject.io/docs/job-specification/hcl2/variables for details.";

function typeFromExpr(e: Expr): VarType {
  if (e.t === "scope" && e.steps.length === 0) {
    if (e.root === "any" || e.root === "string" || e.root === "number" || e.root === "bool") return { k: e.root };
  }
  if (e.t === "call" && e.args.length === 1) {
    const arg = e.args[0] as Expr;
    if (e.name === "list" || e.name === "set" || e.name === "map") return { k: e.name, elem: typeFromExpr(arg) };
    if (e.name === "object" && arg.t === "object") {
      const attrs: Record<string, VarType> = {};
      for (const item of arg.items) {
        const key = item.key.t === "lit" ? String(item.key.value) : item.key.t === "scope" ? item.key.root : undefined;
        if (key === undefined) break;
        attrs[key] = typeFromExpr(item.value);
      }
      return { k: "object", attrs };
    }
    if (e.name === "tuple" && arg.t === "tuple") return { k: "tuple", elems: arg.items.map(typeFromExpr) };
  }
  throw new TypeError_(
    "A type specification is either a primitive type keyword (bool, number, string) or a complex type constructor call, like list(string).",
  );
}

function friendly(t: VarType): string {
  if (t.k === "list" || t.k === "set" || t.k === "map")
    return `${t.k} of ${t.elem.k === "any" ? "any single type" : friendly(t.elem)}`;
  return t.k;
}

/** Converts a value to a type constraint like cty's conversion does for the common cases. */
function convert(v: HclValue, t: VarType): HclValue {
  if (v === null || t.k === "any") return v;
  switch (t.k) {
    case "string":
      if (typeof v === "string") return v;
      if (typeof v === "number" || typeof v === "boolean") return String(v);
      throw new TypeError_("string required");
    case "number":
      if (typeof v === "number") return v;
      if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
      throw new TypeError_("a number is required");
    case "bool":
      if (typeof v === "boolean") return v;
      if (v === "true" || v === "false") return v === "true";
      throw new TypeError_("a bool is required");
    case "list":
    case "set":
      if (!Array.isArray(v)) throw new TypeError_(`${friendly(t)} required`);
      return v.map((x) => convert(x, t.elem));
    case "map": {
      if (!isObject(v)) throw new TypeError_(`${friendly(t)} required`);
      const out: HclObject = {};
      for (const k of Object.keys(v)) out[k] = convert(v[k] as HclValue, t.elem);
      return out;
    }
    case "object": {
      if (!isObject(v)) throw new TypeError_("object required");
      const out: HclObject = {};
      for (const k of Object.keys(t.attrs)) {
        if (!(k in v)) throw new TypeError_(`attribute "${k}" is required`);
        out[k] = convert(v[k] as HclValue, t.attrs[k] as VarType);
      }
      return out;
    }
    case "tuple":
      if (!Array.isArray(v) || v.length !== t.elems.length) throw new TypeError_(`tuple required, got ${typeName(v)}`);
      return v.map((x, i) => convert(x, t.elems[i] as VarType));
  }
}

/** Formats an evaluation failure; anything else is a bug and propagates. */
function evalDiag(e: unknown, subject: string | undefined): string {
  if (e instanceof EvalError) return formatDiag(subject, e.summary, e.detail);
  throw e;
}

function bodies(v: HclValue | undefined): HclObject[] {
  return Array.isArray(v) ? v.filter(isObject) : isObject(v) ? [v] : [];
}

function block(items: readonly OutlineItem[] | undefined, type: string, label?: string): OutlineBlock | undefined {
  return items?.find(
    (i): i is OutlineBlock => i.kind === "block" && i.type === type && (label === undefined || i.labels[0] === label),
  );
}

/** Collects the declared variables, applies var-file values and evaluates locals; returns the evaluation scope. */
export function resolveVariables(
  top: HclObject,
  items: readonly OutlineItem[] | undefined,
  varFile: HclObject | undefined,
  filename: string,
): Scope {
  const diags: string[] = [];
  const declared = new Map<string, Declared>();
  const at = (b: OutlineBlock | undefined, attr?: string): string | undefined => {
    const pos = attr === undefined ? b?.pos : b?.body.find((i) => i.kind === "attr" && i.name === attr)?.pos;
    return pos && formatPos(filename, pos);
  };

  const decls = isObject(top["variable"]) ? top["variable"] : {};
  for (const name of Object.keys(decls)) {
    const list = bodies(decls[name]);
    const outlineBlock = block(items, "variable", name);
    if (list.length > 1)
      diags.push(formatDiag(undefined, "Duplicate variable", `Duplicate ${name} variable definition found.`));
    const body = list[0] ?? {};
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)) {
      diags.push(
        formatDiag(
          at(outlineBlock),
          "Invalid variable name",
          "A name must start with a letter or underscore and may contain only letters, digits, underscores, and dashes.",
        ),
      );
    }
    for (const key of Object.keys(body)) {
      if (!["description", "default", "type", "validation"].includes(key)) {
        diags.push(
          formatDiag(at(outlineBlock, key), "Unsupported argument", `An argument named "${key}" is not expected here.`),
        );
      }
    }
    let type: VarType | undefined;
    const rawType = body["type"];
    if (typeof rawType === "string") {
      try {
        type = typeFromExpr(parseExpression(rawType.replace(/^\$\{([\s\S]*)\}$/, "$1")));
      } catch (e) {
        diags.push(
          formatDiag(
            at(outlineBlock, "type"),
            "Invalid type specification",
            e instanceof TypeError_ ? e.message : "The type expression could not be parsed.",
          ),
        );
      }
    }
    const values: { from: string; value: HclValue }[] = [];
    if ("default" in body) {
      try {
        const raw = evaluateDeep(body["default"] as HclValue, {});
        values.push({ from: "default", value: type ? convert(raw, type) : raw });
      } catch (e) {
        diags.push(
          e instanceof TypeError_
            ? formatDiag(
                at(outlineBlock, "default"),
                "Invalid default value for variable",
                `This default value is not compatible with the variable's type constraint: ${e.message}.`,
              )
            : evalDiag(e, at(outlineBlock, "default")),
        );
        values.push({ from: "default", value: null });
      }
    }
    const validations = bodies(body["validation"]).map((v) => ({
      condition: typeof v["condition"] === "string" ? v["condition"] : String(v["condition"]),
      message: typeof v["error_message"] === "string" ? v["error_message"] : "",
      at: at(block(outlineBlock?.body, "validation")) ?? "<nil>",
    }));
    declared.set(name, { name, type, values, validations });
  }
  for (const body of bodies(top["variables"])) {
    for (const name of Object.keys(body)) {
      if (declared.has(name))
        diags.push(formatDiag(undefined, "Duplicate variable", `Duplicate ${name} variable definition found.`));
      else
        declared.set(name, {
          name,
          type: undefined,
          values: [{ from: "default", value: evaluateDeep(body[name] as HclValue, {}) }],
          validations: [],
        });
    }
  }

  if (varFile) {
    if (isObject(varFile["variable"])) {
      for (const name of Object.keys(varFile["variable"])) {
        throw new DiagnosticsError([
          formatDiag(
            undefined,
            "Variable declaration in a .var file",
            `A .var file is used to assign values to variables that have already been declared in job files, not to declare new variables. To declare variable "${name}", place this block in one of your job files\n\nTo set a value for this variable in input.hcl, use the definition syntax instead:\n    ${name} = <value>`,
          ),
        ]);
      }
    }
    for (const name of Object.keys(varFile)) {
      const v = declared.get(name);
      // Values for undeclared variables are only a warning for the parse endpoint (it parses non-strictly).
      if (!v) continue;
      try {
        const raw = evaluateDeep(varFile[name] as HclValue, {});
        v.values.push({ from: "varfile", value: v.type ? convert(raw, v.type) : raw });
      } catch (e) {
        diags.push(
          e instanceof TypeError_
            ? formatDiag(
                undefined,
                "Invalid value for variable",
                `The value for ${name} is not compatible with the variable's type constraint: ${e.message}.`,
              )
            : evalDiag(e, undefined),
        );
        // The variable counts as set (to an unknown value), so no "Unset variable" follows.
        v.values.push({ from: "varfile", value: null });
      }
    }
  }

  const vars: HclObject = {};
  for (const v of declared.values()) {
    const last = v.values[v.values.length - 1];
    if (!last) {
      diags.push(formatDiag(undefined, `Unset variable "${v.name}"`, UNSET_DETAIL));
      continue;
    }
    vars[v.name] = last.value;
    for (const rule of v.validations) {
      let ok: HclValue;
      try {
        ok = evaluateJsonString(rule.condition, { var: { [v.name]: last.value } });
      } catch (e) {
        diags.push(evalDiag(e, rule.at));
        continue;
      }
      if (ok === false || ok === "false") {
        diags.push(
          formatDiag(
            rule.at,
            `Invalid value for ${last.from} variable`,
            `${rule.message}\n\nThis was checked by the validation rule at ${rule.at}.`,
          ),
        );
      }
    }
  }
  if (diags.length) throw new DiagnosticsError(diags);
  return { var: vars, local: evaluateLocals(top, items, vars, filename) };
}

/** Evaluates `locals {}` entries, retrying ones that depend on locals not evaluated yet. */
function evaluateLocals(
  top: HclObject,
  items: readonly OutlineItem[] | undefined,
  vars: HclObject,
  filename: string,
): HclObject {
  const local: HclObject = {};
  const pending: [string, HclValue][] = [];
  for (const body of bodies(top["locals"])) {
    for (const name of Object.keys(body)) {
      if (pending.some(([n]) => n === name)) {
        const pos = block(items, "locals")?.body.find((i) => i.kind === "attr" && i.name === name)?.pos;
        throw new DiagnosticsError([
          formatDiag(
            pos && formatPos(filename, pos),
            "Duplicate value in locals",
            `Duplicate ${name} definition found.`,
          ),
        ]);
      }
      pending.push([name, body[name] as HclValue]);
    }
  }
  let lastError: EvalError | undefined;
  while (pending.length) {
    let progressed = false;
    for (let i = 0; i < pending.length;) {
      const [name, raw] = pending[i] as [string, HclValue];
      try {
        local[name] = evaluateDeep(raw, { var: vars, local });
        pending.splice(i, 1);
        progressed = true;
      } catch (e) {
        if (!(e instanceof EvalError)) throw e;
        lastError = e;
        i++;
      }
    }
    if (!progressed)
      throw new DiagnosticsError([
        formatDiag(undefined, lastError?.summary ?? "Invalid local", lastError?.detail ?? ""),
      ]);
  }
  return local;
}
