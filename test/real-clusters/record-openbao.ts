/**
 * Records what a real three-node OpenBao cluster (./openbao.ts) answers while its active node changes and
 * while a standby lags (issue 45), as fixtures for test/recorded/openbao-cluster-answers.test.ts:
 * - `active-node-killed.json`: the distinct answers, in order, each standby and then the restarted node give
 *   to a role write, a mount tune and two reads sent straight to them from the SIGKILL of the active node until
 *   a new active node answers (and to the old node while it is sealed after its restart);
 * - `standby-reads.json`: a write sent through a standby (forwarded to the active node), then the same
 *   standby's read at once: whether the read showed the write, per try.
 *
 * Left out: tokens (never part of an answer recorded here), accessors, UUIDs, times and node ports (a node
 * named in a `Location` is written `<old-active>`, `<self>` or `<other>`).
 */
import type { BaoCluster, BaoNode } from "./openbao";

/** One distinct answer. */
export interface RecordedAnswer {
  method: string;
  /** With the run's names replaced by `<mount>` and `<role>`. */
  path: string;
  status: number;
  /** The `errors` of a JSON error body, when there is one. */
  errors?: string[];
  /** `Location`, its node replaced by `<old-active>`, `<self>` or `<other>`. */
  location?: string;
  /** A 2xx read: whether it showed what was written last (true), or an older value (false). */
  showsWrite?: boolean;
}

export interface LeaderChangeRecording {
  release: "openbao-2.6.2";
  scenario: "active-node-killed";
  /** Per node, as what it became: the answers it gave, consecutive repeats folded into one. */
  nodes: { role: "new-active" | "standby" | "restarted-old-active"; answers: RecordedAnswer[] }[];
}

