/**
 * The action WebSocket: runs a job's predefined action inside a task and streams its output as JSON
 * frames. Input frames: the auth frame (first, when `ws_handshake` is on) and resize frames. Output
 * frames: `{stdout: {data: base64}}`, `{stdout: {close: true}}`, `{exited: true, result}`.
 *
 * Each session has one deadline, from the call that opens it to the end of the action (the `timeoutMs`
 * option, else the connection's): at the deadline, or when the server refuses the upgrade or drops the
 * socket, it ends with an ApiError that names the action, the allocation and the task and says what the
 * server last sent (the kind of frame, never the output), and its socket is closed.
 */
import type { Duplex } from "node:stream";
import type { Dispatcher, WebSocket } from "undici";
import { ApiError, UsageError, type ApiErrorCode } from "../../errors";
import { encodePath, type HttpCore } from "../../http/core";
import { classify } from "../../http/answers";
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
  /**
   * The longest the whole session may take, from connecting to the action's exit (ms; default: the
   * connection's `timeoutMs`, 30 s unless set). Raise it for an action that runs longer.
   */
  timeoutMs?: number;
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

/** What one session's errors name. */
interface Target {
  readonly path: string;
  /** The action, the allocation and the task. */
  readonly what: string;
  readonly timeoutMs: number;
}

/** A running action: iterate its events; `resize` and `close` act on the socket. */
export class ActionSession implements AsyncIterable<ActionEvent> {
  private readonly queue: ActionEvent[] = [];
  private failure: ApiError | undefined;
  private ended = false;
  private exited = false;
  private wake: (() => void) | undefined;
  /** What the server last sent, for the errors: the kind of answer or frame, never its content. */
  private heard = "nothing (no answer to the upgrade)";
  /** The upgrade's status when it was not 101. */
  private refusal: { status: number; statusText: string } | undefined;
  /** The upgraded socket, destroyed when the session fails (a server that never answers a close frame). */
  private socket: Duplex | undefined;
  private readonly deadline: NodeJS.Timeout;
  private opening: { resolve(): void; reject(e: ApiError): void } | undefined;
  /** Settles when the socket is open (the server answered 101), or with the error that ended the session first. */
  readonly opened: Promise<void>;

  /** @internal Use {@link openActionSession}. */
  constructor(
    private readonly ws: WebSocket,
    private readonly target: Target,
  ) {
    this.opened = new Promise<void>((resolve, reject) => (this.opening = { resolve, reject }));
    this.opened.catch(() => undefined);
    ws.addEventListener("open", () => this.onOpen());
    ws.addEventListener("message", (ev) => this.onMessage(ev.data));
    ws.addEventListener("close", (ev) => this.onClose(ev.code, ev.reason));
    this.deadline = setTimeout(() => this.onDeadline(), target.timeoutMs);
  }

  /** Sends a resize frame (meaningful only with `tty`). */
  resize(size: TtySize): void {
    checkSize(size);
    this.ws.send(JSON.stringify({ tty_size: { height: size.height, width: size.width } }));
  }

  /**
   * Closes the socket; the iteration ends after the events already received. A server that does not answer
   * the close frame has its socket destroyed at the session's deadline.
   */
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

  /** @internal Fails the session (deadline, abort, protocol error) and closes its socket. */
  fail(error: ApiError): void {
    if (this.failure === undefined && !this.ended) this.failure = error;
    this.opening?.reject(error);
    this.opening = undefined;
    this.close();
    // The close frame is written; the socket goes once it is flushed, whether or not the server answers.
    const socket = this.socket;
    if (socket !== undefined && !socket.destroyed) {
      socket.once("finish", () => socket.destroy());
      socket.end();
    }
    this.notify();
  }

  /** @internal An error of this session: its operation and path, and what the server last sent. */
  error(code: ApiErrorCode, what: string, extra: { status?: number; serverErrors?: string[]; hint?: string } = {}) {
    const t = this.target;
    const hint = [
      `${t.what}: ${what}`,
      `the server last sent ${this.heard}`,
      ...(extra.hint !== undefined ? [extra.hint] : []),
    ];
    return new ApiError({
      code,
      service: "scheduler",
      operation: OPERATION,
      method: "GET",
      path: t.path,
      ...(extra.status !== undefined ? { status: extra.status } : {}),
      serverErrors: extra.serverErrors ?? [],
      hint: hint.join("; "),
    });
  }

  /** @internal Sees the answer to the upgrade request before the WebSocket does (see {@link watchUpgrade}). */
  onUpgradeAnswer(status: number, statusText: string, socket: Duplex | undefined): void {
    if (status === 101 && socket !== undefined) {
      this.socket = socket;
      this.heard = "the upgrade's 101 and no frame after it";
    } else if (status >= 200) {
      this.refusal = { status, statusText };
      this.heard = `${status}${statusText !== "" ? ` ${statusText}` : ""} to the upgrade`;
    }
  }

  private onOpen(): void {
    this.opening?.resolve();
    this.opening = undefined;
  }

