/**
 * What the real-cluster fault runs (./*-fault-run.test.ts, issue 45) share: their knobs, the leader losses
 * they inject into a cluster (./nomad.ts, ./openbao.ts) at seeded moments, a command run under those losses
 * and its record, and the checks of state against each cluster after a command.
 *
 * Knobs (each read here once; the older FAULT_* names still work):
 * - REAL_CLUSTERS_SEED (FAULT_SEED): the first run's seed; printed, so a run can be replayed;
 * - REAL_CLUSTERS_RUNS: how many runs (seeds seed, seed+1, ...) on one cluster (or pair);
 * - REAL_CLUSTERS_FAULTS (FAULTS): `0` runs the same commands without a leader loss (the times without one);
 * - REAL_CLUSTERS_JOBS (FAULT_JOBS): the Jobs in the stack (50);
 * - REAL_CLUSTERS_GAP_MS: `min-max` milliseconds from a cluster whole again to the next kill;
 * - REAL_CLUSTERS_REPORT (FAULT_REPORT): a file each command's record is appended to, as JSON lines.
 */
import { appendFileSync } from "node:fs";
import { randomInt } from "node:crypto";
import { truthy } from "../helpers/cli";
import type { BaoCluster } from "./openbao";
import type { NomadCluster } from "./nomad";

export type Service = "scheduler" | "secrets";

export interface Knobs {
  seed: number;
  runs: number;
  faults: boolean;
  jobs: number;
  gap: { lo: number; hi: number };
  report: string | undefined;
}

/** The knobs from the environment, with a harness's own defaults. */
export function knobs(defaults: { runs: number; gapMs: string; jobs?: number }): Knobs {
  const seed = process.env.REAL_CLUSTERS_SEED ?? process.env.FAULT_SEED;
  const faults = process.env.REAL_CLUSTERS_FAULTS ?? process.env.FAULTS;
  const [lo, hi] = (process.env.REAL_CLUSTERS_GAP_MS ?? defaults.gapMs).split("-").map(Number);
  return {
    seed: seed !== undefined && seed !== "" ? Number(seed) : randomInt(1, 2 ** 24),
    runs: Number(process.env.REAL_CLUSTERS_RUNS ?? String(defaults.runs)),
    faults: faults === undefined || truthy(faults),
    jobs: Number(process.env.REAL_CLUSTERS_JOBS ?? process.env.FAULT_JOBS ?? String(defaults.jobs ?? 50)),
    gap: { lo: lo ?? 3000, hi: hi ?? lo ?? 15000 },
    report: process.env.REAL_CLUSTERS_REPORT ?? process.env.FAULT_REPORT,
  };
}

