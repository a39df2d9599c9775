/**
 * Program tests of the examples: each example runs under `pulumi.runtime.setMocks` in a plain Node child,
 * in a temporary copy of its directory with the packed library installed (as `npm run example` and a user
 * see it), and must declare the resources its README and comments claim, wired the way they claim.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer, type StartedDevServer } from "../../devserver";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { SecretsClient } from "../../provider/clients/secrets";
import { runChild } from "../engine/harness/child";
import { scrubbedEnv, secretValue } from "../engine/harness/context";
import {
  ProviderHost,
  SECRET_SIG,
  SECRET_SIG_KEY,
  plainOf,
  urnOf,
  type HostCallError,
  type Props,
} from "../engine/harness/host";
import { REPO_ROOT, packLibrary } from "../engine/harness/pack";
import { createProject, type EngineProject } from "../engine/harness/project";

interface Registration {
  type: string;
  name: string;
  inputs: Props;
}

interface ExampleRun {
  project: string;
  registrations: Registration[];
  outputs: Record<string, unknown>;
}

const TYPE = "pulumi-nodejs:dynamic/pulumi-secrets-scheduler:";

let workDir = "";
const projects = new Map<string, EngineProject>();
let dev: DevServer | undefined;
let host: ProviderHost | undefined;

beforeAll(async () => {
  workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-examples-")));
  const pack = await packLibrary(workDir, "examples");
  for (const name of ["quickstart", "rollback", "json-job", "batch"]) {
    projects.set(
      name,
      await createProject({
        tarball: pack.tarball,
        dir: join(workDir, name),
        install: "link",
        template: join(REPO_ROOT, "examples", name),
      }),
    );
  }
  dev = await startDevServer();
  const first = projects.get("quickstart");
  if (first === undefined) throw new Error("quickstart was not prepared");
  host = await ProviderHost.start(first, scrubbedEnv(join(workDir, "cache-home")));
  await host.configure({
    "pulumi-secrets-scheduler:secretsAddress": dev.urls.secrets,
    "pulumi-secrets-scheduler:secretsToken": secretValue(dev.rootTokens.secrets),
    "pulumi-secrets-scheduler:schedulerAddress": dev.urls.scheduler,
    "pulumi-secrets-scheduler:schedulerToken": secretValue(dev.rootTokens.scheduler),
  });
}, 180_000);

afterAll(async () => {
  await host?.close();
  await dev?.close();
  if (workDir !== "") rmSync(workDir, { recursive: true, force: true });
});

async function runExample(name: string, config: Record<string, string>): Promise<ExampleRun> {
  const project = projects.get(name);
  if (project === undefined) throw new Error(`example ${name} was not prepared`);
  const { value } = await runChild<ExampleRun>(project, "example.cjs", [], {
    env: { EXAMPLE_CONFIG: JSON.stringify(config) },
  });
  return value;
}

function byName(run: ExampleRun, type: string, name: string): Registration {
  const r = run.registrations.find((x) => x.type === TYPE + type && x.name === name);
  if (r === undefined)
    throw new Error(`no ${type} "${name}" among ${run.registrations.map((x) => `${x.type}/${x.name}`).join(", ")}`);
  return r;
}

function count(run: ExampleRun, type: string): number {
  return run.registrations.filter((x) => x.type === TYPE + type).length;
}

describe("examples/quickstart", () => {
  it("enables and configures the method, adds two roles, a service job from HCL and a version tag", async () => {
    const run = await runExample("quickstart", { clientSecret: "quickstart-test-secret", webCount: "3" });
    expect(count(run, "AuthMount")).toBe(1);
    expect(count(run, "AuthConfig")).toBe(1);
    expect(count(run, "AuthRole")).toBe(2);
    expect(count(run, "Job")).toBe(1);
    expect(count(run, "JobVersionTag")).toBe(1);

    const mount = byName(run, "AuthMount", "cloud");
    expect(mount.inputs.path).toBe("cloud");
    const cfg = byName(run, "AuthConfig", "cloud");
    expect(cfg.inputs.mount).toBe("cloud");
    // The client secret comes from stack config and reaches the engine as a secret.
    expect(cfg.inputs.clientSecret).toEqual({ [SECRET_SIG_KEY]: SECRET_SIG, value: "quickstart-test-secret" });
    expect(byName(run, "AuthRole", "web").inputs).toMatchObject({
      mount: "cloud",
      name: "web",
      tokenPolicies: ["web"],
    });
    expect(byName(run, "AuthRole", "ci").inputs).toMatchObject({ mount: "cloud", name: "ci" });

    const web = byName(run, "Job", "web");
    expect(String(web.inputs.jobspec)).toMatch(/job\s+"web"\s*\{/);
    expect(String(web.inputs.jobspec)).toMatch(/type\s*=\s*"service"/);
    expect(web.inputs.variables).toEqual({ count: 3 });
    expect(byName(run, "JobVersionTag", "web-launch").inputs).toMatchObject({ jobId: "web", name: "launch" });
    expect(run.outputs.webJob).toBe("web");
  });

  it("fails without the client secret in stack config", async () => {
    await expect(runExample("quickstart", {})).rejects.toThrow(/clientSecret/);
  });
});

describe("examples/rollback", () => {
  it("deploys release 1 without the fail switch and tags it v1", async () => {
    const run = await runExample("rollback", {});
    const api = byName(run, "Job", "api");
    expect(api.inputs.variables).toEqual({ release: "1", fail_deployment: "false" });
    expect(api.inputs.onDeploymentFailure).toEqual({ revertTo: "v1" });
    expect(api.inputs.promotion).toBe("auto");
    expect(String(api.inputs.jobspec)).toMatch(/canary\s*=\s*1/);
    expect(String(api.inputs.jobspec)).toContain('"devserver.fail_deployment" = var.fail_deployment');
    expect(byName(run, "JobVersionTag", "v1").inputs).toMatchObject({ jobId: "api", name: "v1" });
  });

  it("turns the devserver's fail switch on for release 2, and keeps the tag's inputs", async () => {
    const one = await runExample("rollback", { release: "1" });
    const two = await runExample("rollback", { release: "2" });
    expect(byName(two, "Job", "api").inputs.variables).toEqual({ release: "2", fail_deployment: "true" });
    // An unchanged tag: release 2 must not move or replace it.
    expect(byName(two, "JobVersionTag", "v1").inputs).toEqual(byName(one, "JobVersionTag", "v1").inputs);
  });
});

describe("examples/json-job", () => {
  it("declares a service job and a parameterized batch job from typed objects", async () => {
    const run = await runExample("json-job", { cacheCount: "2" });
    expect(count(run, "Job")).toBe(2);
    const cache = byName(run, "Job", "cache").inputs.job as Props;
    expect(cache).toMatchObject({ ID: "cache", Type: "service" });
    expect((cache.TaskGroups as Props[])[0]).toMatchObject({ Name: "cache", Count: 2 });
    const report = byName(run, "Job", "report").inputs.job as Props;
    expect(report).toMatchObject({ ID: "report", Type: "batch", ParameterizedJob: { MetaRequired: ["customer"] } });
    expect(byName(run, "Job", "cache").inputs.jobspec).toBeUndefined();
  });
});

describe("examples/batch", () => {
  it("declares a batch report waited on, run once per dataset, and an autoscaled service", async () => {
    const run = await runExample("batch", { dataset: "2026-11-24" });
    expect(count(run, "Job")).toBe(2);
    const report = byName(run, "Job", "report").inputs;
    expect(report).toMatchObject({
      waitForCompletion: true,
      runOnce: true,
      triggers: { dataset: "2026-11-24" },
      variables: { fail: "false" },
    });
    expect(String(report.jobspec)).toMatch(/type\s*=\s*"batch"/);
    expect(byName(run, "Job", "web").inputs).toMatchObject({
      preserveCounts: true,
      variables: { image: "nginx:1.25" },
    });
  });

  it("needs a dataset in stack config", async () => {
    await expect(runExample("batch", {})).rejects.toThrow(/dataset/);
  });
});

// Without the Pulumi CLI, the examples still run against the devserver: the inputs each program registers
// (under mocks, after output chaining) go through Pulumi's own provider host as `up` sends them, in
// program order, and `destroy` deletes them in reverse. The engine strips secret wrappers before calling a
// dynamic provider (it does not accept secrets), so this does too.

/** One resource of a simulated stack. */
interface Live {
  type: string;
  name: string;
  id: string;
  inputs: Props;
  outs: Props;
}

