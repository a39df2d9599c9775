/**
 * The Job resource's rollout features against the target (issue 21's features, issue 27's witness): canary
 * promotion "manual" (waits for the healthy canary; a failing canary fails and is reverted), "auto" and a
 * soak; `onDeploymentFailure: { revertTo }` (skipped, saying why, where the release has no version tags);
 * `waitForCompletion` of batch work that completes or fails; `preserveCounts` across a scale made through
 * the API; a placement no node can take; progress lines while `up` waits.
 *
 * On a real agent the jobs run `/bin/sh` (raw_exec, CONFORMANCE_DRIVER=raw_exec) or busybox (docker); the
 * devserver runs nothing and takes its `devserver.fail_*` meta keys instead (a real agent ignores them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { setStackConfig } from "../helpers/stack-config";
import { isApiError } from "../../provider/errors";
import { jobVersionTag } from "../../provider/resources/job-version-tag";
import { applyJob, captureStderr, createJob, rejection, type Stated } from "../provider/resources/job/harness";
import { fixtureDriver } from "./scheduler-fixture";
import { openTarget, type ConformanceTarget } from "./target";

let target: ConformanceTarget;
let client: SchedulerClient;

beforeAll(async () => {
  target = await openTarget();
  setStackConfig(target.stackConfig());
  client = new SchedulerClient(target.scheduler);
});
afterAll(() => target?.close());

/** The task block running `script` on the fixture driver. */
function task(script: string): string {
  const config =
    fixtureDriver() === "raw_exec"
      ? `driver = "raw_exec"\n      config {\n        command = "/bin/sh"\n        args    = ["-c", ${JSON.stringify(script)}]\n      }`
      : `driver = "docker"\n      config {\n        image   = "busybox:1.36"\n        command = "/bin/sh"\n        args    = ["-c", ${JSON.stringify(script)}]\n      }`;
  return `task "app" {\n      ${config}\n      resources {\n        cpu    = 50\n        memory = 32\n      }\n    }`;
}

/** A service job with one canary per update; `fail` makes its tasks exit (and the devserver fail it). */
function service(id: string, version: string, opts: { count?: number; fail?: boolean } = {}): string {
  // A failing task exits before it could count as healthy (min_healthy_time 5s).
  const script = opts.fail ? `sleep 1; exit 1 # ${version}` : `sleep 3600 # ${version}`;
  return `
job "${id}" {
  datacenters = ["dc1"]
${opts.fail ? '  meta = {\n    "devserver.fail_deployment" = "true"\n  }\n' : ""}
  group "web" {
    count = ${opts.count ?? 1}
    update {
      max_parallel      = 1
      canary            = 1
      min_healthy_time  = "${opts.fail ? "5s" : "1s"}"
      healthy_deadline  = "20s"
      progress_deadline = "30s"
    }
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    ${task(script)}
  }
}
`;
}

function batch(id: string, fail: boolean): string {
  return `
job "${id}" {
  datacenters = ["dc1"]
  type        = "batch"
${fail ? '  meta = {\n    "devserver.fail_batch" = "true"\n  }\n' : ""}
  group "work" {
    restart {
      attempts = 0
      mode     = "fail"
    }
    reschedule {
      attempts  = 0
      unlimited = false
    }
    ${task(fail ? "sleep 1; exit 1" : "sleep 1")}
  }
}
`;
}

/** Creates the job and schedules its purge. */
async function created(id: string, news: Record<string, unknown>): Promise<Stated> {
  target.cleanup(() => client.jobs.stop(id, { purge: true }));
  return createJob(news);
}

async function latest(id: string) {
  const d = (await client.records.latestDeployment(id)).value;
  if (d === null) throw new Error(`no deployment of ${id}`);
  return d;
}

