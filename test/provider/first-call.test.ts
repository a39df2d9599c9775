/**
 * What the provider host pays on the first call of a command, beyond the work itself (at 2
 * resources a command may cost at most 0.15 s more than the engine's floor). Two costs are pinned here:
 * zod's 64 locale files, which `provider()` defers before a resource's code loads zod
 * (provider/lazy-zod-locales.ts), and zod's compiling of a
 * parser per object schema, which every parse in the library skips (provider/schemas/parse-options.ts).
 */
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import ts from "typescript";
import { readFileSync } from "node:fs";
import { job } from "../../provider/resources/job";
import { createJob, startHarness, type Harness } from "./resources/job/harness";

const ROOT = join(__dirname, "..", "..");

/** Runs `script` in a plain Node process (no test runner in between); resolves to the JSON it prints. */
function node(script: string): unknown {
  return JSON.parse(execFileSync(process.execPath, ["-e", script], { cwd: ROOT, encoding: "utf8" }));
}

/** Script text that loads the TypeScript module at `path` as `mod`, compiled in memory, resolving from the repository. */
function loading(path: string): string {
  const js = ts.transpileModule(readFileSync(path, "utf8"), {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true },
  }).outputText;
  return `
    const Module = require("node:module");
    const m = new Module(${JSON.stringify(path)}, module);
    m.filename = ${JSON.stringify(path)};
    m.paths = Module._nodeModulePaths(${JSON.stringify(dirname(path))});
    m._compile(${JSON.stringify(js)}, ${JSON.stringify(path)});
    const mod = m.exports;`;
}

describe("zod's locales in the provider host", () => {
  const LOCALES = join(ROOT, "provider", "lazy-zod-locales.ts");
  const report = `
    const loaded = () => Object.keys(require.cache).filter((k) => k.includes("/zod/v4/locales/")).map((k) => k.split("/").pop()).sort();
    const z = require("zod");
    const atLoad = loaded();
    const english = z.string().safeParse(1).error.issues[0].message;
    const keys = Object.keys(z.locales);
    const hasFr = "fr" in z.locales;
    z.config(z.locales.fr());
    const french = z.string().safeParse(1).error.issues[0].message;
    z.config(z.locales.en());
    console.log(JSON.stringify({ atLoad, english, keys, hasFr, french, after: loaded().length, installed: typeof installed === "undefined" ? null : installed, again: typeof mod === "undefined" ? null : mod.deferZodLocales() }));`;

  it("loads only English with zod, and every locale on first use, as zod itself offers them", () => {
    const lazy = node(loading(LOCALES) + "const installed = mod.deferZodLocales();" + report) as Record<
      string,
      unknown
    >;
    const eager = node("const mod = undefined;" + report) as Record<string, unknown>;
    expect(lazy["atLoad"]).toEqual(["en.cjs", "index.cjs"]); // the index is the stand-in
    expect((eager["atLoad"] as string[]).length).toBeGreaterThan(60);
    // Nothing a zod user sees differs: the same locale names, the same messages, English by default.
    expect(lazy["keys"]).toEqual(eager["keys"]);
    expect(lazy["hasFr"]).toBe(true);
    expect(lazy["english"]).toBe(eager["english"]);
    expect(lazy["french"]).toBe(eager["french"]);
    expect(lazy["french"]).not.toBe(lazy["english"]);
    expect(lazy["after"]).toBe(eager["after"]);
    // Once zod is loaded, installing again does nothing.
    expect(lazy["installed"]).toBe(true);
    expect(lazy["again"]).toBe(false);
  });

  it("does nothing when zod was loaded first", () => {
    const out = node(
      `require("zod");${loading(LOCALES)} console.log(JSON.stringify({ again: mod.deferZodLocales(), fr: typeof require("zod").locales.fr }));`,
    );
    expect(out).toEqual({ again: false, fr: "function" });
  });
});

describe("zod's compiled parsers", () => {
  let h: Harness;

  beforeAll(async () => {
    h = await startHarness();
  });

  afterAll(async () => {
    await h?.close();
  });

  it("are not built by a Job's check, read or diff (they cost more than they save over a command's few records)", async () => {
    const created = await createJob({
      job: {
        ID: "first-call",
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "a" } }] }],
      },
      waitForDeployment: false,
    });
    // zod builds a parser with `new Function`, looked up on the global object when it compiles one.
    const real = globalThis.Function;
    let built = 0;
    globalThis.Function = new Proxy(real, {
      construct(target, args: unknown[]) {
        built++;
        return Reflect.construct(target, args) as object;
      },
    });
    try {
      const checked = await job.check(
        {},
        {
          job: {
            ID: "first-call",
            TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "b" } }] }],
          },
          waitForDeployment: false,
        },
      );
      expect(checked.failures ?? []).toEqual([]);
      const read = await job.read(created.id, created.outs);
      expect(read.id).toBe(created.id);
      await job.diff(created.id, read.props as typeof created.outs, checked.inputs as Parameters<typeof job.diff>[2]);
    } finally {
      globalThis.Function = real;
    }
    expect(built).toBe(0);
  });
});
