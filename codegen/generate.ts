/**
 * `npm run generate` (through scripts/generate.js): writes every generated file (./files.ts) that differs
 * from the one on disk, and says which. `--check` writes nothing and fails when one differs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { formatted, renderedFiles } from "./files";

/** Runs the generator on the repository at `root`; resolves to the exit code. */
export async function main(root: string, args: readonly string[]): Promise<number> {
  const check = args.includes("--check");
  const stale: string[] = [];
  for (const file of renderedFiles(root)) {
    const text = await formatted(root, file);
    const full = join(root, file.path);
    if (existsSync(full) && readFileSync(full, "utf8") === text) continue;
    stale.push(file.path);
    if (check) continue;
    mkdirSync(dirname(full), { recursive: true });
    writeFileSync(full, text);
  }
  for (const path of stale) console.log(`${check ? "stale" : "wrote"} ${path}`);
  if (stale.length === 0) console.log("generate: every generated file is up to date");
  return check && stale.length > 0 ? 1 : 0;
}
