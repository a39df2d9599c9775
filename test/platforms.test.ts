/**
 * `npm ci` works on every platform the README names (Linux x64 and arm64, macOS x64 and arm64; Windows
 * through WSL, which is Linux), and each gets the project's own Node 24. npm refuses to install a package
 * that is not optional when its `os`/`cpu` exclude the machine (EBADPLATFORM), and its `--os`/`--cpu` flags
 * choose optional packages without simulating that check, so the lockfile is read as well as dry-run.
 */
import { execFile, spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { createRequire } from "node:module";
import { transformSync } from "esbuild";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./engine/harness/pack";

const run = promisify(execFile);

interface LockEntry {
  version?: string;
  os?: string | string[];
  cpu?: string | string[];
  libc?: string | string[];
  dev?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  link?: boolean;
  bin?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
const LOCK = JSON.parse(readFileSync(join(REPO_ROOT, "package-lock.json"), "utf8")) as {
  packages: Record<string, LockEntry>;
};
const ENTRIES = Object.entries(LOCK.packages).filter(([path]) => path !== "");
const PLATFORMS = [
  { os: "linux", cpu: "x64" },
  { os: "linux", cpu: "arm64" },
  { os: "darwin", cpu: "x64" },
  { os: "darwin", cpu: "arm64" },
] as const;

/** npm's rule for an `os`/`cpu` field: a list of allowed values, or of `!`-excluded ones. */
function allows(field: string | string[] | undefined, value: string): boolean {
  if (field === undefined) return true;
  const list = Array.isArray(field) ? field : [field];
  if (list.includes(`!${value}`)) return false;
  const allowed = list.filter((v) => !v.startsWith("!"));
  return allowed.length === 0 || allowed.includes(value);
}
const restricted = (e: LockEntry) => e.os !== undefined || e.cpu !== undefined || e.libc !== undefined;
const nameOf = (path: string) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length);

describe("package-lock.json", () => {
  it("restricts no package that npm must install to an os or cpu (npm would stop with EBADPLATFORM)", () => {
    const hard = ENTRIES.filter(([, e]) => restricted(e) && !e.optional && !e.devOptional).map(([p]) => p);
    expect(hard).toEqual([]);
    // The check has something to check: the native tools and the Node binaries are restricted, optionally.
    expect(ENTRIES.filter(([, e]) => restricted(e)).length).toBeGreaterThan(10);
  });

  it("keeps every Node binary a development package, which users of the library never install", () => {
    const nodes = ENTRIES.filter(([, e]) => e.bin?.node !== undefined);
    expect(nodes.length).toBeGreaterThanOrEqual(PLATFORMS.length);
    for (const [path, e] of nodes) expect({ path, dev: e.dev }).toEqual({ path, dev: true });
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as Record<string, unknown>;
    expect(pkg.optionalDependencies).toBeUndefined();
  });
});

describe.each(PLATFORMS)("npm ci on $os-$cpu", ({ os, cpu }) => {
  const fits = (e: LockEntry) => allows(e.os, os) && allows(e.cpu, cpu);

  it("lets every package npm must install run there, and resolves one Node 24 for it", () => {
    expect(ENTRIES.filter(([, e]) => !e.optional && !e.devOptional && !fits(e)).map(([p]) => p)).toEqual([]);
    const nodes = ENTRIES.filter(([, e]) => e.bin?.node !== undefined && fits(e));
    expect(nodes.map(([p]) => p)).toHaveLength(1);
    expect(nodes[0]![1].version).toMatch(/^24\./);
    // docs/setup.md names the Node each platform gets.
    expect(readFileSync(join(REPO_ROOT, "docs", "setup.md"), "utf8")).toContain(
      `the project's Node ${nodes[0]![1].version}`,
    );
  });

  it(
    "installs (npm ci --dry-run --os --cpu, offline) that Node and one native build of each tool",
    { timeout: 120_000 },
    async () => {
      // The manifests only, in a directory of its own: the dry run lists every package it would add.
      const stage = realpathSync(mkdtempSync(join(tmpdir(), `pss-platform-${os}-${cpu}-`)));
      let stdout: string;
      try {
        for (const f of ["package.json", "package-lock.json", "tools/dev-node/package.json"]) {
          mkdirSync(join(stage, f, ".."), { recursive: true });
          cpSync(join(REPO_ROOT, f), join(stage, f));
        }
        const args = ["ci", "--dry-run", `--os=${os}`, `--cpu=${cpu}`, "--offline", "--ignore-scripts"];
        ({ stdout } = await run("npm", [...args, "--no-audit", "--no-fund"], { cwd: stage, maxBuffer: 16 << 20 }));
      } finally {
        rmSync(stage, { recursive: true, force: true });
      }
      const added = new Set(
        stdout
          .split("\n")
          .filter((l) => l.startsWith("add "))
          .map((l) => l.split(" ").slice(1, 3).join("@")),
      );
      expect(added.size).toBeGreaterThan(100);

      const [nodePath, node] = ENTRIES.find(([, e]) => e.bin?.node !== undefined && fits(e))!;
      expect([...added]).toContain(`${nameOf(nodePath)}@${node.version}`);

      // Each package that comes with a family of platform builds (esbuild, TypeScript 7, rolldown, ...;
      // tools/dev-node's Node binaries too) gets one of them here.
      const families = ENTRIES.flatMap(([path, e]) => {
        const builds = Object.keys(e.optionalDependencies ?? {}).filter((n) => {
          const dep = LOCK.packages[`node_modules/${n}`];
          return dep !== undefined && restricted(dep);
        });
        return builds.length >= 2 && fits(e) ? [{ path, builds }] : [];
      });
      expect(families.length).toBeGreaterThanOrEqual(5);
      for (const { path, builds } of families) {
        const got = builds.filter((n) => [...added].some((a) => a.startsWith(`${n}@`)));
        expect({ path, got: got.length > 0 }).toEqual({ path, got: true });
      }
    },
  );
});

describe("scripts/check-node.js", () => {
  const { problem } = createRequire(join(REPO_ROOT, "package.json"))("./scripts/check-node.js") as {
    problem(version: string, platform: string, arch: string): string | undefined;
  };

  it("lets Node 22.19 and newer run the scripts and stops older ones with one line saying what to install", () => {
    for (const v of ["v22.19.0", "v22.23.3", "v23.0.0", "v24.0.0", "v24.21.0", "v26.10.0"])
      expect(problem(v, "linux", "x64"), v).toBeUndefined();
    for (const v of ["v22.18.9", "v22.9.0", "v20.20.2", "v18.20.4", "v4.9.1"]) {
      const line = problem(v, "darwin", "arm64");
      expect(line, v).toContain(`Node.js 22.19.0 or newer and found ${v} on darwin-arm64`);
      expect(line).toContain("https://nodejs.org/en/download");
      expect(line).not.toContain("\n");
    }
  });

  it("sends native Windows to WSL whatever its Node", () => {
    for (const v of ["v24.21.0", "v20.20.2"]) expect(problem(v, "win32", "x64")).toContain("inside WSL");
  });

  it("passes on the Node the npm scripts run on here, and parses as ES5 so an old Node reaches the message", () => {
    const res = spawnSync(process.execPath, [join(REPO_ROOT, "scripts", "check-node.js")], { encoding: "utf8" });
    expect({ status: res.status, stderr: res.stderr }).toEqual({ status: 0, stderr: "" });
    const src = readFileSync(join(REPO_ROOT, "scripts", "check-node.js"), "utf8");
    // esbuild lowers (or refuses) what ES5 lacks: the same output either way means there was nothing to lower.
    expect(transformSync(src, { target: "es5" }).code).toBe(transformSync(src, { target: "esnext" }).code);
  });
});

describe("the shell scripts where they cannot work", () => {
  /** Runs a script of scripts/ with `uname` answering as the given system would. */
  function asSystem(system: string, machine: string, script: string, args: string[]) {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "pss-uname-")));
    try {
      const uname = `#!/bin/sh\ncase "$1" in -s) echo ${system} ;; -m) echo ${machine} ;; *) echo ${system} ;; esac\n`;
      writeFileSync(join(dir, "uname"), uname, { mode: 0o755 });
      return spawnSync("bash", [join(REPO_ROOT, "scripts", script), ...args], {
        encoding: "utf8",
        env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ""}`, PULUMI_CLI_CACHE: join(dir, "cache") },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("scripts/pulumi-cli.sh says at once that native Windows cannot build the CLI", () => {
    for (const system of ["MINGW64_NT-10.0-19045", "MSYS_NT-10.0-19045", "CYGWIN_NT-10.0-19045"]) {
      const res = asSystem(system, "x86_64", "pulumi-cli.sh", ["--check"]);
      expect({ status: res.status, stdout: res.stdout }).toEqual({ status: 1, stdout: "" });
      expect(res.stderr).toContain("cannot build the Pulumi CLI on native Windows");
    }
  });

  it("scripts/node-floor.sh names the platform it has no Node package for, before installing anything", () => {
    const res = asSystem("SunOS", "i86pc", "node-floor.sh", []);
    expect(res.status).toBe(1);
    expect(res.stderr).toContain("no Node package on the npm registry for SunOS i86pc");
    expect(res.stdout).not.toContain("installing");
  });
});
