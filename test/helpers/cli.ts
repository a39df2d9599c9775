/**
 * What the tests through the real Pulumi CLI (test/cli/) share: the opt-in switch, finding the CLI (on the
 * PATH, else built by scripts/pulumi-cli.sh), a stack in a project directory with a local file backend and
 * its own passphrase, the devserver's connection config, and the counts of a summary.
 *
 * Opted in (or in CI) without a CLI, a test fails instead of skipping.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { LocalWorkspace, PulumiCommand, type ConfigMap, type OpMap, type Stack } from "@pulumi/pulumi/automation";
import type { TestContext } from "vitest";
import type { StartedDevServer } from "../../devserver";
import { REPO_ROOT } from "../engine/harness/pack";

export const truthy = (v: string | undefined): boolean =>
  v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";

const NO_CLI =
  "the Pulumi CLI is neither on the PATH nor built by scripts/pulumi-cli.sh (run that script, or install it: https://www.pulumi.com/docs/iac/download-install/)";

/** Whether the tests are opted in by `variable`, and the CLI directory ("" = `pulumi` on the PATH). */
export interface CliGate {
  variable: string;
  optedIn: boolean;
  dir: string | undefined;
}

/** Reads the opt-in variable and, when opted in, looks for the CLI (once per test file, at load). */
export function cliGate(variable: "EXAMPLES_CLI_RUN" | "UPGRADE_CLI_RUN" | "REAL_CLUSTERS"): CliGate {
  const optedIn = truthy(process.env[variable]);
  return { variable, optedIn, dir: optedIn ? findCli() : undefined };
}

function findCli(): string | undefined {
  if (!spawnSync("pulumi", ["version"], { encoding: "utf8" }).error) return "";
  const built = spawnSync(join(REPO_ROOT, "scripts", "pulumi-cli.sh"), ["--check"], { encoding: "utf8" });
  return built.status === 0 ? built.stdout.trim().split("\n").pop() : undefined;
}

/**
 * The CLI directory for a test: skips it when not opted in (`script` is the npm script that opts in), and
 * when no CLI is found fails it if opted in or in CI, else skips it.
 */
export function requireCli(gate: CliGate, t: TestContext, script: string): string {
  if (!gate.optedIn) t.skip(`opt-in: ${script} (or ${gate.variable}=1) runs this through the real Pulumi CLI`);
  if (gate.dir === undefined) {
    if (gate.optedIn || truthy(process.env.CI)) throw new Error(NO_CLI);
    t.skip(`skipped: ${NO_CLI}`);
  }
  return gate.dir ?? "";
}

/** The counts of a summary without the unchanged resources ("same"). */
export function changes(m: OpMap | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [op, n] of Object.entries(m ?? {})) if (op !== "same" && n !== undefined && n > 0) out[op] = n;
  return out;
}

/** Stack config that points the library at the devserver (the given services), tokens as secrets. */
export function devserverConfig(
  dev: StartedDevServer,
  services: ReadonlyArray<"secrets" | "scheduler"> = ["secrets", "scheduler"],
): ConfigMap {
  const config: ConfigMap = {};
  for (const s of services) {
    config[`pulumi-secrets-scheduler:${s}Address`] = { value: dev.urls[s] };
    config[`pulumi-secrets-scheduler:${s}Token`] = { value: dev.rootTokens[s], secret: true };
  }
  return config;
}

/** A stack of the project, its environment (for running `pulumi` by hand too) and the `pulumi` binary. */
export interface CliStack {
  stack: Stack;
  envVars: Record<string, string>;
  pulumiBin: string;
}

/**
 * Creates the stack "dev" in `projectDir` through the Automation API and the CLI in `cliDir`, with a file
 * backend in `backendDir` (made here), a random passphrase and no update check, and sets `config`.
 */
export async function cliStack(opts: {
  cliDir: string;
  projectDir: string;
  backendDir: string;
  config: ConfigMap;
}): Promise<CliStack> {
  mkdirSync(opts.backendDir, { recursive: true });
  const envVars: Record<string, string> = {
    PULUMI_BACKEND_URL: `file://${opts.backendDir}`,
    PULUMI_CONFIG_PASSPHRASE: randomBytes(12).toString("hex"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
    ...(opts.cliDir ? { PATH: `${opts.cliDir}${delimiter}${process.env.PATH ?? ""}` } : {}),
  };
  // The Automation API runs `pulumi` from this process's PATH unless told where the CLI is.
  const pulumiCommand = await PulumiCommand.get(opts.cliDir ? { root: dirname(opts.cliDir) } : {});
  const stack = await LocalWorkspace.createStack(
    { stackName: "dev", workDir: opts.projectDir },
    { envVars, pulumiCommand },
  );
  await stack.setAllConfig(opts.config);
  return { stack, envVars, pulumiBin: opts.cliDir ? join(opts.cliDir, "pulumi") : "pulumi" };
}
