/**
 * The scheduler without a token: like the scheduler's own CLI and API client, an unset token means no
 * token header (a cluster with ACLs off answers; one with ACLs answers 403), never a placeholder and never
 * a ConfigError before sending. `anonymous` (SCHEDULER_ANONYMOUS, stack config schedulerAnonymous) is the
 * explicit form: no token even when one is set. The secrets service still needs a token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../../devserver";
import { startServiceHost, type ServiceModule } from "../../../../devserver/core";
import { SchedulerClient } from "../../../../provider/clients/scheduler";
import { configure, connectionOptions } from "../../../../provider/config";
import { setStackConfig } from "../../../helpers/stack-config";
import { ConfigError, isApiError } from "../../../../provider/errors";
import { HttpCore } from "../../../../provider/http/core";
import { job } from "../../../../provider/resources/job";
import type { JobInputs } from "../../../../provider/resources/job/inputs";
import type { JobOutputs } from "../../../../provider/resources/job/state";
import { serviceJob } from "./fixture";

/** A scheduler listener that answers with the token headers it received. */
function headerEcho(): ServiceModule {
  return {
    name: "scheduler",
    routes(r) {
      r.get("/v1/headers", (req) => ({
        json: { spec: req.headers["x-svc-token"] ?? null, real: req.headers["x-nomad-token"] ?? null },
      }));
    },
  };
}

