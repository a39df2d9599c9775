import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startDevServer } from "../../../devserver";
import { createSchedulerService } from "../../../devserver/scheduler";
import { createSecretsService } from "../../../devserver/secrets";
import { makeNodes } from "../../../devserver/scheduler/sim/cluster";
import { reconcile, tasksUpdated } from "../../../devserver/scheduler/sim/reconcile";
import { nextCron, nextCronIn, parseCron } from "../../../devserver/scheduler/sim/cron";
import { jobDiff } from "../../../devserver/scheduler/ops/diff";
import { evalFilter, parseFilter } from "../../../devserver/scheduler/api/filter";
import type { JsonObject } from "../../../devserver/scheduler/state/json";
import { humanBytes, mergeWarnings } from "../../../devserver/scheduler/ops/rules";
import type { AllocRecord } from "../../../devserver/scheduler/state/store";
import type { Allocation } from "../../../devserver/scheduler/state/types";
import { acceptKey } from "../../../devserver/scheduler/api/ws";
import { batchJob, list, rec, serviceJob } from "./http";

const job = (o: Record<string, unknown> = {}): JsonObject => serviceJob("u", o) as JsonObject;

describe("jobDiff", () => {
  it("is None for identical jobs and Added/Deleted against nothing", () => {
    expect(jobDiff(job(), job()).Type).toBe("None");
    expect(jobDiff(undefined, job()).Type).toBe("Added");
    expect(jobDiff(job(), undefined).Type).toBe("Deleted");
  });

  it("ignores server-managed fields and reports the rest as strings", () => {
    const d = jobDiff(
      job({ Version: 1, ModifyIndex: 5, Status: "running" }),
      job({ Version: 2, ModifyIndex: 9, Status: "dead", AllAtOnce: true }),
    );
    expect(d.Fields).toEqual([{ Type: "Added", Name: "AllAtOnce", Old: "", New: "true", Annotations: null }]);
  });

  it("shows datacenter set changes only when they changed", () => {
    expect(jobDiff(job(), job()).Objects).toBeNull();
    const d = jobDiff(job(), job({ Datacenters: ["dc1", "dc2"] }));
    // Sorted by name, then old value, then new value, as the server sorts field diffs.
    expect(d.Objects).toEqual([
      {
        Type: "Added",
        Name: "Datacenters",
        Objects: null,
        Fields: [
          { Type: "Added", Name: "Datacenters", Old: "", New: "dc2", Annotations: null },
          { Type: "None", Name: "Datacenters", Old: "dc1", New: "dc1", Annotations: null },
        ],
      },
    ]);
  });

  it("matches services by name and port, so reordering is not a change", () => {
    const two = [
      { Name: "a", PortLabel: "http" },
      { Name: "b", PortLabel: "admin" },
    ];
    const a = serviceJob("u", {}, { Services: two }) as JsonObject;
    const b = serviceJob("u", {}, { Services: [...two].reverse() }) as JsonObject;
    const groups = jobDiff(a, b).TaskGroups ?? [];
    expect(groups[0]?.Objects).toBeNull();
  });
});

describe("tasksUpdated", () => {
  it("ignores assigned dynamic port values but not their labels", () => {
    const a = serviceJob(
      "u",
      {},
      { Networks: [{ DynamicPorts: [{ Label: "http", Value: 21000, To: 8080 }] }] },
    ) as JsonObject;
    const b = serviceJob(
      "u",
      {},
      { Networks: [{ DynamicPorts: [{ Label: "http", Value: 0, To: 8080 }] }] },
    ) as JsonObject;
    const c = serviceJob("u", {}, { Networks: [{ DynamicPorts: [{ Label: "web", To: 8080 }] }] }) as JsonObject;
    expect(tasksUpdated(a, b, "web")).toBe(false);
    expect(tasksUpdated(a, c, "web")).toBe(true);
  });
});

describe("reconcile", () => {
  const alloc = (name: string, jmi: number, status = "running"): AllocRecord => ({
    alloc: { ID: name, Name: name, TaskGroup: "web", DesiredStatus: "run", ClientStatus: status } as Allocation,
    job: job({ JobModifyIndex: jmi }),
  });
  const opts = { rolling: true, promoted: false, systemCount: 0 };

  it("stops surplus allocations from older versions first", () => {
    const next = serviceJob("u", { JobModifyIndex: 2, Priority: 60 }, { Count: 2 }) as JsonObject;
    const [p] = reconcile(next, [alloc("u.web[0]", 1), alloc("u.web[1]", 2), alloc("u.web[2]", 2)], opts);
    expect(p?.stop.map((r) => r.alloc.Name)).toEqual(["u.web[0]"]);
    expect(p?.desired).toMatchObject({ Stop: 1, Ignore: 2 });
  });

  it("stops every allocation of a stopped job", () => {
    const [p] = reconcile(job({ Stop: true, JobModifyIndex: 3 }), [alloc("a", 1), alloc("b", 1)], opts);
    expect(p?.desired).toMatchObject({ Stop: 2 });
  });
});

describe("filter", () => {
  const datum = {
    Name: "web",
    Priority: 50,
    Stop: false,
    Meta: { "team.name": "blue" },
    Datacenters: ["dc1"],
  } as JsonObject;
  it.each([
    ['Name == "web"', true],
    ["Priority == 50", true],
    ["Stop == false", true],
    ['Meta["team.name"] == "blue"', true],
    ['Meta.missing == "x"', false],
    ['Meta.missing != "x"', true],
    ['"dc1" in Datacenters', true],
    ['"dc2" not in Datacenters', true],
    ["Meta is not empty", true],
    ['not Name == "web" or Priority != 50', false],
    ['Name matches "^w.b$"', true],
  ])("%s → %s", (expr, expected) => {
    expect(evalFilter(parseFilter(expr), datum)).toBe(expected);
  });

  it("rejects malformed expressions", () => {
    for (const bad of ["Name ==", '(Name == "x"', "Name ~ 1", '"x" Name']) expect(() => parseFilter(bad)).toThrow();
  });
});

