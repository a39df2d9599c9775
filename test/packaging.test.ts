/**
 * `npm pack` ships the built library: `prepack` compiles it, so a publish or a git install never ships an
 * empty package. Runs the real `npm pack` (scripts on) in a copy of the sources without `dist/`, so the
 * repository's own `dist/` is neither used nor touched, and checks the tarball's file list.
 */
import { execFile } from "node:child_process";
import { copyFileSync, cpSync, existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./engine/harness/pack";

const run = promisify(execFile);
const stage = realpathSync(mkdtempSync(join(tmpdir(), "pss-pack-")));

afterAll(() => {
  rmSync(stage, { recursive: true, force: true });
});

interface PackInfo {
  filename: string;
  files: Array<{ path: string }>;
}

describe("npm pack", () => {
  it("builds dist/ on pack and ships it with the README, and no sources, tests or examples", { timeout: 240_000 }, async () => {
    for (const f of ["package.json", "README.md", "tsconfig.json", "tsconfig.build.json", "index.ts"]) copyFileSync(join(REPO_ROOT, f), join(stage, f));
    for (const d of ["sdk", "provider", "devserver", "scripts"]) cpSync(join(REPO_ROOT, d), join(stage, d), { recursive: true });
    symlinkSync(join(REPO_ROOT, "node_modules"), join(stage, "node_modules"), "dir");
    expect(existsSync(join(stage, "dist"))).toBe(false);

    const { stdout } = await run("npm", ["pack", "--json", "--loglevel=error"], { cwd: stage, maxBuffer: 64 * 1024 * 1024 });
    // npm prints the prepack script's output before the JSON.
    const info = JSON.parse(stdout.slice(stdout.indexOf("[\n"))) as PackInfo[];
    const files = (info[0]?.files ?? []).map((f) => f.path).sort();

    for (const f of [
      "package.json",
      "README.md",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/provider/index.js",
      "dist/provider/host.js",
      "dist/provider/host-bundle.js",
      "dist/provider/host-bundle.LICENSES.txt",
      "dist/provider/clients/index.js",
      "dist/devserver/index.js",
      "dist/sdk/shim/job.js",
      "dist/sdk/shim/auth-config.js",
    ]) {
      expect(files, f).toContain(f);
    }
    // Every path in the exports map is in the tarball.
    const pkg = (await import(join(REPO_ROOT, "package.json"), { with: { type: "json" } })) as { default: { exports: Record<string, Record<string, string> | string> } };
    for (const target of Object.values(pkg.default.exports).flatMap((t) => (typeof t === "string" ? [t] : Object.values(t)))) {
      expect(files, target).toContain(target.replace(/^\.\//, ""));
    }
    expect(files.filter((f) => !f.startsWith("dist/") && f !== "package.json" && f !== "README.md" && f !== "LICENSE")).toEqual([]);
    expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
    expect(existsSync(join(stage, info[0]?.filename ?? "missing.tgz"))).toBe(true);
  });
});
