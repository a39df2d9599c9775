/**
 * Issue 45, both services at once: ONE stack of `REAL_CLUSTERS_JOBS` (50) Jobs with deployments watched and
 * an azure AuthMount, its AuthConfig and 20 AuthRoles (./fixtures/cluster-stack), driven through the real
 * Pulumi CLI against a three-server Nomad 1.6.5 (+1 raw_exec client, ./nomad.ts) and a three-node OpenBao
 * 2.6.2 raft cluster (./openbao.ts, standby reads on), each behind a round-robin balancer (./balancer.ts) and
 * a recorder of the non-2xx answers (./recorder.ts). While `up` (create), `up` (half the Jobs and half the
 * roles changed), `refresh` and `destroy` run, the leader (Nomad) or active node (OpenBao) of one cluster,
 * chosen by the seed, is SIGKILLed at a seeded moment; the run waits for a new one and restarts the old node
 * on its data dir, then goes on. After each command: ./fault-run.ts's checks of both services (everything in
 * state on the cluster as stated, nothing there that state does not hold, no Job registered twice for one
 * change, nothing unfinished) and a preview that expects no change.
 *
 * Opt-in: `npm run test:clusters` (REAL_CLUSTERS=1) with NOMAD_BIN, BAO_BIN and BAO_PLUGIN_DIR (see
 * docs/real-clusters.md); knobs in ./fault-run.ts (seed, runs, faults off, Jobs, gap, report).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { seededRandom } from "../helpers/fault-proxy";
import { changes, cliGate, cliStack, requireCli } from "../helpers/cli";
import { startBalancer, type Balancer } from "./balancer";
import {
  baoTarget,
  baoTruth,
  checkAuth,
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
import { startBaoCluster, type BaoCluster } from "./openbao";
import { startRecorder, type Recorder } from "./recorder";

const CLI = cliGate("REAL_CLUSTERS");
const PROJECT = "pss-real-clusters";
const ROLES = 20;

let workDir: string | undefined;
let nomad: NomadCluster | undefined;
let bao: BaoCluster | undefined;
let baoBalancer: Balancer | undefined;
const recorders: Recorder[] = [];
afterAll(async () => {
  for (const r of recorders) await r.close();
  await baoBalancer?.close();
  await bao?.close();
  await nomad?.close();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("one stack on a three-server Nomad and a three-node OpenBao through the CLI, leaders lost", () => {
  it(
    "create, change half, refresh, destroy: nothing lost, orphaned or doubled on either cluster",
    { timeout: 6 * 3_600_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:clusters");
      const bin = process.env.BAO_BIN;
      const pluginDir = process.env.BAO_PLUGIN_DIR;
      if (bin === undefined || pluginDir === undefined)
        throw new Error("REAL_CLUSTERS=1 needs NOMAD_BIN, BAO_BIN and BAO_PLUGIN_DIR (docs/real-clusters.md)");
      const k = knobs({ runs: 1, gapMs: "3000-12000" });
      const log = (l: string): void => console.log(l);
      log(
        `combined fault run: seeds ${k.seed}..${k.seed + k.runs - 1} (REAL_CLUSTERS_SEED=${k.seed} replays them), ` +
          `${k.jobs} Jobs and ${ROLES} roles, faults ${k.faults ? `on, ${k.gap.lo}-${k.gap.hi} ms apart` : "off"}`,
      );
      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-combined-run-")));
      nomad = await startNomadCluster({ log: (l) => log(`nomad: ${l}`) });
      bao = await startBaoCluster({ bin, pluginDir });
      const n = nomad;
      const b = bao;
      baoBalancer = await startBalancer(() => b.targets());
      const schedulerRec = await startRecorder(n.balancer.url);
      const secretsRec = await startRecorder(baoBalancer.url);
      recorders.push(schedulerRec, secretsRec);
      const token = b.rootToken();
      const targets = [nomadTarget(n), baoTarget(b)];
      const api = nomadApi(n);
      const truth = baoTruth(b, token);
      const settle = async (): Promise<void> => {
        await n.waitForPeers(120_000);
        await b.active(120_000);
      };

      const { tarball } = await packLibrary(workDir, "combined-run");
      const records: CommandRecord[] = [];
      const problems: string[] = [];
      const output: string[] = [];

      for (let run = 0; run < k.runs; run++) {
        const seed = k.seed + run;
        const random = seededRandom(seed);
        const prefix = `cb${seed.toString(36)}`;
        const mountPath = `cb-${seed}`;
        const project = await createProject({
          tarball,
          dir: join(workDir, `project-${seed}`),
          install: "link",
          template: join(__dirname, "fixtures", "cluster-stack"),
        });
        const { stack } = await cliStack({
          cliDir,
          projectDir: project.dir,
          backendDir: join(workDir, `state-${seed}`),
          config: {
            [`${PROJECT}:address`]: { value: schedulerRec.url },
            [`${PROJECT}:count`]: { value: String(k.jobs) },
            [`${PROJECT}:prefix`]: { value: prefix },
            [`${PROJECT}:mountPath`]: { value: mountPath },
            [`${PROJECT}:roles`]: { value: String(ROLES) },
            [`${PROJECT}:clientSecret`]: { value: `fault-secret-${randomBytes(4).toString("hex")}`, secret: true },
            "pulumi-secrets-scheduler:secretsAddress": { value: secretsRec.url },
            "pulumi-secrets-scheduler:secretsToken": { value: token, secret: true },
            "pulumi-secrets-scheduler:secretsHeaderStyle": { value: "real" },
          },
        });

        const expected = new Map<string, number>();
        for (let i = 0; i < k.jobs; i++) expected.set(`${prefix}-${i}`, 0);
        const check = async (label: string): Promise<void> => {
          const dep = (await stack.exportStack()).deployment as { resources?: StateResource[] };
          const resources = dep.resources ?? [];
          const at = `[seed ${seed}] after ${label}`;
          problems.push(...(await checkJobs({ label: at, resources, prefix, expected, api })));
          problems.push(...(await checkAuth({ label: at, resources, mountPath, truth })));
        };
        const noOp = async (label: string): Promise<void> => {
          try {
            await stack.preview({ expectNoChanges: true, onOutput: (s) => void output.push(s) });
          } catch (e) {
            problems.push(
              `[seed ${seed}] after ${label}: preview --expect-no-changes saw changes: ${(e instanceof Error ? e.message : String(e)).slice(-1500)}`,
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
            settle,
            output,
            log,
          });
          records.push(rec);
          report(k, rec);
          if (!rec.ok) problems.push(`[seed ${seed}] ${name} failed: ${rec.error ?? ""}`);
          if (rec.rerun !== undefined && !rec.rerun.ok)
            problems.push(`[seed ${seed}] ${name} failed again without faults: ${rec.rerun.error ?? ""}`);
        };

        await command("up (create)", async (onOutput) =>
          changes((await stack.up({ onOutput })).summary.resourceChanges),
        );
        await check("up (create)");
        await noOp("up (create)");

        const half = Math.floor(k.jobs / 2);
        await stack.setAllConfig({
          [`${PROJECT}:gen`]: { value: "1" },
          [`${PROJECT}:changed`]: { value: String(half) },
          [`${PROJECT}:variant`]: { value: "1" },
        });
        for (let i = 0; i < half; i++) expected.set(`${prefix}-${i}`, 1);
        await command("up (change half)", async (onOutput) =>
          changes((await stack.up({ onOutput })).summary.resourceChanges),
        );
        await check("up (change half)");
        await noOp("up (change half)");

        await command("refresh", async (onOutput) =>
          changes((await stack.refresh({ onOutput })).summary.resourceChanges),
        );
        await check("refresh");
        await noOp("refresh");

        expected.clear();
        await command("destroy", async (onOutput) =>
          changes((await stack.destroy({ onOutput })).summary.resourceChanges),
        );
        await check("destroy");
        await stack.workspace.removeStack("dev", { force: true });
      }

      const lost = (s: "scheduler" | "secrets"): number =>
        records.reduce((sum, r) => sum + r.faults.filter((f) => f.service === s).length, 0);
      const summary = {
        seeds: [k.seed, k.seed + k.runs - 1],
        jobs: k.jobs,
        roles: ROLES,
        faults: k.faults,
        gap: k.gap,
        leaderLosses: { scheduler: lost("scheduler"), secrets: lost("secrets") },
        failedCommands: records.filter((r) => !r.ok).length,
        problems,
        requests: {
          scheduler: Object.fromEntries(schedulerRec.counts),
          secrets: Object.fromEntries(secretsRec.counts),
        },
        answers: { scheduler: schedulerRec.answers, secrets: secretsRec.answers },
      };
      report(k, summary);
      log(
        `combined fault run: ${k.runs} run(s), ${records.length} command(s), leader losses: scheduler ` +
          `${summary.leaderLosses.scheduler}, secrets ${summary.leaderLosses.secrets}; ${summary.failedCommands} ` +
          `failed command(s), ${problems.length} problem(s)`,
      );
      for (const p of problems) log(`  problem: ${p}`);
      expect(output.join("").includes(token), "the root token appeared in the CLI output").toBe(false);
      expect(problems).toEqual([]);
    },
  );
});