describe("cron", () => {
  const from = new Date("2030-01-15T10:17:30Z");
  it.each([
    ["*/15 * * * *", "2030-01-15T10:30:00.000Z"],
    ["0 3 * * *", "2030-01-16T03:00:00.000Z"],
    ["@hourly", "2030-01-15T11:00:00.000Z"],
    ["0 0 1 * *", "2030-02-01T00:00:00.000Z"],
    ["0 9 * * MON", "2030-01-21T09:00:00.000Z"],
    ["30 0 12 * * * *", "2030-01-15T12:00:30.000Z"],
  ])("%s after %s", (spec, expected) => {
    expect(nextCron(parseCron(spec), from)?.toISOString()).toBe(expected);
  });

  it("reads the spec in the job's time zone, across daylight saving changes", () => {
    expect(nextCronIn(parseCron("0 3 * * *"), from, "America/New_York")?.toISOString()).toBe(
      "2030-01-16T08:00:00.000Z",
    );
    expect(
      nextCronIn(parseCron("0 3 * * *"), new Date("2030-07-01T00:00:00Z"), "America/New_York")?.toISOString(),
    ).toBe("2030-07-01T07:00:00.000Z");
    expect(nextCronIn(parseCron("0 3 * * *"), from, "UTC")?.toISOString()).toBe("2030-01-16T03:00:00.000Z");
    expect(() => nextCronIn(parseCron("0 3 * * *"), from, "Not/AZone")).toThrow(RangeError);
  });

  it("rejects invalid specs", () => {
    expect(() => parseCron("61 * * * *")).toThrow();
    expect(() => parseCron("* *")).toThrow();
  });
});

describe("helpers", () => {
  it("computes the RFC 6455 accept key", () => {
    expect(acceptKey("dGhlIHNhbXBsZSBub25jZQ==")).toBe("s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
  });

  it("formats sizes and warnings like the server", () => {
    expect(humanBytes(5)).toBe("5 B");
    expect(humanBytes(1_000_001)).toBe("1.0 MB");
    expect(humanBytes(25_300)).toBe("25 kB");
    expect(mergeWarnings([])).toBe("");
    expect(mergeWarnings(["a", "b"])).toBe("2 warning(s):\n\n* a\n* b");
  });

  it("derives stable node IDs from their position", () => {
    expect(makeNodes({ count: 2 }).map((n) => n.ID)).toEqual(makeNodes({ count: 2 }).map((n) => n.ID));
    expect(makeNodes({ count: 2 })[0]?.ID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("persistence", () => {
  it("restores jobs, versions, allocations and deployments across a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sched-persist-"));
    const path = join(dir, "state.json");
    try {
      const first = createSchedulerService({ deploymentMs: 20, evalDelayMs: 1 });
      let server = await startDevServer({
        services: [createSecretsService(), first],
        persistPath: path,
        scheduler: { rootToken: "root-token-for-test" },
      });
      const call = async (
        method: string,
        p: string,
        body?: unknown,
      ): Promise<{
        status: number;
        body: unknown;
        text: string;
        headers: Record<string, string | string[] | undefined>;
      }> => {
        const { request } = await import("undici");
        const res = await request(`${server.urls.scheduler}${p}`, {
          method: method as "GET",
          headers: { "x-svc-token": "root-token-for-test", "content-type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        const text = await res.body.text();
        return {
          status: res.statusCode,
          text,
          body: text ? (JSON.parse(text) as unknown) : undefined,
          headers: res.headers,
        };
      };
      await call("POST", "/v1/jobs", { Job: serviceJob("kept"), Submission: { Source: "src", Format: "hcl2" } });
      await call("POST", "/v1/jobs", { Job: batchJob("kept-batch") });
      await first.control.idle();
      await call("POST", "/v1/jobs", { Job: serviceJob("kept", { Priority: 60 }) });
      await first.control.idle();
      const before = rec({ ...(await call("GET", "/v1/job/kept")) });
      await server.close();

      const second = createSchedulerService({ deploymentMs: 20, evalDelayMs: 1 });
      server = await startDevServer({
        services: [createSecretsService(), second],
        persistPath: path,
        scheduler: { rootToken: "root-token-for-test" },
      });
      const after = rec({ ...(await call("GET", "/v1/job/kept")) });
      expect(after).toEqual(before);
      // The priority change was an in-place update: the same two allocations, now on version 1.
      expect(list({ ...(await call("GET", "/v1/job/kept/allocations")) }).map((a) => a.JobVersion)).toEqual([1, 1]);
      expect((rec({ ...(await call("GET", "/v1/job/kept/versions")) }).Versions as unknown[]).length).toBe(2);
      expect(rec({ ...(await call("GET", "/v1/job/kept/submission?version=0")) }).Source).toBe("src");
      expect(list({ ...(await call("GET", "/v1/job/kept/deployments")) }).map((d) => d.Status)).toEqual([
        "successful",
        "successful",
      ]);
      const next = rec({ ...(await call("POST", "/v1/jobs", { Job: serviceJob("kept", { Priority: 70 }) })) });
      expect(next.JobModifyIndex as number).toBeGreaterThan(before.ModifyIndex as number);
      await second.control.idle();
      expect(rec({ ...(await call("GET", "/v1/job/kept")) }).Version).toBe(2);
      await server.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
