#!/usr/bin/env node
// `node scripts/previous-release.js [<commit>]`: builds the library as it was at an earlier commit of this
// repository (the release a user's stack was deployed with) and prints the path of its packed tarball (the
// last stdout line). The upgrade test (test/cli/upgrade.test.ts) deploys with that tarball and then
// previews and updates with the current checkout's.
//
// "The previous release" is the newest release that CHANGELOG.md names below this checkout's version
// (package.json): each release there names its commit (`Commit: <40 hex digits>`), as a fresh clone has no
// tags. The argument or PSS_PREVIOUS_RELEASE names another commit instead. The build is what a release
// does: `git archive` of that commit into a fresh
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

const REPO = path.join(__dirname, "..");

/**
 * The releases CHANGELOG.md lists, newest first: `{ version, commit }` from each `## [x.y.z] - date`
 * heading and the `Commit:` line in its section (`## [Unreleased]` has none and is left out). Only the
 * release of `current` (this checkout's version) may lack its commit: its release commit is the one that
 * sets the version, so the changelog can name it only in a later commit.
 */
function changelogReleases(
  text = fs.readFileSync(path.join(REPO, "CHANGELOG.md"), "utf8"),
  current = require(path.join(REPO, "package.json")).version,
) {
  const releases = [];
  for (const section of text.split(/^## /m).slice(1)) {
    const heading = /^\[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}\s*$/.exec(section.split("\n", 1)[0]);
    if (heading === null) continue;
    const commit = /^Commit: `?([0-9a-f]{40})`?\s*$/m.exec(section);
    if (commit === null && heading[1] !== current)
      throw new Error(`CHANGELOG.md: release ${heading[1]} names no commit ("Commit: <hash>")`);
    releases.push({ version: heading[1], commit: commit?.[1] });
  }
  return releases;
}

/** Compares two x.y.z versions. */
function compareVersions(a, b) {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) if (pa[i] !== pb[i]) return pa[i] - pb[i];
  return 0;
}

/**
 * The release before this checkout's version: the newest CHANGELOG.md release below package.json's
 * version. Throws when there is none.
 */
function previousReleaseEntry(
  releases = changelogReleases(),
  current = require(path.join(REPO, "package.json")).version,
) {
  const older = releases.filter((r) => compareVersions(r.version, current) < 0);
  older.sort((a, b) => compareVersions(b.version, a.version));
  if (older.length === 0) throw new Error(`CHANGELOG.md names no release before ${current}`);
  return older[0];
}

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
  ref = process.env.PSS_PREVIOUS_RELEASE || previousReleaseEntry().commit,
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

module.exports = { previousRelease, previousReleaseEntry, changelogReleases };

if (require.main === module) {
  try {
    const r = previousRelease(process.argv[2]);
    console.log(r.tarball);
  } catch (e) {
    console.error(`previous-release: ${e instanceof Error ? e.message : String(e)}`);
    process.exit(1);
  }
}
