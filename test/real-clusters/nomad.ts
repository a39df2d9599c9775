/**
 * A real three-server Nomad cluster on loopback for the fault runs of issue 45 (test/real-clusters/): three
 * `nomad agent -server -bootstrap-expect=3` with their own data dirs and ports, joined by `server_join`, one
 * client agent with raw_exec in dc1, and a round-robin balancer (./balancer.ts) in front of the servers'
 * HTTP ports. Nothing is built here: the binary comes from `NOMAD_BIN` (Nomad 1.6.5, the last MPL-2.0
 * release; see docs/real-clusters.md). Everything lives in a private `mkdtemp` directory (mode 0700).
 *
 * Leader changes: `leader()` asks the servers' `/v1/status/leader` (an RPC address) and maps it to a node;
 * `kill(node)` sends SIGKILL; `restart(node)` starts it again on its data dir; `waitForLeader` waits until
 * the live servers agree on a live leader.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startBalancer, type Balancer } from "./balancer";

export interface NomadNode {
  readonly name: string;
  readonly kind: "server" | "client";
  readonly ports: { http: number; rpc: number; serf: number };
  readonly dataDir: string;
  readonly configFile: string;
  readonly logFile: string;
  /** The running process, or undefined while the node is down. */
  proc: ChildProcess | undefined;
}

export interface NomadCluster {
  readonly dir: string;
  readonly servers: readonly NomadNode[];
  readonly client: NomadNode;
  readonly balancer: Balancer;
  /** `http://127.0.0.1:<port>` of a node's own HTTP API. */
  httpOf(node: NomadNode): string;
  /** The current leader as the live servers see it (undefined when they have none or disagree). */
  leader(): Promise<NomadNode | undefined>;
  /** Waits until the live servers agree on a live leader other than `not`; returns it. */
  waitForLeader(opts?: { not?: NomadNode; timeoutMs?: number }): Promise<NomadNode>;
  /** Waits until every server is up and `/v1/status/peers` lists three, with a leader. */
  waitForPeers(timeoutMs?: number): Promise<void>;
  kill(node: NomadNode): void;
  restart(node: NomadNode): Promise<void>;
  /** Waits until the client node is ready on the servers. */
  waitForClient(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** A free TCP port on loopback (bound and released; the agents bind it right after). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const a = s.address();
      const port = a !== null && typeof a !== "string" ? a.port : 0;
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** GET on a node's own HTTP port with a short deadline; undefined when it does not answer 200. */
async function getJson(url: string, timeoutMs = 2_000): Promise<unknown> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
    if (r.status !== 200) return undefined;
    return (await r.json()) as unknown;
  } catch {
    return undefined;
  }
}

/** A node's agent config: what servers and the client share, then the server or client part. */
function agentConfig(node: NomadNode, servers: readonly NomadNode[]): string {
  const list = (port: "serf" | "rpc"): string => servers.map((s) => `"127.0.0.1:${s.ports[port]}"`).join(", ");
  const role =
    node.kind === "server"
      ? `server {
  enabled          = true
  bootstrap_expect = ${servers.length}
  server_join {
    retry_join     = [${list("serf")}]
    retry_interval = "1s"
  }
}
client {
  enabled = false
}
`
      : `server {
  enabled = false
}
client {
  enabled = true
  servers = [${list("rpc")}]
}
plugin "raw_exec" {
  config {
    enabled = true
  }
}
`;
  return `name = "${node.name}"
datacenter = "dc1"
data_dir = "${node.dataDir}"
bind_addr = "127.0.0.1"
disable_update_check = true
log_level = "INFO"
ports {
  http = ${node.ports.http}
  rpc  = ${node.ports.rpc}
  serf = ${node.ports.serf}
}
advertise {
  http = "127.0.0.1:${node.ports.http}"
  rpc  = "127.0.0.1:${node.ports.rpc}"
  serf = "127.0.0.1:${node.ports.serf}"
}
${role}`;
}

