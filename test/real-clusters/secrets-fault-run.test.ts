/**
 * Issue 45, secrets service: a stack of one AuthMount (azure), its AuthConfig and 20 AuthRoles driven
 * through the real Pulumi CLI against a real three-node OpenBao raft cluster (./openbao.ts) behind a
 * round-robin balancer (./balancer.ts), standby reads on. While `up` (create), `up` (half the roles
 * changed) and `destroy` run, the active node is SIGKILLed at seeded moments; the harness waits for a new
 * active node, then restarts and unseals the old one. After each command and a final `refresh`, every
 * resource in state must exist on the cluster (read from the active node) with the state's settings,
 * nothing of this run may exist on the cluster that state does not hold, and a preview must show no change.
 *
 * Opt-in: REAL_CLUSTERS=1, with BAO_BIN (the OpenBao 2.6.2 server) and BAO_PLUGIN_DIR (a directory holding
 * the azure auth plugin as `azure`), and the Pulumi CLI as for `npm run test:cli`. Knobs: REAL_CLUSTERS_SEED
 * (the first run's seed; printed), REAL_CLUSTERS_RUNS (default 3), REAL_CLUSTERS_GAP_MS (`min-max` between a
 * recovery and the next kill, default 3000-15000), REAL_CLUSTERS_REPORT (a file the per-command records are
 * appended to as JSON lines).
 */
import { appendFileSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, requireCli } from "../helpers/cli";
import { startBalancer, type Balancer } from "./balancer";
import { startBaoCluster, type BaoCluster } from "./openbao";

const CLI = cliGate("REAL_CLUSTERS");
const PROJECT = "pss-real-secrets";
const TENANT = "00000000-0000-4000-8000-00000000aaaa";
const CLIENT = "00000000-0000-4000-8000-00000000bbbb";
const ROLES = 20;

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as pss from "pulumi-secrets-scheduler";

