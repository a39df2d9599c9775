/**
 * The action WebSocket through the client against the devserver: list actions, run one with the
 * handshake auth frame (and with the token header instead), stream and decode stdout, the close and exit
 * frames, resize frames, and a denial for a token without namespace:alloc-exec.
 */
import { createHash } from "node:crypto";
import * as http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ActionEvent } from "../../../provider/clients/scheduler";
import { isApiError } from "../../../provider/errors";
import type { Job } from "../../../provider/schemas/scheduler";
import { serviceJob, startScheduler, until, type SchedulerFixture } from "./client-fixture";

let f: SchedulerFixture;
let allocId: string;

function jobWithAction(id: string): Job {
  const job = serviceJob(id);
  const tg = job.TaskGroups![0]!;
  const task = tg.Tasks![0]!;
  return { ...job, TaskGroups: [{ ...tg, Tasks: [{ ...task, Actions: [{ Name: "greet", Command: "/bin/echo", Args: ["hello", "from", "action"] }] }] }] };
}

beforeAll(async () => {
  f = await startScheduler({ acl: true });
  await f.client.jobs.register({ Job: jobWithAction("act-1") });
  allocId = await until(async () => {
    const { value } = await f.client.records.allocations("act-1");
    return value.find((a) => a.ClientStatus === "running")?.ID ?? undefined;
  }, "a running allocation");
});
afterAll(async () => {
  await f.server.close();
});

describe("the action WebSocket upgrade", () => {
  it("answers the RFC 6455 Sec-WebSocket-Accept hash (undici's WebSocket fails the connection otherwise)", async () => {
    const key = "dGhlIHNhbXBsZSBub25jZQ==";
    const expected = createHash("sha1").update(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest("base64");
    expect(expected).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="); // the RFC's own example
    const u = new URL(f.server.urls.scheduler);
    const accept = await new Promise<string | undefined>((resolve, reject) => {
      const req = http.request({
        host: u.hostname,
        port: u.port,
        path: `/v1/job/act-1/action?action=greet&alloc_id=${allocId}&task=app&ws_handshake=true&namespace=default`,
        headers: { Connection: "Upgrade", Upgrade: "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": key },
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
  it("lists the job's actions with their group and task", async () => {
    const { value } = await f.client.actions.list("act-1");
    expect(value).toEqual([expect.objectContaining({ Name: "greet", Command: "/bin/echo", Args: ["hello", "from", "action"], TaskGroupName: "web", TaskName: "app" })]);
  });

  it("runs an action with the handshake auth frame and decodes its stdout", async () => {
    const out = await f.client.actions.run("act-1", { action: "greet", allocId, task: "app" });
    expect(out.stdout.length).toBeGreaterThan(0);
    expect(out.stdout.toString("utf8")).toContain("hello from action");
    expect(out.result).toBeDefined();
  });

  it("streams events in order: stdout data, then close and exit", async () => {
    const session = await f.client.actions.open("act-1", { action: "greet", allocId, task: "app", tty: true, ttySize: { height: 24, width: 80 } });
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

  it("runs with the token in the upgrade header when wsHandshake is off", async () => {
    const out = await f.client.actions.run("act-1", { action: "greet", allocId, task: "app", wsHandshake: false });
    expect(out.stdout.toString("utf8")).toContain("hello from action");
  });

  it("fails with a clear error for a token without namespace:alloc-exec, never showing the token", async () => {
    const token = f.server.createToken("scheduler", { capabilities: ["namespace:read-job"] });
    const e = await f
      .clientWith({ token })
      .actions.run("act-1", { action: "greet", allocId, task: "app" })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    // With ws_handshake the token arrives in the first frame, so the denial comes back as a close frame.
    expect(isApiError(e, "permission_denied")).toBe(true);
    expect(String((e as Error).message)).toMatch(/^run job action: GET \/v1\/job\/act-1\/action/);
    expect(String((e as Error).message)).not.toContain(token);
  });
});
