/**
 * Issue 45, the scheduler's fault run: a stack of Jobs with deployments driven through the real Pulumi CLI
 * against a real three-server Nomad 1.6.5 cluster (./nomad.ts) behind a round-robin balancer, while the
 * leader is killed (SIGKILL) at seeded random moments, a new one is waited for and the old node restarted on
 * its data dir. After each command: every Job in state is on the cluster with the state's version, index and
 * spec; nothing of this run's prefix is on the cluster that state does not hold; no Job has more versions
 * or more applied registers (its `job-register` evaluations) than its changes; and a preview expects no
 * changes.
 *
 * Opt-in: `npm run test:clusters` (REAL_CLUSTERS=1) with NOMAD_BIN naming the Nomad 1.6.5 binary.
 * FAULT_SEED reruns a seed (printed at the start); FAULTS=0 runs the same commands without faults (the
 * times without a leader change); FAULT_JOBS sets the stack's size (50); FAULT_REPORT names a JSON file the
 * run's record is written to (faults, outcome and duration per command, the cluster's non-2xx answers).
 */
import { randomInt } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, requireCli, truthy } from "../helpers/cli";
import { startNomadCluster, type NomadCluster, type NomadNode } from "./nomad";
import { startRecorder } from "./recorder";

const CLI = cliGate("REAL_CLUSTERS");
const JOBS = Number(process.env.FAULT_JOBS ?? "50");
const FAULTS = process.env.FAULTS === undefined || truthy(process.env.FAULTS);

/** mulberry32: a small seeded generator, so a seed replays the same fault moments. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Fault {
  /** Milliseconds after the command started. */
  atMs: number;
  killed: string;
  newLeader: string;
  /** From the SIGKILL until the live servers agreed on a new leader. */
  electionMs: number;
}

