// The action WebSocket (`GET /v1/job/:job_id/action`): authenticates (token header, or the first frame
// when `ws_handshake` is set), checks `alloc-exec` (plus `alloc-node-exec` for drivers without file-system
// isolation), finds the allocation, task and action, and streams the action's output as the real endpoint
// does: `{stdout:{data}}` frames, `{stdout:{close:true}}`, `{exited:true,result:{...}}`, then a normal
// close. Nothing is executed: the output comes from `ActionRunner` (default: an `echo`-like simulation).
//
// Two switches reproduce servers that do not get that far (job, group or task meta of the allocation's job):
// - `devserver.action_upgrade_status = "503"` (any 400-599): the upgrade is answered with that status
//   instead of 101, as a server that cannot reach the allocation's node does;
// - `devserver.action_silent = "true"`: the action is accepted (101, authenticated) and then sends no frame
//   at all, as an exec that never answers; the socket stays open until the client closes it.
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { tokenAllows, type ServiceContext } from "../../core";
import { findGroup } from "../sim/cluster";
import { isObject, objs, str, strMap, strs, type JsonObject } from "../state/json";
import type { Store } from "../state/store";
import { CLOSE_NORMAL, CLOSE_POLICY_VIOLATION, acceptWebSocket, refuseUpgrade, type WsConnection } from "./ws";

/** Meta key: answer the action upgrade with this HTTP status (400-599) instead of 101. */
const ACTION_UPGRADE_STATUS_META = "devserver.action_upgrade_status";
/** Meta key: accept the action and then send no frame (an exec that never answers). */
const ACTION_SILENT_META = "devserver.action_silent";

/** Largest handshake frame read from a client that has not authenticated yet (it holds a version and a token). */
const HANDSHAKE_MAX = 4096;
/** How long a client that has not authenticated yet may take to send its handshake frame. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/** What an action run sees. */
interface ActionInvocation {
  readonly namespace: string;
  readonly jobId: string;
  readonly allocId: string;
  readonly task: string;
  readonly action: { readonly Name: string; readonly Command: string; readonly Args: readonly string[] };
  readonly tty: boolean;
}

/** Result of a simulated action run. */
interface ActionResult {
  readonly stdout: string;
  readonly exitCode?: number;
}

/** Produces the output of an action (devserver option `actionRunner`). */
export type ActionRunner = (run: ActionInvocation) => ActionResult;

/** Drivers without file-system isolation need `alloc-node-exec` as well (scheduler-jobs-api.md, "Authentication"). */
const UNISOLATED_DRIVERS = new Set(["raw_exec"]);

/** Default runner: `echo` prints its arguments, `true`/`false` exit 0/1, anything else prints its command line. */
export const defaultActionRunner: ActionRunner = (run) => {
  const cmd = run.action.Command.split("/").pop() ?? "";
  if (cmd === "echo") return { stdout: `${run.action.Args.join(" ")}\n` };
  if (cmd === "true") return { stdout: "" };
  if (cmd === "false") return { stdout: "", exitCode: 1 };
  return { stdout: `${[run.action.Command, ...run.action.Args].join(" ")}\n` };
};

function presentedToken(req: IncomingMessage, header: string): string | undefined {
  const direct = req.headers[header.toLowerCase()];
  if (typeof direct === "string" && direct !== "") return direct;
  const auth = req.headers.authorization;
  if (typeof auth === "string" && /^bearer /i.test(auth)) return auth.slice(7).trim() || undefined;
  return undefined;
}

function boolParam(q: URLSearchParams, name: string): boolean {
  const v = (q.get(name) ?? "").toLowerCase();
  return v === "true" || v === "1" || v === "t";
}

/**
 * Handles an upgrade request on the scheduler listener; returns false when the path is not the action
 * endpoint (the core then refuses the upgrade).
 */
export function handleActionUpgrade(
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
  ctx: ServiceContext,
  store: Store,
  runner: ActionRunner,
  policyCapabilities: (policy: string) => readonly string[] | undefined,
  open: Set<WsConnection>,
): boolean {
  const url = new URL(req.url ?? "/", "http://devserver");
  const m = /^\/v1\/job\/(.+)\/action\/?$/.exec(url.pathname);
  if (m === null) return false;
  const jobId = (m[1] as string)
    .split("/")
    .map((s) => decodeURIComponent(s))
    .join("/");
  const q = url.searchParams;
  const namespace = q.get("namespace") || "default";
  const status = Number(actionMeta(store, q, namespace, jobId, ACTION_UPGRADE_STATUS_META));
  if (Number.isInteger(status) && status >= 400 && status <= 599) {
    refuseUpgrade(socket, status, `${ACTION_UPGRADE_STATUS_META} is ${status}`);
    return true;
  }
  const accept = (h: Buffer, max: number): WsConnection | undefined => {
    const conn = acceptWebSocket(req, socket, h, max);
    if (conn === undefined) return undefined;
    open.add(conn);
    conn.onClose(() => open.delete(conn));
    return conn;
  };
  const headerToken = presentedToken(req, ctx.headerNames.token);
  const problemFor = (token: string | undefined): string | undefined =>
    authorize(ctx, token, namespace, store, q, jobId, policyCapabilities);
  if (!boolParam(q, "ws_handshake")) {
    // Authorized at the upgrade: no frame of the client is read before (nor after: actions take no input).
    const problem = problemFor(headerToken);
    const conn = accept(Buffer.alloc(0), 0);
    if (conn === undefined) return true;
    if (problem !== undefined) conn.close(CLOSE_POLICY_VIOLATION, problem);
    else run(conn, store, q, namespace, jobId, runner);
    return true;
  }
  // The token comes in the first frame: until then only one small message is read, within a deadline.
  const conn = accept(head, HANDSHAKE_MAX);
  if (conn === undefined) return true;
  const deadline = setTimeout(() => conn.close(CLOSE_POLICY_VIOLATION, "handshake timeout"), HANDSHAKE_TIMEOUT_MS);
  deadline.unref();
  conn.onClose(() => clearTimeout(deadline));
  let handshaken = false;
  conn.onMessage((text) => {
    if (handshaken) return;
    handshaken = true;
    clearTimeout(deadline);
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch (e) {
      return conn.close(CLOSE_POLICY_VIOLATION, e instanceof Error ? e.message : "invalid handshake");
    }
    const version = isObject(msg) ? msg.version : undefined;
    if (version !== 1) return conn.close(CLOSE_POLICY_VIOLATION, `unexpected handshake value: ${String(version ?? 0)}`);
    const token =
      isObject(msg) && typeof msg.auth_token === "string" && msg.auth_token !== "" ? msg.auth_token : headerToken;
    const problem = problemFor(token);
    if (problem !== undefined) return conn.close(CLOSE_POLICY_VIOLATION, problem);
    run(conn, store, q, namespace, jobId, runner);
  });
  return true;
}

