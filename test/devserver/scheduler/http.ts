// Helpers for the scheduler devserver tests: a server per test file and a raw HTTP caller (undici), so
// the tests check the wire contract without going through the library's own client.
import { request } from "undici";
import { startDevServer, type DevServer } from "../../../devserver";
import { createSecretsService } from "../../../devserver/secrets";
import {
  createSchedulerService,
  type SchedulerService,
  type SchedulerServiceOptions,
} from "../../../devserver/scheduler";

/** A response as the scheduler tests look at it. */
export interface Reply {
  readonly status: number;
  /** Parsed JSON body, or the text when the body is not JSON (errors are plain text). */
  readonly body: unknown;
  readonly text: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** Options of `call`. */
export interface CallOptions {
  readonly token?: string | null;
  readonly body?: unknown;
  readonly raw?: Buffer | string;
  readonly headers?: Record<string, string>;
}

/** A started devserver with the scheduler module and a caller bound to it. */
export interface Harness {
  readonly server: DevServer;
  readonly sched: SchedulerService;
  readonly base: string;
  readonly root: string;
  call(method: string, path: string, options?: CallOptions): Promise<Reply>;
  close(): Promise<void>;
}

/** Starts a devserver whose scheduler uses `options` (fast timings by default). */
export async function startScheduler(options: SchedulerServiceOptions = {}, acl = true): Promise<Harness> {
  const sched = createSchedulerService({ deploymentMs: 40, evalDelayMs: 1, ...options });
  const server = await startDevServer({ services: [createSecretsService(), sched], acl });
  const base = server.urls.scheduler;
  const root = server.rootTokens.scheduler;
  return {
    server,
    sched,
    base,
    root,
    call: async (method, path, o = {}) => {
      const headers: Record<string, string> = { ...o.headers };
      const token = o.token === undefined ? root : o.token;
      if (token !== null) headers["x-svc-token"] = token;
      let payload: string | Buffer | undefined;
      if (o.raw !== undefined) payload = o.raw;
      else if (o.body !== undefined) {
        payload = JSON.stringify(o.body);
        headers["content-type"] = "application/json";
      }
      const res = await request(`${base}${path}`, { method: method as "GET", headers, body: payload });
      const text = await res.body.text();
      let body: unknown;
      try {
        body = text === "" ? undefined : (JSON.parse(text) as unknown);
      } catch {
        body = text;
      }
      return { status: res.statusCode, body, text, headers: res.headers };
    },
    close: () => server.close(),
  };
}

/** Returns a service job in the API's JSON shape; `patch` is merged over the defaults. */
export function serviceJob(
  id: string,
  patch: Record<string, unknown> = {},
  group: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "web",
        Count: 2,
        Networks: [{ DynamicPorts: [{ Label: "http", To: 8080 }] }],
        Services: [{ Name: `${id}-web`, PortLabel: "http", Provider: "nomad", Tags: ["v1"] }],
        Tasks: [
          {
            Name: "app",
            Driver: "docker",
            Config: { image: "nginx:1.25", ports: ["http"] },
            Env: { MODE: "prod" },
            Resources: { CPU: 200, MemoryMB: 256 },
            Actions: [{ Name: "hello", Command: "echo", Args: ["hello", "from", "action"] }],
          },
        ],
        ...group,
      },
    ],
    ...patch,
  };
}

/** Returns a batch job in the API's JSON shape. */
export function batchJob(id: string, patch: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: "batch",
    TaskGroups: [
      { Name: "work", Count: 1, Tasks: [{ Name: "run", Driver: "exec", Config: { command: "/bin/true" } }] },
    ],
    ...patch,
  };
}

/** Returns the body as a record (throws when it is not an object). */
export function rec(reply: Reply): Record<string, unknown> {
  if (typeof reply.body !== "object" || reply.body === null || Array.isArray(reply.body)) {
    throw new Error(`expected an object, got ${reply.status}: ${reply.text.slice(0, 300)}`);
  }
  return reply.body as Record<string, unknown>;
}

/** Returns the body as a list of records (throws when it is not a list). */
export function list(reply: Reply): Record<string, unknown>[] {
  if (!Array.isArray(reply.body)) throw new Error(`expected a list, got ${reply.status}: ${reply.text.slice(0, 300)}`);
  return reply.body as Record<string, unknown>[];
}

/** Polls `probe` until it returns a defined value (or fails after `timeoutMs`). */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
