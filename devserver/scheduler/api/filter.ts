// A subset of the scheduler's filter expression language (`?filter=`), evaluated against the full job
// record: selectors (`Name`, `Meta.k`, `Meta["k.with.dots"]`; lists are reached only through
// `contains`/`in`), the operators ==, !=, contains, not contains, in, not in, matches, not matches,
// is empty, is not empty, combined with and / or / not and parentheses.
import { RE2JS } from "re2js";
import { isObject, type Json } from "../state/json";

type Token = { kind: "str" | "num" | "word" | "op" | "lp" | "rp" | "dot" | "lb" | "rb"; text: string };

type Expr =
  | { kind: "and" | "or"; left: Expr; right: Expr }
  | { kind: "not"; inner: Expr }
  | { kind: "match"; op: string; selector: string[]; value?: string };

/** Error raised for an invalid filter; its message is shown to the client. */
export class FilterError extends Error {}

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i] as string;
    if (/\s/.test(c)) {
      i++;
    } else if (c === '"' || c === "`") {
      let j = i + 1;
      let text = "";
      while (j < src.length && src[j] !== c) {
        if (c === '"' && src[j] === "\\" && j + 1 < src.length) {
          text += src[j + 1];
          j += 2;
        } else {
          text += src[j];
          j++;
        }
      }
      if (j >= src.length) throw new FilterError(`unterminated string at position ${i}`);
      out.push({ kind: "str", text });
      i = j + 1;
    } else if (src.startsWith("==", i) || src.startsWith("!=", i)) {
      out.push({ kind: "op", text: src.slice(i, i + 2) });
      i += 2;
    } else if (c === "(") {
      out.push({ kind: "lp", text: c });
      i++;
    } else if (c === ")") {
      out.push({ kind: "rp", text: c });
      i++;
    } else if (c === ".") {
      out.push({ kind: "dot", text: c });
      i++;
    } else if (c === "[") {
      out.push({ kind: "lb", text: c });
      i++;
    } else if (c === "]") {
      out.push({ kind: "rb", text: c });
      i++;
    } else if (/[-0-9]/.test(c) && /[0-9]/.test(src[i + 1] ?? c)) {
      const m = /^-?[0-9]+(\.[0-9]+)?/.exec(src.slice(i));
      const text = m ? m[0] : c;
      out.push({ kind: "num", text });
      i += text.length;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_-]*/.exec(src.slice(i));
      const text = m ? m[0] : c;
      out.push({ kind: "word", text });
      i += text.length;
    } else {
      throw new FilterError(`unexpected character ${JSON.stringify(c)} at position ${i}`);
    }
  }
  return out;
}

class Parser {
  private i = 0;
  constructor(private readonly t: Token[]) {}

  private peek(): Token | undefined {
    return this.t[this.i];
  }

  private word(w: string): boolean {
    const p = this.peek();
    if (p?.kind === "word" && p.text === w) {
      this.i++;
      return true;
    }
    return false;
  }

  parse(): Expr {
    const e = this.or();
    if (this.i < this.t.length) throw new FilterError(`unexpected ${JSON.stringify(this.t[this.i]?.text)}`);
    return e;
  }

  private or(): Expr {
    let left = this.and();
    while (this.word("or")) left = { kind: "or", left, right: this.and() };
    return left;
  }

  private and(): Expr {
    let left = this.not();
    while (this.word("and")) left = { kind: "and", left, right: this.not() };
    return left;
  }

  private not(): Expr {
    if (this.word("not")) return { kind: "not", inner: this.not() };
    const p = this.peek();
    if (p?.kind === "lp") {
      this.i++;
      const e = this.or();
      if (this.peek()?.kind !== "rp") throw new FilterError("missing closing parenthesis");
      this.i++;
      return e;
    }
    return this.match();
  }

  private value(): string {
    const p = this.peek();
    if (
      p === undefined ||
      !(p.kind === "str" || p.kind === "num" || (p.kind === "word" && (p.text === "true" || p.text === "false")))
    ) {
      throw new FilterError(`expected a value, got ${p ? JSON.stringify(p.text) : "end of input"}`);
    }
    this.i++;
    return p.text;
  }