/** Appends one JSON line to the report file, when there is one. */
export function report(k: Knobs, line: unknown): void {
  if (k.report !== undefined && k.report !== "") appendFileSync(k.report, JSON.stringify(line) + "\n");
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One injected leader loss. */
export interface Fault {
  service: Service;
  /** Milliseconds after the command started. */
  atMs: number;
  killed: string;
  newLeader: string;
  /** From the SIGKILL until another node leads (Nomad: the live servers agree; OpenBao: reports active). */
  electionMs: number;
  /** From the SIGKILL until the old node is back (restarted, joined or unsealed). */
  recoveredMs: number;
}

/** A cluster whose leader can be lost: kill it, wait for another, restart it. Undefined when it had none. */
export interface FaultTarget {
  service: Service;
  loseLeader(): Promise<Omit<Fault, "service" | "atMs"> | undefined>;
}

export function nomadTarget(c: NomadCluster): FaultTarget {
  return {
    service: "scheduler",
    loseLeader: async () => {
      const leader = await c.leader();
      if (leader === undefined) return undefined;
      const k0 = Date.now();
      c.kill(leader);
      const elected = c.waitForLeader({ not: leader, timeoutMs: 120_000 }).then((node) => ({
        node,
        electionMs: Date.now() - k0,
      }));
      // Restarted once a new leader is there (or none came): the old node never stays down.
      const fresh = await elected.finally(() => c.restart(leader));
      await c.waitForPeers(120_000);
      return {
        killed: leader.name,
        newLeader: fresh.node.name,
        electionMs: fresh.electionMs,
        recoveredMs: Date.now() - k0,
      };
    },
  };
}

export function baoTarget(c: BaoCluster): FaultTarget {
  return {
    service: "secrets",
    loseLeader: async () => {
      const old = await c.active(60_000);
      const k0 = Date.now();
      await c.kill(old);
      const { node, ms } = await c.waitForNewActive(old);
      await c.restart(old);
      return { killed: old.name, newLeader: node.name, electionMs: ms, recoveredMs: Date.now() - k0 };
    },
  };
}

/**
 * Until `done()`: waits a seeded pause (`gap`) after the clusters were whole again, picks one target by the
 * seed, loses its leader and waits until it is whole again. Each loss is pushed to `faults` and printed.
 */
export async function injectFaults(o: {
  targets: readonly FaultTarget[];
  random: () => number;
  gap: { lo: number; hi: number };
  done: () => boolean;
  t0: number;
  faults: Fault[];
  log: (line: string) => void;
}): Promise<void> {
  while (!o.done()) {
    const wait = o.gap.lo + Math.floor(o.random() * (o.gap.hi - o.gap.lo));
    const target = o.targets[Math.floor(o.random() * o.targets.length)];
    const until = Date.now() + wait;
    while (Date.now() < until && !o.done()) await sleep(50);
    if (o.done() || target === undefined) return;
    const atMs = Date.now() - o.t0;
    const lost = await target.loseLeader();
    if (lost === undefined) continue;
    const fault: Fault = { service: target.service, atMs, ...lost };
    o.faults.push(fault);
    o.log(
      `${fault.service}: leader ${fault.killed} killed at +${(atMs / 1000).toFixed(1)} s; ${fault.newLeader} leads ` +
        `${(fault.electionMs / 1000).toFixed(1)} s later; whole again after ${(fault.recoveredMs / 1000).toFixed(1)} s`,
    );
  }
}

/** A command's record. */
export interface CommandRecord {
  seed: number;
  command: string;
  ok: boolean;
  /** A failed command's message, its last 4000 characters. */
  error?: string;
  ms: number;
  faults: Fault[];
  changes: Record<string, number>;
  /** The first distinct progress lines the user saw about a leader change, and how many there were. */
  leaderLines: string[];
  leaderLineCount: number;
  /** A failed command's rerun without faults (it must converge). */
  rerun?: { ok: boolean; error?: string; ms: number; changes: Record<string, number> };
}

const LEADER_LINE = /electing a leader|has no active node|active node|standby/i;

/**
 * Runs `op` while `injectFaults` loses leaders (unless `inject` is false), then waits for `settle` (the
 * clusters whole again). A failed command is run again without faults. `output` collects everything the CLI
 * printed (to check that no secret is in it).
 */
export async function runCommand(o: {
  seed: number;
  command: string;
  op: (onOutput: (s: string) => void) => Promise<Record<string, number>>;
  inject: boolean;
  targets: readonly FaultTarget[];
  random: () => number;
  gap: { lo: number; hi: number };
  settle: () => Promise<void>;
  output: string[];
  log: (line: string) => void;
}): Promise<CommandRecord> {
  const lines: string[] = [];
  let pending = "";
  const onOutput = (s: string): void => {
    o.output.push(s);
    pending += s;
    let i: number;
    while ((i = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, i).trim();
      pending = pending.slice(i + 1);
      if (LEADER_LINE.test(line)) lines.push(line);
    }
  };
  const faults: Fault[] = [];
  let finished = false;
  const t0 = Date.now();
  const monkey = o.inject ? injectFaults({ ...o, done: () => finished, t0, faults }) : Promise.resolve();
  let rec: CommandRecord;
  try {
    const changes = await o.op(onOutput);
    rec = {
      seed: o.seed,
      command: o.command,
      ok: true,
      ms: Date.now() - t0,
      faults,
      changes,
      leaderLines: [],
      leaderLineCount: 0,
    };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    rec = {
      seed: o.seed,
      command: o.command,
      ok: false,
      error: msg.slice(-4000),
      ms: Date.now() - t0,
      faults,
      changes: {},
      leaderLines: [],
      leaderLineCount: 0,
    };
  } finally {
    finished = true;
  }
  await monkey;
  await o.settle();
  rec.leaderLines = [...new Set(lines)].slice(0, 5);
  rec.leaderLineCount = lines.length;
  if (!rec.ok) {
    const t1 = Date.now();
    try {
      const changes = await o.op((s) => void o.output.push(s));
      rec.rerun = { ok: true, ms: Date.now() - t1, changes };
    } catch (e) {
      rec.rerun = {
        ok: false,
        error: (e instanceof Error ? e.message : String(e)).slice(-4000),
        ms: Date.now() - t1,
        changes: {},
      };
    }
  }
  const per = (s: Service): number => faults.filter((f) => f.service === s).length;
  o.log(
    `[seed ${o.seed}] ${o.command}: ${rec.ok ? "ok" : "FAILED"} in ${(rec.ms / 1000).toFixed(1)} s, leader losses: ` +
      `scheduler ${per("scheduler")}, secrets ${per("secrets")}; changes ${JSON.stringify(rec.changes)}; ` +
      `${rec.leaderLineCount} leader-change line(s)` +
      (rec.ok
        ? ""
        : `\n  ${lastLines(rec.error ?? "")}\n  rerun without faults: ${rec.rerun?.ok === true ? "ok" : "FAILED"}`),
  );
  return rec;
}

/** The lines of a CLI error that say what failed. */
export function lastLines(message: string): string {
  return message
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && /error|fail|returned|unfinished/i.test(l))
    .slice(-4)
    .join(" | ")
    .slice(0, 1500);
}

