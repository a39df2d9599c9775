/**
 * The provider host loads a resource's code on its first call, and only what that resource uses: a stack
 * of Jobs does not load the secrets service's wire records or client (about 13 ms of CPU per command), and a
 * `destroy` of Jobs loads only their delete (about 10 ms less of a fresh host's first call), and a refresh of
 * unchanged Jobs (reads the job list answers, diffs that find the inputs' hash unchanged) loads only those.
 * Checked in Node's own module cache, in a plain Node process that compiles the sources in memory.
 */
import { execFile, execFileSync } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import type { StartedDevServer } from "../../devserver";
import { countRequests, createJob, refreshJob, startHarness } from "./resources/job/harness";

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

  it(
    "a refresh of unchanged Jobs loads neither the rest of the Job code nor the client's other areas, and sends one list",
    { timeout: 60_000 },
    async () => {
      const h = await startHarness();
      try {
        const made = [];
        for (const id of ["modules-read-a", "modules-read-b"])
          made.push(
            await createJob({
              job: { ID: id, TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker" }] }] },
              waitForDeployment: false,
            }),
          );
        // What state holds after a first refresh, once the scheduler placed the jobs (pending, then running).
        await (h.server as StartedDevServer).schedulerControl?.idle();
        for (const m of made) m.outs = (await refreshJob(m))!.outs;
        const from = h.server.requestLog.length;
        // In the child, as the engine calls them: each read returns exactly what state holds (nothing moved),
        // and the diff of those outputs against the stored inputs finds no change.
        const calls = made
          .map(
            (m) => `{
              const r = await p.read(${JSON.stringify(m.id)}, ${JSON.stringify(m.outs)});
              if (JSON.stringify(r.props) !== ${JSON.stringify(JSON.stringify(m.outs))}) throw new Error("read moved: " + JSON.stringify(r.props));
              const d = await p.diff(${JSON.stringify(m.id)}, r.props, ${JSON.stringify(m.inputs)});
              if (d.changes !== false) throw new Error("diff found a change: " + JSON.stringify(d));
            }`,
          )
          .join("\n");
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
        expect(loaded).toContain("provider/resources/job/refresh.ts");
        expect(loaded).toContain("provider/clients/scheduler/jobs.ts");
        for (const unused of [
          "provider/resources/job/index.ts",
          "provider/resources/job/apply.ts",
          "provider/resources/job/follow.ts",
          "provider/resources/job/text.ts",
          "provider/clients/scheduler/index.ts",
          "provider/clients/scheduler/actions.ts",
          "provider/clients/scheduler/action-ws.ts",
          "provider/clients/scheduler/deployments.ts",
          "provider/clients/scheduler/versions.ts",
          "provider/clients/scheduler/records.ts",
        ])
          expect(loaded).not.toContain(unused);
        // Both reads came from one job list, and the diffs sent nothing.
        expect(h.server.requestLog.length - from).toBe(1);
        expect(countRequests(h.server, "GET", "/v1/jobs", from)).toBe(1);
      } finally {
        await h.close();
      }
    },
  );
});
