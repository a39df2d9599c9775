/**
 * Through the real Pulumi CLI: a Job whose variable is a secret made in the program (so the
 * CLI's own masking of secret stack config does not apply) previews a changed value as `[secret]`, and no
 * output of preview, up or destroy, and nothing `pulumi stack export` shows (an init error included), holds the
 * value or what the jobspec computes from it (`upper`, `base64encode`); neither once the program passed the
 * value as plain or dropped it (the old value is in the job state holds). Opt-in like test/cli/examples.test.ts
 * (EXAMPLES_CLI_RUN=1, `npm run test:cli`), with the same CLI lookup; the program is
 * test/cli/fixtures/secret-job.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../../devserver";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { REPO_ROOT, packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { cliGate, cliStack, devserverConfig, requireCli } from "../helpers/cli";

const CLI = cliGate("EXAMPLES_CLI_RUN");
const execFileAsync = promisify(execFile);

let workDir: string | undefined;
afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("secret job values through the Pulumi CLI", () => {
  it("a changed secret variable previews as [secret]; no output holds the value", { timeout: 900_000 }, async (t) => {
    const cliDir = requireCli(CLI, t, "npm run test:cli");
    workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-secret-cli-")));
    const { tarball } = await packLibrary(workDir, "secret-cli");
    const project = await createProject({
      tarball,
      dir: join(workDir, "secret-job"),
      install: "link",
      template: join(REPO_ROOT, "test", "cli", "fixtures", "secret-job"),
    });
    const dev = await startDevServer();
    const first = `first-Pw-${randomBytes(6).toString("hex")}`;
    const second = `second-Pw-${randomBytes(6).toString("hex")}`;
    const output: string[] = [];
    const onOutput = (s: string): void => {
      output.push(s);
    };
    try {
      const { stack, envVars, pulumiBin } = await cliStack({
        cliDir,
        projectDir: project.dir,
        backendDir: join(workDir, "state"),
        config: {
          ...devserverConfig(dev, ["scheduler"]),
          // Plain config: only the program makes it a secret, so the CLI does not mask it by itself.
          "secret-job-preview:dbPassword": { value: first },
        },
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

      // An update that fails after the register (the task fails, waitForCompletion reports it) ends in an
      // init error, which Pulumi keeps in plaintext state: it must hold nothing of the secret.
      await stack.setConfig("secret-job-preview:failTask", { value: "true" });
      const failFrom = output.length;
      const failed = await stack.up({ onOutput }).then(
        () => "",
        (e: unknown) => String((e as Error).message),
      );
      expect(failed).not.toBe("");
      output.push(failed);
      expect(output.slice(failFrom).join("")).toContain("did not finish");
      // What `pulumi stack export` shows (the Automation API's exportStack adds --show-secrets), less the
      // default provider's copy of the stack config, where this test itself put the value in plaintext.
      const { stdout } = await execFileAsync(pulumiBin, ["stack", "export", "--stack", "dev", "--cwd", project.dir], {
        env: { ...process.env, ...envVars },
        maxBuffer: 64 * 1024 * 1024,
      });
      const resources = (JSON.parse(stdout) as { deployment: { resources: { type: string }[] } }).deployment.resources;
      const exported = JSON.stringify(resources.filter((r) => !r.type.startsWith("pulumi:providers:")));
      expect(exported).toContain("initErrors");
      // A source is secret, so what the Job stored of it is encrypted (outputs secret only when sourced).
      const job = resources.find((r) => r.type.endsWith(":Job")) as { outputs?: Record<string, unknown> } | undefined;
      for (const k of ["normalizedJob", "inputsHash", "secretMask"])
        expect(JSON.stringify(job?.outputs?.[k]), k).toContain("ciphertext");
      output.push(exported);

      await stack.destroy({ onOutput });
      const all = output.join("");
      // The secrets, and what the jobspec computes from them (base64encode, upper), nowhere.
      for (const pw of [first, second])
        for (const s of [pw, pw.toUpperCase(), Buffer.from(`user:${pw}`).toString("base64")])
          expect(all, s).not.toContain(s);
      expect(all).not.toContain(dev.rootTokens.scheduler);
      await stack.workspace.removeStack("dev");
    } finally {
      await dev.close();
    }
  });

  it(
    "a secret the program made plain or dropped stays [secret] in preview, up and stack export (issue 43)",
    { timeout: 900_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:cli");
      workDir ??= realpathSync(mkdtempSync(join(tmpdir(), "pss-secret-cli-")));
      const { tarball } = await packLibrary(workDir, "secret-origin-cli");
      const project = await createProject({
        tarball,
        dir: join(workDir, "secret-origin"),
        install: "link",
        template: join(REPO_ROOT, "test", "cli", "fixtures", "secret-job"),
      });
      const dev = await startDevServer();
      const output: string[] = [];
      const onOutput = (s: string): void => {
        output.push(s);
      };
      // What the jobspec computes from a value: the value, upper(), base64encode("user:...").
      const forms = (pw: string): string[] => [pw, pw.toUpperCase(), Buffer.from(`user:${pw}`).toString("base64")];
      try {
        const { stack, envVars, pulumiBin } = await cliStack({
          cliDir,
          projectDir: project.dir,
          backendDir: join(workDir, "state-origin"),
          config: devserverConfig(dev, ["scheduler"]),
        });
        const exported = async (): Promise<string> => {
          const { stdout } = await execFileAsync(
            pulumiBin,
            ["stack", "export", "--stack", "dev", "--cwd", project.dir],
            { env: { ...process.env, ...envVars }, maxBuffer: 64 * 1024 * 1024 },
          );
          // Less the default provider's copy of the stack config, where this test put the values in plaintext.
          const resources = (JSON.parse(stdout) as { deployment: { resources: { type: string }[] } }).deployment
            .resources;
          return JSON.stringify(resources.filter((r) => !r.type.startsWith("pulumi:providers:")));
        };
        /** Preview (progress and --diff), up and stack export of the current config: all their text. */
        const change = async (): Promise<string> => {
          const from = output.length;
          const preview = await stack.preview({ onOutput, onError: onOutput });
          expect(preview.changeSummary.update).toBe(1);
          await stack.preview({ diff: true, onOutput, onError: onOutput });
          const up = await stack.up({ onOutput, onError: onOutput });
          expect(up.summary.resourceChanges?.update).toBe(1);
          return output.slice(from).join("") + (await exported());
        };

        // (b) Deployed with a secret, then the same variable passed as plain.
        const secretOne = `origin-Pw-${randomBytes(6).toString("hex")}`;
        await stack.setAllConfig({
          "secret-job-preview:dbPassword": { value: secretOne },
          "secret-job-preview:plainPassword": { value: "false" },
        });
        await stack.up({ onOutput, onError: onOutput });
        await stack.setAllConfig({
          "secret-job-preview:dbPassword": { value: "now-plain-value" },
          "secret-job-preview:plainPassword": { value: "true" },
        });
        const madePlain = await change();
        expect(madePlain).toContain('Scheduler plan for job "pwjob"');
        expect(madePlain).toContain("Env[DB_PASSWORD]: [secret] =>");
        for (const s of forms(secretOne)) expect(madePlain, s).not.toContain(s);

        // (a) Deployed with a secret again, then the variable and every use of it dropped.
        const secretTwo = `origin-Pw-${randomBytes(6).toString("hex")}`;
        await stack.setAllConfig({
          "secret-job-preview:dbPassword": { value: secretTwo },
          "secret-job-preview:plainPassword": { value: "false" },
        });
        await stack.up({ onOutput, onError: onOutput });
        await stack.setConfig("secret-job-preview:dropPassword", { value: "true" });
        const dropped = await change();
        expect(dropped).toContain("- Env[DB_PASSWORD]: [secret]");
        for (const s of forms(secretTwo)) expect(dropped, s).not.toContain(s);

        await stack.destroy({ onOutput, onError: onOutput });
        // Stack config holds the values in plaintext (this test put them there): only the runs' text is checked.
        const all = output.join("");
        for (const s of [...forms(secretOne), ...forms(secretTwo)]) expect(all, s).not.toContain(s);
        await stack.workspace.removeStack("dev");
      } catch (e) {
        console.log(output.join(""));
        throw e;
      } finally {
        await dev.close();
      }
    },
  );
});