/** A resource of `pulumi stack export`: its URN and outputs. */
export interface StateResource {
  urn: string;
  outputs?: Record<string, unknown>;
}

/** GET on the Nomad leader's own HTTP port (not the balancer: the truth, not a follower's view). */
export function nomadApi(c: NomadCluster) {
  return async <T>(path: string): Promise<{ status: number; body: T }> => {
    const leader = await c.waitForLeader();
    const r = await fetch(`${c.httpOf(leader)}${path}`);
    return { status: r.status, body: (r.status === 200 ? await r.json() : await r.text()) as T };
  };
}

/**
 * The Jobs of `prefix` in state against the cluster: `expected` is each Job's GEN by ID. Every Job in state
 * is there with the state's version, index and spec, running, deployed; none of the prefix is there that
 * state does not hold; each has as many versions and applied registers as its changes.
 */
export async function checkJobs(o: {
  label: string;
  resources: readonly StateResource[];
  prefix: string;
  expected: ReadonlyMap<string, number>;
  api: ReturnType<typeof nomadApi>;
}): Promise<string[]> {
  const { label, prefix, expected, api } = o;
  const problems: string[] = [];
  const inState = new Map<string, Record<string, unknown>>();
  for (const r of o.resources) {
    const id = r.outputs?.jobId;
    if (typeof id === "string" && id.startsWith(`${prefix}-`)) inState.set(id, r.outputs ?? {});
  }
  const listed = await api<{ ID: string; Status: string }[]>(`/v1/jobs?prefix=${prefix}-`);
  for (const j of listed.body)
    if (!inState.has(j.ID)) problems.push(`${label}: ${j.ID} is on the cluster, not in state (orphaned)`);
  for (const id of expected.keys()) if (!inState.has(id)) problems.push(`${label}: ${id} is missing from state (lost)`);
  for (const id of inState.keys())
    if (!expected.has(id)) problems.push(`${label}: ${id} is in state but not in the program`);
  for (const [id, outs] of inState) {
    if (outs.incomplete !== undefined)
      problems.push(`${label}: ${id} is unfinished in state (${String(outs.incomplete)})`);
    const got = await api<{
      Version: number;
      JobModifyIndex: number;
      Stop: boolean;
      TaskGroups: { Tasks: { Env?: Record<string, string> }[] }[];
    }>(`/v1/job/${id}`);
    if (got.status !== 200) {
      problems.push(`${label}: ${id} is in state, the cluster answers ${got.status} (lost)`);
      continue;
    }
    const j = got.body;
    if (j.Version !== outs.version)
      problems.push(`${label}: ${id} version ${j.Version}, state ${String(outs.version)}`);
    if (j.JobModifyIndex !== outs.jobModifyIndex)
      problems.push(`${label}: ${id} JobModifyIndex ${j.JobModifyIndex}, state ${String(outs.jobModifyIndex)}`);
    if (j.Stop) problems.push(`${label}: ${id} is stopped`);
    const gen = j.TaskGroups[0]?.Tasks[0]?.Env?.GEN;
    if (gen !== String(expected.get(id) ?? "?"))
      problems.push(`${label}: ${id} runs GEN=${gen}, the program says ${expected.get(id)}`);
    const versions = await api<{ Versions: unknown[] }>(`/v1/job/${id}/versions`);
    const want = (expected.get(id) ?? 0) > 0 ? 2 : 1;
    if (versions.body.Versions.length !== want)
      problems.push(
        `${label}: ${id} has ${versions.body.Versions.length} versions, its changes make ${want} (registered twice?)`,
      );
    // An applied register makes one evaluation (an unchanged spec too, which adds no version).
    const evals = await api<{ TriggeredBy: string }[]>(`/v1/job/${id}/evaluations`);
    const registered = evals.body.filter((e) => e.TriggeredBy === "job-register").length;
    if (registered !== want)
      problems.push(`${label}: ${id} was registered ${registered} times, its changes make ${want}`);
    if (outs.deploymentStatus !== "successful")
      problems.push(`${label}: ${id} deployment ${String(outs.deploymentStatus)} in state`);
  }
  return problems;
}

