/**
 * Every fenced code block of the README and of the guides under docs/ is compiled or run, and their tables
 * and versions agree with the code: TypeScript blocks are type-checked against the package's sources with the README's own
 * tsconfig, the devserver block is run, HCL is parsed, JSON is parsed, and every shell command is checked
 * against what exists (npm scripts, environment variables the library or the conformance suite reads,
 * stack config keys, Pulumi CLI commands and flags).
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { hclToJson } from "../devserver/scheduler/hcl/engine";
import type { ApiErrorCode, ResourceErrorCode } from "../provider/errors";
import { CONFIG_NAMESPACE, SETTINGS } from "../provider/http/setting-table";
import { authMountDefinition } from "../provider/resources/definitions/auth-mount";

const ROOT = resolve(__dirname, "..");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
/** The README and the guides under docs/, by their paths from the repository root. */
const DOCS: Record<string, string> = {
  "README.md": README,
  ...Object.fromEntries(
    readdirSync(join(ROOT, "docs"))
      .filter((f) => f.endsWith(".md"))
      .map((f) => [`docs/${f}`, readFileSync(join(ROOT, "docs", f), "utf8")]),
  ),
};
const PKG = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
  name: string;
  engines: { node: string };
  scripts: Record<string, string>;
  exports: Record<string, { default: string }>;
};

interface Block {
  lang: string;
  code: string;
  line: number;
  /** The Markdown file the block is in, from the repository root. */
  file: string;
}

/** The fenced blocks of a Markdown text, indented ones (inside list items) included, without their indent. */
function fencedBlocks(md: string, file: string): Block[] {
  const blocks: Block[] = [];
  const lines = md.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```(\S*)\s*$/.exec(lines[i] ?? "");
    if (!open) continue;
    const indent = open[1] ?? "";
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && (lines[j] ?? "").trim() !== "```"; j++) body.push((lines[j] ?? "").slice(indent.length));
    blocks.push({ lang: open[2] ?? "", code: body.join("\n") + "\n", line: i + 1, file });
    i = j;
  }
  return blocks;
}

const blocks = Object.entries(DOCS).flatMap(([file, md]) => fencedBlocks(md, file));
const ofLang = (lang: string) => blocks.filter((b) => b.lang === lang);

/** The package's own module specifiers mapped to their TypeScript sources (from package.json `exports`). */
function packageSources(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [sub, target] of Object.entries(PKG.exports)) {
    const m = /^\.\/dist\/(.+)\.js$/.exec(target.default);
    if (!m) continue;
    out[sub === "." ? PKG.name : `${PKG.name}/${sub.slice(2)}`] = join(ROOT, `${m[1]}.ts`);
  }
  return out;
}

/** True when a block uses `await` at its top level (it is then an ES module). */
const hasTopLevelAwait = (code: string) => /^(?:await\b|(?:const|let)\b[^\n]*=\s*await\b)/m.test(code);

/** The README's tsconfig for a Pulumi program (the JSON block with compilerOptions). */
function readmeTsconfig(): { compilerOptions: Record<string, unknown> } {
  const configs = ofLang("json")
    .map((b) => ({ file: b.file, json: JSON.parse(b.code) as { compilerOptions?: Record<string, unknown> } }))
    .filter((c) => c.json.compilerOptions !== undefined);
  expect(configs.map((c) => c.file)).toEqual(["README.md"]);
  return configs[0]?.json as { compilerOptions: Record<string, unknown> };
}

