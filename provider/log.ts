/**
 * The provider's one way to speak to the person running Pulumi: texts (a job's plan at preview, a rollout
 * note) with `show`/`showOnce`, warnings with `warn`/`warnOnce`. Resources and the HTTP core all print
 * through here; nothing else in provider/ writes to the console. Never pass secret values.
 *
 * What the dynamic-provider host allows (`@pulumi/pulumi/cmd/dynamic-provider`, 3.248 through 3.26x): it
 * passes provider methods neither the resource's URN nor a logger, and the CLI turns each line the provider
 * process writes to stdout or stderr into a separate stack-level message. A multi-line text on stderr
 * therefore appears line by line, once as progress rows and again under "Diagnostics". Without a URN nothing
 * can be attached to the resource itself.
 *
 * The host is started with the engine's address as its argument, and the engine's `Log` call takes a whole
 * text as one message. So, inside that host, a text goes to the engine in one stack-level message (one
 * block; texts made close together share one); anywhere else (tests, other hosts) or if the engine cannot
 * be reached, it goes to stderr. The engine asks for diffs one at a time, so once the engine has answered
 * one message, later ones are sent in batches, after the call that showed them has answered, in order;
 * the host waits for their answers before it lets the engine's interrupt end it (see `emit`).
 *
 * `pulumi up` previews first and then updates, each with its own provider process, and each asks `diff`:
 * the same plan would show twice. `showOnce` remembers what it showed per CLI process (the host's parent:
 * the plugin script execs node) in that run's file, one line (the text's hash) per text, so the update
 * part of an `up` does not repeat the text its preview part showed. The files live in this user's private
 * directory `<cache home>/pulumi-secrets-scheduler/shown` (../user-cache.ts: a real directory owned by this
 * user, mode 0700), never in a shared temporary directory; a file is opened once per host with
 * O_APPEND|O_NOFOLLOW, only ever appended to, and counts only while its path still names it and it is a
 * regular file of this user's that nobody else may write. Where that directory or file cannot be had or
 * trusted, the text is shown: a plan shown twice is better than one not shown.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheHome, privateDir, stillPrivate } from "./user-cache";

interface LogClient {
  log(req: unknown, cb: (err: Error | null) => void): void;
}

interface EngineModules {
  client: LogClient;
  request(message: string, severity: Severity): unknown;
}

/** The engine's severities used here (pulumirpc.LogSeverity): a text at INFO, a warning at WARNING. */
const SEVERITY = { info: 1, warning: 2 } as const;
type Severity = (typeof SEVERITY)[keyof typeof SEVERITY];

let engine: EngineModules | null | undefined;

/** The engine connection of the dynamic-provider host this process is, or null when it is not one. */
function engineOf(): EngineModules | null {
  if (engine !== undefined) return engine;
  engine = null;
  try {
    const main = require.main;
    const address = process.argv[2];
    if (
      main === undefined ||
      address === undefined ||
      !/[\\/]cmd[\\/]dynamic-provider[\\/]index\.js$/.test(main.filename)
    )
      return engine;
    const proto = path.join(path.dirname(main.filename), "..", "..", "proto");
    const grpc = main.require("@grpc/grpc-js") as { credentials: { createInsecure(): unknown } };
    const rpc = require(path.join(proto, "engine_grpc_pb.js")) as {
      EngineClient: new (addr: string, creds: unknown) => LogClient;
    };
    const pb = require(path.join(proto, "engine_pb.js")) as {
      LogRequest: new () => { setSeverity(s: number): void; setMessage(m: string): void; setUrn(u: string): void };
    };
    const client = new rpc.EngineClient(address, grpc.credentials.createInsecure());
    engine = {
      client,
      request(message, severity) {
        const req = new pb.LogRequest();
        req.setSeverity(severity);
        req.setMessage(message);
        req.setUrn("");
        return req;
      },
    };
  } catch {
    engine = null;
  }
  return engine;
}

/**
 * What goes to the engine for a text or a warning, and what goes to stderr instead: the engine labels a
 * WARNING itself, so only stderr gets the `warning: ` prefix.
 */
function messageOf(kind: keyof typeof SEVERITY, text: string): { severity: Severity; engine: string; stderr: string } {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  return { severity: SEVERITY[kind], engine: body, stderr: kind === "warning" ? `warning: ${body}` : body };
}

/**
 * The engine messages of this process, in order: each is sent once the one before has its answer (or has
 * gone to stderr), so they reach the engine in the order they were made.
 */
let sent: Promise<void> = Promise.resolve();
/** Whether the engine has answered a message of this process: the channel to it works. */
let engineAnswered = false;

/** A text waiting to be sent with the next batch, and whether it is still to be shown (its claim). */
interface Pending {
  m: ReturnType<typeof messageOf>;
  claim: (() => boolean) | undefined;
}
/** The texts made since the last batch was taken; a batch takes them all. While any waits, a batch is due. */
let pending: Pending[] = [];
/** Ends the wait before the due batch at once (an interrupt); undefined while none waits. */
let wakeBatch: (() => void) | undefined;
/** Whether the engine has asked this host to end: batches no longer wait. */
let interrupted = false;

/**
 * How long a batch collects texts, from its first (or the answer to the one before, if later). The engine
 * asks for diffs one at a time, about 20 ms apart in a 200-Job preview on this project's 2-core machine, and
 * each message costs a provider host about 0.7 ms of CPU and the CLI as much again, in the diffs' path: a
 * batch of a few plans costs that once. A person does not see 100 ms.
 */
