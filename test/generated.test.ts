/**
 * The files generated from the resource definitions (sdk/generated/*.ts, docs/reference/*.md) are the ones
 * the definitions render today. `npm run generate` runs this file with GENERATE=1, which writes them instead.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import * as prettier from "prettier";
import { describe, expect, it } from "vitest";
import { definitions } from "../provider/resources/definitions";
import { renderReference, renderSdk } from "./helpers/render-definitions";

const ROOT = resolve(__dirname, "..");
const WRITE = process.env["GENERATE"] === "1";

async function formatted(path: string, text: string): Promise<string> {
  if (!path.endsWith(".ts")) return text;
  const config = await prettier.resolveConfig(join(ROOT, path));
  return prettier.format(text, { ...config, filepath: join(ROOT, path) });
}

const files = definitions.flatMap((def) => [
  { path: `sdk/generated/${def.module}.ts`, render: () => renderSdk(def) },
  { path: `docs/reference/${def.module}.md`, render: () => renderReference(def) },
]);

describe("generated files", () => {
  it.each(files)("$path is up to date", async ({ path, render }) => {
    const want = await formatted(path, render());
    const full = join(ROOT, path);
    if (WRITE) {
      mkdirSync(dirname(full), { recursive: true });
      writeFileSync(full, want);
      return;
    }
    const have = existsSync(full) ? readFileSync(full, "utf8") : undefined;
    expect(have, `${path} is stale: run \`npm run generate\``).toBe(want);
  });

  it("every generated TypeScript file is one prettier leaves as it is", async () => {
    for (const { path, render } of files.filter((f) => f.path.endsWith(".ts"))) {
      const text = await formatted(path, render());
      expect(await formatted(path, text)).toBe(text);
    }
  });
});
