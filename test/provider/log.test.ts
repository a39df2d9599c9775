/**
 * The plan markers of provider/log.ts: `showOnce` remembers a shown plan in its CLI run's file (one line,
 * the text's hash, per text) so the update part of `pulumi up` does not repeat its preview's plan. The files
 * live in this user's private directory under the cache home, never in the shared temporary directory; a
 * planted link is never followed, a directory or file someone else could have planted is not trusted (the
 * plan is shown), and a file is only ever appended to.
 */
import {
  appendFileSync,
  chmodSync,
  chownSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { show, showOnce, warn } from "../../provider/log";
import { claimShowing } from "../../provider/shown-texts";

const isRoot = process.getuid?.() === 0;
let base = "";
let home = "";
let tmp = "";
let savedTmp: string | undefined;
const dir = (): string => join(home, "pulumi-secrets-scheduler", "shown");
/** The directory's markers: what it holds but the sweep's stamp. */
const markers = (): string[] => readdirSync(dir()).filter((f) => f !== ".swept");
const env = (): NodeJS.ProcessEnv => ({ XDG_CACHE_HOME: home });
const days = (n: number): Date => new Date(Date.now() - n * 24 * 3600 * 1000);
/** A text's line in its run's file. */
const lineOf = (text: string): string => `${createHash("sha256").update(text).digest("hex").slice(0, 32)}\n`;

beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "pss-host-log-")));
  home = join(base, "cache");
  mkdirSync(home, { mode: 0o700 });
  // os.tmpdir() follows TMPDIR: an empty directory of its own shows whether anything lands there.
  tmp = join(base, "tmp");
  mkdirSync(tmp, { mode: 0o700 });
  savedTmp = process.env["TMPDIR"];
  process.env["TMPDIR"] = tmp;
});

