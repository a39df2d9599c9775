// Evaluation of HCL2 expressions and templates the way the scheduler's jobspec parser does it:
// `var.*` and `local.*` resolve from the evaluation context, while any other root name (attr, node,
// meta, NOMAD_*, ...) is left in place as the literal text "${name...}" for the client to interpolate
// at run time (the real parser installs a hook that does exactly that for unknown variables).

import { type Expr, type Step, type Template, ExprSyntaxError, parseTemplate } from "./expr";
import { callFunction } from "./functions";
import { EvalError, type HclObject, type HclValue, isObject, stringify, typeName } from "./values";

/** Names visible to expressions: normally `var` and `local`, plus loop variables of `for`. */
export type Scope = Readonly<Record<string, HclValue>>;

function toNumber(v: HclValue): number {
  if (typeof v === "number") return v;
  if (typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v))) return Number(v);
  throw new EvalError("Invalid operand", "Unsuitable value for operand: a number is required.");
}

function toBool(v: HclValue): boolean {
  if (typeof v === "boolean") return v;
  if (v === "true" || v === "false") return v === "true";
  throw new EvalError("Invalid operand", "Unsuitable value for operand: a bool is required.");
}

function deepEqual(a: HclValue, b: HclValue): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i] as HclValue));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length && ka.every((k) => k in b && deepEqual(a[k] as HclValue, b[k] as HclValue))
    );
  }
  return false;
}

function applyStep(v: HclValue, step: Step, scope: Scope): HclValue {
  if (step.t === "attr") {
    if (isObject(v) && step.name in v) return v[step.name] as HclValue;
    if (isObject(v))
      throw new EvalError("Unsupported attribute", `This object does not have an attribute named "${step.name}".`);
    throw new EvalError("Unsupported attribute", `Can't access attributes on a ${typeName(v)} value.`);
  }
  const key = evaluate(step.key, scope);
  if (Array.isArray(v)) {
    const idx = toNumber(key);
    if (!Number.isInteger(idx) || idx < 0 || idx >= v.length) {
      throw new EvalError("Invalid index", "The given key does not identify an element in this collection value.");
    }
    return v[idx] as HclValue;
  }
  if (isObject(v)) {
    const k = stringify(key);
    if (!(k in v))
      throw new EvalError("Invalid index", "The given key does not identify an element in this collection value.");
    return v[k] as HclValue;
  }
  throw new EvalError("Invalid index", `This value does not have any indices.`);
}

function binary(op: string, l: HclValue, r: HclValue): HclValue {
  switch (op) {
    case "||":
      return toBool(l) || toBool(r);
    case "&&":
      return toBool(l) && toBool(r);
    case "==":
      return deepEqual(l, r);
    case "!=":
      return !deepEqual(l, r);
    case "<":
      return toNumber(l) < toNumber(r);
    case ">":
      return toNumber(l) > toNumber(r);
    case "<=":
      return toNumber(l) <= toNumber(r);
    case ">=":
      return toNumber(l) >= toNumber(r);
    case "+":
      return toNumber(l) + toNumber(r);
    case "-":
      return toNumber(l) - toNumber(r);
    case "*":
      return toNumber(l) * toNumber(r);
    case "/":
      return toNumber(l) / toNumber(r);
    case "%":
      return toNumber(l) % toNumber(r);
    default:
      throw new EvalError("Invalid operator", `Unsupported operator ${op}.`);
  }
}

function iterate(coll: HclValue): [HclValue, HclValue][] {
  if (Array.isArray(coll)) return coll.map((v, i) => [i, v]);
  if (isObject(coll)) return Object.keys(coll).map((k) => [k, coll[k] as HclValue]);
  throw new EvalError(
    "Iteration over non-iterable value",
    "A value of type " + typeName(coll) + " cannot be used as the collection in a 'for' expression.",
  );
}