interface CommandRecord {
  command: string;
  ok: boolean;
  error?: string;
  durationMs: number;
  faults: Fault[];
  changes: Record<string, number>;
  /** The progress lines the user saw about the leader election (the first few). */
  leaderLines: string[];
  leaderLineCount: number;
  /** A failed command's rerun without faults. */
  rerun?: { ok: boolean; error?: string; durationMs: number; changes: Record<string, number> };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Kills the leader at random moments until `done()`: each time waits for a new one, restarts the old node. */
async function chaos(cluster: NomadCluster, next: () => number, done: () => boolean, t0: number, faults: Fault[]) {
  while (!done()) {
    // 1 to 8 s between the cluster being whole again and the next kill.
    const wait = 1_000 + Math.floor(next() * 7_000);
    const until = Date.now() + wait;
    while (Date.now() < until && !done()) await sleep(50);
    if (done()) return;
    const leader = await cluster.leader();
    if (leader === undefined) continue;
    const atMs = Date.now() - t0;
    cluster.kill(leader);
    const killedAt = Date.now();
    let fresh: NomadNode;
    try {
      fresh = await cluster.waitForLeader({ not: leader, timeoutMs: 120_000 });
    } finally {
      await cluster.restart(leader);
    }
    const fault = { atMs, killed: leader.name, newLeader: fresh.name, electionMs: Date.now() - killedAt };
    faults.push(fault);
    console.log(`leader ${fault.killed} killed at +${atMs} ms; ${fault.newLeader} leads ${fault.electionMs} ms later`);
    await cluster.waitForPeers(120_000);
  }
}

describe("the scheduler's leader changes through the Pulumi CLI (real three-server Nomad 1.6.5)", () => {
  let cluster: NomadCluster | undefined;
  let workDir: string | undefined;
  afterAll(async () => {
    await cluster?.close();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  });

  it(
    `up, change half, refresh, destroy of ${JOBS} Jobs lose nothing while leaders are killed`,
    { timeout: 3_600_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:clusters");
      const seed = process.env.FAULT_SEED !== undefined ? Number(process.env.FAULT_SEED) : randomInt(1, 2 ** 31);
      console.log(
        `fault run: seed ${seed} (FAULT_SEED=${seed} reruns it), ${JOBS} Jobs, faults ${FAULTS ? "on" : "off"}`,
      );
      const next = rng(seed);
      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-fault-run-")));
      cluster = await startNomadCluster({ log: (l) => console.log(`cluster: ${l}`) });
      const c = cluster;
      const recorder = await startRecorder(c.balancer.url);
      const { tarball } = await packLibrary(workDir, "fault-run");
      const project = await createProject({
        tarball,
        dir: join(workDir, "scheduler-jobs"),
        install: "link",
        template: join(__dirname, "fixtures", "scheduler-jobs"),
      });
      const prefix = `lc${seed.toString(36)}`;
      const { stack } = await cliStack({
        cliDir,
        projectDir: project.dir,
        backendDir: join(workDir, "state"),
        config: {
          "scheduler-jobs:address": { value: recorder.url },
          "scheduler-jobs:count": { value: String(JOBS) },
          "scheduler-jobs:prefix": { value: prefix },
        },
      });

      const api = async <T>(path: string): Promise<{ status: number; body: T }> => {
        const leader = await c.waitForLeader();
        const r = await fetch(`${c.httpOf(leader)}${path}`);
        return { status: r.status, body: (r.status === 200 ? await r.json() : await r.text()) as T };
      };

      /** The invariants after a command: `expected` is each Job's GEN, by ID. */
      const check = async (label: string, expected: Map<string, number>): Promise<string[]> => {
        const problems: string[] = [];
        const state = (await stack.exportStack()).deployment as { resources?: { outputs?: Record<string, unknown> }[] };
        const inState = new Map<string, Record<string, unknown>>();
        for (const r of state.resources ?? []) {
          const id = r.outputs?.jobId;
          if (typeof id === "string" && id.startsWith(`${prefix}-`)) inState.set(id, r.outputs ?? {});
        }
        const listed = await api<{ ID: string; Status: string }[]>(`/v1/jobs?prefix=${prefix}-`);
        const onCluster = new Set(listed.body.map((j) => j.ID));
        for (const id of onCluster)
          if (!inState.has(id)) problems.push(`${label}: ${id} is on the cluster, not in state (orphaned)`);
        for (const id of expected.keys())
          if (!inState.has(id)) problems.push(`${label}: ${id} is missing from state (lost)`);
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
      };

      const records: CommandRecord[] = [];
      const problems: string[] = [];
      /** Writes what the run saw so far (after each command too, so a run cut short keeps its record). */
      const writeReport = (): { leaderKills: number } => {
        const record = {
          seed,
          jobs: JOBS,
          faults: FAULTS,
          commands: records,
          leaderKills: records.reduce((n, r) => n + r.faults.length, 0),
          problems,
          requests: Object.fromEntries(recorder.counts),
          answers: recorder.answers,
        };
        if (process.env.FAULT_REPORT) writeFileSync(process.env.FAULT_REPORT, JSON.stringify(record, null, 2));
        return record;
      };
      const run = async (
        command: string,
        op: (o: {
          onOutput: (s: string) => void;
        }) => Promise<{ summary: { resourceChanges?: Record<string, number> } }>,
      ): Promise<CommandRecord> => {
        const lines: string[] = [];
        let out = "";
        const onOutput = (s: string): void => {
          out += s;
          let i: number;
          while ((i = out.indexOf("\n")) >= 0) {
            const line = out.slice(0, i);
            out = out.slice(i + 1);
            if (/electing a leader/.test(line)) lines.push(line.trim());
          }
        };
        const faults: Fault[] = [];
        let finished = false;
        const t0 = Date.now();
        const monkey = FAULTS ? chaos(c, next, () => finished, t0, faults) : Promise.resolve();
        let rec: CommandRecord;
        try {
          const r = await op({ onOutput });
          rec = {
            command,
            ok: true,
            durationMs: Date.now() - t0,
            faults,
            changes: changes(r.summary.resourceChanges),
            leaderLines: lines.slice(0, 5),
            leaderLineCount: lines.length,
          };
        } catch (e) {
          const msg = e instanceof Error ? e.message : String(e);
          rec = {
            command,
            ok: false,
            error: msg.slice(-4000),
            durationMs: Date.now() - t0,
            faults,
            changes: {},
            leaderLines: lines.slice(0, 5),
            leaderLineCount: lines.length,
          };
        }
        finished = true;
        await monkey;
        await c.waitForPeers(120_000);
        if (!rec.ok) {
          problems.push(`${command} failed: ${rec.error ?? ""}`);
          const t1 = Date.now();
          try {
            const r = await op({ onOutput: () => undefined });
            rec.rerun = { ok: true, durationMs: Date.now() - t1, changes: changes(r.summary.resourceChanges) };
          } catch (e) {
            rec.rerun = {
              ok: false,
              error: (e instanceof Error ? e.message : String(e)).slice(-2000),
              durationMs: Date.now() - t1,
              changes: {},
            };
          }
        }
        records.push(rec);
        writeReport();
        console.log(
          `${command}: ${rec.ok ? "ok" : "FAILED"} in ${(rec.durationMs / 1000).toFixed(1)} s, ${faults.length} leader kill(s), changes ${JSON.stringify(rec.changes)}, ${rec.leaderLineCount} election line(s)`,
        );
        return rec;
      };
      const noOp = async (label: string): Promise<void> => {
        try {
          await stack.preview({ expectNoChanges: true });
        } catch (e) {
          problems.push(
            `${label}: preview --expect-no-changes saw changes: ${(e instanceof Error ? e.message : String(e)).slice(-1500)}`,
          );
        }
      };

      const expected = new Map<string, number>();
      for (let i = 0; i < JOBS; i++) expected.set(`${prefix}-${i}`, 0);
      const half = Math.floor(JOBS / 2);
      try {
        await run("up (create)", (o) => stack.up(o));
        problems.push(...(await check("after create", expected)));
        await noOp("after create");

        await stack.setAllConfig({
          "scheduler-jobs:gen": { value: "1" },
          "scheduler-jobs:changed": { value: String(half) },
        });
        for (let i = 0; i < half; i++) expected.set(`${prefix}-${i}`, 1);
        await run("up (change half)", (o) => stack.up(o));
        problems.push(...(await check("after change", expected)));
        await noOp("after change");

        await run("refresh", (o) => stack.refresh(o));
        problems.push(...(await check("after refresh", expected)));
        await noOp("after refresh");

        expected.clear();
        await run("destroy", (o) => stack.destroy(o));
        problems.push(...(await check("after destroy", expected)));
        await stack.workspace.removeStack("dev");
      } finally {
        const { leaderKills } = writeReport();
        console.log(`fault run seed ${seed}: ${leaderKills} leader kill(s), ${problems.length} problem(s)`);
        for (const p of problems) console.log(`  ${p}`);
        await recorder.close();
      }
      expect(problems).toEqual([]);
    },
  );
});
