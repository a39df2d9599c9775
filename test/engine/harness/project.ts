/**
 * A temporary Pulumi project with the packed library installed in its node_modules, the way a user's
 * project has it. Installed from node_modules, the shims are serialized by reference
 * (`require("pulumi-secrets-scheduler/shim/<kind>")`), which is the path real stacks take; the repo's
 * own files would be serialized by value.
 *
 * Two install modes:
 * - `link` (default, offline, about a second): unpack the tarball into `node_modules/pulumi-secrets-scheduler`
 *   as a real directory, and hard-link from the repo's node_modules only what its package.json declares
 *   (dependencies, peer dependencies, and `typescript`, which Pulumi's serializer resolves) plus their
 *   dependency closure, in the repo's (npm-hoisted) layout. An undeclared import fails, as it would for a
 *   user; versions are the repo's locked ones. Symlinks would not do: Node resolves them to their real
 *   path in the repo, and Pulumi's serializer, looking for this package from its own location, would not
 *   find it and would emit a `require` of a path the exports map forbids.
 * - `npm`: a real `npm install <tarball> @pulumi/pulumi@<ENGINE_PULUMI> typescript@<7` (needs the
 *   registry or a warm cache). The Node 22 / newest-Pulumi run uses this, so npm's own resolution of the
 *   declared ranges is exercised too.
 */
import { execFile } from "node:child_process";
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, relative, sep } from "node:path";
import { promisify } from "node:util";
import { REPO_ROOT } from "./pack";

const run = promisify(execFile);

/** Name of the library package (the tarball's package.json `name`). */
export const PACKAGE_NAME = "pulumi-secrets-scheduler";

/** The project name written into Pulumi.yaml and passed to the host as PULUMI_NODEJS_PROJECT. */
export const PROJECT_NAME = "engine-project";

export type InstallMode = "link" | "npm";

/** A temporary Pulumi project with the library installed. */
export interface EngineProject {
  readonly dir: string;
  readonly install: InstallMode;
  /** The node binary children run with (ENGINE_NODE, else this process's). */
  readonly node: string;
  /** Version of the @pulumi/pulumi the project resolves. */
  readonly pulumiVersion: string;
  /** `require` rooted at the project (native Node resolution, not vitest's). */
  readonly require: NodeRequire;
  /** `require` rooted at the project's @pulumi/pulumi, for its proto modules, grpc-js and google-protobuf. */
  readonly pulumiRequire: NodeRequire;
  readonly installMs: number;
}

/** Options of `createProject`. */
export interface ProjectOptions {
  readonly tarball: string;
  readonly dir: string;
  readonly install?: InstallMode;
  /** npm mode: version spec of @pulumi/pulumi (default: ENGINE_PULUMI, else the repo's installed version). */
  readonly pulumiSpec?: string;
  /**
   * link mode: the node_modules to hard-link dependencies from (default: the repo's). The second project
   * of an npm-mode run links from the first, so npm runs once.
   */
  readonly modulesFrom?: string;
  /** A Pulumi program directory (an example) to copy in instead of the bare test project. */
  readonly template?: string;
}

const CHILD_DIR = join(__dirname, "child");

/** Returns the install mode chosen by ENGINE_INSTALL (default `link`). */
export function installModeFromEnv(): InstallMode {
  const v = process.env.ENGINE_INSTALL ?? "link";
  if (v !== "link" && v !== "npm") throw new TypeError(`ENGINE_INSTALL must be "link" or "npm", got "${v}"`);
  return v;
}

/** Creates the project directory, installs the tarball and copies the child scripts in. */
export async function createProject(opts: ProjectOptions): Promise<EngineProject> {
  const install = opts.install ?? installModeFromEnv();
  const dir = opts.dir;
  mkdirSync(join(dir, "node_modules"), { recursive: true });
  if (opts.template !== undefined) {
    for (const f of readdirSync(opts.template)) {
      if (f !== "node_modules" && f !== "bin") cpSync(join(opts.template, f), join(dir, f), { recursive: true });
    }
  } else {
    writeFileSync(
      join(dir, "Pulumi.yaml"),
      `name: ${PROJECT_NAME}\nruntime: nodejs\ndescription: engine-path test project\n`,
    );
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: PROJECT_NAME, private: true, main: "index.js" }, null, 2) + "\n",
    );
  }
  const t0 = Date.now();
  if (install === "link") await linkInstall(opts.tarball, dir, opts.modulesFrom ?? join(REPO_ROOT, "node_modules"));
  else await npmInstall(opts.tarball, dir, opts.pulumiSpec ?? process.env.ENGINE_PULUMI ?? repoPulumiVersion());
  const installMs = Date.now() - t0;
  for (const f of readdirSync(CHILD_DIR)) copyFileSync(join(CHILD_DIR, f), join(dir, f));
  const req = createRequire(join(dir, "package.json"));
  const pulumiPkg = req.resolve("@pulumi/pulumi/package.json");
  const pulumiVersion = (JSON.parse(readFileSync(pulumiPkg, "utf8")) as { version: string }).version;
  return {
    dir,
    install,
    node: process.env.ENGINE_NODE ?? process.execPath,
    pulumiVersion,
    require: req,
    pulumiRequire: createRequire(pulumiPkg),
    installMs,
  };
}

