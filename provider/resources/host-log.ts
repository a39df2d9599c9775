/**
 * Messages a resource provider shows the person running Pulumi (a job's plan at preview, a rollout note).
 *
 * What the dynamic-provider host allows (`@pulumi/pulumi/cmd/dynamic-provider`, 3.248 through 3.26x): it
 * passes provider methods neither the resource's URN nor a logger, and the CLI turns each line the provider
 * process writes to stdout or stderr into a separate stack-level message. A multi-line text on stderr
 * therefore appears line by line, once as progress rows and again under "Diagnostics". Without a URN nothing
 * can be attached to the resource itself.
 *
 * The host is started with the engine's address as its argument, and the engine's `Log` call takes a whole
 * text as one message. So, inside that host, a text goes to the engine as one stack-level message (one
 * block); anywhere else (tests, other hosts) or if the engine cannot be reached, it goes to stderr as before.
 *
 * `pulumi up` previews first and then updates, each with its own provider process, and each asks `diff`:
 * the same plan would show twice. `showOnce` remembers what it showed per CLI process (the host's parent:
 * the plugin script execs node) in a marker file under the temp directory, so the update part of an `up`
 * does not repeat the text its preview part showed.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

interface LogClient {
  log(req: unknown, cb: (err: Error | null) => void): void;
}

interface EngineModules {
  client: LogClient;
  request(message: string): unknown;
}

const INFO = 1; // pulumirpc.LogSeverity.INFO

let engine: EngineModules | null | undefined;

/** The engine connection of the dynamic-provider host this process is, or null when it is not one. */
function engineOf(): EngineModules | null {
  if (engine !== undefined) return engine;
  engine = null;
  try {
    const main = require.main;
    const address = process.argv[2];
    if (main === undefined || address === undefined || !/[\\/]cmd[\\/]dynamic-provider[\\/]index\.js$/.test(main.filename)) return engine;
    const proto = path.join(path.dirname(main.filename), "..", "..", "proto");
    const grpc = main.require("@grpc/grpc-js") as { credentials: { createInsecure(): unknown } };
    const rpc = require(path.join(proto, "engine_grpc_pb.js")) as { EngineClient: new (addr: string, creds: unknown) => LogClient };
    const pb = require(path.join(proto, "engine_pb.js")) as {
      LogRequest: new () => { setSeverity(s: number): void; setMessage(m: string): void; setUrn(u: string): void };
    };
    const client = new rpc.EngineClient(address, grpc.credentials.createInsecure());
    engine = {
      client,
      request(message) {
        const req = new pb.LogRequest();
        req.setSeverity(INFO);
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

/** Shows a text to the person running Pulumi: one engine message inside the host, else stderr. */
export async function show(text: string): Promise<void> {
  const body = text.endsWith("\n") ? text.slice(0, -1) : text;
  const e = engineOf();
  if (e !== null) {
    const sent = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5000);
      e.client.log(e.request(body), (err) => {
        clearTimeout(timer);
        resolve(err === null);
      });
    });
    if (sent) return;
  }
  console.error(body);
}

const MARKER_DIR = "pulumi-secrets-scheduler-shown";
const MARKER_TTL_MS = 24 * 3600 * 1000;
let swept = false;

/** The CLI process this host runs under: its pid and, where /proc has it, its start time (pids are reused). */
function cliProcess(): string {
  let start = "";
  try {
    const stat = fs.readFileSync(`/proc/${process.ppid}/stat`, "utf8");
    start = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19] ?? "";
  } catch {
    // not Linux: the pid alone, with the marker's age limit
  }
  return `${process.ppid}-${start}`;
}

/**
 * Shows a text once per Pulumi CLI run (see above); outside the dynamic-provider host, always. Where the
 * marker cannot be written, the text is shown.
 */
export async function showOnce(text: string): Promise<void> {
  if (engineOf() === null) return show(text);
  try {
    const dir = path.join(os.tmpdir(), MARKER_DIR);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const marker = path.join(dir, `${cliProcess()}-${createHash("sha256").update(text).digest("hex").slice(0, 32)}`);
    try {
      fs.writeFileSync(marker, "", { flag: "wx" });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST" && Date.now() - fs.statSync(marker).mtimeMs < MARKER_TTL_MS) return;
      fs.writeFileSync(marker, "");
    }
    if (!swept) {
      // Old markers go once per host process, not once per text: a preview of many changed jobs shows many.
      swept = true;
      for (const f of fs.readdirSync(dir)) {
        const p = path.join(dir, f);
        if (Date.now() - fs.statSync(p).mtimeMs > MARKER_TTL_MS) fs.rmSync(p, { force: true });
      }
    }
  } catch {
    // no marker: show it
  }
  return show(text);
}
