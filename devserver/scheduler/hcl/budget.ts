// Budgets of one jobspec evaluation, so that no request can make the devserver's HCL evaluator run out of
// memory or hold the event loop: a step count (every expression node, loop iteration and unit of function
// work), the length of one string, the size of one value (its elements and characters, counting a shared
// value every place it appears, as it would be serialized), the size of everything evaluated in one parse,
// and the nesting depth of expressions and values. Evaluation is synchronous, so one parse holds the current
// budget for its duration.

import type { HclValue } from "./values";

/** The limits of one evaluation. */
export interface BudgetLimits {
  /** Expression nodes evaluated, loop iterations and function work units (a list element, 64 characters). */
  readonly steps: number;
  /** Characters of one string. */
  readonly stringLength: number;
  /** Size of one value: 1 per element or primitive plus the characters of its strings, shared parts counted each time. */
  readonly valueSize: number;
  /** Sum of the sizes of all values evaluated in one parse. */
  readonly totalSize: number;
  /** Nesting depth of expressions (as parsed and as evaluated) and of values. */
  readonly depth: number;
}

/** The limits the parse endpoint evaluates jobspecs under; far above what real jobspecs use. */
const DEFAULT_BUDGET: BudgetLimits = {
  steps: 1_000_000,
  stringLength: 1 << 20,
  valueSize: 4 << 20,
  totalSize: 16 << 20,
  depth: 200,
};

/** An evaluation went past one of its budgets; reported as an HCL diagnostic like any evaluation error. */
export class BudgetError extends Error {
  override readonly name = "BudgetError";
  readonly summary = "Evaluation budget exceeded";
  constructor(readonly detail: string) {
    super(`Evaluation budget exceeded; ${detail}`);
  }
}

interface Measure {
  readonly size: number;
  readonly depth: number;
}

/** The running counts of one evaluation against its limits. */
export class Budget {
  steps = 0;
  total = 0;
  private nesting = 0;
  private readonly measured = new WeakMap<object, Measure>();

  constructor(readonly limits: BudgetLimits) {}

  /** Counts `n` steps. */
  step(n = 1): void {
    if (this.steps + n > this.limits.steps)
      throw new BudgetError(`the expressions take more than ${this.limits.steps} evaluation steps.`);
    this.steps += n;
  }

  /** Counts the work of handling a value once (its top-level elements, or its characters in 64s). */
  work(v: HclValue): void {
    this.step(1 + shallowWork(v));
  }

  /** Checks that a string of `length` characters may be built (call before building it when it could be large). */
  stringLength(length: number): void {
    if (length > this.limits.stringLength)
      throw new BudgetError(`a string would have ${length} characters; the limit is ${this.limits.stringLength}.`);
  }

  /** Checks that a value of `size` (see {@link BudgetLimits.valueSize}) may be built. */
  valueSize(size: number): void {
    if (size > this.limits.valueSize)
      throw new BudgetError(
        `a value would have size ${size} (elements and characters); the limit is ${this.limits.valueSize}.`,
      );
  }

  /** Runs `fn` one nesting level deeper. */
  nest<T>(fn: () => T): T {
    if (++this.nesting > this.limits.depth) {
      this.nesting--;
      throw new BudgetError(`expressions are nested more than ${this.limits.depth} levels deep.`);
    }
    try {
      return fn();
    } finally {
      this.nesting--;
    }
  }

  /** Returns the size of `v`, checking it and its depth against the limits (remembered per list and object). */
  size(v: HclValue): number {
    return this.measure(v, 0).size;
  }

  /** Records the size of a list or object built from parts already measured (whose sizes add up to `size`). */
  built(v: HclValue[] | { [key: string]: HclValue }, size: number, depth: number): void {
    this.valueSize(size);
    this.measured.set(v, { size, depth });
  }

  /** Counts a value towards the size of everything evaluated in this parse. */
  output(v: HclValue): void {
    this.total += this.size(v);
    if (this.total > this.limits.totalSize)
      throw new BudgetError(`the evaluated values add up to more than size ${this.limits.totalSize}.`);
  }

