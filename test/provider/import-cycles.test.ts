/**
 * No import circle in provider/: every module's relative imports (type-only ones too, `export ... from` and
 * `require` included) form a graph without a cycle, so each module reads after the ones it builds on.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..", "provider");

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? modules(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The provider modules `file` imports by a relative path. */
function importsOf(file: string): string[] {
  const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
  const specs = [...code.matchAll(/(?:\bfrom\s*|\brequire\(\s*|\bimport\(\s*)["'](\.{1,2}\/[^"']*)["']/g)].map(
    (m) => m[1]!,
  );
  return specs.flatMap((s) => {
    const base = resolve(dirname(file), s);
    const found = [`${base}.ts`, join(base, "index.ts")].find((p) => existsSync(p) && statSync(p).isFile());
    return found !== undefined && found.startsWith(ROOT) ? [found] : [];
  });
}

/** Every cycle found by a depth-first walk, each as the chain of modules that closes it. */
function cycles(graph: Map<string, string[]>): string[] {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const found: string[] = [];
  const visit = (f: string): void => {
    state.set(f, "open");
    stack.push(f);
    for (const g of graph.get(f) ?? []) {
      if (state.get(g) === "open")
        found.push([...stack.slice(stack.indexOf(g)), g].map((p) => relative(ROOT, p)).join(" -> "));
      else if (state.get(g) === undefined) visit(g);
    }
    stack.pop();
    state.set(f, "done");
  };
  for (const f of graph.keys()) if (state.get(f) === undefined) visit(f);
  return found;
}

describe("provider/ imports", () => {
  it("form no circle", () => {
    expect(cycles(new Map(modules(ROOT).map((f) => [f, importsOf(f)])))).toEqual([]);
  });

  it("the walk finds a circle where there is one, and reads type-only imports", () => {
    const [x, y, z] = ["x.ts", "y.ts", "z.ts"].map((f) => join(ROOT, f)) as [string, string, string];
    expect(
      cycles(
        new Map([
          [x, [y]],
          [y, [z]],
          [z, [x]],
        ]),
      ),
    ).toEqual(["x.ts -> y.ts -> z.ts -> x.ts"]);
    expect(
      cycles(
        new Map([
          [x, [y]],
          [y, [z]],
          [z, []],
        ]),
      ),
    ).toEqual([]);
    // job/index.ts imports `type JobInputs` from ./inputs among others.
    expect(importsOf(join(ROOT, "resources", "job", "index.ts"))).toContain(
      join(ROOT, "resources", "job", "inputs.ts"),
    );
  });
});
