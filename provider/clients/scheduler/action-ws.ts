/**
 * The action WebSocket: runs a job's predefined action inside a task and streams its output as JSON
 * frames. Input frames: the auth frame (first, when `ws_handshake` is on) and resize frames. Output
 * frames: `{stdout: {data: base64}}`, `{stdout: {close: true}}`, `{exited: true, result}`.
 */
import type { WebSocket } from "undici";
import { ApiError, UsageError, type ApiErrorCode } from "../../errors";
import { encodePath, type HttpCore } from "../../http/core";
import { requireId } from "./base";

/** A terminal size in characters. */
export interface TtySize {
  height: number;
  width: number;
}

/** What to run and how. */
export interface RunActionOptions {
  /** Name of the action (from `client.actions.list`). */
  action: string;
  /** Allocation to run it in. */
  allocId: string;
  /** Task of the allocation. */
  task: string;
  /** Ask for a terminal. */
  tty?: boolean;
  /** Terminal size sent right after connecting (tty only). */
  ttySize?: TtySize;
  /**
   * Send the token in the first frame instead of a header (default true, the spec's form, which also keeps
   * the token out of the upgrade request).
   */
  wsHandshake?: boolean;
  namespace?: string;
  region?: string;
  signal?: AbortSignal;
}

/** One event of a running action. */
export type ActionEvent =
  | { type: "stdout"; data: Buffer }
  | { type: "stderr"; data: Buffer }
  /** The host closed the action's output stream. */
  | { type: "close" }
  /** The action finished; `result` as the server sent it (the real scheduler puts `exit_code` there). */
  | { type: "exit"; result: Record<string, unknown> };

/** Collected output of a finished action. */
export interface ActionOutput {
  stdout: Buffer;
  stderr: Buffer;
  /** The exit frame's result; undefined when the server closed without one. */
  result: Record<string, unknown> | undefined;
}

const OPERATION = "run job action";

/** A running action: iterate its events; `resize` and `close` act on the socket. */
export class ActionSession implements AsyncIterable<ActionEvent> {
  private readonly queue: ActionEvent[] = [];
  private failure: ApiError | undefined;
  private ended = false;
  private exited = false;
  private wake: (() => void) | undefined;

  /** @internal Use {@link openActionSession}. */
  constructor(
    private readonly ws: WebSocket,
    private readonly path: string,
  ) {
    ws.addEventListener("message", (ev) => this.onMessage(ev.data));
    ws.addEventListener("close", (ev) => this.onClose(ev.code, ev.reason));
  }

  /** Sends a resize frame (meaningful only with `tty`). */
  resize(size: TtySize): void {
    checkSize(size);
    this.ws.send(JSON.stringify({ tty_size: { height: size.height, width: size.width } }));
  }

  /** Closes the socket; the iteration ends after the events already received. */
  close(): void {
    if (this.ws.readyState === this.ws.OPEN || this.ws.readyState === this.ws.CONNECTING) this.ws.close(1000);
  }

