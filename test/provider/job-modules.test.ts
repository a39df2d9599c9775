/**
 * The provider host loads a resource's code on its first call, and only what that resource uses: a stack
 * of Jobs does not load the secrets service's wire records or client (about 13 ms of CPU per command).
 * Checked in Node's own module cache, in a plain Node process that compiles the sources in memory.
 */
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(__dirname, "..", "..");

/** The repository's modules (paths from its root) that loading `kind`'s provider loads. */
function modulesOf(kind: string): string[] {
  const script = `
    const ts = require("typescript");
    const { readFileSync } = require("node:fs");
    const options = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
    require.extensions[".ts"] = (m, file) =>
      m._compile(ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions: options }).outputText, file);
    require("./provider/index.ts").provider(${JSON.stringify(kind)});
    const root = ${JSON.stringify(ROOT + "/")};
    const own = Object.keys(require.cache).filter((k) => k.startsWith(root) && !k.includes("/node_modules/"));
    process.stdout.write(JSON.stringify(own.map((k) => k.slice(root.length))));`;
  const out = execFileSync(process.execPath, ["--no-experimental-strip-types", "-e", script], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return JSON.parse(out) as string[];
}

describe("module loading in the provider host", () => {
  it("a Job loads neither the secrets service's schemas nor its client", { timeout: 60_000 }, () => {
    const loaded = modulesOf("job");
    expect(loaded).toContain("provider/resources/job/index.ts");
    expect(loaded).toContain("provider/resources/definition.ts");
    const secrets = loaded.filter(
      (f) =>
        f === "provider/schemas/secrets.ts" ||
        f.startsWith("provider/clients/secrets/index") ||
        f === "provider/resources/auth-common.ts",
    );
    expect(secrets).toEqual([]);
  });

  it("an AuthRole loads them", { timeout: 60_000 }, () => {
    const loaded = modulesOf("authRole");
    expect(loaded).toContain("provider/schemas/secrets.ts");
    expect(loaded).toContain("provider/clients/secrets/index.ts");
  });
});
