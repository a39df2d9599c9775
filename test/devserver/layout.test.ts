// The devserver's import graph: no cycles, and the scheduler's and the secrets service's
// layers only import downwards. Every relative import counts, type-only ones too: a cycle of types is still a
// tangle a reader has to hold in mind at once.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = resolve(__dirname, "../../devserver");

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Resolves a relative specifier the way node16 resolution does for our sources (file, then folder index). */
function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec.replace(/\.js$/, ""));
  for (const candidate of [`${base}.ts`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** Each devserver file (relative to devserver/) with the devserver files it imports. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(ROOT)) {
    const info = ts.preProcessFile(readFileSync(file, "utf8"), true, true);
    const targets = info.importedFiles
      .map((ref) => ref.fileName)
      .filter((spec) => spec.startsWith("."))
      .map((spec) => resolveImport(file, spec))
      .filter((target): target is string => target !== undefined && target.startsWith(ROOT))
      .map((target) => relative(ROOT, target));
    graph.set(relative(ROOT, file), [...new Set(targets)].sort());
  }
  return graph;
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}

/** Layers of each service folder, lowest first: a file imports only its own layer and lower ones. */
const LAYERS: Record<string, readonly string[]> = {
  scheduler: ["state", "sim", "ops", "api"],
  secrets: ["state", "ops", "api"],
};

/**
 * Imports that break the layering: a lower layer importing a higher one or its service's entry, the HCL
 * parser (scheduler/hcl/) importing anything outside itself, core/ importing a service, one service
 * importing the other.
 */
function layerViolations(graph: Map<string, string[]>): string[] {
  const where = (file: string): { top: string; layer: string | undefined } => {
    const [top = "", sub] = file.split("/");
    return { top, layer: sub !== undefined && file.split("/").length > 2 ? sub : undefined };
  };
  const bad: string[] = [];
  for (const [from, targets] of graph) {
    const a = where(from);
    for (const to of targets) {
      const b = where(to);
      let ok = true;
      if (a.top === "core") ok = b.top === "core";
      else if (a.top in LAYERS) {
        const order = LAYERS[a.top] ?? [];
        if (b.top === "core") ok = true;
        else if (b.top !== a.top) ok = false;
        else if (a.layer === "hcl") ok = b.layer === "hcl";
        else if (a.layer === undefined)
          ok = true; // the service's entry (index.ts) wires every layer
        else if (b.layer === "hcl") ok = true;
        else
          ok = b.layer !== undefined && order.indexOf(b.layer) >= 0 && order.indexOf(b.layer) <= order.indexOf(a.layer);
      }
      if (!ok) bad.push(`${from} -> ${to}`);
    }
  }
  return bad.sort();
}

describe("devserver import graph", () => {
  const graph = importGraph();

  it("finds the devserver's files and their imports", () => {
    expect(graph.get("index.ts")?.length).toBeGreaterThan(0);
    // The walker itself sees a cycle when there is one.
    expect(
      cycles(
        new Map([
          ["a.ts", ["b.ts"]],
          ["b.ts", ["c.ts"]],
          ["c.ts", ["a.ts"]],
          ["d.ts", ["a.ts"]],
        ]),
      ),
    ).toEqual([["a.ts", "b.ts", "c.ts"]]);
  });

  it("has no import cycle", () => {
    expect(cycles(graph)).toEqual([]);
  });

  it("keeps every service file in a known layer, importing only its own layer and lower ones", () => {
    for (const file of graph.keys()) {
      const [top, sub, rest] = file.split("/");
      if (top === undefined || !(top in LAYERS)) continue;
      // Only the service's entry sits beside the layer folders.
      if (rest === undefined) expect(file).toBe(`${top}/index.ts`);
      else expect([...(LAYERS[top] ?? []), ...(top === "scheduler" ? ["hcl"] : [])]).toContain(sub);
    }
    expect(layerViolations(graph)).toEqual([]);
    // The rule itself: an upward import is reported.
    expect(layerViolations(new Map([["scheduler/state/store.ts", ["scheduler/sim/engine.ts"]]]))).toEqual([
      "scheduler/state/store.ts -> scheduler/sim/engine.ts",
    ]);
  });
});
