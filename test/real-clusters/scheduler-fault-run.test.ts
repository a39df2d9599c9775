/**
 * Issue 45, the scheduler's fault run: a stack of Jobs with deployments (./fixtures/cluster-stack) driven
 * through the real Pulumi CLI against a real three-server Nomad 1.6.5 cluster (./nomad.ts) behind a
 * round-robin balancer, while the leader is killed (SIGKILL) at seeded random moments, a new one is waited for
 * and the old node restarted on its data dir. After each command: ./fault-run.ts's `checkJobs` (every Job in
 * state is on the cluster with the state's version, index and spec; nothing of this run's prefix is on the
 * cluster that state does not hold; no Job has more versions or more applied registers than its changes) and
 * a preview that expects no changes.
 *
 * Opt-in: `npm run test:clusters` (REAL_CLUSTERS=1) with NOMAD_BIN naming the Nomad 1.6.5 binary; knobs in
 * ./fault-run.ts (REAL_CLUSTERS_SEED, REAL_CLUSTERS_FAULTS=0 for the times without a leader change,
 * REAL_CLUSTERS_JOBS, REAL_CLUSTERS_GAP_MS, REAL_CLUSTERS_REPORT: each command's record and, last, the
 * cluster's non-2xx answers).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, requireCli } from "../helpers/cli";
import { seededRandom } from "../helpers/fault-proxy";
import {
  checkJobs,
  knobs,
  nomadApi,
  nomadTarget,
  report,
  runCommand,
  type CommandRecord,
  type StateResource,
} from "./fault-run";
import { startNomadCluster, type NomadCluster } from "./nomad";
import { startRecorder } from "./recorder";

const CLI = cliGate("REAL_CLUSTERS");
const PROJECT = "pss-real-clusters";

describe("the scheduler's leader changes through the Pulumi CLI (real three-server Nomad 1.6.5)", () => {
  let cluster: NomadCluster | undefined;
  let workDir: string | undefined;
  afterAll(async () => {
    await cluster?.close();
    if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
  });

  it(
    "up, change half, refresh, destroy of Jobs lose nothing while leaders are killed",
    { timeout: 3_600_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:clusters");
      const k = knobs({ runs: 1, gapMs: "1000-8000" });
      const seed = k.seed;
      const log = (l: string): void => console.log(l);
      log(
        `fault run: seed ${seed} (REAL_CLUSTERS_SEED=${seed} reruns it), ${k.jobs} Jobs, faults ${k.faults ? "on" : "off"}`,
      );
      const random = seededRandom(seed);
      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-fault-run-")));
      cluster = await startNomadCluster({ log: (l) => log(`cluster: ${l}`) });
      const c = cluster;
      const recorder = await startRecorder(c.balancer.url);
      const { tarball } = await packLibrary(workDir, "fault-run");
      const project = await createProject({
        tarball,
        dir: join(workDir, "scheduler-jobs"),
        install: "link",
        template: join(__dirname, "fixtures", "cluster-stack"),
      });
      const prefix = `lc${seed.toString(36)}`;
      const { stack } = await cliStack({
        cliDir,
        projectDir: project.dir,
        backendDir: join(workDir, "state"),
        config: {
          [`${PROJECT}:address`]: { value: recorder.url },
          [`${PROJECT}:count`]: { value: String(k.jobs) },
          [`${PROJECT}:prefix`]: { value: prefix },
        },
      });
      const api = nomadApi(c);
      const targets = [nomadTarget(c)];

      const records: CommandRecord[] = [];
      const problems: string[] = [];
      const expected = new Map<string, number>();
      const check = async (label: string): Promise<void> => {
        const dep = (await stack.exportStack()).deployment as { resources?: StateResource[] };
        problems.push(...(await checkJobs({ label, resources: dep.resources ?? [], prefix, expected, api })));
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
      const command = async (
        name: string,
        op: (onOutput: (s: string) => void) => Promise<Record<string, number>>,
      ): Promise<void> => {
        const rec = await runCommand({
          seed,
          command: name,
          op,
          inject: k.faults,
          targets,
          random,
          gap: k.gap,
          settle: () => c.waitForPeers(120_000),
          output: [],
          log,
        });
        records.push(rec);
        report(k, rec);
        if (!rec.ok) problems.push(`${name} failed: ${rec.error ?? ""}`);
      };

      for (let i = 0; i < k.jobs; i++) expected.set(`${prefix}-${i}`, 0);
      const half = Math.floor(k.jobs / 2);
      try {
        await command("up (create)", async (onOutput) =>
          changes((await stack.up({ onOutput })).summary.resourceChanges),
        );
        await check("after create");
        await noOp("after create");

        await stack.setAllConfig({
          [`${PROJECT}:gen`]: { value: "1" },
          [`${PROJECT}:changed`]: { value: String(half) },
        });
        for (let i = 0; i < half; i++) expected.set(`${prefix}-${i}`, 1);
        await command("up (change half)", async (onOutput) =>
          changes((await stack.up({ onOutput })).summary.resourceChanges),
        );
        await check("after change");
        await noOp("after change");

        await command("refresh", async (onOutput) =>
          changes((await stack.refresh({ onOutput })).summary.resourceChanges),
        );
        await check("after refresh");
        await noOp("after refresh");

        expected.clear();
        await command("destroy", async (onOutput) =>
          changes((await stack.destroy({ onOutput })).summary.resourceChanges),
        );
        await check("after destroy");
        await stack.workspace.removeStack("dev");
      } finally {
        const leaderKills = records.reduce((n, r) => n + r.faults.length, 0);
        report(k, {
          seed,
          jobs: k.jobs,
          faults: k.faults,
          leaderKills,
          problems,
          requests: Object.fromEntries(recorder.counts),
          answers: recorder.answers,
        });
        log(`fault run seed ${seed}: ${leaderKills} leader kill(s), ${problems.length} problem(s)`);
        for (const p of problems) log(`  ${p}`);
        await recorder.close();
      }
      expect(problems).toEqual([]);
    },
  );
});
