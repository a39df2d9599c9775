/**
 * The texts a CLI run has shown, so that `showOnce` and `warn` (./log.ts) show each once per run: `pulumi up`
 * previews first and then updates, each with its own provider process, and each asks `diff`, so the same
 * plan would show twice. What was shown is remembered per CLI process (the host's parent: the plugin script
 * execs node) in that run's file, one line (the text's hash) per text, so the update part of an `up` does
 * not repeat the text its preview part showed. The files live in this user's private directory
 * `<cache home>/pulumi-secrets-scheduler/shown` (./user-cache.ts: a real directory owned by this user, mode
 * 0700), never in a shared temporary directory; a file is opened once per host with O_APPEND|O_NOFOLLOW,
 * only ever appended to, and counts only while its path still names it and it is a regular file of this
 * user's that nobody else may write. Where that directory or file cannot be had or trusted, the text is
 * shown: a plan shown twice is better than one not shown.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheHome, privateDir, stillPrivate } from "./user-cache";

const MARKER_DIR = "shown";
const MARKER_TTL_MS = 24 * 3600 * 1000;
/** A run file's name: its CLI run (`cliProcess()`), a dash, this (not 32 hex digits, as 0.2.0's markers end). */
const RUN_FILE_SUFFIX = "texts";
/** Marker directories this process has seen to (once each: a preview of many jobs shows many). */
const swept = new Set<string>();
/**
 * A marker directory is swept at most once an hour, by whichever host first shows a text after that; the
 * empty file `.swept` in it records when. Reading the directory is what a sweep costs: it holds a file per
 * CLI run of the last day (with 0.2.0's file per plan, 23,000 after a day of benchmarks on this project's
 * machine, 86 ms to read, paid by every preview that showed a plan when each host swept).
 */
const SWEEP_EVERY_MS = 3600 * 1000;
const SWEPT_STAMP = ".swept";

let cli: string | undefined;

/**
 * The CLI process this host runs under: its pid and, where /proc has it, its start time (pids are reused).
 * Taken once: the parent this process was started by.
 */
function cliProcess(): string {
  if (cli !== undefined) return cli;
  let start = "";
  try {
    const stat = fs.readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    // not Linux: the pid alone, with the marker's age limit
  }
  cli = `${process.ppid}-${start}`;
  return cli;
}

/**
 * Removes the files of CLI runs that ended more than MARKER_TTL_MS ago (by lstat: a link is removed, never
 * followed). A file's name starts with its CLI run (`cliProcess()`): a run's file, and the marker files of
 * one plan each that 0.2.0 and earlier made, so one file's age stands for its run's and one lstat per
 * run keeps this sweep short. (A run longer than a day may lose its file early: its plan is then shown
 * again, never hidden.)
 */
function sweep(dir: string): void {
  const now = Date.now();
  const runs = new Map<string, string[]>();
  for (const f of fs.readdirSync(dir)) {
    if (f === SWEPT_STAMP) continue;
    const run = f.slice(0, f.lastIndexOf("-"));
    const files = runs.get(run);
    if (files === undefined) runs.set(run, [f]);
    else files.push(f);
  }
  for (const files of runs.values()) {
    try {
      if (now - fs.lstatSync(path.join(dir, files[0] ?? "")).mtimeMs <= MARKER_TTL_MS) continue;
    } catch {
      continue; // gone already
    }
    for (const f of files) {
      try {
        fs.unlinkSync(path.join(dir, f));
      } catch {
        // gone already
      }
    }
  }
}

/** Whether `st` (an lstat) is an empty regular file of this user's, modified less than `maxAgeMs` before `now`. */
function ownEmptyFileYoungerThan(st: fs.Stats, maxAgeMs: number, now: number): boolean {
  const mine = typeof process.getuid !== "function" || st.uid === process.getuid();
  return st.isFile() && mine && st.size === 0 && now - st.mtimeMs < maxAgeMs;
}

/**
 * Sweeps `dir` (see {@link sweep}) unless its stamp says it was swept within the hour; then stamps it. The
 * stamp is trusted as the markers are: an empty regular file of this user's, in the checked directory, made
 * without following a link. A stamp that cannot be read or made only means a sweep.
 */
function sweepHourly(dir: string): void {
  const stamp = path.join(dir, SWEPT_STAMP);
  const now = Date.now();
  try {
    const st = fs.lstatSync(stamp);
    if (ownEmptyFileYoungerThan(st, SWEEP_EVERY_MS, now) && st.mtimeMs <= now + 60_000) return;
  } catch {
    // no stamp yet
  }
  sweep(dir);
  try {
    const { O_WRONLY, O_CREAT, O_TRUNC, O_NOFOLLOW } = fs.constants;
    const fd = fs.openSync(stamp, O_WRONLY | O_CREAT | O_TRUNC | (O_NOFOLLOW ?? 0), 0o600);
    try {
      fs.futimesSync(fd, new Date(now), new Date(now));
    } finally {
      fs.closeSync(fd);
    }
  } catch {
    // the next host sweeps again
  }
}

