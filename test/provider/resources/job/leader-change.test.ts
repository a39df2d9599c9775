/**
 * The Job provider and the scheduler client's blocking queries through a leader election, as the devserver
 * reproduces the answers of a Nomad 1.6.5 cluster (devserver/core/faults.ts LEADER_CHANGE).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LEADER_CHANGE } from "../../../../devserver/core";
import { watch } from "../../../../provider/clients/scheduler/watch";
import { setConnectionOverrides } from "../../../../provider/config";
import type { ProviderImpl } from "../../../../provider/resources/common";
import { job as jobImpl } from "../../../../provider/resources/job";
import { upStep } from "../../../helpers/engine-steps";
import { SPEC } from "../../../helpers/jobspecs";
import { capturingStderr } from "../auth-helpers";
import { registers, startHarness, type Harness } from "./harness";

const job = jobImpl as unknown as ProviderImpl;
let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20 }, timeoutMs: 5_000 });
});
afterAll(async () => {
  setConnectionOverrides({});
  await h?.close();
});
afterEach(() => {
  h.server.faults.clear();
});

async function up(news: Record<string, unknown>) {
  return (await capturingStderr(() => upStep(job, undefined, news))).value;
}

describe("Job create while the scheduler elects a leader", () => {
  it("the check-and-set register is sent again through 'No cluster leader' answers beyond maxAttempts, and applied once", async () => {
    h.server.faults.add({
      service: "scheduler",
      method: "POST",
      path: "/v1/jobs",
      times: 6,
      ...LEADER_CHANGE.noLeader,
    });
    const from = h.server.requestLog.length;
    const r = await up({ jobspec: SPEC("elect-a", "nginx:1") });
    expect(r.error).toBeUndefined();
    expect(registers(h.server, from)).toBe(7);
    const held = (await h.client.jobs.info("elect-a")).value;
    expect(held.Version).toBe(0);
    expect(r.state?.outs.jobModifyIndex).toBe(held.JobModifyIndex);
  });

  it("the deployment watch goes through the forwarded RPC's 'connection refused' to the dead leader", async () => {
    h.server.faults.add({
      service: "scheduler",
      method: "GET",
      path: "/v1/job/elect-b/deployments",
      times: 6,
      ...LEADER_CHANGE.forwardRefused,
    });
    const r = await up({ jobspec: SPEC("elect-b", "nginx:1") });
    expect(r.error).toBeUndefined();
    expect(r.state?.initError).toBeUndefined();
    expect(r.state?.outs.deploymentStatus).toBe("successful");
  });
});

describe("a blocking query through a leader change", () => {
  it("resumes on the new leader with the last index it saw", async () => {
    const reg = await h.client.jobs.register({ Job: { ...(await parsed("elect-w")), Meta: { v: "1" } } });
    expect(reg.value.JobModifyIndex).toBeGreaterThan(0);
    const abort = new AbortController();
    const seen = watch((o) => h.client.jobs.info("elect-w", o), { waitMs: 10_000, signal: abort.signal });
    const first = await seen.next();
    const index = first.value?.meta.lastIndex ?? 0;
    expect(index).toBeGreaterThan(0);
    h.server.faults.add({
      service: "scheduler",
      method: "GET",
      path: "/v1/job/elect-w",
      times: 4,
      ...LEADER_CHANGE.noLeader,
    });
    const from = h.server.requestLog.length;
    const next = capturingStderr(() => seen.next());
    // Let the faulted reads and the resumed blocking read arrive before the change that ends it.
    await waitFor(() => h.server.requestLog.slice(from).filter((e) => e.path === "/v1/job/elect-w").length >= 4);
    await h.client.jobs.register({ Job: { ...(await parsed("elect-w")), Meta: { v: "2" } } });
    const second = (await next).value;
    abort.abort();
    expect(second.value?.meta.lastIndex).toBeGreaterThan(index);
    const reads = h.server.requestLog.slice(from).filter((e) => e.path === "/v1/job/elect-w" && e.method === "GET");
    expect(reads.length).toBeGreaterThanOrEqual(5);
    expect(reads.filter((e) => e.fault === true)).toHaveLength(4);
    // Every read of the watch, the faulted ones and the one that resumed, waited on the same last index.
    for (const e of reads) expect(new URLSearchParams(e.query).get("index")).toBe(String(index));
  });
});

async function parsed(id: string) {
  return (await h.client.jobs.parse({ JobHCL: SPEC(id, "nginx:1") })).value;
}

async function waitFor(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
}
