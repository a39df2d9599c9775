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
 * the same plan would show twice. `showOnce` and `warn` show a text once per CLI run (./shown-texts.ts).
 */
import * as path from "node:path";
import { claimShowing } from "./shown-texts";

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
