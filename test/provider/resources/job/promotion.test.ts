/**
 * Canary promotion: `promotion` "manual" (the default: `up` ends with the deployment waiting,
 * and says so), "auto" (promote once the canaries are healthy) and `{ soak, groups? }`; a failing canary
 * fails the update and goes through `onDeploymentFailure`. Against the devserver over real HTTP.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createSchedulerService } from "../../../../devserver";
import { ResourceInitError } from "../../../../provider/resources/common";
import { job } from "../../../../provider/resources/job";
import type { JobOutputs } from "../../../../provider/resources/job/state";
import { applyJob, captureStderr, countRequests, createJob, rejection, startHarness, type Harness } from "./harness";

/** A service job whose groups each run `count` allocations and place one canary per update. */
const spec = (id: string, image: string, groups: string[] = ["web"]) => `
job "${id}" {
  datacenters = ["dc1"]
${groups
  .map(
    (g) => `
  group "${g}" {
    count = 2
    update {
      max_parallel = 1
      canary       = 1
    }
    task "t" {
      driver = "docker"
      config {
        image = "${image}"
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }`,
  )
  .join("\n")}
}
`;

let h: Harness;
let sched: ReturnType<typeof createSchedulerService>;

beforeAll(async () => {
  sched = createSchedulerService({ deploymentMs: 20, evalDelayMs: 1 });
  h = await startHarness({ services: [sched] });
});

beforeEach(() => {
  sched.control.setTiming({ deploymentMs: 20 });
});

afterAll(async () => {
  await h?.close();
});

const promotes = (from = 0): number => countRequests(h.server, "PUT", /^\/v1\/deployment\/promote\//, from);

async function runningVersions(id: string): Promise<number[]> {
  const { value } = await h.client.records.allocations(id);
  return value
    .filter((a) => a.DesiredStatus === "run")
    .map((a) => a.JobVersion ?? -1)
    .sort();
}

async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("timed out waiting");
}

async function latestDeployment(id: string) {
  const d = (await h.client.records.latestDeployment(id)).value;
  if (d === null) throw new Error("no deployment");
  return d;
}

describe("promotion", () => {
  it('"manual" (the default): `up` ends with the canaries waiting, and says so and how to promote', async () => {
    const state = await createJob({ jobspec: spec("pm-manual", "app:1") });
    const from = h.server.requestLog.length;
    const { value: next, text } = await captureStderr(() => applyJob(state, { jobspec: spec("pm-manual", "app:2") }));
    const d = await latestDeployment("pm-manual");
    expect(next.outs).toMatchObject({ version: 1, deploymentId: d.ID, deploymentStatus: "running" });
    expect(text).toContain(
      `version 1 is deployed as canaries only: deployment ${d.ID} is running and waits for manual promotion of "web" (promotion is "manual")`,
    );
    expect(text).toContain("`pulumi up` does not wait for that");
    expect(text).toContain(`nomad deployment promote ${d.ID}`);
    expect(promotes(from)).toBe(0);
    expect(await runningVersions("pm-manual")).toEqual([0, 0, 1]);
  });

  it('"manual": `up` waits until the canary is placed and healthy, and shows its progress on the way', async () => {
    // The devserver, like the real scheduler, says "requires manual promotion" from the deployment's start;
    // health comes later. Ending on the description alone would end before the canary is healthy.
    sched.control.setTiming({ deploymentMs: 20 });
    const state = await createJob({ jobspec: spec("pm-manual-wait", "app:1") });
    sched.control.setTiming({ deploymentMs: 400 });
    const { value: next, text } = await captureStderr(() =>
      applyJob(state, { jobspec: spec("pm-manual-wait", "app:2") }),
    );
    const d = await latestDeployment("pm-manual-wait");
    expect(next.outs).toMatchObject({ version: 1, deploymentId: d.ID, deploymentStatus: "running" });
    expect(d.TaskGroups?.web).toMatchObject({ DesiredCanaries: 1, HealthyAllocs: 1, Promoted: false });
    const id = (d.ID ?? "").slice(0, 8);
    const waiting = text.indexOf(
      `Job "pm-manual-wait": deployment ${id} running: "web" 1/2 placed, 0 healthy, 0 unhealthy, canaries 1/1`,
    );
    const healthy = text.indexOf(
      `Job "pm-manual-wait": deployment ${id} running: "web" 1/2 placed, 1 healthy, 0 unhealthy, canaries 1/1`,
    );
    const note = text.indexOf("waits for manual promotion");
    expect(waiting).toBeGreaterThanOrEqual(0);
    expect(healthy).toBeGreaterThan(waiting);
    expect(note).toBeGreaterThan(healthy);
  });

  it("progress lines go through the secret mask: a secret variable's value never shows", async () => {
    const secretSpec = (image: string) => `
variable "team" {
  type = string
}
job "pm-mask" {
  datacenters = ["dc1"]
  meta = {
    team = var.team
  }
  group "payroll-blue" {
    count = 1
    update {
      max_parallel = 1
      canary       = 1
    }
    task "t" {
      driver = "docker"
      config {
        image = "${image}"
      }
    }
  }
}
`;
    const inputs = { variables: { team: "payroll-blue" }, __secretInputs: ["variables"] };
    const state = await createJob({ jobspec: secretSpec("app:1"), ...inputs });
    const { text } = await captureStderr(() => applyJob(state, { jobspec: secretSpec("app:2"), ...inputs }));
    expect(text).toMatch(/Job "pm-mask": deployment \w+ running: "\[secret\]" 1\/1 placed, 1 healthy/);
    expect(text).not.toContain("payroll-blue");
  });

  it('"manual": a canary that fails before it is healthy fails `up`, and onDeploymentFailure reverts it', async () => {
    const state = await createJob({ jobspec: spec("pm-manual-fail", "app:1") });
    sched.control.failNextDeployment("pm-manual-fail");
    sched.control.setTiming({ deploymentMs: 200 });
    const from = h.server.requestLog.length;
    const e = await rejection(() => applyJob(state, { jobspec: spec("pm-manual-fail", "app:2") }));
    expect(e).toBeInstanceOf(ResourceInitError);
    expect(e.message).toContain("version 1 failed: Failed due to unhealthy allocations.");
    expect(e.message).toContain("Pulumi reverted the job to version 0 (now registered as version 2)");
    expect(promotes(from)).toBe(0);
    const server = (await h.client.jobs.info("pm-manual-fail")).value;
    expect(server.Version).toBe(2);
    expect(server.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image).toBe("app:1");
  });

  it('"auto": promotes once the canary is healthy; the update ends "successful" on the new version', async () => {
    const state = await createJob({ jobspec: spec("pm-auto", "app:1"), promotion: "auto" });
    expect(state.outs.version).toBe(0);
    const from = h.server.requestLog.length;
    const next = await applyJob(state, { jobspec: spec("pm-auto", "app:2"), promotion: "auto" });
    expect(next.step).toBe("update");
    expect(next.outs).toMatchObject({ version: 1, deploymentStatus: "successful", promotion: "auto" });
    const d = await latestDeployment("pm-auto");
    expect(d.TaskGroups?.web).toMatchObject({ Promoted: true, DesiredCanaries: 1 });
    expect(promotes(from)).toBe(1);
    expect(await runningVersions("pm-auto")).toEqual([1, 1]);
  });

  it("a failing canary fails the update, names its group, and is reverted by onDeploymentFailure", async () => {
    const state = await createJob({ jobspec: spec("pm-fail", "app:1"), promotion: "auto" });
    sched.control.failNextDeployment("pm-fail");
    const from = h.server.requestLog.length;
    const e = await rejection(() => applyJob(state, { jobspec: spec("pm-fail", "app:2"), promotion: "auto" }));
    expect(e).toBeInstanceOf(ResourceInitError);
    expect(e.message).toContain("version 1 failed: Failed due to unhealthy allocations.");
    expect(e.message).toContain('Failed groups: "web" (1 unhealthy');
    expect(e.message).toContain("Pulumi reverted the job to version 0 (now registered as version 2)");
    expect(promotes(from)).toBe(0);
    const server = (await h.client.jobs.info("pm-fail")).value;
    expect(server.Version).toBe(2);
    expect(server.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image).toBe("app:1");
    expect((e as unknown as { properties: JobOutputs }).properties).toMatchObject({ version: 2, rolloutFailed: true });
  });

  it("a soak promotes after the canaries stayed healthy for it", async () => {
    const inputs = { promotion: { soak: "300ms" } };
    const state = await createJob({ jobspec: spec("pm-soak", "app:1"), ...inputs });
    const from = h.server.requestLog.length;
    const next = await applyJob(state, { jobspec: spec("pm-soak", "app:2"), ...inputs });
    expect(next.outs).toMatchObject({ version: 1, deploymentStatus: "successful" });
    expect(promotes(from)).toBe(1);
    expect(await runningVersions("pm-soak")).toEqual([1, 1]);
    // The settings are kept in state: the next preview shows nothing.
    expect((await applyJob(next, { jobspec: spec("pm-soak", "app:2"), ...inputs })).step).toBe("same");
  });

  it("a canary that fails during the soak fails the deployment, is named, and is reverted; nothing is promoted", async () => {
    const inputs = { promotion: { soak: "2s" } };
    const state = await createJob({ jobspec: spec("pm-soak-fail", "app:1"), ...inputs });
    const from = h.server.requestLog.length;
    const update = rejection(() => applyJob(state, { jobspec: spec("pm-soak-fail", "app:2"), ...inputs }));
    // Once the canary reported healthy (the soak has begun), its task crashes.
    const canary = await until(async () => {
      const d = (await h.client.records.latestDeployment("pm-soak-fail")).value;
      const g = d?.JobVersion === 1 ? d.TaskGroups?.web : undefined;
      return g !== undefined && (g.HealthyAllocs ?? 0) >= 1 ? g.PlacedCanaries?.[0] : undefined;
    });
    sched.control.failAllocation(canary);
    const e = await update;
    expect(e.message).toContain("Deployment marked as failed");
    expect(e.message).toContain(
      `canaries failed during the 2s soak: group "web" allocation ${canary.slice(0, 8)} is failed`,
    );
    expect(e.message).toContain("Pulumi reverted the job to version 0 (now registered as version 2)");
    expect(promotes(from)).toBe(0);
    expect(countRequests(h.server, "PUT", /^\/v1\/deployment\/fail\//, from)).toBe(1);
  });

  it("a soak longer than the deployment timeout never promotes: the update times out and says how far the soak got", async () => {
    const inputs = { promotion: { soak: "10m" }, deploymentTimeout: "1s", onDeploymentFailure: "fail" };
    const state = await createJob({ jobspec: spec("pm-soak-long", "app:1"), ...inputs });
    const from = h.server.requestLog.length;
    const e = await rejection(() => applyJob(state, { jobspec: spec("pm-soak-long", "app:2"), ...inputs }));
    expect(e.message).toContain("Timed out after 1s waiting for deployment");
    expect(e.message).toMatch(/the canaries had been healthy for \d+s of the 600s soak/);
    expect(e.message).toContain('"web" (');
    expect(promotes(from)).toBe(0);
  });

  it("a soak with groups promotes only the named groups; the others are left for a person, and the output says so", async () => {
    const inputs = { promotion: { soak: "50ms", groups: ["web"] } };
    const state = await createJob({ jobspec: spec("pm-groups", "app:1", ["api", "web"]), ...inputs });
    const { value: next, text } = await captureStderr(() =>
      applyJob(state, { jobspec: spec("pm-groups", "app:2", ["api", "web"]), ...inputs }),
    );
    const d = await latestDeployment("pm-groups");
    expect(next.outs).toMatchObject({ version: 1, deploymentStatus: "running" });
    expect(d.TaskGroups?.web).toMatchObject({ Promoted: true });
    expect(d.TaskGroups?.api).toMatchObject({ Promoted: false });
    expect(text).toContain(
      `promoted "web"; version 1 is deployed as canaries only: deployment ${d.ID} is running and waits for manual promotion of "api" (not named in promotion.groups)`,
    );
  });

  it("checks the input: a soak must be a duration, groups non-empty, revertTo a tag name", async () => {
    const failures = async (news: Record<string, unknown>) =>
      (await job.check({}, { jobspec: spec("pm-check", "app:1"), ...news })).failures ?? [];
    expect(await failures({ promotion: { soak: "soon" } })).toEqual([
      expect.objectContaining({ property: "promotion.soak" }),
    ]);
    expect((await failures({ promotion: { soak: "1m", groups: [] } })).map((f) => f.property)).toEqual([
      "promotion.groups",
    ]);
    expect((await failures({ promotion: "sometimes" })).map((f) => f.property)).toEqual(["promotion"]);
    expect((await failures({ onDeploymentFailure: { revertTo: "" } })).map((f) => f.property)).toEqual([
      "onDeploymentFailure.revertTo",
    ]);
    expect(
      await failures({ promotion: { soak: 600, groups: ["web"] }, onDeploymentFailure: { revertTo: "v1" } }),
    ).toEqual([]);
    expect((await failures({ promotion: "auto", waitForDeployment: false })).map((f) => f.property)).toEqual([
      "promotion",
    ]);
    expect(await failures({ promotion: "manual", waitForDeployment: false })).toEqual([]);
  });
});
