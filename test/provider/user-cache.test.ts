/**
 * The cache home checks of provider/user-cache.ts, after OpenSSH's StrictModes: every component of the
 * cache home's real path, from the root, is a real directory owned by root or this user and writable by no
 * one else unless sticky; only the real path is used afterwards; and a use can be re-checked. "Another
 * user" is simulated by chown (the cases that need it run as root).
 */
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { claimShowing } from "../../provider/shown-texts";
import { privateDir, stillPrivate } from "../../provider/user-cache";

/** The directory of this library under the user's cache directory, as a user finds it. */
const APP_DIR = "pulumi-secrets-scheduler";

const isRoot = process.getuid?.() === 0;
const OTHER = 4242;
let base = "";

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "pss-user-cache-")));
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
});

const dirIn = (home: string): string | undefined => privateDir("compile-cache", { XDG_CACHE_HOME: home });

describe("cache home checks", () => {
  it("uses the real path of a home reached through a link of this user's, not the link", () => {
    const mine = join(base, "mine");
    mkdirSync(mine, { mode: 0o700 });
    symlinkSync(mine, join(base, "link"));
    expect(dirIn(join(base, "link", "cache"))).toBe(join(mine, "cache", APP_DIR, "compile-cache"));
  });

  it.runIf(isRoot)(
    "refuses a home whose parent is a link into another user's directory, and makes nothing there",
    () => {
      const theirs = join(base, "theirs");
      mkdirSync(theirs, { mode: 0o755 });
      chownSync(theirs, OTHER, OTHER);
      symlinkSync(theirs, join(base, "link"));
      expect(dirIn(join(base, "link", "cache"))).toBeUndefined();
      expect(readdirSync(theirs)).toEqual([]);
    },
  );

  it.runIf(isRoot)("refuses a home inside a directory another user owns (they could swap it)", () => {
    const theirs = join(base, "theirs");
    mkdirSync(join(theirs, "cache"), { recursive: true, mode: 0o700 });
    chmodSync(theirs, 0o755);
    chownSync(theirs, OTHER, OTHER);
    expect(dirIn(join(theirs, "cache"))).toBeUndefined();
    expect(existsSync(join(theirs, "cache", APP_DIR))).toBe(false);
  });

  it("refuses a home below a group- or world-writable directory that is not sticky", () => {
    for (const mode of [0o770, 0o777]) {
      const open = join(base, `open-${mode.toString(8)}`);
      mkdirSync(join(open, "cache"), { recursive: true, mode: 0o700 });
      chmodSync(open, mode);
      expect([mode.toString(8), dirIn(join(open, "cache"))]).toEqual([mode.toString(8), undefined]);
      expect(existsSync(join(open, "cache", APP_DIR))).toBe(false);
    }
  });

  it("accepts a home below a sticky world-writable directory of root's or this user's, like /tmp", () => {
    const sticky = join(base, "sticky");
    mkdirSync(join(sticky, "cache"), { recursive: true, mode: 0o700 });
    chmodSync(sticky, 0o1777);
    expect(dirIn(join(sticky, "cache"))).toBe(join(sticky, "cache", APP_DIR, "compile-cache"));
  });

  it.runIf(isRoot)("refuses a home below a sticky world-writable directory another user owns", () => {
    const sticky = join(base, "sticky");
    mkdirSync(join(sticky, "cache"), { recursive: true, mode: 0o700 });
    chmodSync(sticky, 0o1777);
    chownSync(sticky, OTHER, OTHER);
    expect(dirIn(join(sticky, "cache"))).toBeUndefined();
  });

  it("refuses a group-writable home itself, and makes nothing in it", () => {
    const home = join(base, "cache");
    mkdirSync(home, { mode: 0o700 });
    chmodSync(home, 0o770);
    expect(dirIn(home)).toBeUndefined();
    expect(readdirSync(home)).toEqual([]);
  });

  it("a use is re-checked: once a parent turns writable by others the directory no longer passes, and markers no longer count", () => {
    const parent = join(base, "parent");
    mkdirSync(parent, { mode: 0o755 });
    const env = { XDG_CACHE_HOME: join(parent, "cache") };
    const dir = privateDir("shown", env);
    expect(dir).toBeDefined();
    expect(stillPrivate(dir as string)).toBe(true);
    expect(claimShowing("plan A", env)).toBe(true);
    expect(claimShowing("plan A", env)).toBe(false);
    chmodSync(parent, 0o777);
    expect(stillPrivate(dir as string)).toBe(false);
    expect(claimShowing("plan A", env)).toBe(true);
  });
});