/** A switch's value: the task's meta, else its group's, else the job's (the allocation's version, else the job's current one). */
function actionMeta(
  store: Store,
  q: URLSearchParams,
  namespace: string,
  jobId: string,
  key: string,
): string | undefined {
  const r = store.allocs.get(q.get("alloc_id") || q.get("allocID") || "");
  const job = r !== undefined && r.alloc.JobID === jobId ? r.job : store.getJob(namespace, jobId)?.job;
  if (job === undefined) return undefined;
  const group = r !== undefined ? findGroup(job, r.alloc.TaskGroup) : undefined;
  const task = objs(group, "Tasks").find((t) => str(t, "Name") === (q.get("task") ?? ""));
  return strMap(task, "Meta")[key] ?? strMap(group, "Meta")[key] ?? strMap(job, "Meta")[key];
}

function authorize(
  ctx: ServiceContext,
  token: string | undefined,
  namespace: string,
  store: Store,
  q: URLSearchParams,
  jobId: string,
  policyCapabilities: (policy: string) => readonly string[] | undefined,
): string | undefined {
  if (!ctx.aclEnabled) return undefined;
  const record = token !== undefined ? ctx.tokens.lookup(token) : undefined;
  if (record === undefined) return token !== undefined ? "ACL token not found" : "Permission denied";
  if (!tokenAllows(record, ["namespace:alloc-exec"], namespace, policyCapabilities)) return "Permission denied";
  const allocId = q.get("alloc_id") || q.get("allocID") || "";
  const r = store.allocs.get(allocId);
  const group = r ? findGroup(r.job, r.alloc.TaskGroup) : undefined;
  const task = objs(group, "Tasks").find((t) => str(t, "Name") === (q.get("task") ?? ""));
  if (task !== undefined && UNISOLATED_DRIVERS.has(str(task, "Driver")) && r?.alloc.JobID === jobId) {
    if (!tokenAllows(record, ["namespace:alloc-node-exec"], namespace, policyCapabilities)) return "Permission denied";
  }
  return undefined;
}

function run(
  conn: WsConnection,
  store: Store,
  q: URLSearchParams,
  namespace: string,
  jobId: string,
  runner: ActionRunner,
): void {
  const allocId = q.get("alloc_id") || q.get("allocID") || "";
  const taskName = q.get("task") ?? "";
  const actionName = q.get("action") ?? "";
  const r = store.allocs.get(allocId);
  if (r === undefined || r.alloc.JobID !== jobId || r.alloc.Namespace !== namespace) {
    return conn.close(CLOSE_POLICY_VIOLATION, `Unknown allocation ${JSON.stringify(allocId)}`);
  }
  const task = objs(findGroup(r.job, r.alloc.TaskGroup), "Tasks").find((t) => str(t, "Name") === taskName);
  if (task === undefined) return conn.close(CLOSE_POLICY_VIOLATION, `unknown task name ${JSON.stringify(taskName)}`);
  if (r.alloc.ClientStatus !== "running" || r.alloc.TaskStates[taskName]?.State !== "running") {
    return conn.close(CLOSE_POLICY_VIOLATION, `task ${JSON.stringify(taskName)} is not running`);
  }
  const action: JsonObject | undefined = objs(task, "Actions").find((a) => str(a, "Name") === actionName);
  if (action === undefined) return conn.close(CLOSE_POLICY_VIOLATION, `action ${JSON.stringify(actionName)} not found`);
  if (actionMeta(store, q, namespace, jobId, ACTION_SILENT_META) === "true") return;
  const tty = boolParam(q, "tty");
  let result: ActionResult;
  try {
    result = runner({
      namespace,
      jobId,
      allocId,
      task: taskName,
      tty,
      action: { Name: actionName, Command: str(action, "Command"), Args: strs(action, "Args") },
    });
  } catch (e) {
    return conn.close(1011, e instanceof Error ? e.message : String(e));
  }
  const text = tty ? result.stdout.replace(/\r?\n/g, "\r\n") : result.stdout;
  // One frame per line, like output arriving from a running process.
  for (const part of text.match(/[^\n]*\n|[^\n]+$/g) ?? []) {
    conn.sendJson({ stdout: { data: Buffer.from(part, "utf8").toString("base64") } });
  }
  conn.sendJson({ stdout: { close: true } });
  const code = result.exitCode ?? 0;
  conn.sendJson({ exited: true, result: code === 0 ? {} : { exit_code: code } });
  conn.close(CLOSE_NORMAL);
}