  /** Depth of a value already measured (0 for primitives). */
  depthOf(v: HclValue): number {
    return this.measure(v, 0).depth;
  }

  private measure(v: HclValue, at: number): Measure {
    if (typeof v === "string") {
      this.stringLength(v.length);
      return { size: 1 + v.length, depth: 0 };
    }
    if (v === null || typeof v !== "object") return { size: 1, depth: 0 };
    const known = this.measured.get(v);
    if (known && at + known.depth <= this.limits.depth) return known;
    if (known || at >= this.limits.depth)
      throw new BudgetError(`a value is nested more than ${this.limits.depth} levels deep.`);
    let size = 1;
    let depth = 0;
    for (const item of Array.isArray(v) ? v : Object.values(v)) {
      const m = this.measure(item, at + 1);
      size += m.size;
      depth = Math.max(depth, m.depth + 1);
      if (size > this.limits.valueSize) this.valueSize(size);
    }
    if (at + depth > this.limits.depth)
      throw new BudgetError(`a value is nested more than ${this.limits.depth} levels deep.`);
    const m = { size, depth };
    this.measured.set(v, m);
    return m;
  }
}

function shallowWork(v: HclValue): number {
  if (typeof v === "string") return v.length >> 6;
  if (Array.isArray(v)) return v.length;
  if (v !== null && typeof v === "object") return Object.keys(v).length;
  return 0;
}

let current: Budget | undefined;

/** Runs `fn` under a fresh budget, or under the running one when called inside another evaluation. */
export function withBudget<T>(fn: () => T, limits: BudgetLimits = DEFAULT_BUDGET): T {
  if (current) return fn();
  current = new Budget(limits);
  try {
    return fn();
  } finally {
    current = undefined;
  }
}

/** The budget of the running evaluation (a fresh default one when called outside {@link withBudget}). */
export function budget(): Budget {
  return current ?? new Budget(DEFAULT_BUDGET);
}

/** Limits of the text handed to the HCL parser, checked by {@link scanSource} before the parser sees it. */
export interface SourceLimits {
  /** Characters of one text (a jobspec or a var-file). */
  readonly length: number;
  /** Nesting of brackets, braces, parentheses and template interpolations. */
  readonly depth: number;
  /** Tokens: words, numbers, punctuation, line ends, and each string, heredoc and interpolation. */
  readonly tokens: number;
}

/**
 * The limits the parse endpoint checks texts against. The parser (WebAssembly) takes time and memory that
 * grow faster than its input (seconds for tens of thousands of list elements; a stack overflow past about
 * 2,000 nested brackets after hundreds of MB), so these are checked first; real jobspecs stay far below.
 */
const SOURCE_LIMITS: SourceLimits = { length: 512 * 1024, depth: 256, tokens: 40_000 };

/** Where a text went past its limits: the 1-based line and column, and what. */
interface SourceProblem {
  readonly line: number;
  readonly col: number;
  readonly detail: string;
}

/** What {@link scanSource} found: a problem, or none; `steps` counts the characters it looked at. */
export interface SourceScan {
  readonly problem?: SourceProblem;
  readonly steps: number;
}

const WORD = /[A-Za-z0-9_.-]/;
const HEREDOC = /<<-?([A-Za-z_][A-Za-z0-9_-]*)\r?\n/y;

/**
 * Checks an HCL text against `limits` in one pass that looks at each character a bounded number of times:
 * its length, its nesting (brackets in expressions and blocks, `${`/`%{` in strings and heredocs; string,
 * comment and heredoc text does not nest) and its tokens. Stops at the first limit passed.
 */
