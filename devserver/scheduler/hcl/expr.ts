// Parser for HCL2 expressions and string templates as the HCL parser's JSON form leaves them:
// every non-literal argument arrives as a template string ("${var.image}", "x-${var.a}", "$${literal}").
// This module only builds syntax trees; eval.ts gives them values.

import { BudgetError, budget } from "./budget";

/** A syntax error inside an expression (the file as a whole was already accepted by the real parser). */
export class ExprSyntaxError extends Error {}

type TemplatePart =
  | { readonly t: "text"; readonly text: string }
  | { readonly t: "interp"; readonly expr: Expr }
  | { readonly t: "if"; readonly cond: Expr; readonly then: Template; readonly else: Template }
  | { readonly t: "for"; readonly key?: string; readonly value: string; readonly coll: Expr; readonly body: Template };

export interface Template {
  readonly parts: readonly TemplatePart[];
}

export type Step = { readonly t: "attr"; readonly name: string } | { readonly t: "index"; readonly key: Expr };

export type Expr =
  | { readonly t: "lit"; readonly value: string | number | boolean | null }
  | { readonly t: "tmpl"; readonly tmpl: Template }
  | { readonly t: "scope"; readonly root: string; readonly steps: readonly Step[]; readonly src: string }
  | { readonly t: "steps"; readonly base: Expr; readonly steps: readonly Step[] }
  | { readonly t: "splat"; readonly base: Expr; readonly steps: readonly Step[] }
  | { readonly t: "call"; readonly name: string; readonly args: readonly Expr[]; readonly expand: boolean }
  | { readonly t: "tuple"; readonly items: readonly Expr[] }
  | { readonly t: "object"; readonly items: readonly { readonly key: Expr; readonly value: Expr }[] }
  | { readonly t: "unary"; readonly op: "-" | "!"; readonly x: Expr }
  | { readonly t: "binary"; readonly op: string; readonly l: Expr; readonly r: Expr }
  | { readonly t: "cond"; readonly c: Expr; readonly a: Expr; readonly b: Expr }
  | {
      readonly t: "for";
      readonly obj: boolean;
      readonly key?: string;
      readonly value: string;
      readonly coll: Expr;
      readonly keyExpr?: Expr;
      readonly valExpr: Expr;
      readonly cond?: Expr;
    };

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_-]/;
const BINARY_LEVELS: readonly (readonly string[])[] = [
  ["||"],
  ["&&"],
  ["==", "!="],
  ["<=", ">=", "<", ">"],
  ["+", "-"],
  ["*", "/", "%"],
];

type Stop = "end" | "else" | "endif" | "endfor";

class Parser {
  i = 0;
  private depth = 0;
  constructor(private readonly s: string) {}

  /** Parses one nesting level deeper, within the evaluation budget's depth. */
  nested<T>(fn: () => T): T {
    const limit = budget().limits.depth;
    if (++this.depth > limit) throw new BudgetError(`expressions are nested more than ${limit} levels deep.`);
    try {
      return fn();
    } finally {
      this.depth--;
    }
  }

  fail(what: string): never {
    throw new ExprSyntaxError(`${what} at offset ${this.i} of ${JSON.stringify(this.s)}`);
  }

  ws(): void {
    for (;;) {
      const c = this.s[this.i];
      if (c === " " || c === "\t" || c === "\n" || c === "\r") this.i++;
      else if (c === "#" || (c === "/" && this.s[this.i + 1] === "/")) {
        while (this.s[this.i] !== undefined && this.s[this.i] !== "\n") this.i++;
      } else if (c === "/" && this.s[this.i + 1] === "*") {
        const end = this.s.indexOf("*/", this.i + 2);
        this.i = end < 0 ? this.s.length : end + 2;
      } else return;
    }
  }

