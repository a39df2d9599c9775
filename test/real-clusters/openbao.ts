/**
 * A three-node OpenBao cluster on loopback for the real-cluster fault runs (issue 45): integrated (raft)
 * storage with `retry_join` to every node, per-node `api_addr`/`cluster_addr`, listeners on 127.0.0.1 without
 * TLS, data in a private directory (mode 0700). Nothing is built here: the server comes from `BAO_BIN`, the
 * azure auth plugin from the directory `BAO_PLUGIN_DIR` (a file named `azure`).
 *
 * The cluster is initialised once with one key share; the unseal key and root token stay in this process's
 * memory (never in a file, never printed). Standby reads stay on (the server's default). Functions: the
 * active node (each node's `sys/health`), SIGKILL a node with its plugin processes, restart it on its data dir
 * and unseal it, wait for a new active node.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** One node: its ports, data dir and process (undefined while down). */
export interface BaoNode {
  readonly name: string;
  readonly apiPort: number;
  readonly clusterPort: number;
  /** `http://127.0.0.1:<apiPort>`. */
  readonly url: string;
  readonly dataDir: string;
  proc: ChildProcess | undefined;
}

/** What `sys/health` says of a node. */
export type NodeState = "active" | "standby" | "sealed" | "uninitialized" | "down" | "other";

export interface BaoCluster {
  readonly nodes: readonly BaoNode[];
  /** `host:port` of every node's API, for the balancer. */
  targets(): string[];
  /** The root token (memory only; pass it to the library as a secret, never print it). */
  rootToken(): string;
  state(node: BaoNode): Promise<NodeState>;
  /** The active node, waiting for one up to `timeoutMs`. */
  active(timeoutMs?: number): Promise<BaoNode>;
  /** SIGKILLs a node and waits for its process to end. */
  kill(node: BaoNode): Promise<void>;
  /** Starts a node again on its data dir, unseals it and waits until it is a standby or active. */
  restart(node: BaoNode): Promise<void>;
  /** Waits until a node other than `old` is active; resolves to it and how long it took. */
  waitForNewActive(old: BaoNode, timeoutMs?: number): Promise<{ node: BaoNode; ms: number }>;
  /** Kills every node and removes the data dir. */
  close(): Promise<void>;
}

export interface BaoClusterOptions {
  bin: string;
  pluginDir: string;
  /** Where a node's output goes (a file per node in the private dir by default; never holds a secret). */
  logLevel?: string;
}