function hostOf(): ProviderHost {
  if (host === undefined) throw new Error("host not started");
  return host;
}

/** Applies a program run like `pulumi up`: creates new resources, updates changed ones; returns what changed. */
async function up(run: ExampleRun, stack: Map<string, Live>): Promise<string[]> {
  const h = hostOf();
  const changed: string[] = [];
  for (const r of run.registrations) {
    const type = r.type.slice(TYPE.length);
    const key = `${type}/${r.name}`;
    const urn = urnOf(type, r.name);
    const news = plainOf(r.inputs) as Props;
    const old = stack.get(key);
    const checked = await h.check(urn, old?.inputs ?? {}, news);
    expect(checked.failures, key).toEqual([]);
    if (old === undefined) {
      const created = await h.create(urn, checked.inputs);
      stack.set(key, { type, name: r.name, id: created.id, inputs: checked.inputs, outs: created.properties });
      changed.push(`create ${key}`);
      continue;
    }
    const diff = await h.diff(urn, old.id, old.outs, checked.inputs);
    if (diff.changes === "none") continue;
    expect(diff.replaces, key).toEqual([]);
    const outs = await h.update(urn, old.id, old.outs, checked.inputs).catch((e: unknown) => {
      // As the engine does with an init error: keep the state the provider reported, then fail.
      const init = (e as HostCallError).initFailed;
      if (init !== undefined) stack.set(key, { ...old, id: init.id, inputs: checked.inputs, outs: init.properties });
      throw e;
    });
    stack.set(key, { ...old, inputs: checked.inputs, outs });
    changed.push(`update ${key}`);
  }
  return changed;
}

