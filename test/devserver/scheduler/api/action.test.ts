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