  private onDeadline(): void {
    const ms = this.target.timeoutMs;
    const what =
      this.opening !== undefined
        ? `no WebSocket connection within ${ms} ms`
        : `the action did not finish within ${ms} ms`;
    this.fail(this.error("timeout", what, { hint: "pass a longer timeoutMs for a longer action" }));
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
      this.heard = "a frame that is not JSON";
      this.fail(this.error("bad_response", "the server sent a frame that is not JSON"));
      return;
    }
    if (typeof frame !== "object" || frame === null) return;
    const f = frame as { stdout?: unknown; stderr?: unknown; exited?: unknown; result?: unknown };
    for (const stream of ["stdout", "stderr"] as const) {
      const part = f[stream];
      if (typeof part !== "object" || part === null) continue;
      const p = part as { data?: unknown; close?: unknown };
      if (typeof p.data === "string" && p.data !== "") {
        const data = Buffer.from(p.data, "base64");
        this.heard = `a ${stream} frame (${data.length} bytes)`;
        this.push({ type: stream, data });
      }
      if (p.close === true && stream === "stdout") {
        this.heard = "the end of stdout and no exit frame";
        this.push({ type: "close" });
      }
    }
    if (f.exited === true) {
      this.exited = true;
      this.heard = "the exit frame";
      const result = typeof f.result === "object" && f.result !== null ? (f.result as Record<string, unknown>) : {};
      this.push({ type: "exit", result });
    }
  }

  private onClose(code: number, reason: string): void {
    clearTimeout(this.deadline);
    if (this.opening === undefined && this.failure === undefined)
      this.heard = code === 1006 ? "no close frame (the connection dropped)" : `a close frame (code ${code})`;
    if (this.opening !== undefined) {
      // The upgrade failed: refused with a status, or the connection broke before an answer.
      const r = this.refusal;
      const serverErrors = reason !== "" ? [reason] : r !== undefined && r.statusText !== "" ? [r.statusText] : [];
      this.fail(
        r !== undefined
          ? this.error(classify("scheduler", r.status, serverErrors), "the scheduler refused the WebSocket upgrade", {
              status: r.status,
              serverErrors,
              hint: UPGRADE_HINT,
            })
          : this.error("transport", "the scheduler dropped the WebSocket upgrade", {
              serverErrors,
              hint: UPGRADE_HINT,
            }),
      );
    } else if (!this.exited && code !== 1000 && code !== 1005 && this.failure === undefined) {
      // A normal close, or any close after the exit frame, ends the stream; anything else is a failure.
      const denied = /permission denied|acl token/i.test(reason);
      const what = `the socket closed with code ${code} before the action finished`;
      this.failure = this.error(denied ? "permission_denied" : "server", what, {
        serverErrors: reason !== "" ? [reason] : [],
      });
    }
    this.ended = true;
    this.notify();
  }
}

const UPGRADE_HINT =
  "check the address, that the token grants namespace:alloc-exec, and that the allocation and task exist and run";

/**
 * A dispatcher that shows the session the answer to its upgrade request (the status the WebSocket API
 * hides, and the upgraded socket), then hands everything on unchanged.
 */
function watchUpgrade(dispatcher: Dispatcher, session: () => ActionSession | undefined): Dispatcher {
  return dispatcher.compose(
    (dispatch) => (opts, handler) =>
      dispatch(
        opts,
        new Proxy(handler, {
          get(target, prop, receiver) {
            const value: unknown = Reflect.get(target, prop, receiver);
            if (typeof value !== "function") return value;
            const call = value as (...args: unknown[]) => unknown;
            if (prop === "onResponseStart")
              return (...args: unknown[]) => {
                session()?.onUpgradeAnswer(Number(args[1]), String(args[3] ?? ""), undefined);
                return call.apply(target, args);
              };
            if (prop === "onRequestUpgrade")
              return (...args: unknown[]) => {
                session()?.onUpgradeAnswer(Number(args[1]), "", args[3] as Duplex);
                return call.apply(target, args);
              };
            return call.bind(target);
          },
        }),
      ),
  );
}

/**
 * Opens the action WebSocket and resolves once it is connected and authenticated (auth frame sent). The
 * session's deadline starts here.
 */
export async function openActionSession(core: HttpCore, jobId: string, opts: RunActionOptions): Promise<ActionSession> {
  const id = requireId(OPERATION, "jobId", jobId);
  requireId(OPERATION, "action", opts.action);
  requireId(OPERATION, "allocId", opts.allocId);
  requireId(OPERATION, "task", opts.task);
  if (opts.ttySize !== undefined) checkSize(opts.ttySize);
  const c = core.connection;
  const timeoutMs = opts.timeoutMs ?? c.timeoutMs;
  if (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new UsageError(`${OPERATION}: timeoutMs must be a positive number of milliseconds.`);
  const handshake = opts.wsHandshake !== false;
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
  const what = `action ${JSON.stringify(opts.action)} in allocation ${opts.allocId}, task ${JSON.stringify(opts.task)}`;

  const { WebSocket: UndiciWebSocket } = require("undici") as typeof import("undici");
  // The WebSocket starts connecting when it is made, the session right after: the upgrade's answer comes later.
  const made: { session?: ActionSession } = {};
  const dispatcher = watchUpgrade(core.dispatcher, () => made.session);
  const ws = new UndiciWebSocket(url, { dispatcher, headers: handshake ? {} : auth });
  ws.binaryType = "arraybuffer";
  const s = (made.session = new ActionSession(ws, { path, what, timeoutMs }));
  const onAbort = () => s.fail(s.error("aborted", "the operation was cancelled"));
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener("abort", onAbort, { once: true });
  await s.opened;

  // The server waits for this frame whenever ws_handshake is on, so it goes out without a token too.
  if (handshake) ws.send(JSON.stringify({ version: 1, auth_token: token ?? "" }));
  if (opts.tty && opts.ttySize !== undefined) s.resize(opts.ttySize);
  return s;
}

function checkSize(size: TtySize): void {
  const ok = (n: unknown) => typeof n === "number" && Number.isInteger(n) && n > 0;
  if (!ok(size.height) || !ok(size.width))
    throw new UsageError(`${OPERATION}: ttySize needs positive integer height and width.`);
}