/** The marker directories of this process, by cache home. */
const markerDirs = new Map<string, string | undefined>();

/**
 * The marker directory, checked once per process: a path that passed the checks cannot be changed by another
 * user afterwards (no component is writable by others, or it is sticky), and a marker is trusted only after
 * `stillPrivate` checks the directory again.
 */
function markerDir(env: NodeJS.ProcessEnv): string | undefined {
  const home = cacheHome(env);
  if (home === undefined) return undefined;
  if (!markerDirs.has(home)) markerDirs.set(home, privateDir(MARKER_DIR, env));
  return markerDirs.get(home);
}

/** The shown-texts file of this process's CLI run in one marker directory (see {@link claimShowing}). */
interface RunFile {
  path: string;
  fd: number;
  /** Where the next read starts: just after the last whole line read. */
  offset: number;
  /** The hashes of the texts the file lists, as read (and as this process wrote them). */
  shown: Set<string>;
}

/** The run files this process has open, by marker directory; null where the file cannot be had. */
const runFiles = new Map<string, RunFile | null>();

/** A run file's line: the first 32 hex digits of a text's SHA-256 (then a newline). */
const HASH_LINE = /^[0-9a-f]{32}$/;
const NEWLINE = 0x0a;
/** What run files are read into (only the bytes a read returns are looked at). */
const readBuffer = Buffer.allocUnsafe(4096);

/** Opens (or makes) this run's file in `dir`: O_APPEND, never following a link. Null where it cannot. */
function runFileIn(dir: string): RunFile | null {
  let file = runFiles.get(dir);
  if (file !== undefined) return file;
  file = null;
  const p = path.join(dir, `${cliProcess()}-${RUN_FILE_SUFFIX}`);
  try {
    if (!swept.has(dir)) {
      swept.add(dir);
      sweepHourly(dir);
    }
    const { O_RDWR, O_CREAT, O_APPEND, O_NOFOLLOW } = fs.constants;
    file = {
      path: p,
      fd: fs.openSync(p, O_RDWR | O_CREAT | O_APPEND | (O_NOFOLLOW ?? 0), 0o600),
      offset: 0,
      shown: new Set(),
    };
  } catch {
    // shown each time
  }
  runFiles.set(dir, file);
  return file;
}

/**
 * Whether the run file is still what this process opened, and trusted: its path names the same file (not a
 * link, not replaced), a regular file of this user's that nobody else may write, changed less than a day ago.
 */
function runFileTrusted(file: RunFile): boolean {
  const st = fs.fstatSync(file.fd);
  const at = fs.lstatSync(file.path);
  // Windows has no POSIX owner or mode (the profile's ACLs apply), as for the directory (../user-cache.ts).
  const mine = typeof process.getuid !== "function" || (st.uid === process.getuid() && (st.mode & 0o022) === 0);
  return at.ino === st.ino && at.dev === st.dev && st.isFile() && mine && Date.now() - st.mtimeMs < MARKER_TTL_MS;
}

/**
 * Reads what was added to the run file since the last read, whole lines only (another host of the run may be
 * writing); a line that is not a hash is skipped.
 */
function readNew(file: RunFile): void {
  const buf = readBuffer;
  for (;;) {
    const n = fs.readSync(file.fd, buf, 0, buf.length, file.offset);
    if (n === 0) return;
    const end = buf.lastIndexOf(NEWLINE, n - 1);
    if (end < 0) {
      // No whole line: a line still being written waits for the rest; a full buffer without one is not ours.
      if (n < buf.length) return;
      file.offset += n;
      continue;
    }
    for (const line of buf.toString("latin1", 0, end).split("\n")) if (HASH_LINE.test(line)) file.shown.add(line);
    file.offset += end + 1;
    if (n < buf.length) return;
  }
}

/**
 * Records that `text` is being shown in this CLI run: true when it was not shown yet (show it now), false
 * when this run's file, trusted (see {@link runFileTrusted}) and in a directory that still passes the
 * checks, lists it. True whenever that file cannot be had or trusted.
 */
export function claimShowing(text: string, env: NodeJS.ProcessEnv = process.env): boolean {
  const dir = markerDir(env);
  if (dir === undefined) return true;
  const file = runFileIn(dir);
  if (file === null) return true;
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 32);
  try {
    if (!runFileTrusted(file)) return true;
    readNew(file);
    // what the file lists counts only if the directory still passes the checks after this use of it
    if (file.shown.has(hash)) return !stillPrivate(dir);
    fs.writeSync(file.fd, `${hash}\n`);
    file.shown.add(hash);
  } catch {
    // shown
  }
  return true;
}
