import { randomBytes } from "node:crypto";
import * as net from "node:net";
import { WebSocket } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { list, serviceJob, startScheduler, type Harness } from "../http";

type Obj = Record<string, unknown>;

let h: Harness;
let allocId = "";

beforeAll(async () => {
  h = await startScheduler({
    actionRunner: (run) =>
      run.action.Name === "custom"
        ? { stdout: `ran ${run.action.Command} on ${run.allocId.slice(0, 8)}\nline 2\n`, exitCode: 3 }
        : defaultRun(run.action.Command, run.action.Args),
  });
  const job = serviceJob("act-job", {}, { Count: 1 });
  const task = (((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj;
  task.Actions = [
    { Name: "hello", Command: "echo", Args: ["hello", "world"] },
    { Name: "custom", Command: "/bin/tool", Args: [] },
  ];
  const r = await h.call("POST", "/v1/jobs", { body: { Job: job } });
  expect(r.status, r.text).toBe(200);
  await h.sched.control.idle();
  allocId = String(list(await h.call("GET", "/v1/job/act-job/allocations"))[0]?.ID);
});
afterAll(async () => {
  await h.close();
});

function defaultRun(command: string, args: readonly string[]): { stdout: string } {
  return { stdout: command === "echo" ? `${args.join(" ")}\n` : "" };
}

interface Session {
  readonly frames: Obj[];
  readonly closeCode: number;
  readonly closeReason: string;
}

/** Opens the action WebSocket, optionally sends frames once open, and collects frames until close. */
function runAction(query: string, o: { headers?: Record<string, string>; send?: unknown[] } = {}): Promise<Session> {
  const url = `${h.base.replace(/^http/, "ws")}/v1/job/act-job/action?${query}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: o.headers ?? {} });
    const frames: Obj[] = [];
    ws.addEventListener("open", () => {
      for (const f of o.send ?? []) ws.send(JSON.stringify(f));
    });
    ws.addEventListener("message", (ev) => frames.push(JSON.parse(String(ev.data)) as Obj));
    ws.addEventListener("close", (ev) => resolve({ frames, closeCode: ev.code, closeReason: ev.reason }));
    ws.addEventListener("error", () => undefined);
    setTimeout(() => reject(new Error("websocket did not close")), 10_000).unref();
  });
}

function stdout(frames: Obj[]): string {
  return frames
    .map((f) => ((f.stdout as Obj | undefined)?.data as string | undefined) ?? "")
    .map((d) => Buffer.from(d, "base64").toString("utf8"))
    .join("");
}

describe("action WebSocket", () => {
  it("streams stdout frames, closes stdout, reports the exit and closes normally", async () => {
    const s = await runAction(`action=hello&alloc_id=${allocId}&task=app`, { headers: { "x-svc-token": h.root } });
    expect(stdout(s.frames)).toBe("hello world\n");
    expect(s.frames.slice(-2)).toEqual([{ stdout: { close: true } }, { exited: true, result: {} }]);
    expect(s.closeCode).toBe(1000);
  });

  it("takes the token from the handshake frame, accepts allocID, and reports a non-zero exit", async () => {
    const s = await runAction(`action=custom&allocID=${allocId}&task=app&ws_handshake=true`, {
      send: [{ version: 1, auth_token: h.root }, { tty_size: { height: 24, width: 80 } }],
    });
    expect(stdout(s.frames)).toBe(`ran /bin/tool on ${allocId.slice(0, 8)}\nline 2\n`);
    expect(s.frames.filter((f) => f.stdout !== undefined && (f.stdout as Obj).data !== undefined)).toHaveLength(2);
    expect(s.frames.at(-1)).toEqual({ exited: true, result: { exit_code: 3 } });
  });

  it("uses CRLF line ends with a tty", async () => {
    const s = await runAction(`action=hello&alloc_id=${allocId}&task=app&tty=true`, {
      headers: { authorization: `Bearer ${h.root}` },
    });
    expect(stdout(s.frames)).toBe("hello world\r\n");
  });

  it("closes with a policy violation and the reason on errors", async () => {
    const cases: [string, Record<string, string>, unknown[], string][] = [
      [`action=hello&alloc_id=${allocId}&task=app`, {}, [], "Permission denied"],
      [`action=hello&alloc_id=${allocId}&task=app`, { "x-svc-token": "nope" }, [], "ACL token not found"],
      [
        `action=hello&alloc_id=${allocId}&task=app&ws_handshake=true`,
        {},
        [{ version: 2, auth_token: h.root }],
        "unexpected handshake value: 2",
      ],
      [`action=hello&alloc_id=unknown&task=app`, { "x-svc-token": h.root }, [], 'Unknown allocation "unknown"'],
      [`action=hello&alloc_id=${allocId}&task=nope`, { "x-svc-token": h.root }, [], 'unknown task name "nope"'],
      [`action=nope&alloc_id=${allocId}&task=app`, { "x-svc-token": h.root }, [], 'action "nope" not found'],
    ];
    for (const [query, headers, send, reason] of cases) {
      const s = await runAction(query, { headers, send });
      expect([query, s.closeCode, s.closeReason]).toEqual([query, 1008, reason]);
      expect(s.frames).toEqual([]);
    }
  });

  it("needs alloc-exec", async () => {
    const reader = h.server.createToken("scheduler", { policies: ["read"] });
    const denied = await runAction(`action=hello&alloc_id=${allocId}&task=app`, { headers: { "x-svc-token": reader } });
    expect([denied.closeCode, denied.closeReason]).toEqual([1008, "Permission denied"]);
    const execer = h.server.createToken("scheduler", { capabilities: ["namespace:alloc-exec"] });
    const ok = await runAction(`action=hello&alloc_id=${allocId}&task=app`, { headers: { "x-svc-token": execer } });
    expect(ok.closeCode).toBe(1000);
  });

  it("refuses upgrades on other paths", async () => {
    const url = `${h.base.replace(/^http/, "ws")}/v1/job/act-job/other`;
    const code = await new Promise<number>((resolve) => {
      const ws = new WebSocket(url);
      ws.addEventListener("close", (ev) => resolve(ev.code));
      ws.addEventListener("error", () => undefined);
    });
    expect(code).toBe(1006);
  });
});

/** One masked client frame (RFC 6455): `fin`, opcode, payload; `declared` overrides the length field. */
function clientFrame(fin: boolean, opcode: number, payload: Buffer, declared = payload.length): Buffer {
  const head =
    declared < 126
      ? Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | declared])
      : Buffer.concat([Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | 127]), Buffer.alloc(8)]);
  if (declared >= 126) head.writeBigUInt64BE(BigInt(declared), 2);
  const mask = randomBytes(4);
  const body = Buffer.from(payload);
  for (let i = 0; i < body.length; i++) body[i] = (body[i] as number) ^ (mask[i % 4] as number);
  return Buffer.concat([head, mask, body]);
}

/**
 * Upgrades on a raw socket, writes `frames` once the 101 arrives, and returns the close code of the
 * server's close frame (undefined when the server sent none before ending the socket).
 */
function rawAction(query: string, frames: Buffer[]): Promise<number | undefined> {
  const { hostname, port } = new URL(h.base);
  return new Promise((resolve, reject) => {
    const sock = net.connect(Number(port), hostname);
    let got = Buffer.alloc(0);
    let upgraded = false;
    const guard = setTimeout(() => {
      sock.destroy();
      reject(new Error("the server neither closed nor ended the connection"));
    }, 10_000);
    guard.unref();
    const closeCode = (): number | undefined => {
      // server frames are unmasked and short here: [0x88, len, code hi, code lo, ...]
      for (let i = 0; i + 3 < got.length;) {
        const len = (got[i + 1] as number) & 0x7f;
        if (((got[i] as number) & 0x0f) === 0x8) return got.readUInt16BE(i + 2);
        i += 2 + len;
      }
      return undefined;
    };
    sock.on("data", (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (!upgraded) {
        const end = got.indexOf("\r\n\r\n");
        if (end < 0) return;
        expect(got.subarray(0, 12).toString()).toBe("HTTP/1.1 101");
        upgraded = true;
        got = got.subarray(end + 4);
        for (const f of frames) sock.write(f);
      }
      const code = closeCode();
      if (code !== undefined) {
        clearTimeout(guard);
        sock.destroy();
        resolve(code);
      }
    });
    sock.on("error", () => undefined);
    sock.on("close", () => {
      clearTimeout(guard);
      resolve(closeCode());
    });
    sock.write(
      `GET /v1/job/act-job/action?${query} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\n` +
        `Connection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
  });
}

describe("action WebSocket limits before authentication", () => {
  const query = () => `action=hello&alloc_id=${allocId}&task=app&ws_handshake=true`;

  it("closes with 1009 once a handshake message assembled from continuation frames outgrows the handshake limit", async () => {
    const frames = [clientFrame(false, 0x1, Buffer.alloc(1024, 0x20))];
    for (let i = 0; i < 64; i++) frames.push(clientFrame(false, 0x0, Buffer.alloc(16 * 1024, 0x20)));
    frames.push(clientFrame(true, 0x0, Buffer.from("{}")));
    expect(await rawAction(query(), frames)).toBe(1009);
  });

  it("counts empty continuation frames too", async () => {
    const frames = [clientFrame(false, 0x1, Buffer.alloc(0))];
    for (let i = 0; i < 2000; i++) frames.push(clientFrame(false, 0x0, Buffer.alloc(0)));
    expect(await rawAction(query(), frames)).toBe(1009);
  });

  it("closes with 1009 on a frame header announcing more than the limit, before its payload arrives", async () => {
    expect(await rawAction(query(), [clientFrame(true, 0x1, Buffer.alloc(0), 100 * 1024)])).toBe(1009);
  });

  it("still authenticates with a handshake frame under the limit", async () => {
    const s = await runAction(query(), { send: [{ version: 1, auth_token: h.root }] });
    expect([s.closeCode, stdout(s.frames)]).toEqual([1000, "hello world\n"]);
  });
});

describe("action WebSocket switches", () => {
  /** Registers `id` with the action `hello`, `meta` on the task; resolves to its allocation. */
  async function jobWith(id: string, meta: Record<string, string>): Promise<string> {
    const job = serviceJob(id, {}, { Count: 1 });
    const task = (((job.TaskGroups as Obj[])[0] as Obj).Tasks as Obj[])[0] as Obj;
    task.Actions = [{ Name: "hello", Command: "echo", Args: ["hello"] }];
    task.Meta = meta;
    expect((await h.call("POST", "/v1/jobs", { body: { Job: job } })).status).toBe(200);
    await h.sched.control.idle();
    return String(list(await h.call("GET", `/v1/job/${id}/allocations`))[0]?.ID);
  }

  it("devserver.action_upgrade_status answers the upgrade with that status instead of 101", async () => {
    const alloc = await jobWith("act-refused", { "devserver.action_upgrade_status": "503" });
    const answer = await new Promise<string>((resolve, reject) => {
      const url = new URL(h.base);
      const socket = net.connect(Number(url.port), url.hostname, () => {
        socket.write(
          `GET /v1/job/act-refused/action?action=hello&alloc_id=${alloc}&task=app HTTP/1.1\r\n` +
            `Host: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n` +
            `x-svc-token: ${h.root}\r\n\r\n`,
        );
      });
      let text = "";
      socket.on("data", (c: Buffer) => (text += c.toString("utf8")));
      socket.on("close", () => resolve(text));
      socket.on("error", reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(h.sched.control.openActions()).toBe(0);
  });

  it("devserver.action_silent accepts the action and sends no frame until the client closes", async () => {
    const alloc = await jobWith("act-quiet", { "devserver.action_silent": "true" });
    const url = `${h.base.replace(/^http/, "ws")}/v1/job/act-quiet/action?action=hello&alloc_id=${alloc}&task=app&ws_handshake=true`;
    const ws = new WebSocket(url);
    const frames: string[] = [];
    ws.addEventListener("message", (ev) => frames.push(String(ev.data)));
    await new Promise((resolve) => ws.addEventListener("open", resolve));
    ws.send(JSON.stringify({ version: 1, auth_token: h.root }));
    expect(h.sched.control.openActions()).toBe(1);
    // Frames are handled in order: a non-silent action would have sent its output before the close's answer.
    const code = await new Promise<number>((resolve) => {
      ws.addEventListener("close", (ev) => resolve(ev.code));
      ws.close(1000);
    });
    expect([code, frames]).toEqual([1000, []]);
    expect(h.sched.control.openActions()).toBe(0);
  });
});