/** Free loopback ports (taken and released: another process may take one in between, which is unlikely). */
async function freePorts(n: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: n },
      () =>
        new Promise<net.Server>((resolve, reject) => {
          const s = net.createServer();
          s.once("error", reject);
          s.listen(0, "127.0.0.1", () => resolve(s));
        }),
    ),
  );
  const ports = servers.map((s) => (s.address() as net.AddressInfo).port);
  await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  return ports;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function call(
  url: string,
  method: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method,
    headers: {
      "content-type": "application/json",
      connection: "close",
      ...(token !== undefined ? { "x-vault-token": token } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    redirect: "manual",
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

function nodeConfig(node: BaoNode, all: readonly BaoNode[], pluginDir: string, logLevel: string): string {
  const joins = all.map((n) => `  retry_join {\n    leader_api_addr = "http://127.0.0.1:${n.apiPort}"\n  }`).join("\n");
  return `storage "raft" {
  path = "${node.dataDir}"
  node_id = "${node.name}"
${joins}
}
listener "tcp" {
  address = "127.0.0.1:${node.apiPort}"
  cluster_address = "127.0.0.1:${node.clusterPort}"
  tls_disable = true
}
api_addr = "${node.url}"
cluster_addr = "https://127.0.0.1:${node.clusterPort}"
disable_mlock = true
plugin_directory = "${pluginDir}"
log_level = "${logLevel}"
`;
}

/** Starts three nodes, initialises and unseals the cluster, and registers the azure plugin. */
export async function startBaoCluster(opts: BaoClusterOptions): Promise<BaoCluster> {
  const root = mkdtempSync(join(tmpdir(), "pss-bao-"));
  chmodSync(root, 0o700);
  const ports = await freePorts(6);
  const nodes: BaoNode[] = [0, 1, 2].map((i) => ({
    name: `bao${i + 1}`,
    apiPort: ports[2 * i] ?? 0,
    clusterPort: ports[2 * i + 1] ?? 0,
    url: `http://127.0.0.1:${ports[2 * i] ?? 0}`,
    dataDir: join(root, `bao${i + 1}`, "data"),
    proc: undefined,
  }));
  for (const n of nodes) {
    mkdirSync(n.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(join(root, n.name, "config.hcl"), nodeConfig(n, nodes, opts.pluginDir, opts.logLevel ?? "info"), {
      mode: 0o600,
    });
  }
  // The unseal key and the root token live in this closure only.
  let unsealKey = "";
  let token = "";

  const spawnNode = (n: BaoNode): void => {
    const log = createWriteStream(join(root, n.name, "server.log"), { flags: "a", mode: 0o600 });
    const proc = spawn(opts.bin, ["server", `-config=${join(root, n.name, "config.hcl")}`], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: root },
      // Its own process group, which its plugin processes join: a kill takes them with it (see kill).
      detached: true,
    });
    proc.stdout?.pipe(log);
    proc.stderr?.pipe(log);
    n.proc = proc;
    proc.once("exit", () => {
      if (n.proc === proc) n.proc = undefined;
    });
  };

  const state = async (n: BaoNode): Promise<NodeState> => {
    if (n.proc === undefined) return "down";
    try {
      const { status } = await call(`${n.url}/v1/sys/health?standbyok=false`, "GET");
      if (status === 200) return "active";
      if (status === 429 || status === 473) return "standby";
      if (status === 503) return "sealed";
      if (status === 501) return "uninitialized";
      return "other";
    } catch {
      return "down";
    }
  };

  const waitFor = async <T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> => {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() > end) throw new Error(`OpenBao cluster: ${what} not reached in ${timeoutMs} ms`);
      await sleep(100);
    }
  };

  const unseal = async (n: BaoNode): Promise<void> => {
    await waitFor(`${n.name} listening`, 30_000, async () => ((await state(n)) === "down" ? undefined : true));
    await waitFor(`${n.name} unsealed`, 60_000, async () => {
      const s = await state(n);
      if (s === "active" || s === "standby") return true;
      // A node joining through retry_join may still call itself uninitialised until it has the key.
      if (s === "sealed" || s === "uninitialized") {
        try {
          await call(`${n.url}/v1/sys/unseal`, "PUT", { key: unsealKey });
        } catch {
          // not ready yet: the next round tries again
        }
        await sleep(400);
      }
      return undefined;
    });
  };

  const active = async (timeoutMs = 60_000): Promise<BaoNode> =>
    waitFor("an active node", timeoutMs, async () => {
      for (const n of nodes) if ((await state(n)) === "active") return n;
      return undefined;
    });

  const kill = async (n: BaoNode): Promise<void> => {
    const p = n.proc;
    if (p === undefined) return;
    const exited = new Promise<void>((r) => p.once("exit", () => r()));
    // The whole group: a SIGKILLed server leaves its plugin processes running otherwise (seen: one azure
    // plugin process per mount use outlived every killed node).
    try {
      if (p.pid !== undefined) process.kill(-p.pid, "SIGKILL");
      else p.kill("SIGKILL");
    } catch {
      p.kill("SIGKILL");
    }
    await exited;
  };

  const close = async (): Promise<void> => {
    await Promise.all(nodes.map(kill));
    rmSync(root, { recursive: true, force: true });
  };

  try {
    for (const n of nodes) spawnNode(n);
    const first = nodes[0] as BaoNode;
    await waitFor("bao1 listening", 30_000, async () => ((await state(first)) === "down" ? undefined : true));
    const init = await call(`${first.url}/v1/sys/init`, "PUT", { secret_shares: 1, secret_threshold: 1 });
    const initBody = init.json as { keys_base64?: string[]; root_token?: string };
    if (init.status !== 200 || initBody.keys_base64?.[0] === undefined || initBody.root_token === undefined)
      throw new Error(`OpenBao cluster: init answered ${init.status}`);
    unsealKey = initBody.keys_base64[0];
    token = initBody.root_token;
    await unseal(first);
    await active();
    for (const n of nodes.slice(1)) await unseal(n);
    // Every node has joined the raft configuration when the active node lists three voters.
    await waitFor("three raft voters", 60_000, async () => {
      const leader = await active();
      const { status, json } = await call(`${leader.url}/v1/sys/storage/raft/configuration`, "GET", undefined, token);
      const servers = (json as { data?: { config?: { servers?: { voter?: boolean }[] } } }).data?.config?.servers;
      return status === 200 && servers?.filter((s) => s.voter === true).length === 3 ? true : undefined;
    });
    const sha256 = createHash("sha256")
      .update(readFileSync(join(opts.pluginDir, "azure")))
      .digest("hex");
    const leader = await active();
    const reg = await call(
      `${leader.url}/v1/sys/plugins/catalog/auth/azure`,
      "PUT",
      { sha256, command: "azure" },
      token,
    );
    if (reg.status !== 204 && reg.status !== 200)
      throw new Error(
        `OpenBao cluster: registering the azure plugin answered ${reg.status}: ${JSON.stringify(reg.json)}`,
      );
  } catch (e) {
    await close();
    throw e;
  }

  return {
    nodes,
    targets: () => nodes.map((n) => `127.0.0.1:${n.apiPort}`),
    rootToken: () => token,
    state,
    active,
    kill,
    restart: async (n) => {
      if (n.proc !== undefined) throw new Error(`${n.name} is still running`);
      spawnNode(n);
      await unseal(n);
    },
    waitForNewActive: async (old, timeoutMs = 120_000) => {
      const t0 = Date.now();
      const node = await waitFor("a new active node", timeoutMs, async () => {
        for (const n of nodes) if (n !== old && (await state(n)) === "active") return n;
        return undefined;
      });
      return { node, ms: Date.now() - t0 };
    },
    close,
  };
}
