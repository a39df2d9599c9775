/**
 * Through the real Pulumi CLI: a refresh of N unchanged Jobs sends one job list and nothing else, whatever
 * the engine's `--parallel` (the engine sends its reads that many at a time, 8 by default on 2 cores), and a
 * job changed outside Pulumi adds exactly its own read and is seen. Opt-in like test/cli/examples.test.ts
 * (EXAMPLES_CLI_RUN=1, `npm run test:cli`), with the same CLI lookup; the program is
 * test/cli/fixtures/many-jobs.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../../devserver";
import { SchedulerClient, stripServerManagedFields } from "../../provider/clients/scheduler";
import { REPO_ROOT, packLibrary } from "../engine/harness/pack";
import { SECRET_SIG_KEY } from "../engine/harness/host";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, devserverConfig, requireCli } from "../helpers/cli";

const CLI = cliGate("EXAMPLES_CLI_RUN");
const N = 12;

let workDir: string | undefined;
afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("refresh through the Pulumi CLI", () => {
  it(
    "sends one job list for N unchanged Jobs whatever --parallel; a changed job adds its read",
    { timeout: 900_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:cli");
      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-refresh-cli-")));
      const { tarball } = await packLibrary(workDir, "refresh-cli");
      const project = await createProject({
        tarball,
        dir: join(workDir, "many-jobs"),
        install: "link",
        template: join(REPO_ROOT, "test", "cli", "fixtures", "many-jobs"),
      });
      const dev = await startDevServer();
      try {
        const { stack } = await cliStack({
          cliDir,
          projectDir: project.dir,
          backendDir: join(workDir, "state"),
          config: { ...devserverConfig(dev, ["scheduler"]), "many-jobs:count": { value: String(N) } },
        });
        await stack.up();
        await dev.schedulerControl?.idle();
        // No source is secret, so state keeps no ciphertext for the Jobs: their stored job and inputs' hash
        // are plain (an output the engine encrypts costs at every checkpoint of every command).
        const jobOutputs = async (): Promise<Record<string, unknown>[]> => {
          const exported = (await stack.exportStack()).deployment as {
            resources: { type: string; outputs?: Record<string, unknown> }[];
          };
          return exported.resources.filter((r) => r.type.endsWith(":Job")).map((r) => r.outputs ?? {});
        };
        const before = await jobOutputs();
        expect(before).toHaveLength(N);
        for (const o of before) {
          expect(typeof o.normalizedJob).toBe("string");
          expect(typeof o.inputsHash).toBe("string");
        }
        // exportStack shows secrets: a secret would be the engine's wrapper around the plaintext.
        expect(JSON.stringify(before)).not.toContain(SECRET_SIG_KEY);
        const sent = async (run: () => Promise<unknown>): Promise<string[]> => {
          const from = dev.requestLog.length;
          await run();
          return dev.requestLog.slice(from).map((e) => `${e.method} ${e.path}`);
        };
        // The first refresh records the placed jobs' status; the later ones find nothing to change.
        await stack.refresh();
        for (const parallel of [1, 2, undefined]) {
          const requests = await sent(async () => {
            const r = await stack.refresh(parallel === undefined ? {} : { parallel });
            expect(changes(r.summary.resourceChanges), `--parallel ${parallel ?? "default"}`).toEqual({});
          });
          expect(requests, `--parallel ${parallel ?? "default"}`).toEqual(["GET /v1/jobs"]);
        }
        const client = new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler });
        const copy = structuredClone(stripServerManagedFields((await client.jobs.info("many-3")).value));
        const task = copy.TaskGroups?.[0]?.Tasks?.[0];
        if (task === undefined) throw new Error("no task");
        task.Config = { ...task.Config, image: "app:hotfix" };
        await client.jobs.register({ Job: copy });
        await dev.schedulerControl?.idle();
        const requests = await sent(async () => {
          const r = await stack.refresh({ parallel: 1 });
          expect(changes(r.summary.resourceChanges)).toEqual({ update: 1 });
        });
        // The engine then asks Diff of the changed resource to show its drift: that is the plan.
        expect(requests.sort()).toEqual(["GET /v1/job/many-3", "GET /v1/jobs", "POST /v1/job/many-3/plan"]);
        // What the refresh read from the server stays plain too.
        const after = await jobOutputs();
        expect(after.filter((o) => String(o.normalizedJob).includes("app:hotfix"))).toHaveLength(1);
        expect(JSON.stringify(after)).not.toContain(SECRET_SIG_KEY);
        await stack.destroy();
        await stack.workspace.removeStack("dev");
      } finally {
        await dev.close();
      }
    },
  );
});
