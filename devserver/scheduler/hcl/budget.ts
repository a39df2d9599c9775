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
export const DEFAULT_BUDGET: BudgetLimits = {
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