  private selector(): string[] {
    const first = this.peek();
    if (first?.kind !== "word")
      throw new FilterError(`expected a selector, got ${first ? JSON.stringify(first.text) : "end of input"}`);
    this.i++;
    const path = [first.text];
    for (;;) {
      const p = this.peek();
      if (p?.kind === "dot") {
        this.i++;
        const n = this.peek();
        if (n?.kind !== "word") throw new FilterError("expected a field name after '.'");
        this.i++;
        path.push(n.text);
      } else if (p?.kind === "lb") {
        this.i++;
        const k = this.peek();
        if (k?.kind !== "str") throw new FilterError("expected a quoted key inside []");
        this.i++;
        if (this.peek()?.kind !== "rb") throw new FilterError("missing ]");
        this.i++;
        path.push(k.text);
      } else {
        return path;
      }
    }
  }

  private match(): Expr {
    const p = this.peek();
    if (p && (p.kind === "str" || p.kind === "num")) {
      const value = this.value();
      const op = this.word("not") ? "not in" : "in";
      if (!this.word("in")) throw new FilterError("expected 'in' after a value");
      return { kind: "match", op, selector: this.selector(), value };
    }
    const selector = this.selector();
    const o = this.peek();
    if (o?.kind === "op") {
      this.i++;
      return { kind: "match", op: o.text, selector, value: this.value() };
    }
    if (this.word("is")) {
      const negated = this.word("not");
      if (!this.word("empty")) throw new FilterError("expected 'empty' after 'is'");
      return { kind: "match", op: negated ? "is not empty" : "is empty", selector };
    }
    const negated = this.word("not");
    for (const op of ["contains", "matches", "in"]) {
      if (this.word(op)) {
        if (op === "in") throw new FilterError("'in' needs the value on its left");
        return { kind: "match", op: negated ? `not ${op}` : op, selector, value: this.value() };
      }
    }
    throw new FilterError(`expected an operator after ${selector.join(".")}`);
  }
}

/** Parses a filter expression; throws FilterError with the reason when it is invalid. */
export function parseFilter(src: string): Expr {
  return new Parser(tokenize(src)).parse();
}

function resolve(datum: Json, path: readonly string[]): Json | undefined {
  let cur: Json | undefined = datum;
  for (const k of path) {
    if (!isObject(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}

function equals(field: Json | undefined, value: string): boolean {
  if (typeof field === "string") return field === value;
  if (typeof field === "number") return field === Number(value);
  if (typeof field === "boolean") return String(field) === value;
  return false;
}

function contains(field: Json | undefined, value: string): boolean {
  if (typeof field === "string") return field.includes(value);
  if (Array.isArray(field)) return field.some((x) => equals(x, value));
  if (isObject(field)) return Object.prototype.hasOwnProperty.call(field, value);
  return false;
}

function empty(field: Json | undefined): boolean {
  if (field === undefined || field === null || field === "") return true;
  if (Array.isArray(field)) return field.length === 0;
  if (isObject(field)) return Object.keys(field).length === 0;
  return false;
}

/** Returns whether `datum` matches the parsed filter. */
export function evalFilter(e: Expr, datum: Json): boolean {
  switch (e.kind) {
    case "and":
      return evalFilter(e.left, datum) && evalFilter(e.right, datum);
    case "or":
      return evalFilter(e.left, datum) || evalFilter(e.right, datum);
    case "not":
      return !evalFilter(e.inner, datum);
    case "match": {
      const field = resolve(datum, e.selector);
      const v = e.value ?? "";
      switch (e.op) {
        case "==":
          return equals(field, v);
        case "!=":
          return !equals(field, v);
        case "contains":
        case "in":
          return contains(field, v);
        case "not contains":
        case "not in":
          return !contains(field, v);
        case "matches":
        case "not matches": {
          // RE2 syntax and linear-time matching, as the real scheduler's Go regexp package gives.
          let re: RE2JS;
          try {
            re = RE2JS.compile(v);
          } catch {
            throw new FilterError(`invalid regular expression ${JSON.stringify(v)}`);
          }
          const ok = typeof field === "string" && re.test(field);
          return e.op === "matches" ? ok : !ok;
        }
        case "is empty":
          return empty(field);
        case "is not empty":
          return !empty(field);
        default:
          return false;
      }
    }
  }
}