afterEach(() => {
  if (savedTmp === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = savedTmp;
  rmSync(base, { recursive: true, force: true });
});

describe("plan markers", () => {
  it("a text is shown once per CLI run, from a private directory under the cache home, nothing in the temp directory", () => {
    expect(claimShowing("plan A", env())).toBe(true);
    expect(claimShowing("plan A", env())).toBe(false);
    expect(claimShowing("plan B", env())).toBe(true);
    const st = lstatSync(dir());
    expect(st.isDirectory()).toBe(true);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(process.getuid?.());
    // One file for the run, whatever the number of texts: each text's hash, never the text.
    const [name] = markers();
    expect(markers()).toHaveLength(1);
    expect(name).toMatch(/^\d+-\d*-texts$/);
    const file = join(dir(), name!);
    expect(readFileSync(file, "utf8")).toBe(lineOf("plan A") + lineOf("plan B"));
    expect(lstatSync(file).mode & 0o777).toBe(0o600);
    for (let i = 0; i < 50; i++) expect(claimShowing(`plan ${i}`, env())).toBe(true);
    expect(markers()).toEqual([name]);
    expect(readdirSync(tmp)).toEqual([]);
  });

  it("reads what another host of the same run wrote: whole lines only, anything not a hash skipped", () => {
    expect(claimShowing("plan A", env())).toBe(true);
    const file = join(dir(), markers()[0]!);
    // Another host of this CLI run (the update part of an `up`) appends as this one does.
    appendFileSync(file, lineOf("plan B"));
    expect(claimShowing("plan B", env())).toBe(false);
    // A line still being written does not count yet.
    appendFileSync(file, lineOf("plan C").slice(0, 10));
    expect(claimShowing("plan C", env())).toBe(true);
    // Nor does a line that is not a hash (and the lines after it still do).
    appendFileSync(file, `\nnot a hash\n${lineOf("plan D")}`);
    expect(claimShowing("plan D", env())).toBe(false);
    expect(claimShowing("plan A", env())).toBe(false);
  });

  it("a planted link in place of a marker is never followed: its target is neither written nor truncated, and the plan is shown", () => {
    expect(claimShowing("plan A", env())).toBe(true);
    const [name] = markers();
    const victim = join(base, "victim");
    writeFileSync(victim, "precious");
    // An old target: a marker older than a day must still not be rewritten through the link.
    utimesSync(victim, days(2), days(2));
    unlinkSync(join(dir(), name!));
    symlinkSync(victim, join(dir(), name!));
    expect(claimShowing("plan A", env())).toBe(true);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(join(dir(), name!)).isSymbolicLink()).toBe(true);
  });

  it("a link planted where this run's file is to be made is not followed: nothing is written through it, the plan is shown", () => {
    // The run's file name, from another cache home of this same process.
    expect(claimShowing("plan A", env())).toBe(true);
    const [name] = markers();
    home = join(base, "cache2");
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    const victim = join(base, "victim");
    writeFileSync(victim, "precious");
    symlinkSync(victim, join(dir(), name!));
    expect(claimShowing("plan A", env())).toBe(true);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(lstatSync(join(dir(), name!)).isSymbolicLink()).toBe(true);
  });

  it("a marker directory that is a link is not used: nothing is made in its target, the plan is shown each time", () => {
    const elsewhere = join(base, "elsewhere");
    mkdirSync(elsewhere, { mode: 0o700 });
    mkdirSync(join(home, "pulumi-secrets-scheduler"), { mode: 0o700 });
    symlinkSync(elsewhere, dir());
    expect(claimShowing("plan A", env())).toBe(true);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readdirSync(elsewhere)).toEqual([]);
  });

  it("a marker directory others can write is not trusted: the plan is shown each time and nothing is written there", () => {
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    chmodSync(dir(), 0o777);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readdirSync(dir())).toEqual([]);
  });

  it.runIf(isRoot)("a marker directory owned by another user is not trusted", () => {
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    chownSync(dir(), 65534, 65534);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readdirSync(dir())).toEqual([]);
  });

  it.runIf(isRoot)("a marker another user owns does not suppress the plan", () => {
    expect(claimShowing("plan A", env())).toBe(true);
    const [name] = markers();
    chownSync(join(dir(), name!), 65534, 65534);
    expect(claimShowing("plan A", env())).toBe(true);
  });

  it("a text already listed writes nothing; a run's file older than a day no longer counts", () => {
    expect(claimShowing("plan A", env())).toBe(true);
    const [name] = markers();
    const marker = join(dir(), name!);
    const first = lstatSync(marker);
    expect(claimShowing("plan A", env())).toBe(false);
    const again = lstatSync(marker);
    expect([again.ino, again.mtimeMs, again.size]).toEqual([first.ino, first.mtimeMs, first.size]);
    utimesSync(marker, days(2), days(2));
    // A file past its age no longer counts (the pid may have been reused).
    expect(claimShowing("plan A", env())).toBe(true);
  });

  it("a run's file others may write is not trusted", () => {
    expect(claimShowing("plan A", env())).toBe(true);
    chmodSync(join(dir(), markers()[0]!), 0o622);
    expect(claimShowing("plan A", env())).toBe(true);
  });

  it("removes the markers of runs older than a day and keeps the others", () => {
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    const old = ["111-222-aaaa", "111-222-bbbb", "111-222-cccc"];
    const recent = ["333-444-dddd", "333-444-eeee"];
    for (const f of [...old, ...recent]) writeFileSync(join(dir(), f), "", { mode: 0o600 });
    for (const f of old) utimesSync(join(dir(), f), days(2), days(2));
    expect(claimShowing("plan A", env())).toBe(true);
    const left = markers();
    expect(left.filter((f) => old.includes(f))).toEqual([]);
    expect(left.filter((f) => recent.includes(f)).sort()).toEqual(recent);
    expect(left).toHaveLength(recent.length + 1);
  });

  it("sweeps a directory at most once an hour: its `.swept` stamp, younger than that, spares the directory's read", () => {
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    const old = join(dir(), "111-222-aaaa");
    const stamp = join(dir(), ".swept");
    writeFileSync(old, "", { mode: 0o600 });
    utimesSync(old, days(2), days(2));
    writeFileSync(stamp, "", { mode: 0o600 });
    utimesSync(stamp, new Date(Date.now() - 30 * 60 * 1000), new Date(Date.now() - 30 * 60 * 1000));
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readdirSync(dir())).toContain("111-222-aaaa");

    // Another cache home (this process sweeps each directory once), stamped two hours ago: swept and stamped.
    home = join(base, "cache2");
    mkdirSync(home, { mode: 0o700 });
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    writeFileSync(join(dir(), "111-222-aaaa"), "", { mode: 0o600 });
    utimesSync(join(dir(), "111-222-aaaa"), days(2), days(2));
    writeFileSync(join(dir(), ".swept"), "", { mode: 0o600 });
    utimesSync(join(dir(), ".swept"), new Date(Date.now() - 2 * 3600 * 1000), new Date(Date.now() - 2 * 3600 * 1000));
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readdirSync(dir())).not.toContain("111-222-aaaa");
    const st = lstatSync(join(dir(), ".swept"));
    expect(Date.now() - st.mtimeMs).toBeLessThan(60 * 1000);
    expect([st.isFile(), st.size, st.mode & 0o777]).toEqual([true, 0, 0o600]);
  });

  it("a link planted as the stamp is not followed: the directory is swept and the link's target left alone", () => {
    mkdirSync(dir(), { recursive: true, mode: 0o700 });
    const target = join(base, "target");
    writeFileSync(target, "keep");
    symlinkSync(target, join(dir(), ".swept"));
    writeFileSync(join(dir(), "111-222-aaaa"), "", { mode: 0o600 });
    utimesSync(join(dir(), "111-222-aaaa"), days(2), days(2));
    expect(claimShowing("plan A", env())).toBe(true);
    expect(readdirSync(dir())).not.toContain("111-222-aaaa");
    expect(readFileSync(target, "utf8")).toBe("keep");
  });

  it("without a usable cache home the plan is shown each time", () => {
    writeFileSync(join(base, "not-a-dir"), "");
    expect(claimShowing("plan A", { XDG_CACHE_HOME: join(base, "not-a-dir") })).toBe(true);
    expect(claimShowing("plan A", { XDG_CACHE_HOME: join(base, "not-a-dir") })).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  });
});

describe("one way to print", () => {
  it("no provider module but provider/log.ts writes to the console", () => {
    const root = join(__dirname, "..", "..", "provider");
    const offenders: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".ts") && p !== join(root, "log.ts")) {
          const code = readFileSync(p, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
          if (/\bconsole\.(log|error|warn|info|debug)\b|process\.std(out|err)\.write/.test(code)) offenders.push(p);
        }
      }
    };
    walk(root);
    expect(offenders).toEqual([]);
  });
});

describe("severity", () => {
  // What goes to the engine (a warning at WARNING without a prefix of its own, a text at INFO) is checked
  // inside Pulumi's dynamic-provider host, against a stand-in engine (test/engine/suites/engine-messages.ts).
  it("outside the dynamic-provider host, stderr labels a warning and shows a text as it is, without its last newline", async () => {
    const written: unknown[][] = [];
    const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => void written.push(args));
    try {
      await warn("the token expires soon\n");
      await show("plan\n");
      await showOnce("plan\n");
    } finally {
      spy.mockRestore();
    }
    expect(written).toEqual([["warning: the token expires soon"], ["plan"], ["plan"]]);
  });
});