describe("canary promotion", { timeout: 120_000 }, () => {
  it('"manual": `up` ends once the canary is placed and healthy, says it waits for a person, and showed progress', async () => {
    const id = target.name("promo-manual");
    const state = await created(id, { jobspec: service(id, "v0") });
    const { value: next, text } = await captureStderr(() => applyJob(state, { jobspec: service(id, "v1") }));
    const d = await latest(id);
    expect(next.outs).toMatchObject({ version: 1, deploymentStatus: "running" });
    expect(d.TaskGroups?.web).toMatchObject({ DesiredCanaries: 1, Promoted: false });
    expect(d.TaskGroups?.web?.HealthyAllocs ?? 0).toBeGreaterThanOrEqual(1);
    expect(text).toContain('waits for manual promotion of "web" (promotion is "manual")');
    expect(text).toMatch(/deployment \w{8} running: "web" \d+\/1 placed, 1 healthy, 0 unhealthy, canaries 1\/1/);
  });

  it('"manual": a canary that fails before it is healthy fails `up`, and the job is reverted', async () => {
    const id = target.name("promo-manual-fail");
    const state = await created(id, { jobspec: service(id, "v0") });
    const e = await rejection(() => applyJob(state, { jobspec: service(id, "v1", { fail: true }) }));
    expect(e.message).toContain("version 1 failed: Failed due to unhealthy allocations");
    expect(e.message).toContain("Pulumi reverted the job to version 0 (now registered as version 2)");
    const server = (await client.jobs.info(id)).value;
    expect(server.Version).toBe(2);
    expect(JSON.stringify(server.TaskGroups?.[0]?.Tasks?.[0]?.Config)).toContain("# v0");
  });

  it('"auto": promotes the healthy canary; the update ends successful on the new version', async () => {
    const id = target.name("promo-auto");
    const state = await created(id, { jobspec: service(id, "v0"), promotion: "auto" });
    const next = await applyJob(state, { jobspec: service(id, "v1"), promotion: "auto" });
    expect(next.outs).toMatchObject({ version: 1, deploymentStatus: "successful" });
    expect((await latest(id)).TaskGroups?.web).toMatchObject({ Promoted: true });
  });

  it("a soak promotes after the canary stayed healthy for it, and shows the time left", async () => {
    const id = target.name("promo-soak");
    const inputs = { promotion: { soak: "2s" } };
    const state = await created(id, { jobspec: service(id, "v0"), ...inputs });
    const { value: next, text } = await captureStderr(() => applyJob(state, { jobspec: service(id, "v1"), ...inputs }));
    expect(next.outs).toMatchObject({ version: 1, deploymentStatus: "successful" });
    expect(text).toMatch(/canaries 1\/1; soak \d+s left/);
  });

  it("onDeploymentFailure revertTo a tagged version (skipped where the release has no version tags)", async (t) => {
    const id = target.name("promo-revert-tag");
    const state = await created(id, { jobspec: service(id, "v0"), onDeploymentFailure: { revertTo: "good" } });
    try {
      await jobVersionTag.create({ jobId: id, name: "good", version: 0 });
    } catch (e) {
      if (isApiError(e, "unsupported")) t.skip(`this scheduler has no version tags: ${e.hint ?? e.message}`);
      throw e;
    }
    const e = await rejection(() =>
      applyJob(state, { jobspec: service(id, "v1", { fail: true }), onDeploymentFailure: { revertTo: "good" } }),
    );
    expect(e.message).toContain('Pulumi reverted the job to version 0, tagged "good"');
    expect(JSON.stringify((await client.jobs.info(id)).value.TaskGroups?.[0]?.Tasks?.[0]?.Config)).toContain("# v0");
  });
});

describe("batch work", { timeout: 120_000 }, () => {
  it("waitForCompletion returns once the work completed, showing its allocations on the way", async () => {
    const id = target.name("batch-ok");
    const { value: state, text } = await captureStderr(() =>
      created(id, { jobspec: batch(id, false), waitForCompletion: true }),
    );
    expect(state.outs.status).toBe("dead");
    expect(text).toContain(`Job "${id}": version 0 completed (1 allocation)`);
    expect(text).toContain(`Job "${id}": version 0 allocations: "work" 0 running, 1 complete, 0 failed`);
  });

  it("waitForCompletion fails naming the failed allocation", async () => {
    const id = target.name("batch-fail");
    const e = await rejection(() => created(id, { jobspec: batch(id, true), waitForCompletion: true }));
    expect(e.message).toMatch(/version 0: 1 allocation of 1 failed: allocation \w{8} \(group "work", task "app"/);
  });
});

describe("scale and placement", { timeout: 120_000 }, () => {
  it("preserveCounts keeps a count scaled through the API across an update", async () => {
    const id = target.name("preserve");
    const spec = (v: string) => service(id, v).replace("canary            = 1", "canary            = 0");
    const state = await created(id, { jobspec: spec("v0"), preserveCounts: true });
    await client.jobs.scale(id, { Target: { Group: "web" }, Count: 2, Message: "conformance" });
    const next = await applyJob(state, { jobspec: spec("v1"), preserveCounts: true });
    expect(next.step).toBe("update");
    expect((await client.jobs.info(id)).value.TaskGroups?.[0]?.Count).toBe(2);
  });

  it("a placement no node can take fails the create and names the group and what the server said", async () => {
    const id = target.name("unplaceable");
    const spec = service(id, "v0").replace(
      'datacenters = ["dc1"]',
      'datacenters = ["dc1"]\n  constraint {\n    attribute = "${attr.kernel.name}"\n    value     = "no-such-kernel"\n  }',
    );
    target.cleanup(() => client.jobs.stop(id, { purge: true }));
    const e = await rejection(() => createJob({ jobspec: spec }));
    expect(e.message).toContain('group "web": 1 allocation could not be placed');
    expect(e.message).toMatch(/no-such-kernel|computed class ineligible/);
  });
});
