/**
 * The scale benchmark's floor sends the requests the scheduler's API cannot do without, and nothing else: a
 * register per create (and per update), a purge per delete, one plan when a diff finds the image changed,
 * nothing on an unchanged diff (and it has no read, so nothing on refresh). Its program runs here with a
 * stand-in for @pulumi/pulumi that hands over the provider; the provider talks to a real devserver.
 */
import { createRequire } from "node:module";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../devserver";

const load = createRequire(__filename);
const bench = load("../../bench/scale.js") as { FLOOR: string; FLOOR_PROVIDER: string; JOB_DEF: string };

type Props = Record<string, unknown>;
interface FloorProvider {
  configure(req: { config: { get(key: string): string | undefined } }): Promise<void>;
  diff(id: string, olds: Props, news: Props): Promise<{ changes: boolean }>;
  create(inputs: Props): Promise<{ id: string; outs: Props }>;
  update(id: string, olds: Props, news: Props): Promise<{ outs: Props }>;
  delete(id: string, props: Props): Promise<void>;
  read?: unknown;
}

/** Evaluates a CommonJS module's text with `require` as given; returns its exports. */
function evaluate(text: string, require: (name: string) => unknown): unknown {
  const module = { exports: {} as unknown };
  runInNewContext(text, { module, exports: module.exports, require });
  return module.exports;
}

/**
 * Runs the floor's program for one resource, its provider module installed as the bench installs it, and
 * configures the provider with the stack config the bench sets; returns the provider and the inputs.
 */
async function floorOf(address: string, token: string): Promise<{ provider: FloorProvider; inputs: Props }> {
  let captured: { provider: FloorProvider; inputs: Props } | undefined;
  const config: Record<string, string> = { count: "1", image: "nginx:1.27", jobPrefix: "floor-t" };
  const pulumi = {
    getStack: () => "t",
    Config: class {
      require(k: string): string {
        const v = config[k];
        if (v === undefined) throw new Error(`missing config ${k}`);
        return v;
      }
      requireNumber(k: string): number {
        return Number(this.require(k));
      }
    },
    dynamic: {
      Resource: class {
        constructor(provider: FloorProvider, _name: string, inputs: Props) {
          captured = { provider, inputs };
        }
      },
    },
  };
  const jobDef = evaluate(bench.JOB_DEF, load);
  const floorProvider = evaluate(bench.FLOOR_PROVIDER, load);
  const modules: Record<string, unknown> = {
    "@pulumi/pulumi": pulumi,
    "./job-def": jobDef,
    "bench-floor": floorProvider,
  };
  evaluate(bench.FLOOR, (name) => modules[name] ?? load(name));
  if (captured === undefined) throw new Error("the floor declared no resource");
  // The engine hands the dynamic provider the whole stack config, keys by their full name.
  const stack: Record<string, string> = { "floor:address": address, "floor:token": token };
  await captured.provider.configure({ config: { get: (k) => stack[k] } });
  return captured;
}

let server: DevServer;
beforeAll(async () => {
  server = await startDevServer({ schedulerService: { evalDelayMs: 1, deploymentMs: 20 } });
});
afterAll(async () => {
  await server.close();
});

/** The requests the scheduler saw while `fn` ran, as "METHOD path". */
async function requestsOf(fn: () => Promise<unknown>): Promise<string[]> {
  server.resetLog();
  await fn();
  return server.requestLog.filter((e) => e.service === "scheduler").map((e) => `${e.method} ${e.path}`);
}

describe("the scale benchmark's floor", () => {
  it("registers on create and update, plans a changed diff, purges on delete, and sends nothing else", async () => {
    const { provider, inputs } = await floorOf(server.urls.scheduler, server.rootTokens.scheduler);
    expect(provider.read).toBeUndefined(); // a refresh sends nothing
    const job = inputs.job as { ID: string; TaskGroups: { Tasks: { Config: { image: string } }[] }[] };
    expect(job.ID).toBe("floor-t-0");

    let id = "";
    expect(
      await requestsOf(async () => {
        id = (await provider.create(inputs)).id;
      }),
    ).toEqual(["POST /v1/jobs"]);
    expect(id).toBe("floor-t-0");

    expect(await requestsOf(() => provider.diff(id, inputs, inputs))).toEqual([]);
    const changed = structuredClone(inputs) as typeof inputs & { job: typeof job };
    const task = changed.job.TaskGroups[0]?.Tasks[0];
    if (task === undefined) throw new Error("the floor's job has no task");
    task.Config.image = "nginx:1.28";
    let diff: { changes: boolean } | undefined;
    expect(
      await requestsOf(async () => {
        diff = await provider.diff(id, inputs, changed);
      }),
    ).toEqual([`POST /v1/job/${id}/plan`]);
    expect(diff).toEqual({ changes: true });

    expect(await requestsOf(() => provider.update(id, inputs, changed))).toEqual(["POST /v1/jobs"]);
    expect(await requestsOf(() => provider.delete(id, changed))).toEqual([`DELETE /v1/job/${id}`]);
    expect(server.requestLog.at(-1)?.query).toBe("purge=true");
  });

  it("fails on a request the scheduler refuses, instead of passing for a floor", async () => {
    const { provider, inputs } = await floorOf(server.urls.scheduler, "not-a-token");
    await expect(provider.create(inputs)).rejects.toThrow(/POST \/v1\/jobs: 403/);
  });
});
