/**
 * The examples' flows through the Automation API and the real Pulumi CLI, against the devserver: the same
 * steps as `npm run example` (examples/<name>/flow.json), in a temporary copy of each example with the
 * packed library installed, with a local file backend and a passphrase. Opt-in by having `pulumi` on the
 * PATH: the Automation API shells out to the CLI, so without it every test skips and says why.
 * EXAMPLES_CLI=<name,...> limits the examples run (default: all three).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LocalWorkspace, type ConfigMap, type Stack } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../devserver";
import { REPO_ROOT, packLibrary, type PackedLibrary } from "./engine/harness/pack";
import { createProject } from "./engine/harness/project";

interface FlowStep {
  title: string;
  command: "preview" | "up" | "refresh" | "destroy";
  config?: Record<string, string>;
  expectNoChanges?: boolean;
  expectFailure?: boolean;
}

interface Flow {
  description: string;
  config: Record<string, { value: string; secret?: boolean }>;
  steps: FlowStep[];
}

const cli = spawnSync("pulumi", ["version"], { encoding: "utf8" });
const NO_CLI = cli.error !== undefined ? "the pulumi CLI is not on the PATH (install it: https://www.pulumi.com/docs/iac/download-install/)" : undefined;
const chosen = (process.env.EXAMPLES_CLI ?? "quickstart,rollback,json-job").split(",").filter((s) => s !== "");

let workDir: string | undefined;
let pack: Promise<PackedLibrary> | undefined;
const packOnce = (): Promise<PackedLibrary> => {
  if (pack === undefined) {
    workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-examples-cli-")));
    pack = packLibrary(workDir, "cli");
  }
  return pack;
};

afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

async function runStep(stack: Stack, step: FlowStep, log: (s: string) => void): Promise<void> {
  const onOutput = (out: string): void => log(out);
  switch (step.command) {
    case "preview": {
      const r = await stack.preview({ diff: true, onOutput });
      expect(r.changeSummary).toBeDefined();
      return;
    }
    case "up":
      await stack.up({ onOutput });
      return;
    case "refresh":
      await stack.refresh({ onOutput, ...(step.expectNoChanges ? { expectNoChanges: true } : {}) });
      return;
    case "destroy":
      await stack.destroy({ onOutput });
      return;
  }
}

describe("examples through the Automation API and the Pulumi CLI", () => {
  it.for(chosen)("%s: runs its flow against the devserver", { timeout: 600_000 }, async (name, t) => {
    if (NO_CLI !== undefined) t.skip(`skipped: ${NO_CLI}`);
    const { tarball } = await packOnce();
    const base = workDir as string;
    const project = await createProject({ tarball, dir: join(base, name), install: "link", template: join(REPO_ROOT, "examples", name) });
    const flow = JSON.parse(readFileSync(join(REPO_ROOT, "examples", name, "flow.json"), "utf8")) as Flow;
    const dev = await startDevServer();
    const backend = join(base, `${name}-state`);
    mkdirSync(backend, { recursive: true });
    const envVars: Record<string, string> = {
      PULUMI_BACKEND_URL: `file://${backend}`,
      PULUMI_CONFIG_PASSPHRASE: randomBytes(12).toString("hex"),
      PULUMI_SKIP_UPDATE_CHECK: "true",
    };
    const output: string[] = [];
    try {
      const stack = await LocalWorkspace.createStack({ stackName: "dev", workDir: project.dir }, { envVars });
      const config: ConfigMap = {
        "pulumi-secrets-scheduler:secretsAddress": { value: dev.urls.secrets },
        "pulumi-secrets-scheduler:secretsToken": { value: dev.rootTokens.secrets, secret: true },
        "pulumi-secrets-scheduler:schedulerAddress": { value: dev.urls.scheduler },
        "pulumi-secrets-scheduler:schedulerToken": { value: dev.rootTokens.scheduler, secret: true },
        ...flow.config,
      };
      await stack.setAllConfig(config);
      for (const step of flow.steps) {
        if (step.config) for (const [k, v] of Object.entries(step.config)) await stack.setConfig(k, { value: v });
        const run = runStep(stack, step, (s) => output.push(s));
        if (step.expectFailure) await expect(run, step.title).rejects.toThrow();
        else await run;
      }
      const all = output.join("");
      // The quickstart's edit shows the scheduler's plan in the preview.
      if (name === "quickstart") expect(all).toContain('Scheduler plan for job "web"');
      for (const token of Object.values(dev.rootTokens)) expect(all).not.toContain(token);
      await stack.workspace.removeStack("dev");
    } finally {
      await dev.close();
    }
  });
});