function repoPulumiVersion(): string {
  const pkg = join(REPO_ROOT, "node_modules", "@pulumi", "pulumi", "package.json");
  return (JSON.parse(readFileSync(pkg, "utf8")) as { version: string }).version;
}

async function linkInstall(tarball: string, dir: string, repoModules: string): Promise<void> {
  const unpack = join(dir, ".unpack");
  mkdirSync(unpack, { recursive: true });
  await run("tar", ["-xzf", tarball, "-C", unpack]);
  const target = join(dir, "node_modules", PACKAGE_NAME);
  renameSync(join(unpack, "package"), target);
  const pkg = readPackageJson(target);
  // As npm does: optional peers (the devserver's HCL parser) are not installed unless the project asks.
  const peers = Object.keys(pkg.peerDependencies ?? {}).filter((n) => pkg.peerDependenciesMeta?.[n]?.optional !== true);
  const names = [...Object.keys(pkg.dependencies ?? {}), ...peers, "typescript"];
  const closure = new Set<string>();
  for (const name of names) {
    const from = resolvePackageDir(repoModules, name);
    if (from === undefined)
      throw new Error(`declared dependency ${name} is not installed in ${repoModules} (run npm ci)`);
    collectClosure(from, closure);
  }
  // Top-level packages only: a nested node_modules comes along with its parent package.
  const tops = [...closure]
    .map((d) => relative(repoModules, d))
    .filter((rel) => !rel.split(sep).includes("node_modules") && rel !== PACKAGE_NAME);
  const byParent = new Map<string, string[]>();
  for (const rel of tops) {
    const parent = join(dir, "node_modules", dirname(rel));
    byParent.set(parent, [...(byParent.get(parent) ?? []), join(repoModules, rel)]);
  }
  for (const [parent, sources] of byParent) {
    mkdirSync(parent, { recursive: true });
    // Hard links keep the files inside the project, so each module's real path is the project's (a
    // symlink would resolve to the repo, and Pulumi could not find this package from its own location).
    await run("cp", ["-al", ...sources, parent]).catch(() => run("cp", ["-a", ...sources, parent]));
  }
}

function readPackageJson(pkgDir: string): {
  name?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
} {
  return JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8")) as ReturnType<typeof readPackageJson>;
}

/** Finds a package the way Node does from `fromDir` upwards (fromDir is a node_modules or package dir). */
function resolvePackageDir(fromDir: string, name: string): string | undefined {
  let d = fromDir;
  for (;;) {
    const base = d.endsWith(`${sep}node_modules`) ? d : join(d, "node_modules");
    const p = join(base, name);
    if (existsSync(join(p, "package.json"))) return p;
    const up = dirname(d);
    if (up === d) return undefined;
    d = up;
  }
}

/** Adds a package dir and everything its dependencies resolve to (as laid out in the repo). */
function collectClosure(pkgDir: string, seen: Set<string>): void {
  if (seen.has(pkgDir)) return;
  seen.add(pkgDir);
  const pj = readPackageJson(pkgDir);
  const deps = { ...pj.dependencies, ...pj.optionalDependencies, ...pj.peerDependencies };
  for (const name of Object.keys(deps)) {
    const found = resolvePackageDir(pkgDir, name);
    // Optional and peer dependencies may be absent; Node would fail the same way at require time.
    if (found !== undefined) collectClosure(found, seen);
  }
}

async function npmInstall(tarball: string, dir: string, pulumiSpec: string): Promise<void> {
  await run(
    "npm",
    [
      "install",
      "--no-audit",
      "--no-fund",
      "--save-exact",
      "--prefer-offline",
      tarball,
      `@pulumi/pulumi@${pulumiSpec}`,
      "typescript@<7",
    ],
    { cwd: dir, maxBuffer: 64 * 1024 * 1024, timeout: 10 * 60_000 },
  );
}
