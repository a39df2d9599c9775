/**
 * Conformance of the action WebSocket through the client: list actions, run one with the handshake auth
 * frame (and with the token header instead), stream and decode stdout, the close and exit frames, resize
 * frames, and a denial for a token without namespace:alloc-exec. Runs against the devserver by default and
 * against a real cluster with CONFORMANCE_TARGET=env (which needs a client node in dc1 that runs the
 * fixture and allows exec); the raw upgrade check and the minted-token denial skip there, and every test
 * skips on a scheduler older than 1.7, which has no job actions.
 */
import { createHash } from "node:crypto";
import * as http from "node:http";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { FEATURE_RELEASES, type ActionEvent } from "../../provider/clients/scheduler";
import { isApiError } from "../../provider/errors";
import type { Job } from "../../provider/schemas/scheduler";
import { schedulerSide, serviceJob, until, type SchedulerSide } from "./scheduler-fixture";
import { devserverOr, openTarget, type ConformanceTarget } from "./target";

let target: ConformanceTarget;
let f: SchedulerSide;
let act1: string;
let allocId: string;
let noActions: string | undefined;

function jobWithAction(id: string): Job {
  const job = serviceJob(id);
  const tg = job.TaskGroups![0]!;
  const task = tg.Tasks![0]!;
  return {
    ...job,
    TaskGroups: [
      {
        ...tg,
        Tasks: [{ ...task, Actions: [{ Name: "greet", Command: "/bin/echo", Args: ["hello", "from", "action"] }] }],
      },
    ],
  };
}

beforeAll(async () => {
  target = await openTarget();
  f = schedulerSide(target);
  act1 = target.name("act-1");
  await f.register({ Job: jobWithAction(act1) });
  allocId = await until(async () => {
    const { value } = await f.client.records.allocations(act1);
    return value.find((a) => a.ClientStatus === "running")?.ID ?? undefined;
  }, "a running allocation");
  // The job exists, so "not found" from its actions list means the scheduler has no job actions at all.
  await f.client.actions.list(act1).catch((e: unknown) => {
    if (!isApiError(e, "not_found")) throw e;
    noActions = `skipped on this older scheduler: job actions need a scheduler of release ${FEATURE_RELEASES.jobActions} or newer (GET /v1/job/:id/actions answered 404 for a job that exists)`;
  });
});

/** Skips a test when the scheduler has no job actions. */
function needActions(t: Pick<TestContext, "skip">): void {
  if (noActions !== undefined) t.skip(noActions);
}
afterAll(() => target?.close());

describe("the action WebSocket upgrade", () => {
  it("answers the RFC 6455 Sec-WebSocket-Accept hash (undici's WebSocket fails the connection otherwise)", async (t) => {
    const dev = devserverOr(t, target, "sends a raw plain-HTTP upgrade to the devserver's own listener");
    const key = "dGhlIHNhbXBsZSBub25jZQ==";
    const expected = createHash("sha1")
      .update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
      .digest("base64");
    expect(expected).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="); // the RFC's own example
    const u = new URL(dev.urls.scheduler);
    const accept = await new Promise<string | undefined>((resolve, reject) => {
      const req = http.request({
        host: u.hostname,
        port: u.port,
        path: `/v1/job/${act1}/action?action=greet&alloc_id=${allocId}&task=app&ws_handshake=true&namespace=default`,
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": key,
        },
      });
      req.on("upgrade", (res, socket) => {
        socket.destroy();
        resolve(res.headers["sec-websocket-accept"]);
      });
      req.on("response", (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
      req.on("error", reject);
      req.end();
    });
    expect(accept).toBe(expected);
  });
});

describe("JobActions", () => {
  it("lists the job's actions with their group and task", async (t) => {
    needActions(t);
    const { value } = await f.client.actions.list(act1);
    expect(value).toEqual([
      expect.objectContaining({
        Name: "greet",
        Command: "/bin/echo",
        Args: ["hello", "from", "action"],
        TaskGroupName: "web",
        TaskName: "app",
      }),
    ]);
  });

  it("runs an action with the handshake auth frame and decodes its stdout", async (t) => {
    needActions(t);
    const out = await f.client.actions.run(act1, { action: "greet", allocId, task: "app" });
    expect(out.stdout.length).toBeGreaterThan(0);
    expect(out.stdout.toString("utf8")).toContain("hello from action");
    expect(out.result).toBeDefined();
  });

  it("streams events in order: stdout data, then close and exit", async (t) => {
    needActions(t);
    const session = await f.client.actions.open(act1, {
      action: "greet",
      allocId,
      task: "app",
      tty: true,
      ttySize: { height: 24, width: 80 },
    });
    session.resize({ height: 40, width: 120 });
    const events: ActionEvent[] = [];
    for await (const ev of session) events.push(ev);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("stdout");
    expect(types).toContain("exit");
    expect(types.indexOf("exit")).toBe(types.length - 1);
    const first = events[0];
    expect(first?.type === "stdout" && Buffer.isBuffer(first.data)).toBe(true);
  });

  it("runs with the token in the upgrade header when wsHandshake is off", async (t) => {
    needActions(t);
    const out = await f.client.actions.run(act1, { action: "greet", allocId, task: "app", wsHandshake: false });
    expect(out.stdout.toString("utf8")).toContain("hello from action");
  });

  it("fails with a clear error for a token without namespace:alloc-exec, never showing the token", async (t) => {
    needActions(t);
    const dev = devserverOr(t, target, "mints a token without namespace:alloc-exec");
    const token = dev.createToken("scheduler", { capabilities: ["namespace:read-job"] });
    const e = await f
      .clientWith({ token })
      .actions.run(act1, { action: "greet", allocId, task: "app" })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    // With ws_handshake the token arrives in the first frame, so the denial comes back as a close frame.
    expect(isApiError(e, "permission_denied")).toBe(true);
    expect(String((e as Error).message)).toMatch(new RegExp(`^run job action: GET /v1/job/${act1}/action`));
    expect(String((e as Error).message)).not.toContain(token);
  });
});