/** Refreshes every resource like `pulumi refresh`, then diffs against the program; returns what differs. */
async function refreshDrift(run: ExampleRun, stack: Map<string, Live>): Promise<string[]> {
  const h = hostOf();
  const drift: string[] = [];
  for (const r of run.registrations) {
    const type = r.type.slice(TYPE.length);
    const live = stack.get(`${type}/${r.name}`);
    if (live === undefined) throw new Error(`${type}/${r.name} is not in the stack`);
    const urn = urnOf(type, r.name);
    const read = await h.read(urn, live.id, live.outs, live.inputs);
    expect(read.id, `${type}/${r.name} still exists`).toBe(live.id);
    const checked = await h.check(urn, read.inputs ?? live.inputs, plainOf(r.inputs) as Props);
    const diff = await h.diff(urn, live.id, read.properties, checked.inputs);
    if (diff.changes !== "none") drift.push(`${type}/${r.name}`);
    stack.set(`${type}/${r.name}`, { ...live, inputs: read.inputs ?? live.inputs, outs: read.properties });
  }
  return drift;
}

/** Deletes everything like `pulumi destroy`, newest first. */
async function destroy(stack: Map<string, Live>): Promise<void> {
  for (const live of [...stack.values()].reverse())
    await hostOf().delete(urnOf(live.type, live.name), live.id, live.outs);
  stack.clear();
}

function clients(): { secrets: SecretsClient; scheduler: SchedulerClient } {
  if (dev === undefined) throw new Error("devserver not started");
  return {
    secrets: new SecretsClient({ address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {} }),
    scheduler: new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler, env: {} }),
  };
}

