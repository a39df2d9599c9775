/**
 * The examples' flows through the Automation API and the real Pulumi CLI, against the devserver: the same
 * steps as `npm run example` (examples/<name>/flow.json), in a temporary copy of each example with the
 * packed library installed, with a local file backend and a passphrase. Each preview's counts must equal
 * what the `up` after it then does, and every refresh marked `expectNoChanges` must show none.
 *
 * Opt-in, so `npm test` stays fast and needs no CLI: `npm run test:cli` (or EXAMPLES_CLI_RUN=1). The CLI is
 * `pulumi` on the PATH, else the one scripts/pulumi-cli.sh built. Opted in (or in CI) without a CLI, the
 * tests fail instead of skipping. EXAMPLES_CLI=<name,...> limits the examples run (default: all four).
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigMap, Stack } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../../devserver";
import { REPO_ROOT, packLibrary, type PackedLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, devserverConfig, requireCli } from "../helpers/cli";

const CLI = cliGate("EXAMPLES_CLI_RUN");
const chosen = (process.env.EXAMPLES_CLI ?? "quickstart,rollback,json-job,batch").split(",").filter((s) => s !== "");

interface FlowStep {
  title: string;
  command?: "preview" | "up" | "refresh" | "destroy";
  config?: Record<string, string>;
  expectNoChanges?: boolean;
  expectFailure?: boolean;
  /** A change made outside Pulumi through the scheduler's API, instead of a command (as scripts/example.js). */
  scheduler?: { scale?: { job: string; group: string; count: number }; gc?: boolean };
  /** Texts the step's output (a failed step's error included) must contain. */
  expectOutput?: string[];
  /** Stack outputs the step must leave (a subset). */
  expectOutputs?: Record<string, unknown>;
}

