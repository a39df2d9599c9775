/**
 * Issue 20 (1) through the real Pulumi CLI: a Job whose variable is a secret made in the program (so the
 * CLI's own masking of secret stack config does not apply) previews a changed value as `[secret]`, and no
 * output of preview, up or destroy holds the value. Opt-in like test/examples-cli.test.ts
 * (EXAMPLES_CLI_RUN=1, `npm run test:cli`), with the same CLI lookup; the program is
 * test/cli-fixtures/secret-job.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../devserver";
import { SchedulerClient } from "../provider/clients/scheduler";
import { REPO_ROOT, packLibrary } from "./engine/harness/pack";
import { createProject } from "./engine/harness/project";

const truthy = (v: string | undefined): boolean =>
  v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
const OPTED_IN = truthy(process.env.EXAMPLES_CLI_RUN);
const REQUIRED = OPTED_IN || truthy(process.env.CI);

function findCli(): string | undefined {
  if (!spawnSync("pulumi", ["version"], { encoding: "utf8" }).error) return "";
  const built = spawnSync(join(REPO_ROOT, "scripts", "pulumi-cli.sh"), ["--check"], { encoding: "utf8" });
  return built.status === 0 ? built.stdout.trim().split("\n").pop() : undefined;
}
const CLI_DIR = OPTED_IN ? findCli() : undefined;
const NO_CLI = "the Pulumi CLI is neither on the PATH nor built by scripts/pulumi-cli.sh";

let workDir: string | undefined;
afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("secret job values through the Pulumi CLI", () => {
  it("a changed secret variable previews as [secret]; no output holds the value", { timeout: 900_000 }, async (t) => {
    if (!OPTED_IN) t.skip("opt-in: npm run test:cli (or EXAMPLES_CLI_RUN=1) runs this through the real Pulumi CLI");
    if (CLI_DIR === undefined) {
      if (REQUIRED) throw new Error(NO_CLI);
      t.skip(`skipped: ${NO_CLI}`);
    }
    workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-secret-cli-")));
    const { tarball } = await packLibrary(workDir, "secret-cli");
    const project = await createProject({
      tarball,
      dir: join(workDir, "secret-job"),
      install: "link",
      template: join(REPO_ROOT, "test", "cli-fixtures", "secret-job"),
    });
    const dev = await startDevServer();
    const backend = join(workDir, "state");
    mkdirSync(backend, { recursive: true });
    const first = `first-Pw-${randomBytes(6).toString("hex")}`;
    const second = `second-Pw-${randomBytes(6).toString("hex")}`;
    const output: string[] = [];
    const onOutput = (s: string): void => {
      output.push(s);
    };
    try {
      const pulumiCommand = await PulumiCommand.get(CLI_DIR ? { root: dirname(CLI_DIR) } : {});
      const envVars: Record<string, string> = {
        PULUMI_BACKEND_URL: `file://${backend}`,
        PULUMI_CONFIG_PASSPHRASE: randomBytes(12).toString("hex"),
        PULUMI_SKIP_UPDATE_CHECK: "true",
        ...(CLI_DIR ? { PATH: `${CLI_DIR}${delimiter}${process.env.PATH ?? ""}` } : {}),
      };
      const stack = await LocalWorkspace.createStack(
        { stackName: "dev", workDir: project.dir },
        { envVars, pulumiCommand },
      );
      await stack.setAllConfig({
        "pulumi-secrets-scheduler:schedulerAddress": { value: dev.urls.scheduler },
        "pulumi-secrets-scheduler:schedulerToken": { value: dev.rootTokens.scheduler, secret: true },
        // Plain config: only the program makes it a secret, so the CLI does not mask it by itself.
        "secret-job-preview:dbPassword": { value: first },
      });
      await stack.up({ onOutput });
      const client = new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler });
      expect((await client.jobs.info("pwjob")).value.Version).toBe(0);

      await stack.setConfig("secret-job-preview:dbPassword", { value: second });
      // The plan is a stack-level message: the progress display of a preview shows it (`--diff` shows the
      // engine's own property diff instead, where the variable is [secret] too).
      const previewFrom = output.length;
      const preview = await stack.preview({ onOutput });
      expect(preview.changeSummary.update).toBe(1);
      const previewText = output.slice(previewFrom).join("");
      expect(previewText).toContain('Scheduler plan for job "pwjob"');
      expect(previewText).toContain("Env[DB_PASSWORD]: [secret] => [secret]");
      const diffFrom = output.length;
      await stack.preview({ diff: true, onOutput });
      expect(output.slice(diffFrom).join("")).toMatch(/db_password: \[secret\]/);

      const upFrom = output.length;
      const up = await stack.up({ onOutput });
      expect(up.summary.resourceChanges?.update).toBe(1);
      expect(output.slice(upFrom).join("")).toContain("[secret]");
      expect((await client.jobs.info("pwjob")).value.Version).toBe(1);

      await stack.destroy({ onOutput });
      const all = output.join("");
      expect(all).not.toContain(first);
      expect(all).not.toContain(second);
      expect(all).not.toContain(dev.rootTokens.scheduler);
      await stack.workspace.removeStack("dev");
    } finally {
      await dev.close();
    }
  });
});
