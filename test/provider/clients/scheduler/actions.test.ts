/**
 * The action client never hangs: every session has a deadline (the `timeoutMs` option, else the
 * connection's), a refused upgrade fails at once, and each failure names the action, the allocation and the
 * task, says what the server last sent, and leaves no socket open. Against the devserver over loopback, with
 * its switches for a server that refuses the upgrade (`devserver.action_upgrade_status`) and an exec that
 * never answers (`devserver.action_silent`).
 */
import { createHash } from "node:crypto";
import * as net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type StartedDevServer } from "../../../../devserver";
import { SchedulerClient } from "../../../../provider/clients/scheduler";
import { ApiError, isApiError } from "../../../../provider/errors";
import type { ConnectionOptions } from "../../../../provider/http/settings";
import { serviceJob } from "./fixture";

let server: StartedDevServer;
const allocs: Record<string, string> = {};

const clientWith = (extra: ConnectionOptions = {}) =>
  new SchedulerClient({
    address: server.urls.scheduler,
    token: server.rootTokens.scheduler,
    env: {},
    retry: { maxAttempts: 1 },
    ...extra,
  });

/** A job whose task has the action `hi` (echo hi), with job meta `meta`; resolves to its running allocation. */
async function jobWithAction(id: string, meta: Record<string, string>): Promise<string> {
  const client = clientWith();
  const base = serviceJob(id, { Meta: meta });
  const tg = base.TaskGroups![0]!;
  const task = tg.Tasks![0]!;
  await client.jobs.register({
    Job: {
      ...base,
      TaskGroups: [{ ...tg, Tasks: [{ ...task, Actions: [{ Name: "hi", Command: "/bin/echo", Args: ["hi"] }] }] }],
    },
  });
  await server.schedulerControl!.idle();
  const running = (await client.records.allocations(id)).value.find((a) => a.ClientStatus === "running");
  expect(running?.ID, id).toBeTruthy();
  return running!.ID!;
}

/** Waits (bounded by the test's timeout, not measured) until `fn` holds. */
async function until(fn: () => boolean): Promise<void> {
  while (!fn()) await new Promise((r) => setTimeout(r, 10));
}

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(isApiError(e), String(e)).toBe(true);
  return e as ApiError;
}

beforeAll(async () => {
  server = await startDevServer({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  allocs.ok = await jobWithAction("act-ok", {});
  allocs.silent = await jobWithAction("act-silent", { "devserver.action_silent": "true" });
  allocs.refused = await jobWithAction("act-503", { "devserver.action_upgrade_status": "503" });
});
afterAll(async () => {
  await server?.close();
});

describe("job actions", () => {
  it("run to the end, and the server's socket closes after", async () => {
    const out = await clientWith().actions.run("act-ok", { action: "hi", allocId: allocs.ok!, task: "app" });
    expect(out.stdout.toString("utf8")).toBe("hi\n");
    expect(out.result).toEqual({});
    await until(() => server.schedulerControl!.openActions() === 0);
  });

  it("end at the explicit deadline when the exec never answers, naming the action and allocation, and close the socket", async () => {
    const session = await clientWith().actions.open("act-silent", {
      action: "hi",
      allocId: allocs.silent!,
      task: "app",
      timeoutMs: 300,
    });
    // Connected and authenticated: the server holds the socket open and sends nothing.
    expect(server.schedulerControl!.openActions()).toBe(1);
    const e = await failure(session.collect());
    expect(e.code).toBe("timeout");
    expect(e.message).toContain(`action "hi" in allocation ${allocs.silent}, task "app"`);
    expect(e.message).toMatch(/^run job action: GET \/v1\/job\/act-silent\/action failed\. /);
    expect(e.message).toContain(`task "app": the action did not finish within 300 ms`);
    expect(e.message).toContain("the server last sent the upgrade's 101 and no frame after it");
    // The server never closes a silent action on its own: the client closed it.
    await until(() => server.schedulerControl!.openActions() === 0);
  });

  it("take the connection's timeoutMs as the deadline of run(), with the token in a header too", async () => {
    const e = await failure(
      clientWith({ timeoutMs: 250 }).actions.run("act-silent", {
        action: "hi",
        allocId: allocs.silent!,
        task: "app",
        wsHandshake: false,
      }),
    );
    expect(e.code).toBe("timeout");
    expect(e.message).toContain("within 250 ms");
    expect(e.message).toContain(`allocation ${allocs.silent}`);
    await until(() => server.schedulerControl!.openActions() === 0);
  });

  it("fail at once when the server answers the upgrade with a 5xx, with its status", async () => {
    // A deadline far beyond the test's own timeout: only the refusal can end this call.
    const e = await failure(
      clientWith().actions.run("act-503", { action: "hi", allocId: allocs.refused!, task: "app", timeoutMs: 600_000 }),
    );
    expect(e.code).toBe("unavailable");
    expect(e.status).toBe(503);
    expect(e.message).toContain(`action "hi" in allocation ${allocs.refused}, task "app"`);
    expect(e.message).toContain("returned 503");
    expect(e.message).toContain("the scheduler refused the WebSocket upgrade");
    expect(e.message).toContain("the server last sent 503 Service Unavailable to the upgrade");
    expect(server.schedulerControl!.openActions()).toBe(0);
  });

  it("refuse a deadline that is not a positive number before connecting", async () => {
    const before = server.stats().scheduler.requests;
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY])
      await expect(
        clientWith().actions.run("act-ok", { action: "hi", allocId: allocs.ok!, task: "app", timeoutMs }),
      ).rejects.toThrow(/timeoutMs must be a positive number/);
    expect(server.stats().scheduler.requests).toBe(before);
  });
});