  eat(tok: string): boolean {
    this.ws();
    if (!this.s.startsWith(tok, this.i)) return false;
    // keep "==" from matching "=" and "=>" etc.
    if ((tok === "=" || tok === "!" || tok === "<" || tok === ">") && this.s[this.i + 1] === "=") return false;
    if (tok === "=" && this.s[this.i + 1] === ">") return false;
    this.i += tok.length;
    return true;
  }

  expect(tok: string): void {
    if (!this.eat(tok)) this.fail(`expected ${JSON.stringify(tok)}`);
  }

  ident(): string {
    this.ws();
    const start = this.i;
    if (!IDENT_START.test(this.s[this.i] ?? "")) this.fail("identifier expected");
    while (IDENT_PART.test(this.s[this.i] ?? "")) this.i++;
    return this.s.slice(start, this.i);
  }

  peekKeyword(word: string): boolean {
    this.ws();
    return this.s.startsWith(word, this.i) && !IDENT_PART.test(this.s[this.i + word.length] ?? "");
  }

  /** Parses template text; `quote` ends at an unescaped `"`, otherwise at the end of input. */
  template(escapes: boolean, quote: boolean): { tmpl: Template; stop: Stop } {
    const parts: TemplatePart[] = [];
    let text = "";
    const flush = (): void => {
      if (text) parts.push({ t: "text", text });
      text = "";
    };
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) {
        if (quote) this.fail("unterminated string");
        flush();
        return { tmpl: { parts }, stop: "end" };
      }
      const next = this.s[this.i + 1];
      if (quote && c === '"') {
        this.i++;
        flush();
        return { tmpl: { parts }, stop: "end" };
      }
      if ((c === "$" || c === "%") && next === c && this.s[this.i + 2] === "{") {
        text += c + "{";
        this.i += 3;
      } else if (c === "$" && next === "{") {
        this.i += 2;
        this.eat("~");
        const expr = this.expr();
        this.eat("~");
        this.expect("}");
        flush();
        parts.push({ t: "interp", expr });
      } else if (c === "%" && next === "{") {
        const save = this.i;
        this.i += 2;
        this.eat("~");
        for (const stop of ["else", "endif", "endfor"] as const) {
          if (this.peekKeyword(stop)) {
            this.i += stop.length;
            this.eat("~");
            this.expect("}");
            flush();
            return { tmpl: { parts }, stop };
          }
        }
        flush();
        parts.push(this.directive(escapes, quote, save));
      } else if (escapes && c === "\\") {
        text += this.escape();
      } else {
        text += c;
        this.i++;
      }
    }
  }

  directive(escapes: boolean, quote: boolean, at: number): TemplatePart {
    if (this.peekKeyword("if")) {
      this.i += 2;
      const cond = this.expr();
      this.eat("~");
      this.expect("}");
      const first = this.template(escapes, quote);
      let otherwise: Template = { parts: [] };
      let stop = first.stop;
      if (stop === "else") {
        const second = this.template(escapes, quote);
        otherwise = second.tmpl;
        stop = second.stop;
      }
      if (stop !== "endif") this.fail("missing %{ endif }");
      return { t: "if", cond, then: first.tmpl, else: otherwise };
    }
    if (this.peekKeyword("for")) {
      this.i += 3;
      const { key, value, coll } = this.forHead();
      this.eat("~");
      this.expect("}");
      const body = this.template(escapes, quote);
      if (body.stop !== "endfor") this.fail("missing %{ endfor }");
      return { t: "for", ...(key === undefined ? {} : { key }), value, coll, body: body.tmpl };
    }
    this.i = at;
    return this.fail("unknown template directive");
  }

  forHead(): { key?: string; value: string; coll: Expr } {
    const first = this.ident();
    let key: string | undefined;
    let value = first;
    if (this.eat(",")) {
      key = first;
      value = this.ident();
    }
    if (!this.peekKeyword("in")) this.fail('expected "in"');
    this.i += 2;
    const coll = this.expr();
    return { ...(key === undefined ? {} : { key }), value, coll };
  }

  escape(): string {
    const c = this.s[this.i + 1];
    this.i += 2;
    const simple: Record<string, string> = { n: "\n", r: "\r", t: "\t", '"': '"', "\\": "\\" };
    if (c !== undefined && simple[c] !== undefined) return simple[c] as string;
    if (c === "u" || c === "U") {
      const len = c === "u" ? 4 : 8;
      const hex = this.s.slice(this.i, this.i + len);
      this.i += len;
      return String.fromCodePoint(parseInt(hex, 16));
    }
    return this.fail("invalid escape sequence");
  }

  expr(): Expr {
    return this.nested(() => {
      const c = this.binary(0);
      if (!this.eat("?")) return c;
      const a = this.expr();
      this.expect(":");
      const b = this.expr();
      return { t: "cond", c, a, b };
    });
  }

  binary(level: number): Expr {
    const ops = BINARY_LEVELS[level];
    if (!ops) return this.unary();
    let l = this.binary(level + 1);
    for (;;) {
      const op = ops.find((o) => this.eat(o));
      if (!op) return l;
      l = { t: "binary", op, l, r: this.binary(level + 1) };
    }
  }

  unary(): Expr {
    if (this.eat("-")) return { t: "unary", op: "-", x: this.nested(() => this.unary()) };
    if (this.eat("!")) return { t: "unary", op: "!", x: this.nested(() => this.unary()) };
    return this.postfix(this.primary());
  }

  steps(): { steps: Step[]; splat: boolean } {
    const steps: Step[] = [];
    for (;;) {
      this.ws();
      if (this.s.startsWith("[*]", this.i) || this.s.startsWith(".*", this.i)) return { steps, splat: true };
      if (this.s[this.i] === "." && this.s[this.i + 1] !== ".") {
        this.i++;
        if (/[0-9]/.test(this.s[this.i] ?? "")) steps.push({ t: "index", key: this.number() });
        else steps.push({ t: "attr", name: this.ident() });
      } else if (this.s[this.i] === "[") {
        this.i++;
        const key = this.expr();
        this.expect("]");
        steps.push({ t: "index", key });
      } else return { steps, splat: false };
    }
  }

  postfix(base: Expr): Expr {
    let node = base;
    for (;;) {
      const { steps, splat } = this.steps();
      if (steps.length)
        node = node.t === "scope" ? { ...node, steps: [...node.steps, ...steps] } : { t: "steps", base: node, steps };
      if (!splat) return node;
      this.i += this.s[this.i] === "[" ? 3 : 2;
      const each = this.steps();
      node = { t: "splat", base: node, steps: each.steps };
      if (!each.splat) return node;
    }
  }

  number(): Expr {
    const m = /^[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(this.s.slice(this.i));
    if (!m) this.fail("number expected");
    this.i += m[0].length;
    return { t: "lit", value: Number(m[0]) };
  }

  primary(): Expr {
    this.ws();
    const c = this.s[this.i];
    if (c === undefined) this.fail("expression expected");
    if (/[0-9]/.test(c)) return this.number();
    if (c === '"') {
      this.i++;
      return { t: "tmpl", tmpl: this.template(true, true).tmpl };
    }
    if (c === "<" && this.s[this.i + 1] === "<") return this.heredoc();
    if (c === "(") {
      this.i++;
      const inner = this.expr();
      this.expect(")");
      return inner;
    }
    if (c === "[") return this.tuple();
    if (c === "{") return this.object();
    const start = this.i;
    const name = this.ident();
    if (name === "true" || name === "false") return { t: "lit", value: name === "true" };
    if (name === "null") return { t: "lit", value: null };
    if (this.eat("(")) return this.call(name);
    const { steps } = this.steps();
    const scope: Expr = { t: "scope", root: name, steps, src: this.s.slice(start, this.i).trim() };
    return scope;
  }

  call(name: string): Expr {
    const args: Expr[] = [];
    let expand = false;
    while (!this.eat(")")) {
      args.push(this.expr());
      if (this.eat("...")) expand = true;
      if (!this.eat(",")) {
        this.expect(")");
        break;
      }
    }
    return { t: "call", name, args, expand };
  }

  tuple(): Expr {
    this.i++;
    if (this.peekKeyword("for")) return this.forExpr(false);
    const items: Expr[] = [];
    while (!this.eat("]")) {
      items.push(this.expr());
      if (!this.eat(",")) {
        this.expect("]");
        break;
      }
    }
    return { t: "tuple", items };
  }

  object(): Expr {
    this.i++;
    if (this.peekKeyword("for")) return this.forExpr(true);
    const items: { key: Expr; value: Expr }[] = [];
    while (!this.eat("}")) {
      this.ws();
      const start = this.i;
      let key: Expr;
      if (IDENT_START.test(this.s[this.i] ?? "")) {
        const name = this.ident();
        this.ws();
        // a bare name is a literal key unless it is followed by more expression syntax
        key =
          this.s[this.i] === "=" || this.s[this.i] === ":"
            ? { t: "lit", value: name }
            : ((this.i = start), this.expr());
      } else key = this.expr();
      if (!this.eat("=") && !this.eat(":")) this.fail('expected "=" in object');
      items.push({ key, value: this.expr() });
      this.eat(",");
    }
    return { t: "object", items };
  }

  forExpr(obj: boolean): Expr {
    this.i += 3;
    const { key, value, coll } = this.forHead();
    this.expect(":");
    let keyExpr: Expr | undefined;
    let valExpr = this.expr();
    if (obj) {
      this.expect("=>");
      keyExpr = valExpr;
      valExpr = this.expr();
      this.eat("...");
    }
    let cond: Expr | undefined;
    if (this.peekKeyword("if")) {
      this.i += 2;
      cond = this.expr();
    }
    this.expect(obj ? "}" : "]");
    return {
      t: "for",
      obj,
      ...(key === undefined ? {} : { key }),
      value,
      coll,
      ...(keyExpr === undefined ? {} : { keyExpr }),
      valExpr,
      ...(cond === undefined ? {} : { cond }),
    };
  }

  heredoc(): Expr {
    this.i += 2;
    const strip = this.s[this.i] === "-";
    if (strip) this.i++;
    const marker = this.ident();
    const bodyStart = this.s.indexOf("\n", this.i) + 1;
    if (bodyStart === 0) this.fail("unterminated heredoc");
    const lines: string[] = [];
    let at = bodyStart;
    for (;;) {
      const end = this.s.indexOf("\n", at);
      const line = this.s.slice(at, end < 0 ? this.s.length : end);
      if (line.trim() === marker) {
        this.i = at + line.length;
        break;
      }
      if (end < 0) this.fail("unterminated heredoc");
      lines.push(line);
      at = end + 1;
    }
    let body = lines.map((l) => l + "\n");
    if (strip) {
      const indents = lines.filter((l) => l.trim() !== "").map((l) => /^[ \t]*/.exec(l)?.[0].length ?? 0);
      const cut = indents.length ? Math.min(...indents) : 0;
      body = body.map((l) => l.slice(Math.min(cut, /^[ \t]*/.exec(l)?.[0].length ?? 0)));
    }
    return { t: "tmpl", tmpl: parseTemplate(body.join(""), false) };
  }
}

/** Parses template text; `escapes` turns on backslash escapes (quoted HCL strings, not JSON-form strings or heredocs). */
export function parseTemplate(text: string, escapes: boolean): Template {
  const p = new Parser(text);
  const { tmpl, stop } = p.template(escapes, false);
  if (stop !== "end") p.fail(`unexpected %{ ${stop} }`);
  return tmpl;
}

/** Parses a single expression (for example a variable `type` constraint or a var-file value). */
export function parseExpression(text: string): Expr {
  const p = new Parser(text);
  const e = p.expr();
  p.ws();
  if (p.i !== text.length) p.fail("unexpected text after expression");
  return e;
}
