// The HCL evaluator's budgets: a parse request cannot exhaust the devserver's memory or hold its event loop,
// and going past a budget is an HCL diagnostic the parse endpoint answers with 400, like any other.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import {
  BudgetError,
  type BudgetLimits,
  budget,
  scanSource,
  withBudget,
} from "../../../../devserver/scheduler/hcl/budget";
import { evaluateJsonString } from "../../../../devserver/scheduler/hcl/eval";
import { EvalError, type HclValue } from "../../../../devserver/scheduler/hcl/values";
import { startScheduler, type Harness } from "../http";

const jobWithMeta = (expr: string): string =>
  `job "budget" {\n  meta {\n    a = ${expr}\n  }\n  group "g" {\n    task "t" {\n      driver = "docker"\n    }\n  }\n}\n`;

let h: Harness;
beforeAll(async () => {
  h = await startScheduler();
});
afterAll(async () => {
  await h.close();
});

async function parse(expr: string): Promise<{ status: number; text: string; meta?: unknown }> {
  const r = await h.call("POST", "/v1/jobs/parse", { body: { JobHCL: jobWithMeta(expr) } });
  return { status: r.status, text: r.text, meta: (r.body as { Meta?: unknown }).Meta };
}

describe("HCL evaluation budgets at the parse endpoint", () => {
  it("refuses a range() larger than a value may be before building it", async () => {
    for (const expr of ["length(range(1e7))", "length(range(1e10))", "length(range(0, 1, 1e-300))"]) {
      const r = await parse(expr);
      expect(r.status, r.text).toBe(400);
      expect(r.text).toMatch(/^Failed to parse job: .*Evaluation budget exceeded; a value would have size \d+/);
    }
    // the endpoint still answers ordinary requests afterwards
    expect(await parse("length(range(1000))")).toMatchObject({ status: 200, meta: { a: "1000" } });
  });

  it("refuses a zero range() step as the real function library does, instead of looping forever", async () => {
    const r = await parse("length(range(5, 0, 0))");
    expect(r.status).toBe(400);
    expect(r.text).toContain("step must not be zero");
  });

  it("stops nested loops whose work multiplies past the step budget", async () => {
    const r = await parse("length([for i in range(100000) : [for j in range(100000) : j]])");
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain("Evaluation budget exceeded; the expressions take more than");
  });

  it("refuses strings longer than the string budget before building them", async () => {
    const r = await parse(
      'length(replace(join("", [for i in range(2000) : "aaaaaaaaaa"]), "a", format("%s%s%s%s%s%s", "bbbbbbbbbb", "bbbbbbbbbb", "bbbbbbbbbb", "bbbbbbbbbb", "bbbbbbbbbb", "bbbbbbbbbb")))',
    );
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain("Evaluation budget exceeded; a string would have 1200000 characters");
    const w = await parse('length(replace(join("", [for i in range(2000) : "aaaaaaaaaa"]), "a", "bb"))');
    expect(w).toMatchObject({ status: 200, meta: { a: "40000" } });
  });

  it("counts a shared value every place it appears, as it would be serialized", async () => {
    const r = await parse("length(jsonencode([for i in range(3000) : range(3000)]))");
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain("Evaluation budget exceeded");
  });

  it("refuses expressions nested deeper than the depth budget", async () => {
    // deeper than the evaluator's 200 levels, within the 256 the text is checked for before parsing
    const deep = "[".repeat(230) + "1" + "]".repeat(230);
    const r = await parse(`length(${deep})`);
    expect(r.status, r.text).toBe(400);
    expect(r.text).toContain("Evaluation budget exceeded; expressions are nested more than");
    expect(await parse(`length(${"[".repeat(20) + "1" + "]".repeat(20)})`)).toMatchObject({ status: 200 });
  });

  it("removes trailing newlines in one pass: chomp of many newlines followed by text returns", async () => {
    // the former regex was quadratic here (80k newlines held the event loop for 17.7 s)
    const text = "\n".repeat(150_000) + "x\n\r\n";
    const r = await h.call("POST", "/v1/jobs/parse", {
      body: {
        JobHCL: `variable "s" {\n  type = string\n}\n${jobWithMeta("chomp(var.s)")}`,
        Variables: `s = ${JSON.stringify(text)}\n`,
      },
    });
    expect(r.status, r.text.slice(0, 200)).toBe(200);
    expect((r.body as { Meta?: { a?: unknown } }).Meta?.a).toBe("\n".repeat(150_000) + "x");
  });
});

/** The parse endpoint's limits of a text, as its refusals state them. */
const SOURCE_LIMITS = { depth: 256, tokens: 40_000 };

/**
 * The functions the HCL parser (@cdktf/hcl2json's WebAssembly program) registers on this global once loaded;
 * the devserver calls `parse` there for every text it hands to the parser.
 */
const PARSER_GLOBAL = "__parse_terraform_config_wasm__";
interface ParserFunctions {
  parse: (...args: unknown[]) => unknown;
}
const parserFunctions = (): ParserFunctions | undefined =>
  (globalThis as Record<string, unknown>)[PARSER_GLOBAL] as ParserFunctions | undefined;