describe("a server that stops answering", () => {
  /**
   * A loopback server that reads whatever comes and, with `upgrade`, answers the WebSocket upgrade with 101
   * and then nothing: no frame, not even the answer to a close frame. Counts the sockets still open.
   */
  async function mute(upgrade: boolean) {
    const open = new Set<net.Socket>();
    let accepted = 0;
    const server = net.createServer((socket) => {
      accepted += 1;
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => undefined);
      let head = "";
      socket.on("data", (chunk: Buffer) => {
        if (!upgrade || head.includes("\r\n\r\n")) return;
        head += chunk.toString("latin1");
        const key = /sec-websocket-key: *(\S+)/i.exec(head)?.[1];
        if (!head.includes("\r\n\r\n") || key === undefined) return;
        const accept = createHash("sha1").update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest("base64");
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as net.AddressInfo).port;
    const client = new SchedulerClient({ address: `http://127.0.0.1:${port}`, token: "t", env: {} });
    return { client, open, accepted: () => accepted, close: () => server.close() };
  }

  it("ends the call at the deadline when the upgrade gets no answer, and closes the connection", async () => {
    const m = await mute(false);
    try {
      const e = await failure(
        m.client.actions.run("web", { action: "hi", allocId: "a1b2c3d4", task: "app", timeoutMs: 300 }),
      );
      expect(e.code).toBe("timeout");
      expect(e.message).toContain(`action "hi" in allocation a1b2c3d4, task "app"`);
      expect(e.message).toContain("no WebSocket connection within 300 ms");
      expect(e.message).toContain("the server last sent nothing (no answer to the upgrade)");
      expect(m.accepted()).toBe(1);
      await until(() => m.open.size === 0);
    } finally {
      m.close();
    }
  });

  it("ends the call at the deadline when no frame follows the 101, and closes a socket the server keeps", async () => {
    const m = await mute(true);
    try {
      const e = await failure(
        m.client.actions.run("web", { action: "hi", allocId: "a1b2c3d4", task: "app", timeoutMs: 300 }),
      );
      expect(e.code).toBe("timeout");
      expect(e.message).toContain("the action did not finish within 300 ms");
      expect(e.message).toContain("the server last sent the upgrade's 101 and no frame after it");
      expect(m.accepted()).toBe(1);
      // The server never closes: only the client can have ended the socket.
      await until(() => m.open.size === 0);
    } finally {
      m.close();
    }
  });
});
