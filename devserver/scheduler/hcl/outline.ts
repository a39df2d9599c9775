// Source outline of an HCL2 body: the order, kind (argument or block), labels and positions of its items.
// The parser's JSON form loses all of that (labelled blocks come back as maps with sorted keys), yet the
// job API keeps groups, tasks and ports in source order and errors name a position. The outline is only
// ever built from text the real parser has already accepted, so it skips expressions instead of parsing them.

/** Position of a name in the source: 1-based line and columns (end exclusive). */
export interface SourcePos {
  readonly line: number;
  readonly col: number;
  readonly endCol: number;
}

/** One `name = expr` argument. */
interface OutlineAttr {
  readonly kind: "attr";
  readonly name: string;
  readonly pos: SourcePos;
}

/** One `type "label" { ... }` block. */
export interface OutlineBlock {
  readonly kind: "block";
  readonly type: string;
  readonly labels: readonly string[];
  readonly pos: SourcePos;
  readonly body: readonly OutlineItem[];
}

export type OutlineItem = OutlineAttr | OutlineBlock;

/** Formats a position the way HCL diagnostics do: `file:line,col-endcol`. */
export function formatPos(filename: string, pos: SourcePos): string {
  return `${filename}:${pos.line},${pos.col}-${pos.endCol}`;
}

const IDENT_START = /[A-Za-z_]/;
const IDENT_PART = /[A-Za-z0-9_-]/;

class Scanner {
  private i = 0;
  private readonly lineStarts: number[] = [0];

  constructor(private readonly src: string) {
    for (let k = 0; k < src.length; k++) if (src[k] === "\n") this.lineStarts.push(k + 1);
  }

  body(nested: boolean): OutlineItem[] {
    const items: OutlineItem[] = [];
    for (;;) {
      this.skipBlank(true);
      const c = this.src[this.i];
      if (c === undefined) {
        if (nested) throw new Error("unexpected end of body");
        return items;
      }
      if (c === "}") {
        if (!nested) throw new Error("unexpected closing brace");
        return items;
      }
      const start = this.i;
      const name = this.ident();
      const pos = this.pos(start, this.i);
      this.skipBlank(false);
      if (this.src[this.i] === "=" && this.src[this.i + 1] !== "=") {
        this.i++;
        this.skipExpression();
        items.push({ kind: "attr", name, pos });
        continue;
      }
      const labels: string[] = [];
      while (this.src[this.i] !== "{") {
        const l = this.src[this.i];
        if (l === '"') labels.push(this.quotedLabel());
        else if (l !== undefined && IDENT_START.test(l)) labels.push(this.ident());
        else throw new Error(`unexpected ${JSON.stringify(l ?? "end")} in block header`);
        this.skipBlank(false);
      }
      this.i++;
      const body = this.body(true);
      this.i++; // the closing brace
      items.push({ kind: "block", type: name, labels, pos, body });
    }
  }

  private pos(start: number, end: number): SourcePos {
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= start) lo = mid;
      else hi = mid - 1;
    }
    const lineStart = this.lineStarts[lo] ?? 0;
    return { line: lo + 1, col: start - lineStart + 1, endCol: end - lineStart + 1 };
  }

  private ident(): string {
    const start = this.i;
    const first = this.src[this.i];
    if (first === undefined || !IDENT_START.test(first)) throw new Error("identifier expected");
    this.i++;
    while (this.src[this.i] !== undefined && IDENT_PART.test(this.src[this.i] as string)) this.i++;
    return this.src.slice(start, this.i);
  }

  private quotedLabel(): string {
    const start = this.i;
    this.skipQuoted();
    const raw = this.src.slice(start, this.i);
    try {
      return JSON.parse(raw) as string;
    } catch {
      return raw.slice(1, -1);
    }
  }

  /** Skips spaces and comments; with `newlines` also line breaks. A line comment ends before its newline. */
  private skipBlank(newlines: boolean): void {
    for (;;) {
      const c = this.src[this.i];
      if (c === " " || c === "\t" || c === "\r" || (newlines && c === "\n")) this.i++;
      else if (c === "#" || (c === "/" && this.src[this.i + 1] === "/")) {
        while (this.src[this.i] !== undefined && this.src[this.i] !== "\n") this.i++;
      } else if (c === "/" && this.src[this.i + 1] === "*") {
        const end = this.src.indexOf("*/", this.i + 2);
        this.i = end < 0 ? this.src.length : end + 2;
      } else return;
    }
  }

  /** Skips an argument's expression: up to a newline or an enclosing `}` outside brackets. */
  private skipExpression(): void {
    let depth = 0;
    for (;;) {
      this.skipBlank(depth > 0);
      const c = this.src[this.i];
      if (c === undefined) return;
      if (c === "\n") return;
      if (c === '"') this.skipQuoted();
      else if (c === "<" && this.src[this.i + 1] === "<") this.skipHeredoc();
      else if (c === "(" || c === "[" || c === "{") {
        depth++;
        this.i++;
      } else if (c === ")" || c === "]" || c === "}") {
        if (depth === 0) return;
        depth--;
        this.i++;
      } else this.i++;
    }
  }

  private skipQuoted(): void {
    this.i++;
    for (;;) {
      const c = this.src[this.i];
      if (c === undefined) return;
      const next = this.src[this.i + 1];
      if (c === "\\") this.i += 2;
      else if (c === '"') {
        this.i++;
        return;
      } else if ((c === "$" || c === "%") && next === c && this.src[this.i + 2] === "{") this.i += 3;
      else if ((c === "$" || c === "%") && next === "{") {
        this.i += 2;
        this.skipInterpolation();
      } else this.i++;
    }
  }

  private skipInterpolation(): void {
    let depth = 1;
    for (;;) {
      const c = this.src[this.i];
      if (c === undefined) return;
      if (c === '"') this.skipQuoted();
      else if (c === "<" && this.src[this.i + 1] === "<") this.skipHeredoc();
      else {
        if (c === "{") depth++;
        else if (c === "}" && --depth === 0) {
          this.i++;
          return;
        }
        this.i++;
      }
    }
  }

  /** Skips `<<MARK` / `<<-MARK` through the line holding only MARK (its newline is left in place). */
  private skipHeredoc(): void {
    this.i += 2;
    if (this.src[this.i] === "-") this.i++;
    const marker = this.ident();
    let lineEnd = this.src.indexOf("\n", this.i);
    while (lineEnd >= 0) {
      const start = lineEnd + 1;
      lineEnd = this.src.indexOf("\n", start);
      const line = this.src.slice(start, lineEnd < 0 ? this.src.length : lineEnd);
      if (line.trim() === marker) {
        this.i = start + line.length;
        return;
      }
    }
    this.i = this.src.length;
  }
}

/** Builds the outline of a whole file; returns undefined when the text is outside what the scanner understands. */
export function outline(source: string): OutlineItem[] | undefined {
  try {
    return new Scanner(source).body(false);
  } catch {
    return undefined;
  }
}