describe("the text's limits, checked before the parser", () => {
  const wrap = (expr: string): string => `job "x" {\n  meta {\n    a = ${expr}\n  }\n}\n`;

  /** The parser's functions, loaded by a parse if no parse loaded them yet. */
  async function loadedParser(): Promise<ParserFunctions> {
    if (parserFunctions() === undefined) await h.call("POST", "/v1/jobs/parse", { body: { JobHCL: wrap("1") } });
    const root = parserFunctions();
    expect(typeof root?.parse).toBe("function");
    return root as ParserFunctions;
  }

  beforeAll(async () => {
    // a text within the limits does reach the parser, once
    const parser = vi.spyOn(await loadedParser(), "parse");
    expect((await h.call("POST", "/v1/jobs/parse", { body: { JobHCL: wrap("1") } })).status).toBe(200);
    expect(parser).toHaveBeenCalledTimes(1);
    parser.mockRestore();
  });

  async function refused(body: Record<string, string>): Promise<string> {
    const root = await loadedParser();
    const parser = vi.spyOn(root, "parse");
    try {
      const r = await h.call("POST", "/v1/jobs/parse", { body });
      expect(r.status, r.text.slice(0, 200)).toBe(400);
      // refused without handing the text to the parser (the same parser instance: none was loaded since)
      expect(parserFunctions()).toBe(root);
      expect(parser).not.toHaveBeenCalled();
      return r.text;
    } finally {
      parser.mockRestore();
    }
  }

  it("refuses nested brackets of almost 1 MiB (the parser took seconds and 660 MB to overflow its stack)", async () => {
    const text = await refused({ JobHCL: wrap("[".repeat(490_000) + "]".repeat(490_000)) });
    expect(text).toMatch(
      /^Failed to parse job: input\.hcl:1,1-2: Evaluation budget exceeded; the text has 9800\d\d characters/,
    );
  });

  it("refuses nesting deeper than its limit, in expressions, blocks and interpolations alike", async () => {
    const deep = SOURCE_LIMITS.depth + 1;
    for (const hcl of [
      wrap("[".repeat(deep) + "]".repeat(deep)),
      wrap("(".repeat(deep) + "1" + ")".repeat(deep)),
      "x {\n".repeat(deep) + "}\n".repeat(deep),
      wrap(`"${"${".repeat(deep)}1${"}".repeat(deep)}"`),
    ]) {
      expect(await refused({ JobHCL: hcl })).toContain(
        `brackets are nested more than ${SOURCE_LIMITS.depth} levels deep`,
      );
    }
  });

  it("refuses more tokens than its limit (the parser's time grows faster than their count)", async () => {
    const text = await refused({ JobHCL: wrap(`[${"1,".repeat(SOURCE_LIMITS.tokens)}1]`) });
    expect(text).toContain(`the text has more than ${SOURCE_LIMITS.tokens} tokens`);
  });

  it("checks the var-file text too", async () => {
    const deep = SOURCE_LIMITS.depth + 1;
    const text = await refused({ JobHCL: wrap("1"), Variables: `v = ${"[".repeat(deep)}${"]".repeat(deep)}\n` });
    expect(text).toMatch(
      /^Failed to parse job: unable to parse var content: input\.hcl:1,\d+-\d+: Evaluation budget exceeded/,
    );
  });

  it("does not count what strings, comments and heredocs hold, nor escaped interpolations", () => {
    const many = "[".repeat(SOURCE_LIMITS.depth + 10);
    for (const hcl of [
      `a = "${many}"\n`,
      `# ${many}\n`,
      `// ${many}\n`,
      `/* ${many} */\n`,
      `a = <<EOT\n${many}\nEOT\n`,
      `a = <<-EOT\n  ${many}\n  EOT\n`,
      `a = "${"$${".repeat(SOURCE_LIMITS.depth + 10)}"\n`,
      // an escaped quote does not end the string
      `a = "\\"${many}"\n`,
    ]) {
      expect([hcl.slice(0, 12), scanSource(hcl).problem]).toEqual([hcl.slice(0, 12), undefined]);
    }
    // interpolations inside a heredoc do nest, and the heredoc ends at its marker
    const deep = SOURCE_LIMITS.depth + 1;
    expect(scanSource(`a = <<EOT\n${"${".repeat(deep)}${"}".repeat(deep)}\nEOT\n`).problem?.detail).toContain("nested");
    expect(scanSource(`a = <<EOT\nx\nEOT\nb = ${"[".repeat(deep)}`).problem?.detail).toContain("nested");
  });

  it("looks at each character a bounded number of times, whatever the text", () => {
    const limits = { length: 1 << 20, depth: 1 << 20, tokens: 1 << 20 };
    for (const unit of ['path "x" {', "<<a", '"${', "/*", "<<EOT\n", "#", "${", "a ", "[", "x {\n", "\n"]) {
      const text = unit.repeat(Math.floor((1 << 19) / unit.length));
      const { steps } = scanSource(text, limits);
      expect([unit, steps <= 3 * text.length]).toEqual([unit, true]);
    }
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...'<<-EOT\n"$%{}[]()#/*ab \\'.split("")), maxLength: 400 }),
        (text) => {
          expect(scanSource(text, limits).steps).toBeLessThanOrEqual(3 * text.length + 3);
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** Size of a value as the budget defines it, counted without any memo (shared parts counted every time). */
function expandedSize(v: HclValue): number {
  if (typeof v === "string") return 1 + v.length;
  if (v === null || typeof v !== "object") return 1;
  return (Array.isArray(v) ? v : Object.values(v)).reduce<number>((n, x) => n + expandedSize(x), 1);
}

describe("HCL evaluation budgets (property)", () => {
  const limits: BudgetLimits = { steps: 20_000, stringLength: 4_000, valueSize: 20_000, totalSize: 80_000, depth: 30 };
  const leaf = fc.constantFrom(
    "0",
    "1",
    "3",
    "1e3",
    "1e6",
    "1e12",
    "-2",
    "0.5",
    '"a"',
    '""',
    '"ab\\r\\n"',
    '"\\n\\n"',
    "var.s",
    "var.n",
    "var.l",
    "var.m",
    "x",
  );
  const fns = [
    "range",
    "length",
    "concat",
    "join",
    "replace",
    "format",
    "formatlist",
    "flatten",
    "distinct",
    "toset",
    "jsonencode",
    "chomp",
    "upper",
    "strrev",
    "substr",
    "split",
    "keys",
    "values",
    "merge",
    "contains",
    "element",
    "sort",
    "reverse",
    "max",
    "min",
    "zipmap",
    "slice",
    "tostring",
  ];
  const { expr } = fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      leaf,
      fc.constantFrom("10", "1000", "1e5", "1e9").map((n) => `range(${n})`),
      fc.tuple(fc.constantFrom("10", "1000", "1e5"), tie("expr")).map(([n, b]) => `[for x in range(${n}) : ${b}]`),
      fc
        .tuple(fc.constantFrom(...fns), fc.array(tie("expr"), { minLength: 1, maxLength: 3 }))
        .map(([f, args]) => `${f}(${args.join(", ")})`),
      fc.array(tie("expr"), { maxLength: 4 }).map((xs) => `[${xs.join(", ")}]`),
      fc.tuple(tie("expr"), tie("expr")).map(([c, b]) => `[for x in ${c} : ${b}]`),
      fc.tuple(tie("expr"), tie("expr")).map(([c, b]) => `{for k, x in ${c} : "\${k}" => ${b}}`),
      fc.tuple(tie("expr"), tie("expr")).map(([a, b]) => `"\${${a}}-\${${b}}"`),
      fc
        .tuple(tie("expr"), fc.constantFrom("+", "*", "==", "!=", "<"), tie("expr"))
        .map(([a, op, b]) => `(${a} ${op} ${b})`),
      fc.tuple(tie("expr"), tie("expr"), tie("expr")).map(([c, a, b]) => `(${c} == 1 ? ${a} : ${b})`),
    ),
  }));
  const scope = {
    var: {
      s: "ab\n".repeat(300),
      n: 1000,
      l: Array.from({ length: 300 }, (_x, i) => i),
      m: { a: "x", b: [1, 2, 3] },
    },
    x: 2,
  };

  it("random expressions end with a value within the budgets or with an evaluation error", () => {
    fc.assert(
      fc.property(expr, (text) => {
        let steps = 0;
        let outcome: HclValue | Error;
        try {
          outcome = withBudget(() => {
            try {
              // as the parser hands over every expression that is not a literal: a template of it alone
              return evaluateJsonString(`\${${text}}`, scope);
            } finally {
              steps = budget().steps;
            }
          }, limits);
        } catch (e) {
          outcome = e as Error;
        }
        expect(steps).toBeLessThanOrEqual(limits.steps);
        if (outcome instanceof Error) {
          // the library's own errors only: a type mismatch or an expression it does not parse (EvalError), a budget
          const known = [EvalError, BudgetError].some((t) => outcome instanceof t);
          expect(known, String(outcome.stack)).toBe(true);
        } else {
          expect(expandedSize(outcome)).toBeLessThanOrEqual(limits.valueSize);
        }
      }),
      { numRuns: 400, seed: 28 },
    );
  });
});

describe("HCL scopes", () => {
  it("leaves names of Object.prototype unresolved like any unknown name, also inside loops", async () => {
    expect(await parse('"${toString}"')).toMatchObject({ status: 200, meta: { a: "${toString}" } });
    const r = await h.call("POST", "/v1/jobs/parse", {
      body: {
        JobHCL:
          'job "scopes" {\n  datacenters = [for x in [1] : constructor]\n  group "g" {\n    task "t" {\n      driver = "docker"\n    }\n  }\n}\n',
      },
    });
    expect([r.status, (r.body as { Datacenters?: unknown }).Datacenters]).toEqual([200, ["${constructor}"]]);
  });
});
