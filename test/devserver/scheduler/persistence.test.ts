import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startDevServer } from "../../../devserver";
import { createSchedulerService } from "../../../devserver/scheduler";
import { createSecretsService } from "../../../devserver/secrets";
import { batchJob, list, rec, serviceJob } from "./http";

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
