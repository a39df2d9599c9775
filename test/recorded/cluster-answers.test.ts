/**
 * The answers a real three-server Nomad 1.6.5 cluster gave while its leader was killed, as the fault run
 * (test/real-clusters/scheduler-fault-run.test.ts, through its recorder) kept them:
 * test/fixtures/recorded/nomad-1.6.5-cluster/leader-change-answers.json (node ports, IDs and times left
 * out). For each one: the devserver's LEADER_CHANGE preset (devserver/core/faults.ts) is that answer, the
 * devserver injecting it answers with the recorded status, body and content type, the library reads it as
 * the recorded kind of leader change, and a call that meets it a few times goes through once it stops, with
 * the write applied once.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LEADER_CHANGE, startDevServer, type DevServer } from "../../devserver";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { setConnectionOverrides } from "../../provider/config";
import { isLeaderChange, leaderChangeOf } from "../../provider/http/leader";
import { SPEC } from "../helpers/jobspecs";

interface RecordedClusterAnswer {
  /** The method and route (`:id` for a job ID) the answer came on. */
  method: string;
  route: string;
  status: number;
  contentType: string;
  body: string;
  /** How many times the cluster gave it in the recorded runs. */
  seen: number;
  /** The devserver preset that reproduces it. */
  preset: keyof typeof LEADER_CHANGE;
  /** What it says: nothing applied, or the answer of an RPC the old leader took was lost. */
  leaderChange: "not-applied" | "maybe-applied";
}

const file = path.join(__dirname, "..", "fixtures", "recorded", "nomad-1.6.5-cluster", "leader-change-answers.json");
const recorded = (JSON.parse(readFileSync(file, "utf8")) as { answers: RecordedClusterAnswer[] }).answers;

let server: DevServer;
let client: SchedulerClient;
beforeAll(async () => {
  server = await startDevServer({ schedulerService: { release: "1.6.5", deploymentMs: 20, evalDelayMs: 1 } });
  client = new SchedulerClient({ address: server.urls.scheduler, token: server.rootTokens.scheduler });
  setConnectionOverrides({ retry: { baseDelayMs: 1, maxDelayMs: 20 }, timeoutMs: 5_000 });
});
afterAll(async () => {
  setConnectionOverrides({});
  await server?.close();
});

/** A job the reads of a route can find; registered once per ID. */
async function existing(id: string): Promise<void> {
  if ((await client.jobs.find(id)) !== undefined) return;
  const parsed = await client.jobs.parse({ JobHCL: SPEC(id, "nginx:1") });
  await client.jobs.register({ Job: parsed.value });
}

/** The library's call for a recorded route; resolves to what it read or wrote. */
async function call(a: RecordedClusterAnswer, id: string): Promise<unknown> {
  const key = `${a.method} ${a.route}`;
  switch (key) {
    case "GET /v1/job/:id":
      return (await client.jobs.info(id)).value.ID;
    case "GET /v1/jobs":
      return (await client.jobs.listPage({ prefix: id })).value.length;
    case "GET /v1/job/:id/deployment":
      return (await client.records.latestDeployment(id)).value;
    case "GET /v1/job/:id/deployments":
      return (await client.records.deployments(id)).value.length;
    case "GET /v1/job/:id/allocations":
      return (await client.records.allocations(id)).value.length;
    case "GET /v1/job/:id/evaluations":
      return (await client.records.evaluations(id)).value.length;
    case "POST /v1/job/:id/plan":
      return (await client.jobs.plan(id, { Job: (await client.jobs.info(id)).value, Diff: true })).value.Diff?.Type;
    case "DELETE /v1/job/:id":
      // A destroy's purge: sent again on an answer that says nothing was applied, and safe again anyway.
      return (await client.jobs.deregister(id, { purge: true })).value;
    case "POST /v1/jobs": {
      // A create with check-and-set: the job must not exist yet.
      const parsed = await client.jobs.parse({ JobHCL: SPEC(`${id}-new`, "nginx:1") });
      return (await client.jobs.register({ Job: parsed.value, EnforceIndex: true, JobModifyIndex: 0 })).value
        .JobModifyIndex;
    }
    default:
      throw new Error(`no call for the recorded route ${key}: add one`);
  }
}

describe("the devserver reproduces a Nomad 1.6.5 cluster's answers during leader changes", () => {
  it("has recorded answers", () => {
    expect(recorded.length).toBeGreaterThan(0);
  });

  recorded.forEach((a, i) => {
    const label = `${a.method} ${a.route} → ${a.status} ${JSON.stringify(a.body)}`;
    it(`${label}: the preset ${a.preset} is it, and the library reads it as ${a.leaderChange}`, () => {
      expect(LEADER_CHANGE[a.preset]).toEqual({ status: a.status, body: a.body });
      expect(leaderChangeOf("scheduler", a.status, [a.body])).toBe(a.leaderChange);
    });

    it(`${label}: injected, answered as recorded; a call through it succeeds`, async () => {
      const id = `rec-${i}`;
      await existing(id);
      const concrete = a.route.replace(":id", id);
      const fault = { service: "scheduler" as const, method: a.method, path: a.route, ...LEADER_CHANGE[a.preset] };
      server.faults.add({ ...fault, times: 1 });
      const raw = await fetch(`${server.urls.scheduler}${concrete}`, {
        method: a.method,
        headers: { "x-svc-token": server.rootTokens.scheduler ?? "" },
        ...(a.method === "POST" ? { body: "{}" } : {}),
      });
      expect(raw.status).toBe(a.status);
      expect(raw.headers.get("content-type")).toBe(a.contentType);
      expect(await raw.text()).toBe(a.body);

      server.faults.add({ ...fault, times: 3 });
      const from = server.requestLog.length;
      const sentNow = () =>
        server.requestLog.slice(from).filter((e) => e.method === a.method && e.path === concrete.split("?")[0]);
      if (a.method === "POST" && a.route === "/v1/jobs" && a.leaderChange === "maybe-applied") {
        // A register whose answer was lost may have been applied: the core does not send it again (the Job
        // resource reads the job back first), and the error says it may or may not have been applied.
        const err = await call(a, id).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(isLeaderChange(err)).toBe(true);
        expect(String(err)).toMatch(/may or may not have been applied/);
        expect(sentNow().length).toBe(1);
        server.faults.clear();
        return;
      }
      await expect(call(a, id)).resolves.toBeDefined();
      // Three answers as recorded, then the one that went through.
      expect(sentNow().length).toBe(4);
      expect(sentNow().filter((e) => e.fault === true).length).toBe(3);
    });
  });
});