/** The process ids under `root` (children, grandchildren...), read from /proc; [] where there is no /proc. */
function descendants(root: number): number[] {
  if (!existsSync("/proc")) return [];
  const parent = new Map<number, number>();
  for (const d of readdirSync("/proc")) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, "utf8");
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parent.set(Number(d), Number(after[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const p = queue.shift() ?? 0;
    for (const [pid, ppid] of parent) {
      if (ppid === p && !out.includes(pid)) {
        out.push(pid);
        queue.push(pid);
      }
    }
  }
  return out;
}

/**
 * The client mounts each task's `secrets` and `private` directories (tmpfs) under its data dir and, killed,
 * leaves them mounted: unmount those under `dir` (deepest first) so the directory can be removed.
 */
function unmountUnder(dir: string): void {
  if (!existsSync("/proc/mounts")) return;
  const mounts = readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .map((l) => l.split(" ")[1] ?? "")
    .filter((m) => m.startsWith(dir + "/"))
    .sort()
    .reverse();
  for (const m of mounts) spawnSync("umount", [m]);
}

/**
 * Starts the cluster. `NOMAD_BIN` (or `bin`) is the nomad 1.6.5 binary. `keep` leaves the directory (logs,
 * data) in place on close, for a look afterwards.
 */
export async function startNomadCluster(
  opts: { bin?: string; keep?: boolean; log?: (line: string) => void } = {},
): Promise<NomadCluster> {
  const bin = opts.bin ?? process.env.NOMAD_BIN;
  if (bin === undefined || bin === "" || !existsSync(bin)) {
    throw new Error("NOMAD_BIN must name a Nomad 1.6.5 binary (see docs/real-clusters.md)");
  }
  const log = opts.log ?? (() => undefined);
  const dir = mkdtempSync(join(tmpdir(), "pss-nomad-cluster-"), { encoding: "utf8" });
  const mkNode = async (name: string, kind: "server" | "client"): Promise<NomadNode> => {
    const dataDir = join(dir, name);
    mkdirSync(dataDir, { mode: 0o700 });
    return {
      name,
      kind,
      ports: { http: await freePort(), rpc: await freePort(), serf: await freePort() },
      dataDir,
      configFile: join(dir, `${name}.hcl`),
      logFile: join(dir, `${name}.log`),
      proc: undefined,
    };
  };
  const servers = [await mkNode("s1", "server"), await mkNode("s2", "server"), await mkNode("s3", "server")];
  const client = await mkNode("c1", "client");
  for (const n of [...servers, client]) writeFileSync(n.configFile, agentConfig(n, servers), { mode: 0o600 });

  const start = (node: NomadNode): void => {
    const fd = openSync(node.logFile, "a", 0o600);
    const proc = spawn(bin, ["agent", "-config", node.configFile], { stdio: ["ignore", fd, fd] });
    closeSync(fd);
    node.proc = proc;
    proc.once("exit", () => {
      if (node.proc === proc) node.proc = undefined;
    });
  };
  const httpOf = (node: NomadNode): string => `http://127.0.0.1:${node.ports.http}`;
  const live = (): NomadNode[] => servers.filter((s) => s.proc !== undefined);

  const leaderSeenBy = async (node: NomadNode): Promise<NomadNode | undefined> => {
    const addr = await getJson(`${httpOf(node)}/v1/status/leader`);
    if (typeof addr !== "string" || addr === "") return undefined;
    const port = Number(addr.slice(addr.lastIndexOf(":") + 1));
    return servers.find((s) => s.ports.rpc === port);
  };
  const leader = async (): Promise<NomadNode | undefined> => {
    const seen = await Promise.all(live().map(leaderSeenBy));
    const first = seen[0];
    if (first === undefined || first.proc === undefined || seen.some((s) => s !== first)) return undefined;
    return first;
  };
  const waitForLeader = async (w: { not?: NomadNode; timeoutMs?: number } = {}): Promise<NomadNode> => {
    const until = Date.now() + (w.timeoutMs ?? 60_000);
    while (Date.now() < until) {
      const l = await leader();
      if (l !== undefined && l !== w.not) return l;
      await sleep(100);
    }
    throw new Error(`no leader within ${w.timeoutMs ?? 60_000} ms (logs: ${dir})`);
  };
  const waitForPeers = async (timeoutMs = 60_000): Promise<void> => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      if (live().length === servers.length && (await leader()) !== undefined) {
        const peers = await Promise.all(servers.map((s) => getJson(`${httpOf(s)}/v1/status/peers`)));
        if (peers.every((p) => Array.isArray(p) && p.length === servers.length)) return;
      }
      await sleep(200);
    }
    throw new Error(`the servers did not all join within ${timeoutMs} ms (logs: ${dir})`);
  };
  const waitForClient = async (timeoutMs = 60_000): Promise<void> => {
    const until = Date.now() + timeoutMs;
    while (Date.now() < until) {
      const l = await leader();
      if (l !== undefined) {
        const nodes = await getJson(`${httpOf(l)}/v1/nodes`);
        if (Array.isArray(nodes) && nodes.some((n) => (n as { Status?: string }).Status === "ready")) return;
      }
      await sleep(250);
    }
    throw new Error(`the client node was not ready within ${timeoutMs} ms (logs: ${dir})`);
  };
  const kill = (node: NomadNode): void => {
    const p = node.proc;
    if (p?.pid === undefined) throw new Error(`${node.name} is not running`);
    log(`SIGKILL ${node.name} (pid ${p.pid})`);
    p.kill("SIGKILL");
    node.proc = undefined;
  };
  const restart = async (node: NomadNode): Promise<void> => {
    if (node.proc !== undefined) throw new Error(`${node.name} is still running`);
    log(`restart ${node.name} on its data dir`);
    start(node);
    const until = Date.now() + 30_000;
    while (Date.now() < until) {
      if ((await getJson(`${httpOf(node)}/v1/agent/self`)) !== undefined) return;
      await sleep(100);
    }
    throw new Error(`${node.name} did not answer within 30 s after its restart (log: ${node.logFile})`);
  };

  const stopAll = async (): Promise<void> => {
    // The client's task executors outlive it by design (an agent upgrade keeps allocations running): end
    // them by id, as descendants of the agent, before the agent itself.
    const procs = [client, ...servers].map((n) => n.proc).filter((p): p is ChildProcess => p?.pid !== undefined);
    const extra = procs.flatMap((p) => descendants(p.pid ?? 0));
    for (const pid of extra) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    await Promise.all(
      procs.map(
        (p) =>
          new Promise<void>((resolve) => {
            if (p.exitCode !== null || p.signalCode !== null) return resolve();
            p.once("exit", () => resolve());
            p.kill("SIGKILL");
          }),
      ),
    );
    for (const n of [client, ...servers]) n.proc = undefined;
  };

  const balancer = await startBalancer(() => servers.map((s) => `127.0.0.1:${s.ports.http}`));
  try {
    for (const s of servers) start(s);
    start(client);
    await waitForPeers(90_000);
    await waitForClient(90_000);
  } catch (e) {
    await stopAll();
    await balancer.close();
    throw e;
  }
  log(
    `cluster up in ${dir}: servers ${servers.map((s) => `${s.name}=http:${s.ports.http}`).join(" ")}, balancer ${balancer.url}`,
  );

  return {
    dir,
    servers,
    client,
    balancer,
    httpOf,
    leader,
    waitForLeader,
    waitForPeers,
    kill,
    restart,
    waitForClient,
    close: async () => {
      await stopAll();
      await balancer.close();
      if (opts.keep !== true) {
        unmountUnder(dir);
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