let echo: DevServer;
let open: DevServer; // ACLs off, like a `nomad agent -dev` without an acl block
let locked: DevServer; // ACLs on (the devserver's default)
beforeAll(async () => {
  echo = await startServiceHost({ services: [headerEcho()], acl: false });
  open = await startDevServer({ acl: false, schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  locked = await startDevServer();
});
afterAll(async () => {
  setStackConfig({});
  await Promise.all([echo?.close(), open?.close(), locked?.close()]);
});

const headersSeen = async (core: HttpCore) =>
  (await core.request({ operation: "echo", method: "GET", path: "/v1/headers" })).value;

describe("an unset scheduler token", () => {
  it("sends no token header at all, in either header style", async () => {
    expect(await headersSeen(new HttpCore("scheduler", { address: echo.urls.scheduler, env: {} }))).toEqual({
      spec: null,
      real: null,
    });
    expect(
      await headersSeen(new HttpCore("scheduler", { address: echo.urls.scheduler, env: {}, headerStyle: "real" })),
    ).toEqual({ spec: null, real: null });
    expect(new HttpCore("scheduler", { address: echo.urls.scheduler, env: {} }).authHeaders("x")).toEqual({});
  });

  it("sends the token when one is set, and none with anonymous even when one is set", async () => {
    expect(
      await headersSeen(new HttpCore("scheduler", { address: echo.urls.scheduler, env: { SCHEDULER_TOKEN: "t-1" } })),
    ).toEqual({ spec: "t-1", real: null });
    const anon = new HttpCore("scheduler", {
      address: echo.urls.scheduler,
      env: { SCHEDULER_TOKEN: "t-1", SCHEDULER_ANONYMOUS: "1" },
    });
    expect(await headersSeen(anon)).toEqual({ spec: null, real: null });
    expect(
      await headersSeen(
        new HttpCore("scheduler", { address: echo.urls.scheduler, token: "t-2", anonymous: true, env: {} }),
      ),
    ).toEqual({ spec: null, real: null });
  });

  it("registers, plans, reads and stops a job on a scheduler with ACLs off", async () => {
    const client = new SchedulerClient({ address: open.urls.scheduler, env: {} });
    const { value: reg } = await client.jobs.register({ Job: serviceJob("open-1") });
    expect(reg.EvalID).toBeTruthy();
    expect((await client.jobs.plan("open-1", { Job: serviceJob("open-1"), Diff: true })).value.Diff?.Type).toBe("None");
    expect((await client.jobs.info("open-1")).value.Version).toBe(0);
    await client.jobs.deregister("open-1", { purge: true });
    expect(await client.jobs.find("open-1")).toBeUndefined();
  });

  it("reaches a scheduler with ACLs as a request without a token, answered 403, not as a ConfigError", async () => {
    const client = new SchedulerClient({ address: locked.urls.scheduler, env: {}, retry: { maxAttempts: 1 } });
    const before = locked.requestLog.length;
    const e = await client.jobs.info("anything").then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(e).not.toBeInstanceOf(ConfigError);
    expect(isApiError(e, "permission_denied")).toBe(true);
    expect((e as Error).message).toMatch(/SCHEDULER_TOKEN/);
    expect((e as Error).message).not.toMatch(/token is not set/);
    expect(locked.requestLog.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      "GET /v1/job/anything 403",
    ]);
  });

  it("runs a job action over the WebSocket handshake with an empty auth frame", async () => {
    const client = new SchedulerClient({ address: open.urls.scheduler, env: {} });
    const base = serviceJob("open-act");
    const tg = base.TaskGroups![0]!;
    const task = tg.Tasks![0]!;
    await client.jobs.register({
      Job: {
        ...base,
        TaskGroups: [{ ...tg, Tasks: [{ ...task, Actions: [{ Name: "hi", Command: "/bin/echo", Args: ["hi"] }] }] }],
      },
    });
    let allocId: string | undefined;
    for (let i = 0; i < 200 && allocId === undefined; i++) {
      allocId =
        (await client.records.allocations("open-act")).value.find((a) => a.ClientStatus === "running")?.ID ?? undefined;
      if (allocId === undefined) await new Promise((r) => setTimeout(r, 10));
    }
    const out = await client.actions.run("open-act", { action: "hi", allocId: allocId ?? "", task: "app" });
    expect(out.stdout.toString("utf8")).toContain("hi");
  });

  it("still fails before sending for the secrets service, which always needs a token", async () => {
    const before = open.requestLog.length;
    const core = new HttpCore("secrets", { address: open.urls.secrets, env: {} });
    await expect(
      core.request({ operation: "read mounts", method: "GET", path: "/v1/sys/auth" }),
    ).rejects.toBeInstanceOf(ConfigError);
    expect(open.requestLog.length).toBe(before);
  });
});

describe("stack config without schedulerToken", () => {
  it("leaves the token unset (no placeholder), and schedulerAnonymous still means no token", async () => {
    const config = (values: Record<string, string>) => ({ get: (k: string) => values[k] });
    await configure({ config: config({ "pulumi-secrets-scheduler:schedulerAddress": open.urls.scheduler }) });
    expect(connectionOptions("scheduler")).toEqual({ optionsFrom: "stack-config", address: open.urls.scheduler });
    await configure({
      config: config({
        "pulumi-secrets-scheduler:schedulerToken": "t",
        "pulumi-secrets-scheduler:schedulerAnonymous": "true",
      }),
    });
    expect(connectionOptions("scheduler")).toMatchObject({ token: "t", anonymous: true });
    expect(
      new HttpCore("scheduler", {
        ...connectionOptions("scheduler"),
        address: echo.urls.scheduler,
        env: {},
      }).authHeaders("x"),
    ).toEqual({});
  });

  it("lets the Job resource create, diff and delete a job on a scheduler with ACLs off", async () => {
    setStackConfig({ schedulerAddress: open.urls.scheduler });
    const env = process.env;
    process.env = { ...env, SCHEDULER_TOKEN: "", SCHEDULER_ANONYMOUS: "" };
    try {
      const spec = `job "open-res" {\n  datacenters = ["dc1"]\n  group "g" {\n    task "t" {\n      driver = "docker"\n      config { image = "app:1" }\n    }\n  }\n}\n`;
      const checked = await job.check({}, { jobspec: spec });
      expect(checked.failures ?? []).toEqual([]);
      const inputs = checked.inputs as JobInputs;
      const created = await job.create(inputs);
      expect(created.id).toBe("open-res@default");
      const outs = created.outs as JobOutputs;
      const d = await job.diff(created.id, outs, inputs);
      expect(d.changes).toBe(false);
      await job.delete(created.id, outs);
      const stopped = await new SchedulerClient({ address: open.urls.scheduler, env: {} }).jobs.info("open-res");
      expect(stopped.value.Stop).toBe(true);
    } finally {
      process.env = env;
    }
  });
});