export interface StandbyReadRecording {
  release: "openbao-2.6.2";
  scenario: "standby-reads";
  /** Per try: what the forwarded write answered and what the standby's immediate read showed. */
  tries: { write: RecordedAnswer; read: RecordedAnswer; readsUntilShown: number }[];
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function send(
  node: BaoNode,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> | undefined; location: string | undefined }> {
  const res = await fetch(`${node.url}${path}`, {
    method,
    headers: { "x-vault-token": token, "content-type": "application/json", connection: "close" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    redirect: "manual",
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let json: Record<string, unknown> | undefined;
  try {
    json = text === "" ? undefined : (JSON.parse(text) as Record<string, unknown>);
  } catch {
    json = { text };
  }
  return { status: res.status, json, location: res.headers.get("location") ?? undefined };
}

function same(a: RecordedAnswer, b: RecordedAnswer): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Records the answers while the active node is killed, a new one takes over and the old one comes back. */
export async function recordActiveNodeKilled(cluster: BaoCluster, mount: string): Promise<LeaderChangeRecording> {
  const token = cluster.rootToken();
  const old = await cluster.active();
  // The mount, its config and one role, written through the active node.
  await send(old, token, "POST", `/v1/sys/auth/${mount}`, { type: "azure", description: "recording" });
  await send(old, token, "POST", `/v1/auth/${mount}/config`, {
    tenant_id: "00000000-0000-4000-8000-00000000aaaa",
    resource: "https://management.example/",
    client_id: "00000000-0000-4000-8000-00000000bbbb",
  });
  await send(old, token, "POST", `/v1/auth/${mount}/role/r0`, {
    token_policies: ["p0"],
    bound_service_principal_ids: ["sp"],
  });
  await sleep(2000); // the standbys catch up
  const standbys = cluster.nodes.filter((n) => n !== old);
  const names = (p: string) => p.replaceAll(`/${mount}/`, "/<mount>/").replaceAll("/r0", "/<role>");
  const where = (self: BaoNode, loc: string | undefined): string | undefined => {
    if (loc === undefined) return undefined;
    const u = new URL(loc);
    const node = cluster.nodes.find((n) => n.url === u.origin);
    const who = node === old ? "<old-active>" : node === self ? "<self>" : node !== undefined ? "<other>" : u.origin;
    return who + names(u.pathname) + u.search;
  };
  let written = 0;
  const probes: { method: string; path: string; body?: () => unknown; read?: true }[] = [
    { method: "POST", path: `/v1/auth/${mount}/role/r0`, body: () => ({ token_policies: [`p${++written}`] }) },
    { method: "POST", path: `/v1/sys/auth/${mount}/tune`, body: () => ({ description: "recording" }) },
    { method: "GET", path: `/v1/auth/${mount}/role/r0`, read: true },
    { method: "GET", path: "/v1/sys/auth" },
  ];
  const answers = new Map<BaoNode, RecordedAnswer[]>(standbys.map((n) => [n, []]));
  const probe = async (n: BaoNode, list: RecordedAnswer[]): Promise<void> => {
    for (const p of probes) {
      let a: RecordedAnswer;
      try {
        const r = await send(n, token, p.method, p.path, p.body?.());
        const errors = Array.isArray(r.json?.errors) ? (r.json.errors as unknown[]).map(String) : undefined;
        const policies = (r.json?.data as { token_policies?: string[] } | undefined)?.token_policies;
        a = {
          method: p.method,
          path: names(p.path),
          status: r.status,
          ...(errors !== undefined ? { errors } : {}),
          ...(r.location !== undefined ? { location: where(n, r.location) } : {}),
          ...(p.read && r.status === 200 ? { showsWrite: policies?.[0] === `p${written}` || written === 0 } : {}),
        };
      } catch (e) {
        a = {
          method: p.method,
          path: names(p.path),
          status: 0,
          errors: [(e as { cause?: { code?: string } }).cause?.code ?? "no answer"],
        };
      }
      const lastOfKind = [...list].reverse().find((x) => x.method === a.method && x.path === a.path);
      if (lastOfKind === undefined || !same(lastOfKind, a)) list.push(a);
    }
  };
  await cluster.kill(old);
  const t0 = Date.now();
  let newActive: BaoNode | undefined;
  let settled = 0;
  while (Date.now() - t0 < 60_000) {
    await Promise.all(standbys.map((n) => probe(n, answers.get(n) ?? [])));
    if (newActive === undefined) {
      for (const n of standbys) if ((await cluster.state(n)) === "active") newActive = n;
    } else if (++settled > 5) break;
    await sleep(50);
  }
  // The old node restarted: its answers while sealed (the harness unseals it a moment later).
  const restarted: RecordedAnswer[] = [];
  const restarting = cluster.restart(old);
  let doneRestart = false;
  void restarting.then(() => (doneRestart = true));
  while (!doneRestart) {
    if ((await cluster.state(old)) === "sealed") await probe(old, restarted);
    await sleep(50);
  }
  await restarting;
  await probe(old, restarted);
  return {
    release: "openbao-2.6.2",
    scenario: "active-node-killed",
    nodes: [
      ...standbys.map((n) => ({
        role: n === newActive ? ("new-active" as const) : ("standby" as const),
        answers: answers.get(n) ?? [],
      })),
      { role: "restarted-old-active" as const, answers: restarted },
    ],
  };
}

/** Writes through a standby (forwarded) and reads from it at once, `tries` times. */
export async function recordStandbyReads(
  cluster: BaoCluster,
  mount: string,
  tries = 10,
): Promise<StandbyReadRecording> {
  const token = cluster.rootToken();
  const active = await cluster.active();
  const standby = cluster.nodes.find((n) => n !== active && n.proc !== undefined);
  if (standby === undefined) throw new Error("no standby");
  // A node just unsealed answers a forwarded write with 500 "active cluster node not found" until it knows the
  // active node (the recording of a leader change shows it): the lag recorded here is the one after that.
  for (let i = 0; ; i++) {
    const leader = await send(standby, token, "GET", "/v1/sys/leader");
    if ((leader.json as { leader_address?: string } | undefined)?.leader_address === active.url) break;
    if (i >= 300) throw new Error(`${standby.name} does not name the active node`);
    await sleep(100);
  }
  const out: StandbyReadRecording["tries"] = [];
  for (let i = 0; i < tries; i++) {
    const policy = `q${i}`;
    const w = await send(standby, token, "POST", `/v1/auth/${mount}/role/r0`, { token_policies: [policy] });
    let reads = 0;
    let first: RecordedAnswer | undefined;
    for (;;) {
      reads++;
      const r = await send(standby, token, "GET", `/v1/auth/${mount}/role/r0`);
      const shows = (r.json?.data as { token_policies?: string[] } | undefined)?.token_policies?.[0] === policy;
      first ??= { method: "GET", path: "/v1/auth/<mount>/role/<role>", status: r.status, showsWrite: shows };
      if (shows || reads >= 200) break;
      await sleep(20);
    }
    out.push({
      write: { method: "POST", path: "/v1/auth/<mount>/role/<role>", status: w.status },
      read: first,
      readsUntilShown: reads,
    });
  }
  return { release: "openbao-2.6.2", scenario: "standby-reads", tries: out };
}
