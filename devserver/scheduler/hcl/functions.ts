// The commonly used part of the jobspec function library (the real one is the HCL/cty standard library).
// File-system functions are absent on purpose: the parse endpoint runs with file access disabled.

import { budget } from "./budget";
import { EvalError, type HclObject, type HclValue, isObject, stringify } from "./values";

type Fn = (args: HclValue[]) => HclValue;

function str(v: HclValue | undefined): string {
  if (v === undefined) throw new EvalError("Not enough function arguments", "Function requires more arguments.");
  return stringify(v);
}

function num(v: HclValue | undefined): number {
  const n = typeof v === "number" ? v : typeof v === "string" && v.trim() !== "" ? Number(v) : NaN;
  if (Number.isNaN(n))
    throw new EvalError("Invalid function argument", "Invalid value for argument: a number is required.");
  return n;
}

function list(v: HclValue | undefined): HclValue[] {
  if (Array.isArray(v)) return v;
  throw new EvalError("Invalid function argument", "Invalid value for argument: list of any single type required.");
}

function obj(v: HclValue | undefined): HclObject {
  if (isObject(v)) return v;
  throw new EvalError("Invalid function argument", "Invalid value for argument: map of any single type required.");
}

function format(args: HclValue[]): string {
  const [spec, ...rest] = args;
  let n = 0;
  const text = str(spec);
  let length = text.length;
  return text.replace(/%([%sdvqft])/g, (_m, verb: string) => {
    const piece = verb === "%" ? "%" : formatOne(verb, rest[n++]);
    length += piece.length;
    budget().stringLength(length);
    return piece;
  });
}

function formatOne(verb: string, v: HclValue | undefined): string {
  if (v === undefined)
    throw new EvalError("Error in function call", 'Call to function "format" failed: not enough arguments.');
  if (verb === "d") return String(Math.trunc(num(v)));
  if (verb === "q") return JSON.stringify(str(v));
  if (verb === "v" && typeof v !== "string") return JSON.stringify(v);
  return str(v);
}