const BATCH_MS = 100;

/**
 * An interrupt sends what is pending at once, waits until every message made so far has its answer, then
 * is raised again for Node's own handling (the process ends by it). The engine closes a provider host with
 * SIGINT (then SIGKILL after 5 s) and keeps its own end open until the host has gone, so a message made
 * just before, such as the last plans of a preview, still reaches it. (CLIs before mid-2025,
 * pulumi/pulumi#19603, killed a host at once: the last batch of a preview is lost there; not tried with
 * such a CLI.) Listened for from the first message its maker does not wait for, and only where nothing
 * else listens for SIGINT.
 */
function onInterrupt(): void {
  interrupted = true;
  wakeBatch?.();
  const last = sent;
  void last.then(() => {
    if (sent !== last) return onInterrupt();
    process.removeListener("SIGINT", onInterrupt);
    process.kill(process.pid, "SIGINT");
  });
}

/** Sends one message to the engine; resolves once it is answered, or has gone to stderr instead. */
function toEngine(e: EngineModules, m: ReturnType<typeof messageOf>): Promise<void> {
  return new Promise<void>((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (ok) engineAnswered = true;
      else console.error(m.stderr);
      resolve();
    };
    const timer = setTimeout(() => done(false), 5000);
    try {
      e.client.log(e.request(m.engine, m.severity), (err) => done(err === null));
    } catch {
      done(false);
    }
  });
}

/** Whether a text is to be shown: its claim says so, or throws (a plan shown twice beats one not shown). */
function stillToShow(claim: (() => boolean) | undefined): boolean {
  try {
    return claim === undefined || claim();
  } catch {
    return true;
  }
}

/**
 * Sends the texts pending now, in order, as few messages as their severities allow: consecutive texts of one
 * severity go as one message, each starting on a line of its own. Never rejects.
 */
async function sendBatch(e: EngineModules): Promise<void> {
  const batch = pending;
  pending = [];
  let group: ReturnType<typeof messageOf>[] = [];
  const flush = async () => {
    const [first] = group;
    if (first === undefined) return;
    const join = (f: "engine" | "stderr") => group.map((m) => m[f]).join("\n");
    await toEngine(e, { severity: first.severity, engine: join("engine"), stderr: join("stderr") });
    group = [];
  };
  for (const { m, claim } of batch) {
    if (!stillToShow(claim)) continue;
    if (group[0] !== undefined && group[0].severity !== m.severity) await flush();
    group.push(m);
  }
  await flush();
}

/** Resolves after BATCH_MS, or at once on an interrupt. */
function batchWindow(): Promise<void> {
  if (interrupted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      wakeBatch = undefined;
      resolve();
    }, BATCH_MS);
    wakeBatch = () => {
      clearTimeout(timer);
      wakeBatch = undefined;
      resolve();
    };
  });
}

/**
 * Shows one message: one engine message inside the host, else stderr. With `claim`, only when it says so
 * (see {@link claimShowing}). Until the engine has answered a message of this process, the caller waits for
 * the answer (a message that cannot reach the engine then goes to stderr before the caller goes on).
 * After that, the message joins the next batch, sent BATCH_MS after its first text was made, or after the
 * answer to the message before if that comes later: the engine asks for diffs one at a time, and a plan's
 * round trip would otherwise be part of each.
 */
function emit(kind: keyof typeof SEVERITY, text: string, claim?: () => boolean): Promise<void> {
  const m = messageOf(kind, text);
  const e = engineOf();
  if (e === null) {
    console.error(m.stderr);
    return Promise.resolve();
  }
  if (!engineAnswered) {
    // Never rejects, so neither the chain nor the messages after this one are lost.
    sent = sent.then(() => (stillToShow(claim) ? toEngine(e, m) : undefined));
    return sent;
  }
  // The first text since the last batch was taken puts the next batch on the chain; it takes all pending then.
  if (pending.length === 0) sent = sent.then(batchWindow).then(() => sendBatch(e));
  pending.push({ m, claim });
  // Once listening, the count is no longer 0: nothing else listens, and this listener is added once.
  if (process.listenerCount("SIGINT") === 0) process.on("SIGINT", onInterrupt);
  return Promise.resolve();
}

/** Shows a text to the person running Pulumi: one engine message inside the host, else stderr. */
export function show(text: string): Promise<void> {
  return emit("info", text);
}

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
 * @internal for tests: the run file's trust rules, in directories no CLI run sets up (`showOnce` and `warn`
 * claim only inside Pulumi's dynamic-provider host once the engine answers, never in a test process).
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

/**
 * Shows a text once per Pulumi CLI run (see above); outside the dynamic-provider host, always. Where the
 * run's file cannot be had or trusted, the text is shown.
 */
export function showOnce(text: string): Promise<void> {
  return emit("info", text, () => claimShowing(text));
}

/**
 * Shows a warning the way {@link showOnce} shows a text: inside the dynamic-provider host as one engine
 * message at WARNING severity, once per CLI run; elsewhere on stderr after `warning: `.
 */
export function warn(message: string): Promise<void> {
  return emit("warning", message, () => claimShowing(`warning: ${message}`));
}

const warned = new Set<string>();

/** Warns once per process for each `key` (e.g. once per service and address), as {@link warn}. */
export function warnOnce(key: string, message: string): void {
  if (warned.has(key)) return;
  warned.add(key);
  void warn(message);
}
