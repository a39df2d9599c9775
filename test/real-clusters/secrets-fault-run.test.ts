/**
 * Issue 45, secrets service: a stack of one AuthMount (azure), its AuthConfig and 20 AuthRoles
 * (./fixtures/cluster-stack) driven through the real Pulumi CLI against a real three-node OpenBao raft
 * cluster (./openbao.ts) behind a round-robin balancer (./balancer.ts), standby reads on. While `up`
 * (create), `up` (half the roles changed) and `destroy` run, the active node is SIGKILLed at seeded moments;
 * the harness waits for a new active node, then restarts and unseals the old one. After each command and a
 * final `refresh`: ./fault-run.ts's `checkAuth` (every resource in state exists on the cluster, read from the
 * active node, with the state's settings; nothing of this run exists there that state does not hold) and a
 * preview that shows no change.
 *
 * Opt-in: REAL_CLUSTERS=1, with BAO_BIN (the OpenBao 2.6.2 server) and BAO_PLUGIN_DIR (a directory holding
 * the azure auth plugin as `azure`), and the Pulumi CLI as for `npm run test:cli`. Knobs in ./fault-run.ts
 * (REAL_CLUSTERS_SEED, REAL_CLUSTERS_RUNS default 3, REAL_CLUSTERS_GAP_MS default 3000-15000,
 * REAL_CLUSTERS_REPORT).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, requireCli } from "../helpers/cli";
import { seededRandom } from "../helpers/fault-proxy";
import { startBalancer, type Balancer } from "./balancer";
import {
  baoTarget,
  baoTruth,
  checkAuth,
  knobs,
  report,
  runCommand,
  type CommandRecord,
  type StateResource,
} from "./fault-run";
import { startBaoCluster, type BaoCluster } from "./openbao";

const CLI = cliGate("REAL_CLUSTERS");
const PROJECT = "pss-real-clusters";
const ROLES = 20;

let workDir: string | undefined;
let cluster: BaoCluster | undefined;
let balancer: Balancer | undefined;
afterAll(async () => {
  await balancer?.close();
  await cluster?.close();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("secrets service: leader changes on a real three-node OpenBao through the CLI", () => {
  it(
    "create, change half, refresh, destroy: nothing lost, orphaned or doubled",
    { timeout: 4 * 3_600_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "REAL_CLUSTERS=1 npx vitest run test/real-clusters");
      const bin = process.env.BAO_BIN;
      const pluginDir = process.env.BAO_PLUGIN_DIR;
      if (bin === undefined || pluginDir === undefined)
        throw new Error("REAL_CLUSTERS=1 needs BAO_BIN and BAO_PLUGIN_DIR");
      const k = knobs({ runs: 3, gapMs: "3000-15000" });
      const log = (l: string): void => console.log(l);
      log(`secrets fault run: seeds ${k.seed}..${k.seed + k.runs - 1} (REAL_CLUSTERS_SEED=${k.seed} reruns them)`);

      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-real-secrets-")));
      cluster = await startBaoCluster({ bin, pluginDir });
      const c = cluster;
      balancer = await startBalancer(() => c.targets());
      const token = c.rootToken();
      const truth = baoTruth(c, token);
      const targets = [baoTarget(c)];
      const { tarball } = await packLibrary(workDir, "real-secrets");

      const records: CommandRecord[] = [];
      const problems: string[] = [];
      const output: string[] = [];

      for (let run = 0; run < k.runs; run++) {
        const seed = k.seed + run;
        const random = seededRandom(seed);
        const mountPath = `fault-${seed}`;
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
            "pulumi-secrets-scheduler:secretsAddress": { value: balancer.url },
            "pulumi-secrets-scheduler:secretsToken": { value: token, secret: true },
            "pulumi-secrets-scheduler:secretsHeaderStyle": { value: "real" },
            [`${PROJECT}:mountPath`]: { value: mountPath },
            [`${PROJECT}:roles`]: { value: String(ROLES) },
            [`${PROJECT}:clientSecret`]: { value: `fault-secret-${randomBytes(4).toString("hex")}`, secret: true },
          },
        });

        const resources = async (): Promise<StateResource[]> =>
          ((await stack.exportStack()).deployment as { resources?: StateResource[] }).resources ?? [];
        const verify = async (when: string): Promise<void> => {
          problems.push(
            ...(await checkAuth({
              label: `[seed ${seed}] after ${when}`,
              resources: await resources(),
              mountPath,
              truth,
            })),
          );
        };
        const noOp = async (when: string): Promise<void> => {
          const p = await stack.preview({ onOutput: (s) => void output.push(s) });
          const ch = changes(p.changeSummary);
          if (Object.keys(ch).length > 0)
            problems.push(`[seed ${seed}] preview after ${when} is not a no-op: ${JSON.stringify(ch)}`);
        };
        /** A command, under faults unless `inject` is false; a failed one runs again without (it must converge). */
        const step = async (
          command: string,
          op: (onOutput: (s: string) => void) => Promise<Record<string, number>>,
          inject = k.faults,
        ): Promise<void> => {
          const rec = await runCommand({
            seed,
            command,
            op,
            inject,
            targets,
            random,
            gap: k.gap,
            settle: async () => void (await c.active(120_000)),
            output,
            log,
          });
          records.push(rec);
          report(k, rec);
          if (!rec.ok) problems.push(`[seed ${seed}] ${command} failed: ${rec.error ?? ""}`);
          await verify(command);
        };

        await step("up (create)", async (onOutput) => changes((await stack.up({ onOutput })).summary.resourceChanges));
        await noOp("up (create)");
        await stack.setConfig(`${PROJECT}:variant`, { value: "1" });
        await step("up (change half the roles)", async (onOutput) =>
          changes((await stack.up({ onOutput })).summary.resourceChanges),
        );
        await noOp("up (change)");
        await step(
          "refresh",
          async (onOutput) => changes((await stack.refresh({ onOutput })).summary.resourceChanges),
          false,
        );
        await noOp("refresh");
        await step("destroy", async (onOutput) => changes((await stack.destroy({ onOutput })).summary.resourceChanges));
        const after = await resources();
        if (after.some((r) => /::(m|c|r\d+)$/.test(r.urn)))
          problems.push(`[seed ${seed}] resources left in state after destroy`);
        await stack.workspace.removeStack("dev", { force: true });
      }

      const faults = records.reduce((n, r) => n + r.faults.length, 0);
      log(
        `secrets fault run: ${k.runs} run(s), ${records.length} command(s), ${faults} active-node loss(es), ` +
          `${records.filter((r) => !r.ok).length} failed command(s), ${problems.length} problem(s)`,
      );
      for (const p of problems) log(`  problem: ${p}`);
      expect(output.join("").includes(token), "the root token appeared in the CLI output").toBe(false);
      expect(problems).toEqual([]);
    },
  );
});