/** Values without repeats, first occurrence kept (equality by value). */
function unique(xs: HclValue[]): HclValue[] {
  const seen = new Set<string>();
  return xs.filter((x) => {
    const key = JSON.stringify(x);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** The numbers `range` yields, refused up front when there would be more than one value may hold. */
function range(a: HclValue[]): number[] {
  const [start, limit, step] =
    a.length === 1 ? [0, num(a[0]), 1] : [num(a[0]), num(a[1]), a[2] === undefined ? 1 : num(a[2])];
  if (step === 0 && start !== limit)
    throw new EvalError(
      "Error in function call",
      'Call to function "range" failed: step must not be zero, because that would lead to an infinite loop.',
    );
  const count = step === 0 ? 0 : Math.max(0, Math.ceil((limit - start) / step));
  budget().valueSize(count + 1);
  budget().step(count);
  const out: number[] = [];
  for (let i = 0; i < count; i++) out.push(start + i * step);
  return out;
}

function replace(v: string, from: string, to: string): string {
  const parts = v.split(from);
  budget().stringLength(v.length + (parts.length - 1) * (to.length - from.length));
  return parts.join(to);
}

function join(sep: string, lists: HclValue[]): string {
  const items = lists.flatMap((l) => list(l).map(str));
  budget().stringLength(items.reduce((n, x) => n + x.length, 0) + sep.length * Math.max(0, items.length - 1));
  return items.join(sep);
}

const FUNCTIONS: Readonly<Record<string, Fn>> = {
  abs: ([v]) => Math.abs(num(v)),
  ceil: ([v]) => Math.ceil(num(v)),
  floor: ([v]) => Math.floor(num(v)),
  max: (a) => a.map(num).reduce((m, x) => Math.max(m, x), -Infinity),
  min: (a) => a.map(num).reduce((m, x) => Math.min(m, x), Infinity),
  parseint: ([v, base]) => parseInt(str(v), num(base)),
  upper: ([v]) => str(v).toUpperCase(),
  lower: ([v]) => str(v).toLowerCase(),
  title: ([v]) => str(v).replace(/\b\w/g, (c) => c.toUpperCase()),
  trimspace: ([v]) => str(v).trim(),
  // trailing newline sequences (\n, \r\n, \r) in one backward pass; a regex here was quadratic on many newlines
  chomp: ([v]) => {
    const s = str(v);
    let end = s.length;
    while (end > 0 && (s[end - 1] === "\n" || s[end - 1] === "\r")) end--;
    return s.slice(0, end);
  },
  trimprefix: ([v, p]) => (str(v).startsWith(str(p)) ? str(v).slice(str(p).length) : str(v)),
  trimsuffix: ([v, s]) => (str(s) && str(v).endsWith(str(s)) ? str(v).slice(0, -str(s).length) : str(v)),
  startswith: ([v, p]) => str(v).startsWith(str(p)),
  endswith: ([v, s]) => str(v).endsWith(str(s)),
  strrev: ([v]) => Array.from(str(v)).reverse().join(""),
  substr: ([v, off, len]) => {
    const chars = Array.from(str(v));
    const start = num(off) < 0 ? chars.length + num(off) : num(off);
    return chars.slice(start, num(len) < 0 ? undefined : start + num(len)).join("");
  },
  replace: ([v, from, to]) => replace(str(v), str(from), str(to)),
  split: ([sep, v]) => str(v).split(str(sep)),
  join: ([sep, ...lists]) => join(str(sep), lists),
  format: (a) => format(a),
  formatlist: ([spec, ...rest]) => {
    const n = Math.max(0, ...rest.filter(Array.isArray).map((l) => l.length));
    let size = 1;
    return Array.from({ length: n }, (_x, i) => {
      const line = format([spec ?? "", ...rest.map((r) => (Array.isArray(r) ? (r[i] ?? null) : r))]);
      size += 1 + line.length;
      budget().valueSize(size);
      return line;
    });
  },
  length: ([v]) => (Array.isArray(v) ? v.length : isObject(v) ? Object.keys(v).length : Array.from(str(v)).length),
  concat: (a) => {
    budget().valueSize(a.reduce<number>((n, l) => n + list(l).length, 1));
    return a.flatMap((l) => list(l));
  },
  contains: ([l, v]) => list(l).some((x) => JSON.stringify(x) === JSON.stringify(v)),
  element: ([l, i]) => {
    const xs = list(l);
    if (!xs.length)
      throw new EvalError(
        "Error in function call",
        'Call to function "element" failed: cannot use element function with an empty list.',
      );
    return xs[((num(i) % xs.length) + xs.length) % xs.length] as HclValue;
  },
  index: ([l, v]) => list(l).findIndex((x) => JSON.stringify(x) === JSON.stringify(v)),
  distinct: ([l]) => unique(list(l)),
  compact: ([l]) => list(l).filter((x) => x !== null && x !== ""),
  flatten: ([l]) => {
    const flat = (xs: HclValue[]): HclValue[] => xs.flatMap((x) => (Array.isArray(x) ? flat(x) : [x]));
    return flat(list(l));
  },
  reverse: ([l]) => [...list(l)].reverse(),
  sort: ([l]) => list(l).map(str).sort(),
  slice: ([l, from, to]) => list(l).slice(num(from), num(to)),
  range: (a) => range(a),
  keys: ([m]) => Object.keys(obj(m)).sort(),
  values: ([m]) =>
    Object.keys(obj(m))
      .sort()
      .map((k) => obj(m)[k] as HclValue),
  lookup: ([m, k, d]) => {
    const o = obj(m);
    if (str(k) in o) return o[str(k)] as HclValue;
    if (d === undefined)
      throw new EvalError(
        "Error in function call",
        `Call to function "lookup" failed: lookup failed to find key ${JSON.stringify(str(k))}.`,
      );
    return d;
  },
  merge: (a) => Object.assign({}, ...a.filter((x) => x !== null).map(obj)) as HclObject,
  zipmap: ([ks, vs]) => Object.fromEntries(list(ks).map((k, i) => [str(k), list(vs)[i] ?? null])) as HclObject,
  coalesce: (a) => {
    const v = a.find((x) => x !== null && x !== "");
    if (v === undefined)
      throw new EvalError(
        "Error in function call",
        'Call to function "coalesce" failed: no non-null, non-empty-string arguments.',
      );
    return v;
  },
  coalescelist: (a) => a.find((x) => Array.isArray(x) && x.length > 0) ?? [],
  tostring: ([v]) => (v === null ? null : str(v)),
  tonumber: ([v]) => (v === null ? null : num(v)),
  tobool: ([v]) =>
    v === null || typeof v === "boolean"
      ? (v ?? null)
      : str(v) === "true"
        ? true
        : str(v) === "false"
          ? false
          : num(NaN),
  tolist: ([v]) => list(v),
  toset: ([v]) => unique(list(v)),
  tomap: ([v]) => obj(v),
  jsonencode: ([v]) => JSON.stringify(v ?? null),
  jsondecode: ([v]) => JSON.parse(str(v)) as HclValue,
  base64encode: ([v]) => Buffer.from(str(v), "utf8").toString("base64"),
  base64decode: ([v]) => Buffer.from(str(v), "base64").toString("utf8"),
  urlencode: ([v]) => encodeURIComponent(str(v)),
};

/** Calls a library function by name; `expand` spreads the last argument (`f(xs...)`). */
export function callFunction(name: string, args: HclValue[], expand: boolean): HclValue {
  const fn = FUNCTIONS[name];
  if (!fn) throw new EvalError("Call to unknown function", `There is no function named "${name}".`);
  const last = args[args.length - 1];
  const actual = expand && Array.isArray(last) ? [...args.slice(0, -1), ...last] : args;
  for (const arg of actual) budget().work(arg);
  return fn(actual);
}
