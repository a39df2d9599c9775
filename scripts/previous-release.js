#!/usr/bin/env node
// `node scripts/previous-release.js [<commit>]`: builds the library as it was at an earlier commit of this
// repository (the release a user's stack was deployed with) and prints the path of its packed tarball (the
// last stdout line). The upgrade test (test/cli/upgrade.test.ts) deploys with that tarball and then
// previews and updates with the current checkout's.
//
// The project has no tags and no published releases, so "the previous release" is a fixed commit:
// PREVIOUS_RELEASE_COMMIT below (the last state before mount moves by remount, write-only client
// secrets and the root Pulumi project came in), or the argument,
// or PSS_PREVIOUS_RELEASE. The build is what a release does: `git archive` of that commit into a fresh
// directory, its locked dependencies (hard-linked from this checkout's node_modules when the two lockfiles
// are the same, else `npm ci`), `npm run build`, `npm pack`. The result is cached outside the repository by
// commit hash, under ${PULUMI_CLI_CACHE:-${XDG_CACHE_HOME:-~/.cache}/pulumi-secrets-scheduler}/release-<hash>,
// so a CI run or a machine builds it once (about a minute on 2 cores; cached, at once). The directory keeps
// the old release's node_modules too: the test installs the old tarball with the dependencies it was
// locked with.
"use strict";
const { spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

/** The commit the upgrade test deploys with: the last one before mount moves by remount came in. */
const PREVIOUS_RELEASE_COMMIT = "b9a118a4214716583718ac755e596c69a30a47d9";

const REPO = path.join(__dirname, "..");

function cacheRoot() {
  if (process.env.PULUMI_CLI_CACHE) return process.env.PULUMI_CLI_CACHE;
  const base = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(base, "pulumi-secrets-scheduler");
}

function run(cmd, argv, opts = {}) {
  const res = spawnSync(cmd, argv, {
    cwd: opts.cwd,
    env: opts.env || process.env,
    encoding: "utf8",
    stdio: ["ignore", opts.capture ? "pipe" : "inherit", "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  if (res.status !== 0) throw new Error(`${cmd} ${argv.join(" ")} failed (exit ${res.status})`);
  return opts.capture ? res.stdout : "";
}

/** Full hash of a commit of this repository (throws for an unknown one). */
function resolveCommit(ref) {
  return run("git", ["rev-parse", "--verify", `${ref}^{commit}`], { cwd: REPO, capture: true }).trim();
}

/**
 * The cached build of `ref`: `{ commit, dir, tarball, modules }` (dir: the unpacked tree; modules: its
 * node_modules). Builds it first when the cache has none.
 */
function previousRelease(
  ref = process.env.PSS_PREVIOUS_RELEASE || PREVIOUS_RELEASE_COMMIT,
  log = (s) => console.error(s),
) {
  const commit = resolveCommit(ref);
  const root = cacheRoot();
  const final = path.join(root, `release-${commit}`);
  const done = (dir) => {
    try {
      const info = JSON.parse(fs.readFileSync(path.join(dir, "release.json"), "utf8"));
      const tarball = path.join(dir, info.tarball);
      return fs.existsSync(tarball)
        ? { commit, dir, tarball, modules: path.join(dir, "tree", "node_modules") }
        : undefined;
    } catch {
      return undefined;
    }
  };
  const cached = done(final);
  if (cached) return cached;

  fs.mkdirSync(root, { recursive: true, mode: 0o700 });
  // Built in a private directory beside the final one, then renamed into place: a concurrent build of the
  // same commit (another worktree) never sees a half-built tree, and the first rename wins.
  const work = fs.mkdtempSync(path.join(root, `release-${commit.slice(0, 12)}.building-`));
  const t0 = Date.now();
  try {
    const tree = path.join(work, "tree");
    fs.mkdirSync(tree);
    log(`previous-release: building ${commit.slice(0, 12)} in ${work}`);
    const archive = spawnSync("git", ["archive", "--format=tar", commit], { cwd: REPO, maxBuffer: 512 * 1024 * 1024 });
    if (archive.status !== 0) throw new Error(`git archive ${commit} failed: ${String(archive.stderr)}`);
    const untar = spawnSync("tar", ["-x", "-C", tree], { input: archive.stdout });
    if (untar.status !== 0) throw new Error(`tar -x failed: ${String(untar.stderr)}`);

    const sameLock = sha256(path.join(tree, "package-lock.json")) === sha256(path.join(REPO, "package-lock.json"));
    if (sameLock && fs.existsSync(path.join(REPO, "node_modules", ".package-lock.json"))) {
      // The same locked dependencies: hard links to this checkout's (a second, no registry).
      log("previous-release: same lockfile as this checkout; hard-linking its node_modules");
      const linked = spawnSync("cp", ["-al", path.join(REPO, "node_modules"), path.join(tree, "node_modules")]);
      if (linked.status !== 0) run("cp", ["-a", path.join(REPO, "node_modules"), path.join(tree, "node_modules")]);
    } else {
      log("previous-release: npm ci (its lockfile differs from this checkout's)");
      run("npm", ["ci", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], { cwd: tree });
    }
    run("npm", ["run", "--silent", "build"], { cwd: tree });
    const packed = run("npm", ["pack", "--silent", "--ignore-scripts", "--pack-destination", work], {
      cwd: tree,
      capture: true,
    });
    const tarball = packed.trim().split("\n").pop().trim();
    fs.writeFileSync(
      path.join(work, "release.json"),
      JSON.stringify({ commit, tarball, builtAt: new Date().toISOString() }, null, 2) + "\n",
    );
    try {
      fs.renameSync(work, final);
    } catch (e) {
      // Another build got there first: use it.
      if (!done(final)) throw e;
      fs.rmSync(work, { recursive: true, force: true });
    }
    log(`previous-release: built ${commit.slice(0, 12)} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (e) {
    fs.rmSync(work, { recursive: true, force: true });
    throw e;
  }
  const built = done(final);
  if (!built) throw new Error(`previous-release: no tarball in ${final} after the build`);
  return built;
}

function sha256(file) {
  try {
    return crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");
  } catch {
    return undefined;
  }
}

module.exports = { previousRelease, PREVIOUS_RELEASE_COMMIT };

if (require.main === module) {
  try {
    const r = previousRelease(process.argv[2]);
    console.log(r.tarball);
  } catch (e) {
    console.error(`previous-release: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
