/**
 * Conformance of the scheduler job-API client: runs against the devserver by default and against a real
 * cluster with CONFORMANCE_TARGET=env (`npm run conformance`).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { isApiError } from "../../provider/errors";
import type { Job } from "../../provider/schemas/scheduler";
import { newerOrSkip } from "./scheduler-fixture";
import { devserverOr, openTarget, type ConformanceTarget } from "./target";

let target: ConformanceTarget;
let client: SchedulerClient;

beforeAll(async () => {
  target = await openTarget();
  client = new SchedulerClient(target.scheduler);
});
afterAll(() => target?.close());

/** A small batch job; it needs no node to register (allocations may stay pending on a real cluster). */
function batchJob(id: string, command = "/bin/true"): Job {
  return {
    ID: id,
    Name: id,
    Type: "batch",
    Datacenters: ["*"],
    TaskGroups: [
      {
        Name: "main",
        Count: 1,
        Tasks: [{ Name: "run", Driver: "raw_exec", Config: { command } }],
      },
    ],
  } as Job;
}

/** Registers a fresh job and schedules its purge. */
async function registered(label: string): Promise<string> {
  const id = target.name(label);
  await client.jobs.register({ Job: batchJob(id) });
  target.cleanup(() => client.jobs.deregister(id, { purge: true }));
  return id;
}

describe("jobs", () => {
  it("registers a job and reads it back at version 0", async () => {
    const id = await registered("reg");
    const { value, meta } = await client.jobs.info(id);
    expect(value.ID).toBe(id);
    expect(value.Version).toBe(0);
    expect(meta.lastIndex).toBeGreaterThan(0);
  });

  it("finds nothing for an unknown job, and info says not_found", async () => {
    const id = target.name("missing");
    expect(await client.jobs.find(id)).toBeUndefined();
    const err = await client.jobs.info(id).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isApiError(err, "not_found")).toBe(true);
  });

  it("counts a changed definition as a new version", async () => {
    const id = await registered("versions");
    await client.jobs.register({ Job: batchJob(id, "/bin/echo") });
    const { value } = await client.versions.versions(id);
    expect((value.Versions ?? []).map((v) => v.Version).sort()).toEqual([0, 1]);
  });
});

describe("version tags", () => {
  it("tags the current version and removes the tag", async (t) => {
    const id = await registered("tag");
    const { value: tag } = await newerOrSkip(
      t,
      client.versions.tagVersion(id, "release", { Description: "conformance" }),
    );
    expect(tag.Name).toBe("release");
    const { value: job } = await client.jobs.info(id);
    expect((job as { VersionTag?: { Name?: string } }).VersionTag?.Name).toBe("release");
    await client.versions.untagVersion(id, "release");
    const { value: after } = await client.jobs.info(id);
    expect((after as { VersionTag?: { Name?: string } | null }).VersionTag ?? undefined).toBeUndefined();
  });
});

describe("devserver controls", () => {
  it("surfaces a reset connection on a write as a transport error without retrying it", async (t) => {
    const dev = devserverOr(t, target, "needs fault injection");
    const id = target.name("reset");
    dev.resetLog();
    const fault = dev.faults.add({ service: "scheduler", method: "POST", path: "/v1/jobs", reset: true, times: 1 });
    const err = await client.jobs.register({ Job: batchJob(id) }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isApiError(err, "transport")).toBe(true);
    expect(fault.hits).toBe(1);
    // A register is not idempotent, so the core must not have sent it twice.
    expect(dev.requestLog.filter((e) => e.method === "POST" && e.path === "/v1/jobs")).toHaveLength(1);
  });
});