const cfg = new pulumi.Config();
const variant = cfg.getNumber("variant") ?? 0;
const mount = new pss.AuthMount("m", { path: cfg.require("mountPath"), type: "azure", description: "fault run" });
const config = new pss.AuthConfig("c", {
  mount: mount.path,
  mountAccessor: mount.accessor,
  tenantId: "${TENANT}",
  resource: "https://management.example/",
  clientId: "${CLIENT}",
  clientSecret: cfg.requireSecret("clientSecret"),
});
for (let i = 0; i < ${ROLES}; i++) {
  // The second \`up\` changes the first half of the roles.
  const changed = variant > 0 && i < ${ROLES / 2};
  new pss.AuthRole(
    \`r\${i}\`,
    {
      mount: mount.path,
      mountAccessor: mount.accessor,
      name: \`role-\${i}\`,
      tokenPolicies: [changed ? \`p\${i}-v\${variant}\` : \`p\${i}\`],
      boundServicePrincipalIds: [\`sp-\${i}\`],
      tokenTtl: changed ? 600 + variant : 300,
    },
    { dependsOn: [config] },
  );
}
`;

/** A small seeded generator (mulberry32), so a run's kill moments can be replayed from its seed. */
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

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Fault {
  /** ms after the command started */
  atMs: number;
  killed: string;
  newActive: string;
  /** from the kill to a new active node */
  electionMs: number;
  /** from the kill to the old node unsealed again */
  recoveredMs: number;
}

interface CommandRecord {
  seed: number;
  command: string;
  faults: Fault[];
  outcome: "ok" | "failed";
  error?: string;
  ms: number;
  /** Progress lines the user saw about the leader change. */
  leaderLines: string[];
}

interface State {
  mount?: { path: string; type: string; description?: string; incomplete?: boolean };
  config?: { mount: string; tenantId: string; resource: string; clientId: string; incomplete?: boolean };
  roles: Map<
    string,
    { tokenPolicies: string[]; boundServicePrincipalIds: string[]; tokenTtl: number; incomplete?: boolean }
  >;
}

const gap = (() => {
  const [lo, hi] = (process.env.REAL_CLUSTERS_GAP_MS ?? "3000-15000").split("-").map(Number);
  return { lo: lo ?? 3000, hi: hi ?? 15000 };
})();

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
      const runs = Number(process.env.REAL_CLUSTERS_RUNS ?? "3");
      const firstSeed = Number(process.env.REAL_CLUSTERS_SEED ?? String(randomBytes(3).readUIntBE(0, 3)));
      console.log(
        `secrets fault run: seeds ${firstSeed}..${firstSeed + runs - 1} (REAL_CLUSTERS_SEED=${firstSeed} reruns them)`,
      );

      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-real-secrets-")));
      cluster = await startBaoCluster({ bin, pluginDir });
      const c = cluster;
      balancer = await startBalancer(() => c.targets());
      const token = c.rootToken();

      // Reads of the cluster's truth go to the active node itself (a standby may lag).
      const truth = async (path: string): Promise<{ status: number; body: Record<string, unknown> }> => {
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

      const template = join(workDir, "template");
      mkdirSync(template);
      writeFileSync(
        join(template, "Pulumi.yaml"),
        `name: ${PROJECT}\nruntime:\n  name: nodejs\n  options:\n    typescript: true\n`,
      );
      writeFileSync(
        join(template, "package.json"),
        JSON.stringify({ name: PROJECT, private: true, main: "index.ts" }) + "\n",
      );
      writeFileSync(
        join(template, "tsconfig.json"),
        JSON.stringify({
          compilerOptions: {
            strict: true,
            target: "ES2020",
            module: "node16",
            moduleResolution: "node16",
            esModuleInterop: true,
            skipLibCheck: true,
            outDir: "bin",
          },
          files: ["index.ts"],
        }),
      );
      writeFileSync(join(template, "index.ts"), PROGRAM);
      const { tarball } = await packLibrary(workDir, "real-secrets");

      const records: CommandRecord[] = [];
      const problems: string[] = [];
      const allOutput: string[] = [];

      for (let run = 0; run < runs; run++) {
        const seed = firstSeed + run;
        const random = rng(seed);
        const mountPath = `fault-${seed}`;
        const project = await createProject({
          tarball,
          dir: join(workDir, `project-${seed}`),
          install: "link",
          template,
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
            [`${PROJECT}:clientSecret`]: { value: `fault-secret-${randomBytes(4).toString("hex")}`, secret: true },
          },
        });

        /** Runs a command while killing the active node at seeded moments; records what happened. */
        const withFaults = async (
          command: string,
          op: () => Promise<unknown>,
          inject = true,
        ): Promise<CommandRecord> => {
          const t0 = Date.now();
          let done = false;
          const faults: Fault[] = [];
          const injector = (async () => {
            while (inject) {
              const wait = gap.lo + Math.floor(random() * (gap.hi - gap.lo));
              const until = Date.now() + wait;
              while (!done && Date.now() < until) await sleep(100);
              if (done) return;
              const old = await c.active(60_000);
              if (done) return;
              const atMs = Date.now() - t0;
              const k0 = Date.now();
              await c.kill(old);
              const { node, ms } = await c.waitForNewActive(old);
              await c.restart(old);
              faults.push({
                atMs,
                killed: old.name,
                newActive: node.name,
                electionMs: ms,
                recoveredMs: Date.now() - k0,
              });
            }
          })();
          let error: string | undefined;
          try {
            await op.call(undefined);
          } catch (e) {
            error = (e as Error).message;
          } finally {
            done = true;
          }
          await injector;
          const ms = Date.now() - t0;
          const text = lastOutput.join("");
          allOutput.push(text);
          const rec: CommandRecord = {
            seed,
            command,
            faults,
            outcome: error === undefined ? "ok" : "failed",
            ...(error !== undefined ? { error: lastLines(error) } : {}),
            ms,
            leaderLines: [
              ...new Set(
                text
                  .split("\n")
                  .filter((l) => /active node|electing|standby/i.test(l))
                  .map((l) => l.trim()),
              ),
            ].slice(0, 5),
          };
          records.push(rec);
          console.log(
            `[seed ${seed}] ${command}: ${rec.outcome} in ${(ms / 1000).toFixed(1)} s, ${faults.length} fault(s)` +
              faults
                .map(
                  (f) =>
                    ` [${f.killed} killed at ${(f.atMs / 1000).toFixed(1)} s, ${f.newActive} active after ${(f.electionMs / 1000).toFixed(1)} s]`,
                )
                .join("") +
              (error !== undefined ? `\n  ${rec.error}` : ""),
          );
          if (process.env.REAL_CLUSTERS_REPORT)
            appendFileSync(process.env.REAL_CLUSTERS_REPORT, JSON.stringify(rec) + "\n");
          if (error !== undefined) problems.push(`[seed ${seed}] ${command} failed: ${rec.error}`);
          return rec;
        };
        let lastOutput: string[] = [];
        const onOutput = (s: string): void => {
          lastOutput.push(s);
        };
        const fresh = () => {
          lastOutput = [];
        };

        const readState = async (): Promise<State> => {
          const dep = (await stack.exportStack()).deployment as {
            resources?: { urn: string; outputs?: Record<string, unknown> }[];
          };
          const s: State = { roles: new Map() };
          for (const r of dep.resources ?? []) {
            const o = r.outputs ?? {};
            if (r.urn.endsWith("::m")) s.mount = o as State["mount"];
            else if (r.urn.endsWith("::c")) s.config = o as State["config"];
            else if (/::r\d+$/.test(r.urn)) s.roles.set(String(o.name), o as never);
          }
          return s;
        };

        /** State and cluster agree: everything in state is there as stated, nothing of this run is there besides. */
        const verify = async (when: string): Promise<void> => {
          const s = await readState();
          const fail = (m: string): void => void problems.push(`[seed ${seed}] after ${when}: ${m}`);
          const mounts = (await truth("sys/auth")).body as {
            data?: Record<string, { type?: string; description?: string }>;
          };
          const listed = Object.keys(mounts.data ?? mounts).filter((p) => p.startsWith("fault-"));
          const ours = listed.filter((p) => p === `${mountPath}/`);
          if (s.mount === undefined) {
            if (ours.length > 0) fail(`mount ${mountPath}/ on the cluster but not in state (orphaned)`);
            if (s.roles.size > 0 || s.config !== undefined) fail("config or roles in state without the mount");
            return;
          }
          if (s.mount.incomplete === true) fail("the mount is in state as unfinished");
          const entry = (mounts.data ?? (mounts as Record<string, { type?: string; description?: string }>))[
            `${mountPath}/`
          ];
          if (entry === undefined) {
            fail(`mount ${mountPath}/ in state but not on the cluster (lost)`);
            return;
          }
          if (entry.type !== "azure" || entry.description !== "fault run")
            fail(`mount differs: ${JSON.stringify({ type: entry.type, description: entry.description })}`);
          const cfg = await truth(`auth/${mountPath}/config`);
          if (s.config === undefined) {
            if (cfg.status === 200 && (cfg.body.data as Record<string, unknown> | undefined)?.tenant_id)
              fail("config on the cluster but not in state");
          } else {
            const d = (cfg.body.data ?? {}) as Record<string, unknown>;
            if (s.config.incomplete === true) fail("the config is in state as unfinished");
            if (
              d.tenant_id !== s.config.tenantId ||
              d.client_id !== s.config.clientId ||
              d.resource !== s.config.resource
            )
              fail(
                `config differs from state: ${JSON.stringify({ tenant_id: d.tenant_id, client_id: d.client_id, resource: d.resource })}`,
              );
          }
          const list = await truth(`auth/${mountPath}/role?list=true`);
          const names = list.status === 200 ? (((list.body.data as { keys?: string[] })?.keys ?? []) as string[]) : [];
          for (const n of names) if (!s.roles.has(n)) fail(`role ${n} on the cluster but not in state (orphaned)`);
          for (const [n, r] of s.roles) {
            if (r.incomplete === true) fail(`role ${n} is in state as unfinished`);
            const got = await truth(`auth/${mountPath}/role/${n}`);
            if (got.status !== 200) {
              fail(`role ${n} in state but not on the cluster (${got.status})`);
              continue;
            }
            const d = (got.body.data ?? {}) as Record<string, unknown>;
            const same =
              JSON.stringify(d.token_policies) === JSON.stringify(r.tokenPolicies) &&
              JSON.stringify(d.bound_service_principal_ids) === JSON.stringify(r.boundServicePrincipalIds) &&
              d.token_ttl === r.tokenTtl;
            if (!same)
              fail(
                `role ${n} differs: cluster ${JSON.stringify([d.token_policies, d.bound_service_principal_ids, d.token_ttl])}, ` +
                  `state ${JSON.stringify([r.tokenPolicies, r.boundServicePrincipalIds, r.tokenTtl])}`,
              );
          }
        };

        const noOp = async (when: string): Promise<void> => {
          fresh();
          const p = await stack.preview({ onOutput });
          const ch = changes(p.changeSummary);
          if (Object.keys(ch).length > 0)
            problems.push(`[seed ${seed}] preview after ${when} is not a no-op: ${JSON.stringify(ch)}`);
        };

        /** A command under faults; when it fails, the same command again without faults (it must converge). */
        const step = async (command: string, op: () => Promise<unknown>): Promise<void> => {
          fresh();
          const rec = await withFaults(command, op);
          if (rec.outcome === "failed") {
            fresh();
            await withFaults(`${command} (again, no fault)`, op, false);
          }
          await verify(command);
        };

        await step("up (create)", () => stack.up({ onOutput }));
        await noOp("up (create)");
        await stack.setConfig("variant", { value: "1" });
        await step("up (change half the roles)", () => stack.up({ onOutput }));
        await noOp("up (change)");
        fresh();
        await withFaults("refresh", () => stack.refresh({ onOutput }), false);
        await verify("refresh");
        await noOp("refresh");
        await step("destroy", () => stack.destroy({ onOutput }));
        const after = await readState();
        if (after.mount !== undefined || after.roles.size > 0)
          problems.push(`[seed ${seed}] resources left in state after destroy`);
        await stack.workspace.removeStack("dev", { force: true });
      }

      const faults = records.reduce((n, r) => n + r.faults.length, 0);
      console.log(
        `secrets fault run: ${runs} run(s), ${records.length} command(s), ${faults} active-node loss(es), ` +
          `${records.filter((r) => r.outcome === "failed").length} failed command(s), ${problems.length} problem(s)`,
      );
      for (const p of problems) console.log(`  problem: ${p}`);
      const everything = allOutput.join("");
      expect(everything.includes(token), "the root token appeared in the CLI output").toBe(false);
      expect(problems).toEqual([]);
    },
  );
});

function lastLines(message: string): string {
  return message
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && /error|fail|returned|unfinished/i.test(l))
    .slice(-4)
    .join(" | ")
    .slice(0, 1500);
}
