// Evaluation of HCL2 expressions and templates the way the scheduler's jobspec parser does it:
// `var.*` and `local.*` resolve from the evaluation context, while any other root name (attr, node,
// meta, NOMAD_*, ...) is left in place as the literal text "${name...}" for the client to interpolate
// at run time (the real parser installs a hook that does exactly that for unknown variables).

import { type Budget, budget, withBudget } from "./budget";
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

function deepEqual(a: HclValue, b: HclValue, bg: Budget): boolean {
  bg.step();
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i] as HclValue, bg));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a);
    return (
      ka.length === Object.keys(b).length &&
      ka.every((k) => k in b && deepEqual(a[k] as HclValue, b[k] as HclValue, bg))
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
  const key = ev(step.key, scope);
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

function binary(op: string, l: HclValue, r: HclValue, bg: Budget): HclValue {
  switch (op) {
    case "||":
      return toBool(l) || toBool(r);
    case "&&":
      return toBool(l) && toBool(r);
    case "==":
      return deepEqual(l, r, bg);
    case "!=":
      return !deepEqual(l, r, bg);
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

function ev(e: Expr, scope: Scope): HclValue {
  const bg = budget();
  bg.step();
  return bg.nest(() => evalNode(e, scope, bg));
}

function evalNode(e: Expr, scope: Scope, bg: Budget): HclValue {
  switch (e.t) {
    case "lit":
      return e.value;
    case "tmpl":
      return render(e.tmpl, scope, bg);
    case "scope": {
      const found = lookup(scope, e.root);
      if (!found) return "${" + e.src + "}";
      let v = found.value;
      for (const step of e.steps) v = applyStep(v, step, scope);
      return v;
    }
    case "steps": {
      let v = ev(e.base, scope);
      for (const step of e.steps) v = applyStep(v, step, scope);
      return v;
    }
    case "splat": {
      const base = ev(e.base, scope);
      const items = base === null ? [] : Array.isArray(base) ? base : [base];
      bg.step(items.length * (1 + e.steps.length));
      return sized(
        items.map((item) => e.steps.reduce<HclValue>((v, step) => applyStep(v, step, scope), item)),
        bg,
      );
    }
    case "call": {
      const result = callFunction(
        e.name,
        e.args.map((a) => ev(a, scope)),
        e.expand,
      );
      bg.work(result);
      return sized(result, bg);
    }
    case "tuple":
      return sized(
        e.items.map((x) => ev(x, scope)),
        bg,
      );
    case "object": {
      const out: HclObject = {};
      for (const item of e.items) out[stringify(ev(item.key, scope))] = ev(item.value, scope);
      return sized(out, bg);
    }
    case "unary":
      return e.op === "-" ? -toNumber(ev(e.x, scope)) : !toBool(ev(e.x, scope));
    case "binary":
      return binary(e.op, ev(e.l, scope), ev(e.r, scope), bg);
    case "cond":
      return toBool(ev(e.c, scope)) ? ev(e.a, scope) : ev(e.b, scope);
    case "for": {
      const list: HclValue[] = [];
      const obj: HclObject = {};
      // sizes add up as the result grows, so an oversized result stops before it is built
      let size = 1;
      let depth = 0;
      for (const [k, v] of iterate(ev(e.coll, scope))) {
        bg.step();
        const inner = loopScope(scope, e.value, v, e.key, k);
        if (e.cond && !toBool(ev(e.cond, inner))) continue;
        const key = e.obj && e.keyExpr ? stringify(ev(e.keyExpr, inner)) : undefined;
        const item = ev(e.valExpr, inner);
        size += bg.size(item) + (key === undefined ? 0 : key.length);
        depth = Math.max(depth, bg.depthOf(item) + 1);
        bg.valueSize(size);
        if (key !== undefined) obj[key] = item;
        else list.push(item);
      }
      const out = e.obj ? obj : list;
      bg.built(out, size, depth);
      return out;
    }
  }
}

/** Finds a name in a scope or the scopes it extends (never in Object.prototype). */
function lookup(scope: Scope, name: string): { value: HclValue } | undefined {
  for (
    let s: object | null = scope;
    s !== null && s !== Object.prototype;
    s = Object.getPrototypeOf(s) as object | null
  ) {
    if (Object.hasOwn(s, name)) return { value: (s as Record<string, HclValue>)[name] as HclValue };
  }
  return undefined;
}

/** The scope of one loop iteration: the outer names (through the prototype, not copied) plus the loop's own. */
function loopScope(outer: Scope, value: string, v: HclValue, key: string | undefined, k: HclValue): Scope {
  const inner = Object.create(outer) as Record<string, HclValue>;
  inner[value] = v;
  if (key !== undefined) inner[key] = k;
  return inner;
}

function sized(v: HclValue, bg: Budget): HclValue {
  bg.size(v);
  return v;
}

/** Renders a template; a template that is a single interpolation keeps its value's type (HCL's template unwrapping). */
function render(tmpl: Template, scope: Scope, bg: Budget): HclValue {
  const only = tmpl.parts.length === 1 ? tmpl.parts[0] : undefined;
  if (only && only.t === "interp") return ev(only.expr, scope);
  let out = "";
  const add = (text: string): void => {
    bg.stringLength(out.length + text.length);
    out += text;
  };
  for (const part of tmpl.parts) {
    if (part.t === "text") add(part.text);
    else if (part.t === "interp") add(stringify(ev(part.expr, scope)));
    else if (part.t === "if") add(stringify(render(toBool(ev(part.cond, scope)) ? part.then : part.else, scope, bg)));
    else {
      for (const [k, v] of iterate(ev(part.coll, scope))) {
        bg.step();
        const inner = loopScope(scope, part.value, v, part.key, k);
        add(stringify(render(part.body, inner, bg)));
      }
    }
  }
  return out;
}

/** Evaluates one string from the parser's JSON form (a template in HCL's JSON syntax). */
export function evaluateJsonString(text: string, scope: Scope): HclValue {
  return withBudget(() => {
    const bg = budget();
    const v = jsonString(text, scope, bg);
    bg.output(v);
    return v;
  });
}

function jsonString(text: string, scope: Scope, bg: Budget): HclValue {
  if (!text.includes("${") && !text.includes("%{")) return text;
  let tmpl: Template;
  try {
    tmpl = parseTemplate(text, false);
  } catch (e) {
    if (e instanceof ExprSyntaxError)
      throw new EvalError("Unsupported expression", `This expression is not supported: ${text}`);
    throw e;
  }
  return render(tmpl, scope, bg);
}

/** Evaluates every string of a value from the parser's JSON form, recursively. */
export function evaluateDeep(v: HclValue, scope: Scope): HclValue {
  return withBudget(() => deep(v, scope, budget()));
}

function deep(v: HclValue, scope: Scope, bg: Budget): HclValue {
  if (typeof v === "string") return evaluateJsonString(v, scope);
  if (Array.isArray(v)) return bg.nest(() => v.map((x) => deep(x, scope, bg)));
  if (isObject(v)) {
    return bg.nest(() => {
      const out: HclObject = {};
      for (const k of Object.keys(v)) out[k] = deep(v[k] as HclValue, scope, bg);
      return out;
    });
  }
  return v;
}
