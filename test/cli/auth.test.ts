/**
 * The auth resources through the Automation API and the real Pulumi CLI, against the devserver: a preview
 * right after `up` sends no request to the secrets service; after a refresh that finds
 * drift, `pulumi stack export` holds the client secret's hash nowhere in plaintext; a write-only client
 * secret leaves no trace (not even ciphertext) in the export; a new mount path is an update (remount) that
 * keeps the accessor, config and roles, and the config and roles, given the mount's accessor, follow it as
 * updates that write nothing, in the preview as in `up` (a diff that said "no change" would keep the old
 * path in their outputs: the engine keeps a same step's old outputs); a mount replaced replaces them too.
 *
 * Opt-in like test/cli/examples.test.ts: EXAMPLES_CLI_RUN=1 (or `npm run test:cli`), with `pulumi` on the
 * PATH or built by scripts/pulumi-cli.sh.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../../devserver";
import { SecretsClient } from "../../provider/clients/secrets";
import { packLibrary } from "../engine/harness/pack";
import { createProject } from "../engine/harness/project";
import { changes, cliGate, cliStack, devserverConfig, requireCli } from "../helpers/cli";

const CLI = cliGate("EXAMPLES_CLI_RUN");

const PROJECT = "pss-auth-cli";
const TENANT = "00000000-0000-4000-8000-00000000aaaa";
const CLIENT = "00000000-0000-4000-8000-00000000bbbb";

const PROGRAM = `import * as pulumi from "@pulumi/pulumi";
import * as pss from "pulumi-secrets-scheduler";

const cfg = new pulumi.Config();
const mount = new pss.AuthMount("m", {
  path: cfg.get("mountPath") ?? "cli-auth",
  description: "cli test",
  disableRemount: cfg.getBoolean("disableRemount"),
});
const config = new pss.AuthConfig("c", {
  mount: mount.path,
  mountAccessor: mount.accessor,
  tenantId: "${TENANT}",
  resource: "https://management.example/",
  clientId: "${CLIENT}",
  clientSecret: cfg.requireSecret("clientSecret"),
});
for (const name of ["web", "api"])
  new pss.AuthRole(
    \`r-\${name}\`,
    { mount: mount.path, mountAccessor: mount.accessor, name, tokenPolicies: [name], boundServicePrincipalIds: ["sp-1"] },
    { dependsOn: [config] },
  );
const wo = new pss.AuthMount("m-wo", { path: "cli-wo" });
new pss.AuthConfig("c-wo", {
  mount: wo.path,
  tenantId: "${TENANT}",
  resource: "https://management.example/",
  clientId: "${CLIENT}",
  clientSecretVersion: 1,
  clientSecretConfigKey: "${PROJECT}:woSecret",
});
export const accessor = mount.accessor;
export const path = mount.path;
`;

let workDir: string | undefined;
afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe("auth resources through the Pulumi CLI", () => {
  it(
    "quiet preview, no plaintext hash after drift, no trace of a write-only secret, remount as an update",
    { timeout: 900_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:cli");
      workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-auth-cli-")));
      const template = join(workDir, "template");
      mkdirSync(template);
      writeFileSync(
        join(template, "Pulumi.yaml"),
        `name: ${PROJECT}\nruntime:\n  name: nodejs\n  options:\n    typescript: true\n`,
      );
      writeFileSync(
        join(template, "package.json"),
        JSON.stringify({ name: PROJECT, private: true, main: "index.ts" }, null, 2) + "\n",
      );
      writeFileSync(
        join(template, "tsconfig.json"),
        JSON.stringify(
          {
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
          },
          null,
          2,
        ),
      );
      writeFileSync(join(template, "index.ts"), PROGRAM);
      const { tarball } = await packLibrary(workDir, "auth-cli");
      const project = await createProject({ tarball, dir: join(workDir, "project"), install: "link", template });
      const dev = await startDevServer();
      const client = new SecretsClient({ address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {} });
      const clientSecret = `cli-client-secret-${randomBytes(4).toString("hex")}`;
      const woSecret = `cli-wo-secret-${randomBytes(4).toString("hex")}`;
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
            ...devserverConfig(dev, ["secrets"]),
            [`${PROJECT}:clientSecret`]: { value: clientSecret, secret: true },
            [`${PROJECT}:woSecret`]: { value: woSecret, secret: true },
          },
        });

        const up = await stack.up({ onOutput });
        expect(changes(up.summary.resourceChanges)).toEqual({ create: 7 });
        const accessor = up.outputs.accessor?.value as string;
        expect(accessor).toMatch(/^auth_/);

        // The first preview after the create sends nothing to the secrets service.
        dev.resetLog();
        const quiet = await stack.preview({ onOutput });
        expect(changes(quiet.changeSummary)).toEqual({});
        expect(dev.requestLog.filter((e) => e.service === "secrets").map((e) => `${e.method} ${e.path}`)).toEqual([]);

        // A refresh that finds drift; then no plaintext hash (or secret) in the export.
        await client.config.write("cli-auth", {
          tenant_id: TENANT,
          resource: "https://drifted.example/",
          client_id: CLIENT,
        });
        const refresh = await stack.refresh({ onOutput });
        expect(changes(refresh.summary.resourceChanges)).toMatchObject({ update: 1 });
        // `pulumi stack export` as a user runs it (the Automation API's exportStack shows secrets decrypted).
        const exportRun = spawnSync(pulumiBin, ["stack", "export", "--stack", "dev"], {
          cwd: project.dir,
          env: { ...process.env, ...envVars },
          encoding: "utf8",
        });
        expect(exportRun.status, exportRun.stderr).toBe(0);
        const exported = exportRun.stdout;
        expect(exported).toContain("ciphertext");
        expect(exported).not.toContain("scrypt$");
        expect(exported).not.toContain(clientSecret);
        expect(exported).not.toContain(woSecret);
        const resources = (
          JSON.parse(exported) as { deployment: { resources: { urn: string; inputs?: unknown; outputs?: unknown }[] } }
        ).deployment.resources;
        const c = resources.find((r) => r.urn.endsWith("::c"));
        expect(JSON.stringify(c?.inputs)).toContain('"clientSecretKept":true');
        // The write-only secret: no input, no output, no ciphertext of anything on that resource.
        const cwo = resources.find((r) => r.urn.endsWith("::c-wo"));
        expect(cwo).toBeDefined();
        expect(JSON.stringify([cwo?.inputs, cwo?.outputs])).not.toMatch(/ciphertext|"clientSecret"|"clientSecretHash"/);
        expect(JSON.stringify(cwo?.inputs)).toContain('"clientSecretVersion":1');

        // Bring the drift back, then move the mount: an update that keeps the accessor, config and roles.
        await stack.up({ onOutput });
        await stack.setConfig("mountPath", { value: "cli-auth-moved" });
        // A plain `pulumi preview` (the Automation API's event stream leaves out the stack's diagnostics).
        const movePreview = spawnSync(pulumiBin, ["preview", "--stack", "dev", "--non-interactive"], {
          cwd: project.dir,
          env: { ...process.env, ...envVars },
          encoding: "utf8",
        });
        expect(movePreview.status, movePreview.stderr).toBe(0);
        output.push(movePreview.stdout, movePreview.stderr);
        // The config and both roles pass the mount's accessor: they follow the move as updates.
        expect(movePreview.stdout).toMatch(/AuthMount m update/);
        expect(movePreview.stdout).toMatch(/~ 4 to update/);
        expect(movePreview.stdout).not.toMatch(/replace/);
        expect(movePreview.stdout).toMatch(
          /warning: AuthMount cli-auth: the auth method moves from "cli-auth\/" to "cli-auth-moved\/" \(sys\/remount\).*every token issued under "cli-auth\/" is revoked/,
        );
        const planned = { update: 4 };
        dev.resetLog();
        const moved = await stack.up({ onOutput });
        expect(changes(moved.summary.resourceChanges)).toEqual(planned);
        // The dependents' updates only read them at the new path: the one write is the mount's move and tune.
        const writes = dev.requestLog
          .filter((e) => e.service === "secrets" && e.method !== "GET")
          .map((e) => `${e.method} ${e.path}`);
        expect(writes.filter((w) => !/\/v1\/sys\/(remount|auth\/cli-auth-moved\/tune)/.test(w))).toEqual([]);
        expect(moved.outputs.accessor?.value).toBe(accessor);
        expect(moved.outputs.path?.value).toBe("cli-auth-moved");
        expect(await client.mounts.find("cli-auth")).toBeUndefined();
        expect(await client.config.read("cli-auth-moved")).toMatchObject({ tenantId: TENANT });
        expect(await client.roles.read("cli-auth-moved", "web")).toBeDefined();
        expect(await client.roles.read("cli-auth-moved", "api")).toBeDefined();
        const after = await stack.preview({ onOutput });
        expect(changes(after.changeSummary)).toEqual({});

        // A mount that is replaced (here: a new path with disableRemount) takes its config and roles with it.
        await stack.setConfig("mountPath", { value: "cli-auth-replaced" });
        await stack.setConfig("disableRemount", { value: "true" });
        const replacePreview = await stack.preview({ onOutput });
        expect(changes(replacePreview.changeSummary)).toEqual({ replace: 4 });
        const replaced = await stack.up({ onOutput });
        expect(changes(replaced.summary.resourceChanges)).toEqual({ replace: 4 });
        expect(replaced.outputs.accessor?.value).not.toBe(accessor);
        expect(await client.config.read("cli-auth-replaced")).toMatchObject({ tenantId: TENANT });
        expect(await client.roles.read("cli-auth-replaced", "api")).toBeDefined();
        expect(changes((await stack.preview({ onOutput })).changeSummary)).toEqual({});

        await stack.destroy({ onOutput });
        await stack.workspace.removeStack("dev");
        for (const token of Object.values(dev.rootTokens)) expect(output.join("")).not.toContain(token);
        expect(output.join("")).not.toContain(woSecret);
      } finally {
        await dev.close();
      }
    },
  );
});
