/**
 * Shared set-up of the scheduler client tests: a devserver on port 0, a client counting its requests,
 * job fixtures in the API's JSON shape, and a poll helper.
 */
import { startDevServer, type DevServer, type DevServerOptions } from "../../../../devserver";
import { SchedulerClient } from "../../../../provider/clients/scheduler";
import type { ConnectionOptions } from "../../../../provider/http/settings";
import type { Job } from "../../../../provider/schemas/scheduler";

/** A devserver and a root-token client whose requests are counted. */
export interface SchedulerFixture {
  server: DevServer;
  client: SchedulerClient;
  /** `METHOD path` of every attempt the client made. */
  sent: string[];
  /** Creates another client on the same server (another token, namespace...). */
  clientWith(extra: ConnectionOptions): SchedulerClient;
}

/** Starts a devserver and a client; close `server` in afterAll. */
export async function startScheduler(options: DevServerOptions = {}): Promise<SchedulerFixture> {
  const server = await startDevServer(options);
  const sent: string[] = [];
  const clientWith = (extra: ConnectionOptions) =>
    new SchedulerClient({
      address: server.urls.scheduler,
      token: server.rootTokens.scheduler,
      env: {},
      retry: { maxAttempts: 1 },
      hooks: { onRequest: (i) => sent.push(`${i.method} ${i.path}`) },
      ...extra,
    });
  return { server, client: clientWith({}), sent, clientWith };
}

/** A small service job; `overrides` replace top-level fields. */
export function serviceJob(id: string, overrides: Partial<Job> = {}): Job {
  return {
    ID: id,
    Name: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "web",
        Count: 1,
        Tasks: [
          {
            Name: "app",
            Driver: "docker",
            Config: { image: "nginx:1.27" },
            Env: { LOG_LEVEL: "info" },
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
    ...overrides,
  };
}

/** A batch job. */
export function batchJob(id: string, overrides: Partial<Job> = {}): Job {
  return {
    ID: id,
    Name: id,
    Type: "batch",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "run",
        Count: 1,
        Tasks: [
          { Name: "once", Driver: "raw_exec", Config: { command: "/bin/date" }, Resources: { CPU: 50, MemoryMB: 32 } },
        ],
      },
    ],
    ...overrides,
  };
}

/** Returns `job` with the app task's LOG_LEVEL set (a spec change). */
export function withLogLevel(job: Job, level: string): Job {
  const tg = job.TaskGroups?.[0];
  const task = tg?.Tasks?.[0];
  if (!tg || !task) throw new Error("fixture job has no task");
  return { ...job, TaskGroups: [{ ...tg, Tasks: [{ ...task, Env: { ...(task.Env ?? {}), LOG_LEVEL: level } }] }] };
}

/** Polls `fn` until it returns a value other than undefined; fails after `timeoutMs`. */
export async function until<T>(
  fn: () => Promise<T | undefined> | T | undefined,
  what: string,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
