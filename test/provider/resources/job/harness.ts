/**
 * Drives the Job and JobVersionTag providers the way the engine does (check, then diff, then create,
 * update or delete-and-create), against a devserver started on port 0, and counts the requests it sees.
 */
import { expect, vi } from "vitest";
import { ResourceInitError } from "../../../../provider/resources/common";
import { setStackConfig } from "../../../helpers/stack-config";
import { SchedulerClient } from "../../../../provider/clients/scheduler";
import { job } from "../../../../provider/resources/job";
import type { JobInputs } from "../../../../provider/resources/job/inputs";
import type { JobOutputs } from "../../../../provider/resources/job/state";
import { startDevServer, type DevServer, type DevServerOptions } from "../../../../devserver";

/** A running devserver with the providers pointed at it. */
export interface Harness {
  server: DevServer;
  client: SchedulerClient;
  close(): Promise<void>;
}

/** Starts a devserver and points the providers' stack config at its scheduler. */
export async function startHarness(options: DevServerOptions = {}): Promise<Harness> {
  const server = await startDevServer(options);
  setStackConfig({ schedulerAddress: server.urls.scheduler, schedulerToken: server.rootTokens.scheduler });
  const client = new SchedulerClient({ address: server.urls.scheduler, token: server.rootTokens.scheduler });
  return { server, client, close: () => server.close() };
}

/** Counts the requests the devserver handled since `from` that match a method and a path test. */
export function countRequests(server: DevServer, method: string, path: RegExp | string, from = 0): number {
  return server.requestLog
    .slice(from)
    .filter((e) => e.method === method && (typeof path === "string" ? e.path === path : path.test(e.path))).length;
}

/** Counts register calls (POST/PUT /v1/jobs or /v1/job/:id) since `from`. */
export function registers(server: DevServer, from = 0): number {
  return server.requestLog
    .slice(from)
    .filter(
      (e) =>
        (e.method === "POST" || e.method === "PUT") && (e.path === "/v1/jobs" || /^\/v1\/job\/[^/]+$/.test(e.path)),
    ).length;
}

/** The inputs of a one-task batch job, purged on delete. */
export function batchJob(id: string): Record<string, unknown> {
  return {
    job: {
      ID: id,
      Name: id,
      Type: "batch",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "exec", Config: { command: "true" } }] }],
    },
    waitForDeployment: false,
    purgeOnDestroy: true,
  };
}

/** Checks inputs like the engine (`olds`: the old inputs in state), failing the test on check failures. */
export async function checked(news: Record<string, unknown>, olds: Record<string, unknown> = {}): Promise<JobInputs> {
  const r = await job.check(olds, news);
  if (r.failures && r.failures.length > 0) throw new Error(`check failed: ${JSON.stringify(r.failures)}`);
  return r.inputs as JobInputs;
}

/** A resource in "state": its ID, outputs and (checked) inputs. */
export interface Stated {
  id: string;
  outs: JobOutputs;
  inputs?: JobInputs;
}

/** Creates a job like `pulumi up` does for a new resource. */
export async function createJob(news: Record<string, unknown>): Promise<Stated> {
  const inputs = await checked(news);
  const r = await job.create(inputs);
  return { id: r.id, outs: r.outs as JobOutputs, inputs };
}

/** What an engine step did. */
export type Step = "same" | "update" | "replace";

/** Runs diff and then the step it asks for; returns the new state and the step. */
export async function applyJob(state: Stated, news: Record<string, unknown>): Promise<Stated & { step: Step }> {
  const inputs = await checked(news, state.inputs);
  const d = await job.diff(state.id, state.outs, inputs);
  // A "same" step stores the new inputs too.
  if (!d.changes) return { ...state, inputs, step: "same" };
  if (d.replaces && d.replaces.length > 0) {
    if (!d.deleteBeforeReplace) throw new Error("expected delete-before-replace");
    await job.delete(state.id, state.outs);
    const c = await job.create(inputs);
    return { id: c.id, outs: c.outs as JobOutputs, inputs, step: "replace" };
  }
  const u = await job.update(state.id, state.outs, inputs);
  return { id: state.id, outs: u.outs as JobOutputs, inputs, step: "update" };
}

/** Refreshes a resource like `pulumi refresh`; undefined when the engine would drop it. */
export async function refreshJob(state: Stated): Promise<Stated | undefined> {
  const r = await job.read(state.id, state.outs);
  if (!r.id) return undefined;
  return { id: r.id, outs: r.props as JobOutputs, ...(state.inputs ? { inputs: state.inputs } : {}) };
}

/** Captures what the provider writes to stderr (the preview text) while `fn` runs. */
export async function captureStderr<T>(fn: () => Promise<T>): Promise<{ value: T; text: string }> {
  const lines: string[] = [];
  const spy = vi.spyOn(console, "error").mockImplementation((...args: unknown[]) => {
    lines.push(args.map(String).join(" "));
  });
  try {
    const value = await fn();
    return { value, text: lines.join("\n") };
  } finally {
    spy.mockRestore();
  }
}

/** Runs `fn`, expecting it to throw; returns the error. */
export async function rejection(fn: () => Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await fn();
  } catch (e) {
    return e as Error & Record<string, unknown>;
  }
  throw new Error("expected a rejection");
}

/** Returns `e` as the init error a failed rollout throws (failing the test when it is not one). */
export function initError(e: unknown): ResourceInitError & { properties: JobOutputs } {
  expect(e).toBeInstanceOf(ResourceInitError);
  return e as ResourceInitError & { properties: JobOutputs };
}

/** The image the server runs for job `id` (its first group's first task). */
export async function serverImage(client: SchedulerClient, id: string): Promise<unknown> {
  return (await client.jobs.info(id)).value.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image;
}