describe("examples against the devserver through the provider host (no CLI)", () => {
  it("quickstart: up, an edit, refresh without drift, destroy", async () => {
    const { secrets, scheduler } = clients();
    const stack = new Map<string, Live>();
    const config = { clientSecret: "quickstart-test-secret", webCount: "2" };
    const before = hostOf().output.length;
    const created = await up(await runExample("quickstart", config), stack);
    expect(created).toHaveLength(6);
    // The quickstart teaches by example: it must not warn about its own resources (a role nobody can log in with).
    expect(hostOf().output.slice(before)).not.toMatch(/warning:/);
    expect((await secrets.mounts.find("cloud"))?.type).toBe("cloud");
    expect(await secrets.config.read("cloud")).toBeDefined();
    expect((await secrets.roles.list("cloud")).sort()).toEqual(["ci", "web"]);
    const job = (await scheduler.jobs.info("web")).value;
    expect(job.TaskGroups?.[0]?.Count).toBe(2);
    expect(stack.get("JobVersionTag/web-launch")?.outs.version).toBe(0);

    const edited = await runExample("quickstart", { ...config, webCount: "3" });
    const shown = hostOf().output.length;
    expect(await up(edited, stack)).toEqual(["update Job/web"]);
    // The edit's Diff prints the scheduler's plan where `pulumi preview` shows provider output.
    const plan = hostOf().output.slice(shown);
    expect(plan).toContain('Scheduler plan for job "web"');
    expect(plan).toMatch(/Count.*2.*3/);
    expect((await scheduler.jobs.info("web")).value.TaskGroups?.[0]?.Count).toBe(3);
    expect(await refreshDrift(edited, stack)).toEqual([]);

    await destroy(stack);
    expect(await secrets.mounts.find("cloud")).toBeUndefined();
    // The quickstart does not purge: a destroyed job is stopped and stays visible until collected.
    expect((await scheduler.jobs.find("web"))?.value.Stop).toBe(true);
  });

  it("rollback: release 2's failed deployment is reverted to release 1, and the tag stays on release 1", async () => {
    const { scheduler } = clients();
    const stack = new Map<string, Live>();
    await up(await runExample("rollback", { release: "1" }), stack);
    const tagged = stack.get("JobVersionTag/v1")?.outs.version;
    expect((await scheduler.jobs.info("api")).value.Meta?.release).toBe("1");

    const err = await up(await runExample("rollback", { release: "2" }), stack).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err, "the up of release 2 must fail").toBeInstanceOf(Error);
    const after = (await scheduler.jobs.info("api")).value;
    expect(err?.message).toMatch(/version 1 failed/);
    expect(err?.message).toMatch(/reverted the job to version 0/);
    // An init error: the engine keeps the id and the state the provider reports (what runs now).
    expect((err as HostCallError | undefined)?.initFailed?.properties.version).toBe(after.Version);
    // Reverting registers release 1 again, as a newer version.
    expect(after.Meta?.release).toBe("1");
    expect(after.Version).toBeGreaterThan(1);
    const versions = (await scheduler.versions.versions("api")).value.Versions ?? [];
    const tag = versions.find((v) => (v as { VersionTag?: { Name?: string } | null }).VersionTag?.Name === "v1");
    expect(tag?.Version).toBe(tagged);
    await destroy(stack);
  });

  it("batch: up waits for the report; a scale between two ups; the GC keeps the report done; a new dataset runs it again", async () => {
    const { scheduler } = clients();
    const control = (dev as StartedDevServer | undefined)?.schedulerControl;
    if (control === undefined) throw new Error("no scheduler control");
    const stack = new Map<string, Live>();
    const config = { dataset: "2026-11-24", image: "nginx:1.25" };
    await up(await runExample("batch", config), stack);
    expect(stack.get("Job/report")?.outs.status).toBe("dead");
    expect((await scheduler.records.allocations("nightly-report")).value.map((a) => a.ClientStatus)).toEqual([
      "complete",
    ]);

    await scheduler.jobs.scale("web", { Target: { Group: "web" }, Count: 3, Message: "autoscaler" });
    await control.idle();
    const shown = hostOf().output.length;
    expect(await up(await runExample("batch", { ...config, image: "nginx:1.26" }), stack)).toEqual(["update Job/web"]);
    expect(hostOf().output.slice(shown)).toContain('Job "web" was scaled outside Pulumi');
    const web = (await scheduler.jobs.info("web")).value;
    expect(web.TaskGroups?.[0]?.Count).toBe(3);

    control.gc();
    expect(await scheduler.jobs.find("nightly-report")).toBeUndefined();
    expect(await refreshDrift(await runExample("batch", { ...config, image: "nginx:1.26" }), stack)).toEqual([]);
    expect(stack.get("Job/report")?.outs.collected).toBe(true);
    expect(await up(await runExample("batch", { ...config, image: "nginx:1.26" }), stack)).toEqual([]);
    expect(await up(await runExample("batch", { dataset: "2026-11-25", image: "nginx:1.26" }), stack)).toEqual([
      "update Job/report",
    ]);
    expect((await scheduler.records.allocations("nightly-report")).value.map((a) => a.ClientStatus)).toEqual([
      "complete",
    ]);
    await destroy(stack);
  });

  it("json-job: a service job and a parameterized batch job register and are removed", async () => {
    const { scheduler } = clients();
    const stack = new Map<string, Live>();
    await up(await runExample("json-job", { cacheCount: "1" }), stack);
    expect((await scheduler.jobs.info("cache")).value.Type).toBe("service");
    const report = (await scheduler.jobs.info("report")).value;
    expect(report.ParameterizedJob?.MetaRequired).toEqual(["customer"]);
    await destroy(stack);
    expect(await scheduler.jobs.find("report")).toBeUndefined();
  });
});