/** GET on the OpenBao active node itself (a standby may lag), retried a little while it changes. */
export function baoTruth(c: BaoCluster, token: string) {
  return async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
    for (let i = 0; ; i++) {
      try {
        const active = await c.active(60_000);
        const res = await fetch(`${active.url}/v1/${path}`, {
          headers: { "x-vault-token": token, connection: "close" },
          redirect: "manual",
          signal: AbortSignal.timeout(10_000),
        });
        const text = await res.text();
        return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
      } catch (e) {
        if (i >= 5) throw e;
        await sleep(500);
      }
    }
  };
}

interface RoleOutputs {
  name: string;
  tokenPolicies: string[];
  boundServicePrincipalIds: string[];
  tokenTtl: number;
  incomplete?: unknown;
}

/**
 * The mount `m`, config `c` and roles `r<i>` in state against the cluster (read from the active node):
 * everything in state is there with the state's settings and finished, nothing of the mount is there that
 * state does not hold.
 */
export async function checkAuth(o: {
  label: string;
  resources: readonly StateResource[];
  mountPath: string;
  truth: ReturnType<typeof baoTruth>;
}): Promise<string[]> {
  const { label, mountPath, truth } = o;
  const problems: string[] = [];
  const fail = (m: string): void => void problems.push(`${label}: ${m}`);
  let mount: Record<string, unknown> | undefined;
  let config: Record<string, unknown> | undefined;
  const roles = new Map<string, RoleOutputs>();
  for (const r of o.resources) {
    const out = r.outputs ?? {};
    if (r.urn.endsWith("::m")) mount = out;
    else if (r.urn.endsWith("::c")) config = out;
    else if (/::r\d+$/.test(r.urn)) roles.set(String(out.name), out as unknown as RoleOutputs);
  }
  const mounts = (await truth("sys/auth")).body as { data?: Record<string, { type?: string; description?: string }> };
  const entry = (mounts.data ?? (mounts as Record<string, { type?: string; description?: string }>))[`${mountPath}/`];
  if (mount === undefined) {
    if (entry !== undefined) fail(`mount ${mountPath}/ on the cluster but not in state (orphaned)`);
    if (roles.size > 0 || config !== undefined) fail("config or roles in state without the mount");
    return problems;
  }
  if (mount.incomplete !== undefined) fail("the mount is in state as unfinished");
  if (entry === undefined) {
    fail(`mount ${mountPath}/ in state but not on the cluster (lost)`);
    return problems;
  }
  if (entry.type !== "azure" || entry.description !== "fault run")
    fail(`mount differs: ${JSON.stringify({ type: entry.type, description: entry.description })}`);
  const cfg = await truth(`auth/${mountPath}/config`);
  const d = (cfg.body.data ?? {}) as Record<string, unknown>;
  if (config === undefined) {
    if (cfg.status === 200 && d.tenant_id) fail("config on the cluster but not in state (orphaned)");
  } else {
    if (config.incomplete !== undefined) fail("the config is in state as unfinished");
    if (d.tenant_id !== config.tenantId || d.client_id !== config.clientId || d.resource !== config.resource)
      fail(
        `config differs from state: ${JSON.stringify({ tenant_id: d.tenant_id, client_id: d.client_id, resource: d.resource })}`,
      );
  }
  const list = await truth(`auth/${mountPath}/role?list=true`);
  const names = list.status === 200 ? ((list.body.data as { keys?: string[] } | undefined)?.keys ?? []) : [];
  for (const n of names) if (!roles.has(n)) fail(`role ${n} on the cluster but not in state (orphaned)`);
  for (const [n, r] of roles) {
    if (r.incomplete !== undefined) fail(`role ${n} is in state as unfinished`);
    const got = await truth(`auth/${mountPath}/role/${n}`);
    if (got.status !== 200) {
      fail(`role ${n} in state but not on the cluster (${got.status}, lost)`);
      continue;
    }
    const rd = (got.body.data ?? {}) as Record<string, unknown>;
    const same =
      JSON.stringify(rd.token_policies) === JSON.stringify(r.tokenPolicies) &&
      JSON.stringify(rd.bound_service_principal_ids) === JSON.stringify(r.boundServicePrincipalIds) &&
      rd.token_ttl === r.tokenTtl;
    if (!same)
      fail(
        `role ${n} differs: cluster ${JSON.stringify([rd.token_policies, rd.bound_service_principal_ids, rd.token_ttl])}, ` +
          `state ${JSON.stringify([r.tokenPolicies, r.boundServicePrincipalIds, r.tokenTtl])}`,
      );
  }
  return problems;
}