export function scanSource(src: string, limits: SourceLimits = SOURCE_LIMITS): SourceScan {
  let steps = 0;
  const at = (i: number, detail: string): SourceScan => {
    let line = 1;
    let start = 0;
    for (let k = src.indexOf("\n"); k !== -1 && k < i; k = src.indexOf("\n", k + 1)) {
      line++;
      start = k + 1;
    }
    return { problem: { line, col: i - start + 1, detail }, steps: steps + i };
  };
  if (src.length > limits.length) {
    return {
      problem: { line: 1, col: 1, detail: `the text has ${src.length} characters; the limit is ${limits.length}.` },
      steps,
    };
  }
  // Frames: "(" for brackets, "s" for an interpolation inside a string, "h" inside a heredoc.
  const frames: string[] = [];
  const markers: string[] = [];
  let mode: "code" | "string" | "heredoc" = "code";
  let tokens = 0;
  let inWord = false;
  let i = 0;
  const n = src.length;
  const token = (): boolean => ++tokens > limits.tokens;
  const tooMany = (): SourceScan => at(i, `the text has more than ${limits.tokens} tokens.`);
  const open = (kind: string): SourceScan | undefined => {
    frames.push(kind);
    if (frames.length > limits.depth) return at(i, `brackets are nested more than ${limits.depth} levels deep.`);
    return undefined;
  };
  /**
   * At `${` or `%{` inside a string ("s") or a heredoc ("h"): opens the interpolation and goes back to code;
   * `$${` and `%%{` are escapes, skipped. True when `i` was at one of them (then moved past it), false when
   * not, or the problem of opening one.
   */
  const interpolation = (frame: "s" | "h"): boolean | SourceScan => {
    const c = src[i];
    if (c !== "$" && c !== "%") return false;
    if (src[i + 1] === c && src[i + 2] === "{") {
      i += 3;
      return true;
    }
    if (src[i + 1] !== "{") return false;
    if (token()) return tooMany();
    const p = open(frame);
    if (p) return p;
    mode = "code";
    inWord = false;
    i += 2;
    return true;
  };
  while (i < n) {
    steps++;
    const c = src[i] as string;
    if (mode === "string") {
      if (c === "\\") i += 2;
      else if (c === '"' || c === "\n") {
        mode = "code";
        i++;
      } else {
        const opened = interpolation("s");
        if (typeof opened === "object") return opened;
        if (!opened) i++;
      }
      continue;
    }
    if (mode === "heredoc") {
      if (i === 0 || src[i - 1] === "\n") {
        let end = src.indexOf("\n", i);
        if (end === -1) end = n;
        steps += end - i;
        if (src.slice(i, end).trim() === markers[markers.length - 1]) {
          markers.pop();
          mode = "code";
          i = end;
          continue;
        }
      }
      const opened = interpolation("h");
      if (typeof opened === "object") return opened;
      if (!opened) i++;
      continue;
    }
    // code
    if (c === " " || c === "\t" || c === "\r") {
      inWord = false;
      i++;
      continue;
    }
    if (WORD.test(c)) {
      if (!inWord && token()) return tooMany();
      inWord = true;
      i++;
      continue;
    }
    inWord = false;
    if (c === "#" || (c === "/" && src[i + 1] === "/")) {
      const end = src.indexOf("\n", i);
      steps += (end === -1 ? n : end) - i;
      i = end === -1 ? n : end;
      continue;
    }
    if (c === "/" && src[i + 1] === "*") {
      const end = src.indexOf("*/", i + 2);
      steps += (end === -1 ? n : end + 2) - i;
      i = end === -1 ? n : end + 2;
      continue;
    }
    if (token()) return tooMany();
    if (c === '"') {
      mode = "string";
      i++;
      continue;
    }
    if (c === "<" && src[i + 1] === "<") {
      HEREDOC.lastIndex = i;
      const m = HEREDOC.exec(src);
      if (m !== null) {
        steps += m[0].length;
        markers.push(m[1] as string);
        mode = "heredoc";
        i += m[0].length;
        continue;
      }
    }
    if (c === "(" || c === "[" || c === "{") {
      const p = open("(");
      if (p) return p;
    } else if (c === ")" || c === "]" || c === "}") {
      const kind = frames.pop();
      if (c === "}" && kind === "s") mode = "string";
      else if (c === "}" && kind === "h") mode = "heredoc";
    }
    i++;
  }
  return { steps };
}