/** Type-checks sources as files in the repository root (so node_modules resolve), with the given options. */
function typecheck(files: Record<string, string>, compilerOptions: Record<string, unknown>): string[] {
  const converted = ts.convertCompilerOptionsFromJson(compilerOptions, ROOT);
  const optionErrors = converted.errors.map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  const paths: Record<string, string[]> = {};
  for (const [spec, file] of Object.entries(packageSources())) paths[spec] = [file];
  const options: ts.CompilerOptions = { ...converted.options, noEmit: true, paths, types: ["node"] };
  delete options.outDir;
  const virtual = new Map(Object.entries(files).map(([name, text]) => [join(ROOT, name), text]));
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.fileExists = (f) => virtual.has(f) || ts.sys.fileExists(f);
  host.readFile = (f) => virtual.get(f) ?? ts.sys.readFile(f);
  host.getSourceFile = (f, lang, onError, create) => {
    const text = virtual.get(f);
    return text !== undefined ? ts.createSourceFile(f, text, lang, true) : getSourceFile(f, lang, onError, create);
  };
  const program = ts.createProgram({ rootNames: [...virtual.keys()], options, host });
  const diagnostics = [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...[...virtual.keys()].flatMap((f) => {
      const sf = program.getSourceFile(f);
      return sf ? [...program.getSyntacticDiagnostics(sf), ...program.getSemanticDiagnostics(sf)] : [];
    }),
  ];
  return [
    ...optionErrors,
    ...diagnostics.map((d) => {
      const where =
        d.file && d.start !== undefined
          ? `${d.file.fileName.slice(ROOT.length + 1)}:${d.file.getLineAndCharacterOfPosition(d.start).line + 1}: `
          : "";
      return `${where}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    }),
  ];
}

describe("README and docs code blocks", () => {
  it("are all of a kind this test checks", () => {
    expect(blocks.length).toBeGreaterThan(5);
    for (const b of blocks)
      expect(["ts", "sh", "hcl", "json"], `${b.file}:${b.line} has a \`\`\`${b.lang} block`).toContain(b.lang);
  });

  it("the README keeps the main job's and the test's commands, as CI runs them", () => {
    const readmeSh = ofLang("sh")
      .filter((b) => b.file === "README.md")
      .map((b) => b.code.trim());
    expect(readmeSh).toContain("npm ci && npm run example");
    expect(readmeSh).toContain("npm ci && npm test");
  });

  it("TypeScript blocks type-check against the package with the README's tsconfig", () => {
    const ts6 = ofLang("ts");
    expect(ts6.length).toBeGreaterThanOrEqual(2);
    const files: Record<string, string> = {};
    ts6.forEach((b, i) => {
      const name = b.file.replace(/\.md$/, "").replace(/\W/g, "-");
      files[`readme-block-${name}-${b.line}-${i}.${hasTopLevelAwait(b.code) ? "mts" : "ts"}`] = b.code;
    });
    expect(typecheck(files, readmeTsconfig().compilerOptions)).toEqual([]);
  }, 120_000);

  it("the README's tsconfig is one TypeScript 6 accepts, and the setting it warns about really fails", () => {
    const cfg = readmeTsconfig().compilerOptions;
    expect(cfg.moduleResolution).not.toBe("node");
    const probe = { "readme-probe.ts": "export const x: number = 1;\n" };
    expect(typecheck(probe, cfg)).toEqual([]);
    expect(README).toContain("TS5107");
    expect(typecheck(probe, { ...cfg, module: "commonjs", moduleResolution: "node" }).join("\n")).toContain("TS5107");
  }, 60_000);

  it("the devserver block runs as written", async () => {
    const runnable = ofLang("ts").filter((b) => b.code.includes(`${PKG.name}/devserver`));
    expect(runnable).toHaveLength(1);
    let code = (runnable[0] as Block).code;
    for (const [spec, file] of Object.entries(packageSources())) {
      code = code.split(`"${spec}"`).join(JSON.stringify(pathToFileURL(file).href));
    }
    const dir = mkdtempSync(join(tmpdir(), "pss-readme-"));
    const logs: unknown[][] = [];
    const log = console.log;
    console.log = (...args: unknown[]) => logs.push(args);
    try {
      const file = join(dir, "devserver-block.mts");
      writeFileSync(file, code);
      await import(pathToFileURL(file).href);
    } finally {
      console.log = log;
      rmSync(dir, { recursive: true, force: true });
    }
    expect(logs).toHaveLength(1);
    expect(logs[0]?.[0]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(logs[0]?.[1]).toBe(3);
  }, 60_000);

  it("HCL blocks parse", () => {
    const hcl = ofLang("hcl");
    expect(hcl.length).toBeGreaterThan(0);
    for (const b of hcl) {
      const r = hclToJson("readme.hcl", b.code);
      expect(r.ok, `${b.file}:${b.line}: ${r.ok ? "" : r.error}`).toBe(true);
    }
  });

  it("shell commands name only scripts, variables, stack config keys and CLI flags that exist", () => {
    const conformanceVars = new Set<string>();
    for (const f of readdirSync(join(ROOT, "test/conformance"))) {
      for (const m of readFileSync(join(ROOT, "test/conformance", f), "utf8").matchAll(/\bCONFORMANCE_[A-Z_]+/g))
        conformanceVars.add(m[0]);
    }
    // The real-cluster harness's variables: the ones its files read from process.env.
    const clusterVars = new Set<string>();
    for (const f of readdirSync(join(ROOT, "test/real-clusters")).filter((n) => n.endsWith(".ts"))) {
      for (const m of readFileSync(join(ROOT, "test/real-clusters", f), "utf8").matchAll(
        /process\.env(?:\.|\[")([A-Z_]+)|cliGate\("([A-Z_]+)"\)/g,
      ))
        clusterVars.add(m[1] ?? m[2] ?? "");
    }
    const libraryVars = new Set(SETTINGS.flatMap((s) => (s.env === undefined ? [] : [s.env])));
    const configKeys = new Set(SETTINGS.map((s) => `${CONFIG_NAMESPACE}:${s.configKey}`));
    // The root project's own keys: the ones its program (examples/root/index.ts) reads.
    for (const m of readFileSync(join(ROOT, "examples/root/index.ts"), "utf8").matchAll(
      /\bconfig\.(?:get|require)(?:Secret|Number|Boolean)?\("(\w+)"\)/g,
    )) {
      if (m[1] !== undefined) configKeys.add(m[1]);
    }
    // Flags of the Pulumi CLI commands the README may use (https://www.pulumi.com/docs/iac/cli/commands/).
    const common = [
      "--yes",
      "-y",
      "--stack",
      "-s",
      "--cwd",
      "-C",
      "--non-interactive",
      "--skip-preview",
      "--diff",
      "--expect-no-changes",
    ];
    const pulumiFlags: Record<string, string[]> = {
      "config set": ["--secret", "--plaintext", "--path"],
      "config rm": ["--path"],
      "config get": ["--path"],
      "stack init": ["--secrets-provider"],
      "stack select": ["--create"],
      "stack output": ["--show-secrets", "--json"],
      "stack export": ["--show-secrets", "--file"],
      login: ["--local"],
      preview: ["--run-program"],
      up: [],
      refresh: ["--run-program"],
      destroy: ["--run-program"],
    };
    const knownVar = (name: string): boolean =>
      libraryVars.has(name) ||
      conformanceVars.has(name) ||
      clusterVars.has(name) ||
      name.startsWith("PULUMI_") ||
      name === "PATH";
    const commands = ofLang("sh").flatMap((b) =>
      b.code
        .split("\n")
        .map((l) => l.replace(/\s+#.*$/, "").trim())
        .filter((l) => l !== "" && !l.startsWith("#"))
        .flatMap((l) => l.split("&&").map((c) => ({ file: b.file, line: b.line, cmd: c.trim() }))),
    );
    expect(commands.length).toBeGreaterThan(5);
    for (const { file, line, cmd } of commands) {
      const at = `${file}:${line}: ${cmd}`;
      const all = cmd.split(/\s+/);
      // Leading `NAME=value` assignments: each a variable something here reads.
      const lead = all.findIndex((w) => !/^[A-Z_]+=/.test(w));
      for (const assignment of all.slice(0, lead)) expect(knownVar(assignment.split("=")[0] ?? ""), at).toBe(true);
      const words = all.slice(lead);
      if (words[0] === "npm") {
        if (words[1] === "ci" || words[1] === "test") continue;
        expect(words[1], at).toBe("run");
        expect(Object.keys(PKG.scripts), at).toContain(words[2]);
      } else if (words[0] === "export") {
        for (const assignment of words.slice(1)) {
          const name = assignment.split("=")[0] ?? "";
          expect(
            knownVar(name),
            `${at}: ${name} is read by neither the library, the conformance suite, the cluster harness nor Pulumi`,
          ).toBe(true);
        }
      } else if (words[0] === "pulumi") {
        const sub = words[1] === "config" || words[1] === "stack" ? `${words[1]} ${words[2]}` : (words[1] ?? "");
        expect(Object.keys(pulumiFlags), at).toContain(sub);
        for (const flag of words.filter((w) => w.startsWith("-")).map((w) => w.split("=")[0] ?? "")) {
          expect([...(pulumiFlags[sub] ?? []), ...common], at).toContain(flag);
        }
        if (sub === "config set" || sub === "config rm") {
          const key = words.slice(3).find((w) => !w.startsWith("--"));
          expect(
            configKeys.has(key ?? ""),
            `${at}: ${key} is not a stack config key of this library or the root project`,
          ).toBe(true);
        }
      } else if (words[0] === "npx" && words[1] === "vitest" && words[2] === "run") {
        for (const f of words.slice(3)) expect(existsSync(join(ROOT, f)), `${at}: ${f} does not exist`).toBe(true);
      } else if (words[0] === "node" || /^(\.\/)?scripts\//.test(words[0] ?? "")) {
        const file = words[0] === "node" ? words[1] : words[0];
        expect(existsSync(join(ROOT, file ?? "")), `${at}: ${file} does not exist`).toBe(true);
      } else {
        throw new Error(`${at}: no check for this command; add one to test/readme.test.ts`);
      }
    }
  });
});

describe("README and docs claims", () => {
  it("names the Node.js version package.json requires, everywhere it names one", () => {
    const floor = /^>=(\d+\.\d+\.\d+)$/.exec(PKG.engines.node)?.[1];
    expect(floor).toBeDefined();
    const mentionsIn = (md: string) =>
      [...md.matchAll(/\bNode(?:\.js)? (\d+\.\d+(?:\.\d+)?) or newer/g)].map((m) => m[1]);
    expect(mentionsIn(README).length).toBeGreaterThanOrEqual(1);
    const mentions = Object.values(DOCS).flatMap(mentionsIn);
    expect(mentions.length).toBeGreaterThanOrEqual(3);
    for (const m of mentions) expect(m).toBe(floor);
  });

  it("lists every stack config key and environment variable the library reads, a setting per table row", () => {
    const config = DOCS["docs/configuration.md"] ?? "";
    expect(config.startsWith("# Configuration\n")).toBe(true);
    // The configuration table's rows, as cells: stack config keys, variables, meaning.
    const rows = config
      .slice(0, config.indexOf("\n\n", config.indexOf("\n|")))
      .split("\n")
      .filter((l) => l.startsWith("| `"))
      .map((l) => l.split("|").map((c) => c.trim()));
    expect(rows.length).toBeGreaterThan(10);
    for (const s of SETTINGS) {
      const at = `stack config key ${s.configKey}`;
      expect(config, at).toContain(`\`${s.configKey}\``);
      const row = rows.find((r) => (r[1] ?? "").includes(`\`${s.configKey}\``));
      expect(row, `${at}: no row of the configuration table`).toBeDefined();
      // Its variable in the same row (none for settings without one), and "(secret)" on credentials only.
      if (s.env === undefined) expect(row?.[2], `${at}: names no variable`).toBe("");
      else {
        expect(config, `variable ${s.env}`).toContain(`\`${s.env}`);
        expect(row?.[2], `${at}: its variable ${s.env} in the same row`).toContain(`\`${s.env}`);
      }
      expect(row?.[1]?.includes(`\`${s.configKey}\` (secret)`), `${at} (secret)`).toBe(s.secret);
    }
  });

  it("docs/configuration.md names every error code, a ResourceError's each in a row of its table", () => {
    // Exhaustive by type: a code added to provider/errors.ts fails the typecheck here until it is listed.
    const resource = {
      already_exists: 1,
      changed_outside: 1,
      replace_needed: 1,
      outcome_unknown: 1,
      not_applied: 1,
      gone: 1,
      plan_changed: 1,
      unfinished: 1,
    } satisfies Record<ResourceErrorCode, 1>;
    const api = {
      bad_request: 1,
      permission_denied: 1,
      not_found: 1,
      conflict: 1,
      rate_limited: 1,
      server: 1,
      unavailable: 1,
      transport: 1,
      timeout: 1,
      aborted: 1,
      bad_response: 1,
      unsupported: 1,
    } satisfies Record<ApiErrorCode, 1>;
    const config = DOCS["docs/configuration.md"] ?? "";
    for (const code of Object.keys(resource)) expect(config, code).toMatch(new RegExp(`^\\| \`${code}\` \\| `, "m"));
    for (const code of [...Object.keys(api), "invalid_usage", "invalid_config"])
      expect(config, code).toContain(`\`${code}\``);
  });

  it("the README's first screen says the defaults are the devserver's and what to change for real clusters", () => {
    const firstScreen = README.split("\n").slice(0, 25).join(" ").replace(/\s+/g, " ");
    const styles = SETTINGS.filter((s) => s.configKey.endsWith("HeaderStyle"));
    expect(styles.length).toBe(2);
    for (const s of styles) {
      expect(firstScreen).toContain(`\`${s.configKey}\``);
      expect(firstScreen).toContain(`\`${s.env}=real\``);
    }
    expect(firstScreen).toContain('`headerStyle: "real"`');
    const def = authMountDefinition.fields;
    expect(firstScreen).toContain(`type and path \`${String(def.type.default)}\``);
    expect(def.path.default).toBe(def.type.default);
    expect(firstScreen).toContain('`type: "azure"`');
    expect(firstScreen).toContain('`path: "azure"`');
  });
});
