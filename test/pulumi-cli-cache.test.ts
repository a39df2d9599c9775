/**
 * scripts/pulumi-cli.sh runs a cached build only when no one else could have planted or changed it: the
 * cache's directories and the three executables owned by this user and not writable by group or others, no
 * symbolic link among them, and the directories above owned by root or this user and not writable by others
 * unless sticky (the rules of provider/user-cache.ts). Fake executables in a private temp dir stand for the
 * build (PULUMI_CLI_CACHE points the script there); nothing is built.
 */
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const SCRIPT = join(__dirname, "..", "scripts", "pulumi-cli.sh");
const EXES = ["pulumi", "pulumi-language-nodejs", "pulumi-resource-pulumi-nodejs"];
const posix = process.platform !== "win32";

let work: string | undefined;
afterEach(() => {
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
  work = undefined;
});

/** A cache holding a fake build; returns the cache root and the bin directory. */
function fakeCache(under?: string): { cache: string; bin: string } {
  work ??= realpathSync(mkdtempSync(join(tmpdir(), "pss-cli-cache-")));
  const cache = join(under ?? work, "cache");
  const bin = join(cache, "pulumi-v3.259.0-lang-v3.68.0", "bin");
  mkdirSync(bin, { recursive: true, mode: 0o755 });
  for (const e of EXES) writeFileSync(join(bin, e), "#!/bin/sh\nexit 0\n", { mode: 0o755 });
  return { cache, bin };
}

function run(cache: string, ...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, PULUMI_CLI_CACHE: cache, PULUMI_CLI_VERSION: "v3.259.0" };
  delete env.PULUMI_LANGUAGE_NODEJS_VERSION;
  // No Go on the PATH: a refused cache must never turn into a build.
  env.PATH = "/usr/bin:/bin";
  return spawnSync("bash", [SCRIPT, ...args], { env, encoding: "utf8" });
}

describe.runIf(posix)("scripts/pulumi-cli.sh trusts a cached build only when it is this user's alone", () => {
  it("prints the bin directory of a cache that is ours, with and without --check", () => {
    const { cache, bin } = fakeCache();
    for (const args of [["--check"], []]) {
      const r = run(cache, ...args);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(r.stdout.trim()).toBe(bin);
    }
  });

  it.each([
    [
      "an executable writable by its group",
      (c: string, b: string) => chmodSync(join(b, "pulumi"), 0o775),
      /bin\/pulumi is writable by its group or by others/,
    ],
    [
      "an executable writable by others",
      (c: string, b: string) => chmodSync(join(b, "pulumi-resource-pulumi-nodejs"), 0o757),
      /pulumi-resource-pulumi-nodejs is writable/,
    ],
    [
      "the bin directory writable by others",
      (c: string, b: string) => chmodSync(b, 0o777),
      /\/bin is writable by its group or by others/,
    ],
    [
      "the cache root writable by its group",
      (c: string) => chmodSync(c, 0o775),
      /cache is writable by its group or by others/,
    ],
    [
      "an executable that is a symbolic link",
      (c: string, b: string) => {
        renameSync(join(b, "pulumi-language-nodejs"), join(c, "elsewhere"));
        symlinkSync(join(c, "elsewhere"), join(b, "pulumi-language-nodejs"));
      },
      /pulumi-language-nodejs is a symbolic link/,
    ],
  ])("refuses %s, saying which path and why, with and without --check", (_what, spoil, why) => {
    const { cache, bin } = fakeCache();
    spoil(cache, bin);
    for (const args of [["--check"], []]) {
      const r = run(cache, ...args);
      expect(r.status).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(why);
      expect(r.stderr).toMatch(/not running the cached build .*Remove it/);
    }
  });

  it("refuses a cache under a directory others can write without the sticky bit, and accepts one under a sticky one", () => {
    work = realpathSync(mkdtempSync(join(tmpdir(), "pss-cli-cache-")));
    const open = join(work, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    const bad = fakeCache(open);
    const r = run(bad.cache, "--check");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/open is writable by its group or by others/);
    chmodSync(open, 0o1777);
    expect(run(bad.cache, "--check").stdout.trim()).toBe(bad.bin);
  });

  it.runIf(process.getuid?.() === 0)("refuses an executable owned by another user", () => {
    const { cache, bin } = fakeCache();
    chownSync(join(bin, "pulumi"), 4242, 4242);
    const r = run(cache, "--check");
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bin\/pulumi is owned by uid 4242, not by you \(uid 0\)/);
  });
});