/** Runs a step's scheduler action against the devserver's API with its root token; waits until the simulation is idle. */
async function schedulerAction(
  dev: Awaited<ReturnType<typeof startDevServer>>,
  action: NonNullable<FlowStep["scheduler"]>,
): Promise<void> {
  const call = async (method: string, path: string, body?: unknown): Promise<void> => {
    const res = await fetch(`${dev.urls.scheduler}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${dev.rootTokens.scheduler}`,
        ...(body !== undefined ? { "content-type": "application/json" } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${path} returned ${res.status}: ${await res.text()}`);
  };
  if (action.scale) {
    const { job, group, count } = action.scale;
    await call("POST", `/v1/job/${encodeURIComponent(job)}/scale`, {
      Target: { Group: group },
      Count: count,
      Message: "scaled outside Pulumi by the example flow",
    });
  } else if (action.gc) {
    await call("PUT", "/v1/system/gc");
  } else {
    throw new Error(`unknown scheduler action ${JSON.stringify(action)}`);
  }
  await dev.schedulerControl?.idle();
}

interface Flow {
  description: string;
  config: Record<string, { value: string; secret?: boolean }>;
  steps: FlowStep[];
}

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

/** Runs one step; resolves to the counts of what it changed (a preview's planned counts). */
async function runStep(stack: Stack, step: FlowStep, log: (s: string) => void): Promise<Record<string, number>> {
  const onOutput = (out: string): void => log(out);
  // The provider's preview text (the scheduler's plan) reaches the CLI's stderr during a preview.
  const onError = onOutput;
  switch (step.command) {
    case "preview": {
      const r = await stack.preview({
        diff: true,
        onOutput,
        onError,
        ...(step.expectNoChanges ? { expectNoChanges: true } : {}),
      });
      return changes(r.changeSummary);
    }
    case "up":
      return changes(
        (await stack.up({ onOutput, onError, ...(step.expectNoChanges ? { expectNoChanges: true } : {}) })).summary
          .resourceChanges,
      );
    case "refresh":
      return changes(
        (await stack.refresh({ onOutput, onError, ...(step.expectNoChanges ? { expectNoChanges: true } : {}) })).summary
          .resourceChanges,
      );
    case "destroy":
      return changes((await stack.destroy({ onOutput, onError })).summary.resourceChanges);
    default:
      throw new Error(`step "${step.title}" has neither a command nor a scheduler action`);
  }
}

describe("examples through the Automation API and the Pulumi CLI", () => {
  it.for(chosen)(
    "%s: runs its flow against the devserver; previews count what up does",
    { timeout: 900_000 },
    async (name, t) => {
      const cliDir = requireCli(CLI, t, "npm run test:cli");
      const { tarball } = await packOnce();
      const base = workDir as string;
      const project = await createProject({
        tarball,
        dir: join(base, name),
        install: "link",
        template: join(REPO_ROOT, "examples", name),
      });
      const flow = JSON.parse(readFileSync(join(REPO_ROOT, "examples", name, "flow.json"), "utf8")) as Flow;
      const dev = await startDevServer();
      const output: string[] = [];
      try {
        const config: ConfigMap = { ...devserverConfig(dev), ...flow.config };
        const { stack } = await cliStack({
          cliDir,
          projectDir: project.dir,
          backendDir: join(base, `${name}-state`),
          config,
        });
        let previewed: { step: string; counts: Record<string, number> } | undefined;
        for (const step of flow.steps) {
          if (step.scheduler !== undefined) {
            await schedulerAction(dev, step.scheduler);
            continue;
          }
          if (step.config) for (const [k, v] of Object.entries(step.config)) await stack.setConfig(k, { value: v });
          const start = output.length;
          const run = runStep(stack, step, (s) => output.push(s));
          if (step.expectFailure) {
            const error = await run.then(
              () => undefined,
              (e: unknown) => e,
            );
            expect(error, `"${step.title}" was expected to fail`).toBeInstanceOf(Error);
            const text = output.slice(start).join("") + String(error);
            for (const s of step.expectOutput ?? []) expect(text, step.title).toContain(s);
            previewed = undefined;
            continue;
          }
          const counts = await run;
          for (const s of step.expectOutput ?? []) expect(output.slice(start).join(""), step.title).toContain(s);
          if (step.expectOutputs) {
            const outs = Object.fromEntries(
              Object.entries(await stack.outputs()).map(([k, v]) => [k, v.value as unknown]),
            );
            expect(outs, step.title).toMatchObject(step.expectOutputs);
          }
          if (step.command === "up" && previewed !== undefined) {
            expect(counts, `"${step.title}" did what "${previewed.step}" showed`).toEqual(previewed.counts);
          }
          if (step.expectNoChanges) expect(counts, step.title).toEqual({});
          previewed = step.command === "preview" ? { step: step.title, counts } : undefined;
        }
        const all = output.join("");
        // The quickstart's edit shows the scheduler's plan in the preview.
        if (name === "quickstart") expect(all).toContain('Scheduler plan for job "web"');
        // The batch example: the scale between two ups is recognised, and the failed report names its allocation.
        if (name === "batch") {
          expect(all).toContain('Job "web" was scaled outside Pulumi');
          expect(all).toMatch(/allocation [0-9a-f]{8} \(group "report", task "build": Exit Code: 1/);
          for (const line of [
            "constraint ${node.unique.name} != devserver-node-0 filtered 1 node",
            "constraint ${node.unique.name} != devserver-node-1 filtered 1 node",
            "memory exhausted on 1 node",
          ]) {
            expect(all).toContain(line);
          }
        }
        // Previews list what the program wrote: no bookkeeping input (`check`'s and the SDK's are `__` names).
        expect(all).not.toMatch(/resolvedKeys|secretInputs/);
        // The quickstart teaches by example: no warning about its own resources.
        if (name === "quickstart") expect(all).not.toMatch(/warning: AuthRole/);
        for (const token of Object.values(dev.rootTokens)) expect(all).not.toContain(token);
        await stack.workspace.removeStack("dev");
      } finally {
        await dev.close();
      }
    },
  );
});
