/**
 * The provider host loads a resource's code on its first call, and only what that resource uses: a stack
 * of Jobs does not load the secrets service's wire records or client (about 13 ms of CPU per command), and a
 * `destroy` of Jobs loads only their delete (about 10 ms less of a fresh host's first call).
 * Checked in Node's own module cache, in a plain Node process that compiles the sources in memory.
 */
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createJob, startHarness } from "./resources/job/harness";

const ROOT = join(__dirname, "..", "..");

/** The script that prints the repository's modules (paths from its root) loaded once `calls` ran. */
function modulesScript(kind: string, calls = ""): string {
  return `
    const ts = require("typescript");
    const { readFileSync } = require("node:fs");
    const options = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true };
    require.extensions[".ts"] = (m, file) =>
      m._compile(ts.transpileModule(readFileSync(file, "utf8"), { compilerOptions: options }).outputText, file);
    const p = require("./provider/index.ts").provider(${JSON.stringify(kind)});
    (async () => {
      ${calls}
      const root = ${JSON.stringify(ROOT + "/")};
      const own = Object.keys(require.cache).filter((k) => k.startsWith(root) && !k.includes("/node_modules/"));
      process.stdout.write(JSON.stringify(own.map((k) => k.slice(root.length))));
    })().catch((e) => { console.error(e); process.exit(1); });`;
}

/** The repository's modules (paths from its root) that loading `kind`'s provider, and then `calls`, load. */
function modulesOf(kind: string, calls = ""): string[] {
  const out = execFileSync(process.execPath, ["--no-experimental-strip-types", "-e", modulesScript(kind, calls)], {
    cwd: ROOT,
    encoding: "utf8",
  });
  return JSON.parse(out) as string[];
}

describe("module loading in the provider host", () => {
  it("a Job loads neither the secrets service's schemas nor its client", { timeout: 60_000 }, () => {
    // A check (without a connection, so it sends nothing) loads the Job code: every method but delete does.
    const loaded = modulesOf("job", 'await p.check({}, { job: { ID: "m" }, waitForDeployment: false });');
    expect(loaded).toContain("provider/resources/job/index.ts");
    expect(loaded).toContain("provider/resources/definition.ts");
    const secrets = loaded.filter(
      (f) =>
        f === "provider/schemas/secrets.ts" ||
        f.startsWith("provider/clients/secrets/index") ||
        f === "provider/resources/auth-common.ts",
    );
    expect(secrets).toEqual([]);
  });

  it("an AuthRole loads them", { timeout: 60_000 }, () => {
    const loaded = modulesOf("authRole");
    expect(loaded).toContain("provider/schemas/secrets.ts");
    expect(loaded).toContain("provider/clients/secrets/index.ts");
  });

  it(
    "a Job's delete loads neither the rest of the Job code nor the job API's other schemas, and stops the job",
    { timeout: 60_000 },
    async () => {
      const h = await startHarness();
      try {
        const { id, outs } = await createJob({
          job: { ID: "modules-delete", TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker" }] }] },
          waitForDeployment: false,
          purgeOnDestroy: true,
        });
        const calls = `await p.delete(${JSON.stringify(id)}, ${JSON.stringify(outs)});`;
        const { stdout } = await promisify(execFile)(
          process.execPath,
          ["--no-experimental-strip-types", "-e", modulesScript("job", calls)],
          {
            cwd: ROOT,
            encoding: "utf8",
            env: {
              ...process.env,
              SCHEDULER_ADDR: h.server.urls.scheduler,
              SCHEDULER_TOKEN: h.server.rootTokens.scheduler,
            },
          },
        );
        const loaded = JSON.parse(stdout) as string[];
        expect(loaded).toContain("provider/resources/job/destroy.ts");
        expect(loaded).toContain("provider/clients/scheduler/stop.ts");
        for (const heavy of [
          "provider/resources/job/index.ts",
          "provider/resources/job/inputs.ts",
          "provider/resources/definitions/job.ts",
          "provider/clients/scheduler/jobs.ts",
          "provider/schemas/scheduler/job.ts",
        ])
          expect(loaded).not.toContain(heavy);
        expect(await h.client.jobs.find("modules-delete")).toBeUndefined();
      } finally {
        await h.close();
      }
    },
  );
});
