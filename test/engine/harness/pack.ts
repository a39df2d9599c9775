/**
 * Builds and packs the library the way a release does, without touching the repository's `dist/`:
 * teammates build and test in the same work tree, so the harness compiles into a private staging
 * directory (same tsconfig, same bundle step, same `files` list) and runs `npm pack` on that.
 */
import { execFile } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { createHash } from "node:crypto";
import { join, relative } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A packed build of the library. */
export interface PackedLibrary {
  /** Absolute path of the `.tgz`. */
  readonly tarball: string;
  /** The staging directory the tarball was packed from (its `dist/` is the build). */
  readonly stageDir: string;
  readonly buildMs: number;
  readonly packMs: number;
  /** Type errors tsc printed (it still emits); the typecheck step of `npm test` is where they fail. */
  readonly tscErrors: string;
}

/** The repository root (this file is test/engine/harness/pack.ts). */
export const REPO_ROOT = join(__dirname, "..", "..", "..");

/** Compiles the library into `<workDir>/stage-<label>` and packs it there; resolves to the tarball. */
export async function packLibrary(workDir: string, label: string): Promise<PackedLibrary> {
  const stageDir = join(workDir, `stage-${label}`);
  mkdirSync(stageDir, { recursive: true });
  for (const f of ["package.json", "README.md", "LICENSE"]) {
    if (existsSync(join(REPO_ROOT, f))) copyFileSync(join(REPO_ROOT, f), join(stageDir, f));
  }
  const tsc = join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
  const t0 = Date.now();
  let tscErrors = "";
  try {
    await run(
      process.execPath,
      [tsc, "-p", join(REPO_ROOT, "tsconfig.build.json"), "--outDir", join(stageDir, "dist")],
      {
        cwd: REPO_ROOT,
        maxBuffer: 16 * 1024 * 1024,
      },
    );
  } catch (err) {
    tscErrors = String((err as { stdout?: string }).stdout ?? err);
  }
  // The second half of `npm run build`: the provider entry's bundle, which resolves packages from the
  // build's root as a build in the repository does.
  if (!existsSync(join(stageDir, "node_modules")))
    symlinkSync(join(REPO_ROOT, "node_modules"), join(stageDir, "node_modules"), "dir");
  await run(process.execPath, [join(REPO_ROOT, "scripts", "bundle-host.js"), join(stageDir, "dist")], {
    cwd: REPO_ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const buildMs = Date.now() - t0;
  for (const f of ["dist/provider/index.js", "dist/provider/host-bundle.js", "dist/sdk/shim/make.js"]) {
    if (!existsSync(join(stageDir, f))) throw new Error(`build produced no ${f}:\n${tscErrors}`);
  }
  const t1 = Date.now();
  const { stdout } = await run(
    "npm",
    ["pack", stageDir, "--pack-destination", stageDir, "--json", "--ignore-scripts"],
    {
      cwd: stageDir,
      maxBuffer: 16 * 1024 * 1024,
    },
  );
  const packMs = Date.now() - t1;
  const info = JSON.parse(stdout) as Array<{ filename: string }>;
  const filename = info[0]?.filename;
  if (filename === undefined) throw new Error(`npm pack printed no file name: ${stdout.slice(0, 500)}`);
  return { tarball: join(stageDir, filename), stageDir, buildMs, packMs, tscErrors };
}

/** Returns a hash per file under `dir` (relative paths), to compare two builds byte for byte. */
export function hashTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else out.set(relative(dir, p), createHash("sha256").update(readFileSync(p)).digest("hex"));
    }
  };
  walk(dir);
  return out;
}