  /** Yields events until the server closes the socket; throws ApiError if it ends abnormally. */
  async *[Symbol.asyncIterator](): AsyncIterator<ActionEvent> {
    for (;;) {
      const ev = this.queue.shift();
      if (ev !== undefined) {
        yield ev;
        continue;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }

  /** Reads every event to the end and returns the output and the exit result. */
  async collect(): Promise<ActionOutput> {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let result: Record<string, unknown> | undefined;
    for await (const ev of this) {
      if (ev.type === "stdout") out.push(ev.data);
      else if (ev.type === "stderr") err.push(ev.data);
      else if (ev.type === "exit") result = ev.result;
    }
    return { stdout: Buffer.concat(out), stderr: Buffer.concat(err), result };
  }

  /** @internal Fails the session (abort, protocol error). */
  fail(error: ApiError): void {
    if (this.failure === undefined && !this.ended) this.failure = error;
    this.close();
    this.notify();
  }

  private push(ev: ActionEvent): void {
    this.queue.push(ev);
    this.notify();
  }

  private notify(): void {
    this.wake?.();
  }

  private onMessage(data: unknown): void {
    let text: string;
    if (typeof data === "string") text = data;
    else if (data instanceof ArrayBuffer) text = Buffer.from(data).toString("utf8");
    else if (ArrayBuffer.isView(data))
      text = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("utf8");
    else return;
    let frame: unknown;
    try {
      frame = JSON.parse(text);
    } catch {
      this.fail(wsError("bad_response", this.path, ["the server sent a frame that is not JSON"]));
      return;
    }
    if (typeof frame !== "object" || frame === null) return;
    const f = frame as { stdout?: unknown; stderr?: unknown; exited?: unknown; result?: unknown };
    for (const stream of ["stdout", "stderr"] as const) {
      const part = f[stream];
      if (typeof part !== "object" || part === null) continue;
      const p = part as { data?: unknown; close?: unknown };
      if (typeof p.data === "string" && p.data !== "") this.push({ type: stream, data: Buffer.from(p.data, "base64") });
      if (p.close === true && stream === "stdout") this.push({ type: "close" });
    }
    if (f.exited === true) {
      this.exited = true;
      const result = typeof f.result === "object" && f.result !== null ? (f.result as Record<string, unknown>) : {};
      this.push({ type: "exit", result });
    }
  }

  private onClose(code: number, reason: string): void {
    // A normal close, or any close after the exit frame, ends the stream; anything else is a failure.
    if (!this.exited && code !== 1000 && code !== 1005 && this.failure === undefined) {
      const denied = /permission denied|acl token/i.test(reason);
      const serverErrors =
        reason !== "" ? [reason] : [`the socket closed with code ${code} before the action finished`];
      this.failure = wsError(denied ? "permission_denied" : "server", this.path, serverErrors);
    }
    this.ended = true;
    this.notify();
  }
}

/** Opens the action WebSocket and resolves once it is connected and authenticated (auth frame sent). */
export async function openActionSession(core: HttpCore, jobId: string, opts: RunActionOptions): Promise<ActionSession> {
  const id = requireId(OPERATION, "jobId", jobId);
  requireId(OPERATION, "action", opts.action);
  requireId(OPERATION, "allocId", opts.allocId);
  requireId(OPERATION, "task", opts.task);
  if (opts.ttySize !== undefined) checkSize(opts.ttySize);
  const handshake = opts.wsHandshake !== false;
  const c = core.connection;
  const auth = core.authHeaders(OPERATION);
  const token = c.token;
  const path = encodePath("/v1/job", id, "action");
  const url = core
    .url(path, {
      action: opts.action,
      // The spec names the parameter `alloc_id` while its example spells `allocID`; send both.
      alloc_id: opts.allocId,
      allocID: opts.allocId,
      task: opts.task,
      tty: opts.tty === true,
      ws_handshake: handshake,
      namespace: opts.namespace || c.namespace || "default",
      region: opts.region || c.region,
    })
    .replace(/^http/, "ws");

  const { WebSocket: UndiciWebSocket } = require("undici") as typeof import("undici");
  const ws = new UndiciWebSocket(url, { dispatcher: core.dispatcher, headers: handshake ? {} : auth });
  ws.binaryType = "arraybuffer";
  const session = new ActionSession(ws, path);

  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      ws.close();
      reject(wsError("timeout", path, [], `no WebSocket connection within ${c.timeoutMs} ms`));
    }, c.timeoutMs);
    const onOpen = () => {
      cleanup();
      resolve();
    };
    const onClose = (ev: { code: number; reason: string }) => {
      cleanup();
      reject(
        wsError(
          "transport",
          path,
          ev.reason ? [ev.reason] : [],
          "the scheduler refused or dropped the WebSocket upgrade; check the address, that the token grants namespace:alloc-exec, and that the allocation and task exist",
        ),
      );
    };
    const onAbort = () => {
      cleanup();
      ws.close();
      reject(wsError("aborted", path, [], "the operation was cancelled"));
    };
    function cleanup() {
      clearTimeout(timer);
      ws.removeEventListener("open", onOpen);
      ws.removeEventListener("close", onClose);
      opts.signal?.removeEventListener("abort", onAbort);
    }
    ws.addEventListener("open", onOpen);
    ws.addEventListener("close", onClose);
    if (opts.signal?.aborted) onAbort();
    else opts.signal?.addEventListener("abort", onAbort, { once: true });
  });

  // The server waits for this frame whenever ws_handshake is on, so it goes out without a token too.
  if (handshake) ws.send(JSON.stringify({ version: 1, auth_token: token ?? "" }));
  if (opts.tty && opts.ttySize !== undefined) session.resize(opts.ttySize);
  if (opts.signal !== undefined) {
    opts.signal.addEventListener(
      "abort",
      () => session.fail(wsError("aborted", path, [], "the operation was cancelled")),
      { once: true },
    );
  }
  return session;
}

function wsError(code: ApiErrorCode, path: string, serverErrors: string[], hint?: string): ApiError {
  return new ApiError({ code, service: "scheduler", operation: OPERATION, method: "GET", path, serverErrors, hint });
}

function checkSize(size: TtySize): void {
  const ok = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n > 0;
  if (!ok(size.height) || !ok(size.width))
    throw new UsageError(`${OPERATION}: ttySize needs positive integer height and width.`);
}
