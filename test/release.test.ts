/**
 * Releases: CHANGELOG.md names each release's commit (the repository has no tags), that commit is the one
 * that set the release's version, and the upgrade test's previous release is the newest one below this
 * checkout's version.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "./engine/harness/pack";

interface Release {
  version: string;
  /** Undefined only for this checkout's version before the commit after its release commit names it. */
  commit?: string;
}
const { changelogReleases, previousReleaseEntry } = createRequire(join(REPO_ROOT, "package.json"))(
  "./scripts/previous-release.js",
) as {
  changelogReleases: (text?: string, current?: string) => Release[];
  previousReleaseEntry: (releases?: Release[], current?: string) => Release;
};
const VERSION = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("CHANGELOG.md", () => {
  it("lists this version and names, for each release, the commit whose package.json has that version", () => {
    const releases = changelogReleases();
    expect(releases.map((r) => r.version)).toContain(VERSION);
    for (const r of releases) {
      if (r.commit === undefined) {
        expect(r.version, "only this checkout's version may lack its commit").toBe(VERSION);
        continue;
      }
      const pkg = execFileSync("git", ["show", `${r.commit}:package.json`], { cwd: REPO_ROOT, encoding: "utf8" });
      expect((JSON.parse(pkg) as { version: string }).version, `${r.version} at ${r.commit}`).toBe(r.version);
    }
  });

  it("gives the upgrade test the newest release below this checkout's version", () => {
    const older = changelogReleases().filter((r) => r.version !== VERSION);
    expect(older[0]?.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(previousReleaseEntry()).toEqual(older[0]);
    const text = [
      "## [Unreleased]",
      "## [1.10.0] - 2027-01-02",
      `Commit: ${"c".repeat(40)}`,
      "## [1.9.1] - 2027-01-01",
      `Commit: \`${"b".repeat(40)}\``,
      "## [1.2.0] - 2026-12-01",
      `Commit: ${"a".repeat(40)}`,
    ].join("\n");
    expect(previousReleaseEntry(changelogReleases(text), "1.10.0")).toEqual({
      version: "1.9.1",
      commit: "b".repeat(40),
    });
    expect(previousReleaseEntry(changelogReleases(text), "1.9.2")).toEqual({
      version: "1.9.1",
      commit: "b".repeat(40),
    });
    expect(() => previousReleaseEntry(changelogReleases(text), "1.2.0")).toThrow(/no release before 1\.2\.0/);
    const uncommitted = "## [2.0.0] - 2027-02-02\n\nno commit here\n";
    expect(() => changelogReleases(uncommitted, "2.0.1")).toThrow(/names no commit/);
    expect(changelogReleases(uncommitted, "2.0.0")).toEqual([{ version: "2.0.0", commit: undefined }]);
  });
});
