/**
 * The files `npm run generate` writes (codegen/files.ts lists them) are the ones the registry and the
 * resource definitions render today. This only compares: `npm run generate` rewrites them.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { formatted, renderedFiles } from "../codegen/files";

const ROOT = resolve(__dirname, "..");

describe("generated files", () => {
  it.each(renderedFiles(ROOT))("$path is up to date", async (file) => {
    const full = join(ROOT, file.path);
    const have = existsSync(full) ? readFileSync(full, "utf8") : undefined;
    expect(have, `${file.path} is stale: run \`npm run generate\``).toBe(await formatted(ROOT, file));
  });

  it("every generated TypeScript file is one prettier leaves as it is", async () => {
    for (const file of renderedFiles(ROOT).filter((f) => f.path.endsWith(".ts"))) {
      const text = await formatted(ROOT, file);
      expect(await formatted(ROOT, { path: file.path, text }), file.path).toBe(text);
    }
  });

  it("the generator runs as a plain Node script: `scripts/generate.js --check` finds nothing stale", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [join(ROOT, "scripts", "generate.js"), "--check"], {
      cwd: ROOT,
    });
    expect(stdout).toBe("generate: every generated file is up to date\n");
  });
});