/** Evaluates an expression in a scope. */
export function evaluate(e: Expr, scope: Scope): HclValue {
  switch (e.t) {
    case "lit":
      return e.value;
    case "tmpl":
      return renderTemplate(e.tmpl, scope);
    case "scope": {
      if (!(e.root in scope)) return "${" + e.src + "}";
      let v = scope[e.root] as HclValue;
      for (const step of e.steps) v = applyStep(v, step, scope);
      return v;
    }
    case "steps": {
      let v = evaluate(e.base, scope);
      for (const step of e.steps) v = applyStep(v, step, scope);
      return v;
    }
    case "splat": {
      const base = evaluate(e.base, scope);
      const items = base === null ? [] : Array.isArray(base) ? base : [base];
      return items.map((item) => e.steps.reduce<HclValue>((v, step) => applyStep(v, step, scope), item));
    }
    case "call":
      return callFunction(
        e.name,
        e.args.map((a) => evaluate(a, scope)),
        e.expand,
      );
    case "tuple":
      return e.items.map((x) => evaluate(x, scope));
    case "object": {
      const out: HclObject = {};
      for (const item of e.items) out[stringify(evaluate(item.key, scope))] = evaluate(item.value, scope);
      return out;
    }
    case "unary":
      return e.op === "-" ? -toNumber(evaluate(e.x, scope)) : !toBool(evaluate(e.x, scope));
    case "binary":
      return binary(e.op, evaluate(e.l, scope), evaluate(e.r, scope));
    case "cond":
      return toBool(evaluate(e.c, scope)) ? evaluate(e.a, scope) : evaluate(e.b, scope);
    case "for": {
      const list: HclValue[] = [];
      const obj: HclObject = {};
      for (const [k, v] of iterate(evaluate(e.coll, scope))) {
        const inner: Scope = { ...scope, [e.value]: v, ...(e.key === undefined ? {} : { [e.key]: k }) };
        if (e.cond && !toBool(evaluate(e.cond, inner))) continue;
        if (e.obj && e.keyExpr) obj[stringify(evaluate(e.keyExpr, inner))] = evaluate(e.valExpr, inner);
        else list.push(evaluate(e.valExpr, inner));
      }
      return e.obj ? obj : list;
    }
  }
}

/** Renders a template; a template that is a single interpolation keeps its value's type (HCL's template unwrapping). */
export function renderTemplate(tmpl: Template, scope: Scope): HclValue {
  const only = tmpl.parts.length === 1 ? tmpl.parts[0] : undefined;
  if (only && only.t === "interp") return evaluate(only.expr, scope);
  let out = "";
  for (const part of tmpl.parts) {
    if (part.t === "text") out += part.text;
    else if (part.t === "interp") out += stringify(evaluate(part.expr, scope));
    else if (part.t === "if")
      out += stringify(renderTemplate(toBool(evaluate(part.cond, scope)) ? part.then : part.else, scope));
    else {
      for (const [k, v] of iterate(evaluate(part.coll, scope))) {
        const inner: Scope = { ...scope, [part.value]: v, ...(part.key === undefined ? {} : { [part.key]: k }) };
        out += stringify(renderTemplate(part.body, inner));
      }
    }
  }
  return out;
}

/** Evaluates one string from the parser's JSON form (a template in HCL's JSON syntax). */
export function evaluateJsonString(text: string, scope: Scope): HclValue {
  if (!text.includes("${") && !text.includes("%{")) return text;
  let tmpl: Template;
  try {
    tmpl = parseTemplate(text, false);
  } catch (e) {
    if (e instanceof ExprSyntaxError)
      throw new EvalError("Unsupported expression", `This expression is not supported: ${text}`);
    throw e;
  }
  return renderTemplate(tmpl, scope);
}

/** Evaluates every string of a value from the parser's JSON form, recursively. */
export function evaluateDeep(v: HclValue, scope: Scope): HclValue {
  if (typeof v === "string") return evaluateJsonString(v, scope);
  if (Array.isArray(v)) return v.map((x) => evaluateDeep(x, scope));
  if (isObject(v)) {
    const out: HclObject = {};
    for (const k of Object.keys(v)) out[k] = evaluateDeep(v[k] as HclValue, scope);
    return out;
  }
  return v;
}
