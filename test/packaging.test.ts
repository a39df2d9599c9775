/**
 * `npm pack` ships the built library: `prepack` compiles it, so a publish or a git install never ships an
 * empty package. Runs the real `npm pack` (scripts on) in a copy of the sources without `dist/`, so the
 * repository's own `dist/` is neither used nor touched, and checks the tarball's file list.
 */
import { execFile } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT } from "./engine/harness/pack";

const run = promisify(execFile);
/** What the package holds at its top level, and nothing else. */
const TOP_LEVEL = ["CHANGELOG.md", "LICENSE", "README.md", "dist", "package.json"];
const stage = realpathSync(mkdtempSync(join(tmpdir(), "pss-pack-")));
/** The tarball the first test packs; the others use it. */
let tarball = "";

afterAll(() => {
  rmSync(stage, { recursive: true, force: true });
});

interface PackInfo {
  filename: string;
  files: Array<{ path: string }>;
}

describe("npm pack", () => {
  it(
    "builds dist/ on pack and ships it with the README, and no sources, tests or examples",
    { timeout: 240_000 },
    async () => {
      for (const f of [
        "package.json",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "tsconfig.json",
        "tsconfig.build.json",
        "index.ts",
      ])
        copyFileSync(join(REPO_ROOT, f), join(stage, f));
      for (const d of ["sdk", "provider", "devserver", "scripts"])
        cpSync(join(REPO_ROOT, d), join(stage, d), { recursive: true });
      symlinkSync(join(REPO_ROOT, "node_modules"), join(stage, "node_modules"), "dir");
      expect(existsSync(join(stage, "dist"))).toBe(false);

      const { stdout } = await run("npm", ["pack", "--json", "--loglevel=error"], {
        cwd: stage,
        maxBuffer: 64 * 1024 * 1024,
      });
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
      const pkg = (await import(join(REPO_ROOT, "package.json"), { with: { type: "json" } })) as {
        default: { exports: Record<string, Record<string, string> | string> };
      };
      for (const target of Object.values(pkg.default.exports).flatMap((t) =>
        typeof t === "string" ? [t] : Object.values(t),
      )) {
        expect(files, target).toContain(target.replace(/^\.\//, ""));
      }
      // Exactly dist/, the README, the license, the changelog and package.json.
      expect([...new Set(files.map((f) => f.split("/")[0]))].sort()).toEqual(TOP_LEVEL);
      expect(files.filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"))).toEqual([]);
      expect(existsSync(join(stage, info[0]?.filename ?? "missing.tgz"))).toBe(true);
      tarball = join(stage, info[0]?.filename ?? "missing.tgz");
      // Each module of the host bundle is a parenthesized function, which V8 compiles with the file, so
      // Node's compile cache holds it (scripts/bundle-host.js); a method-style wrapper compiles on first use.
      const wrappers =
        readFileSync(join(stage, "dist", "provider", "host-bundle.js"), "utf8").match(
          /= __commonJS\(\{\n {2}"[^"\n]+"(?:: \(function)?\(/g,
        ) ?? [];
      expect(wrappers.length).toBeGreaterThan(100);
      expect(wrappers.filter((w) => !w.endsWith(": (function("))).toEqual([]);
    },
  );

  it("npm publish --dry-run would publish the same files", { timeout: 120_000 }, async () => {
    expect(tarball).not.toBe("");
    // dist/ is built (by the pack above): no scripts, so no second build.
    const { stdout } = await run("npm", ["publish", "--dry-run", "--ignore-scripts", "--json", "--loglevel=error"], {
      cwd: stage,
      maxBuffer: 64 * 1024 * 1024,
    });
    const published = JSON.parse(stdout) as Record<string, { version: string; files: Array<{ path: string }> }>;
    const entry = published["pulumi-secrets-scheduler"];
    expect(entry?.version).toBe(JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")).version);
    const files = (entry?.files ?? []).map((f) => f.path);
    expect([...new Set(files.map((f) => f.split("/")[0]))].sort()).toEqual(TOP_LEVEL);
    const packed = await run("tar", ["-tzf", tarball]);
    expect(files.sort()).toEqual(
      packed.stdout
        .trim()
        .split("\n")
        .map((f) => f.replace(/^package\//, ""))
        .sort(),
    );
  });

  /** Unpacks the tarball as `<dir>/node_modules/pulumi-secrets-scheduler` (no dependencies); returns the package dir. */
  async function unpackInto(dir: string): Promise<string> {
    const unpack = join(dir, ".unpack");
    mkdirSync(unpack, { recursive: true });
    await run("tar", ["-xzf", tarball, "-C", unpack]);
    const lib = join(dir, "node_modules", "pulumi-secrets-scheduler");
    mkdirSync(join(dir, "node_modules"), { recursive: true });
    renameSync(join(unpack, "package"), lib);
    return lib;
  }

  // Needs the registry (or npm's cache) for the packages' metadata: npm works out the whole tree.
  it(
    "a plain npm install of the tarball does not install the devserver's HCL parser (an optional peer dependency)",
    { timeout: 300_000 },
    async () => {
      expect(tarball).not.toBe("");
      const project = join(stage, "plain-install");
      const lib = await unpackInto(join(stage, "plain-install-manifest"));
      const pkg = JSON.parse(readFileSync(join(lib, "package.json"), "utf8")) as {
        dependencies?: Record<string, string>;
        peerDependencies?: Record<string, string>;
        peerDependenciesMeta?: Record<string, { optional?: boolean }>;
      };
      expect(Object.keys(pkg.dependencies ?? {})).not.toContain("@cdktf/hcl2json");
      expect(pkg.peerDependencies?.["@cdktf/hcl2json"]).toBe("0.21.0");
      expect(pkg.peerDependenciesMeta?.["@cdktf/hcl2json"]?.optional).toBe(true);

      mkdirSync(project);
      writeFileSync(join(project, "package.json"), JSON.stringify({ name: "plain-install", private: true }));
      // npm's default peer handling (npm >= 7 installs required peers, not optional ones); the tree only.
      await run(
        "npm",
        [
          "install",
          "--package-lock-only",
          "--ignore-scripts",
          "--no-audit",
          "--no-fund",
          "--prefer-offline",
          "--loglevel=error",
          tarball,
        ],
        {
          cwd: project,
          maxBuffer: 64 * 1024 * 1024,
        },
      );
      const lock = JSON.parse(readFileSync(join(project, "package-lock.json"), "utf8")) as {
        packages: Record<string, unknown>;
      };
      const installed = Object.keys(lock.packages);
      for (const p of [
        "node_modules/pulumi-secrets-scheduler",
        "node_modules/jose",
        "node_modules/undici",
        "node_modules/zod",
        "node_modules/re2js",
        "node_modules/@pulumi/pulumi",
      ])
        expect(installed, p).toContain(p);
      expect(installed.filter((p) => p.includes("@cdktf/"))).toEqual([]);
    },
  );

  it("without the HCL parser, the devserver's parse route says what to install", { timeout: 60_000 }, async () => {
    expect(tarball).not.toBe("");
    // Outside the stage, whose node_modules (the repository's) has the parser.
    const dir = realpathSync(mkdtempSync(join(tmpdir(), "pss-no-parser-")));
    try {
      await unpackInto(dir);
      // the devserver's one runtime dependency (its regex engine); the HCL parser stays absent
      symlinkSync(join(REPO_ROOT, "node_modules", "re2js"), join(dir, "node_modules", "re2js"), "dir");
      const script = `
        const { startDevServer } = require("pulumi-secrets-scheduler/devserver");
        startDevServer().then(async (s) => {
          const res = await fetch(s.urls.scheduler + "/v1/jobs/parse", {
            method: "POST",
            headers: { "X-Svc-Token": s.rootTokens.scheduler, "Content-Type": "application/json" },
            body: JSON.stringify({ JobHCL: 'job "web" {}' }),
          });
          process.stdout.write(JSON.stringify({ status: res.status, body: await res.text() }));
          await s.close();
        });`;
      const { stdout } = await run(process.execPath, ["-e", script], { cwd: dir });
      const out = JSON.parse(stdout) as { status: number; body: string };
      expect(out.status).toBe(500);
      expect(out.body).toContain("npm install --save-dev --save-exact @cdktf/hcl2json@0.21.0");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // publint: the manifest's fields and the exports map agree with the files shipped. attw (profile node16:
  // node16 from CommonJS and from ESM, and bundlers): each export resolves, to JavaScript and to its types.
  it("publint and attw find no problem in the tarball's exports, types included", { timeout: 120_000 }, async () => {
    expect(tarball).not.toBe("");
    const bin = (name: string): string => join(REPO_ROOT, "node_modules", ".bin", name);
    const lint = await run(bin("publint"), ["run", tarball, "--strict"], { cwd: stage }).catch(
      (e: { stdout: string; stderr: string }) => e,
    );
    expect(`${lint.stdout}${lint.stderr}`).toContain("All good!");
    // The exit code says whether attw found a problem; the table (one column per export) says what.
    const types = await run(
      bin("attw"),
      [tarball, "--profile", "node16", "--no-definitely-typed", "--format", "table-flipped", "--no-color"],
      {
        cwd: stage,
      },
    ).then(
      (r) => ({ ...r, code: 0 }),
      (e: { stdout: string; code: number }) => e,
    );
    for (const entry of ["clients", "devserver", "provider", "shim/auth-mount", "shim/job", "shim/job-version-tag"])
      expect(types.stdout).toContain(`"pulumi-secrets-scheduler/${entry}"`);
    expect(types.code, types.stdout).toBe(0);
  });
});
