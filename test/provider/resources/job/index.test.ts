import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StartedDevServer } from "../../../../devserver";
import { setStackConfig } from "../../../helpers/stack-config";
import { UNKNOWN } from "../../../helpers/unknown";
import { SCHEMA_VERSION } from "../../../../provider/resources/migrate";
import { job } from "../../../../provider/resources/job";
import type { JobInputs } from "../../../../provider/resources/job/inputs";
import {
  applyJob,
  captureStderr,
  checked,
  countRequests,
  createJob,
  registers,
  rejection,
  startHarness,
  type Harness,
} from "./harness";

const SERVICE = (image: string, count = 2) => `
job "web" {
  datacenters = ["dc1"]
  type        = "service"

  group "api" {
    count = ${count}

    update {
      max_parallel     = 1
      min_healthy_time = "1s"
      healthy_deadline = "1m"
    }

    network {
      port "http" {}
    }

    task "server" {
      driver = "docker"

      config {
        image = "${image}"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
`;

/** The same job, reformatted: other spacing, comments, attribute order, defaults spelled out. */
const SERVICE_REFORMATTED = `
# the web job
job "web" {
  type = "service"
  datacenters = [ "dc1" ]
  group "api" {
    task "server" {
      resources {
        memory = 128
        cpu = 100
      }
      config { image = "nginx:1.25" }
      driver = "docker"
    }
    network {
      port "http" {
      }
    }
    update {
      healthy_deadline = "1m"
      min_healthy_time = "1s"
      max_parallel = 1
    }
    count = 2 // two of them
  }
}
`;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 30, evalDelayMs: 1 } });
});

afterAll(async () => {
  await h?.close();
});

describe("Job from a jobspec (service)", () => {
  let state: Awaited<ReturnType<typeof createJob>>;

  it("creates the job, waits for its deployment and reports the server's view", async () => {
    state = await createJob({ jobspec: SERVICE("nginx:1.25") });
    expect(state.id).toBe("web@default");
    expect(state.outs).toMatchObject({
      jobId: "web",
      namespace: "default",
      type: "service",
      version: 0,
      status: "running",
      deploymentStatus: "successful",
      schemaVersion: SCHEMA_VERSION,
    });
    // The source is not echoed into outputs (state keeps it as an input; inputsHash stands for it).
    expect(state.outs).not.toHaveProperty("jobspec");
    expect(state.outs.inputsHash).toMatch(/^hmac-sha256\$[A-Za-z0-9_-]{22}\$[0-9a-f]{64}$/);
    // Allocations change with every reschedule: they are not outputs (a refresh would report them as changes).
    expect(state.outs).not.toHaveProperty("allocationIds");
    expect(state.outs).not.toHaveProperty("groups");
    const latest = (await h.client.records.latestDeployment("web")).value;
    expect(state.outs.deploymentId).toBe(latest?.ID);
    expect(state.outs.evalId).not.toBe("");
    const sub = await h.client.versions.submission("web", 0);
    expect(sub.value).toMatchObject({ Format: "hcl2", Source: SERVICE("nginx:1.25") });
  });

  it("shows no change for the same jobspec, without asking the server", async () => {
    const from = h.server.requestLog.length;
    const d = await job.diff(state.id, state.outs, await checked({ jobspec: SERVICE("nginx:1.25") }, state.inputs));
    expect(d.changes).toBe(false);
    expect(h.server.requestLog.length).toBe(from);
  });

  it("shows no change for a reformatted, reordered jobspec (parsed, never planned or registered)", async () => {
    const from = h.server.requestLog.length;
    const { value: d, text } = await captureStderr(() =>
      job.diff(state.id, state.outs, { jobspec: SERVICE_REFORMATTED }),
    );
    expect(d.changes).toBe(false);
    expect(text).toBe("");
    expect(countRequests(h.server, "POST", "/v1/jobs/parse", from)).toBeGreaterThanOrEqual(1);
    expect(countRequests(h.server, "POST", /\/plan$/, from)).toBe(0);
    expect(registers(h.server, from)).toBe(0);
  });

  it("plans a real change at preview, shows what the scheduler would do, and registers nothing", async () => {
    const from = h.server.requestLog.length;
    const { value: d, text } = await captureStderr(() =>
      job.diff(state.id, state.outs, { jobspec: SERVICE("nginx:1.26", 3) }),
    );
    expect(d.changes).toBe(true);
    expect(d.replaces ?? []).toEqual([]);
    expect(countRequests(h.server, "POST", "/v1/job/web/plan", from)).toBe(1);
    expect(registers(h.server, from)).toBe(0);
    expect((await h.client.jobs.info("web")).value.Version).toBe(0);
    expect(text).toContain('Scheduler plan for job "web" in namespace "default": job changed');
    expect(text).toContain('Group "api" (Edited)');
    expect(text).toContain('Count: "2" => "3"');
    expect(text).toContain('"nginx:1.25" => "nginx:1.26"');
    expect(text).toMatch(/1 to place/);
  });

  it("changes nothing on the server when only a setting changes", async () => {
    const from = h.server.requestLog.length;
    const next = await applyJob(state, {
      jobspec: SERVICE("nginx:1.25"),
      purgeOnDestroy: false,
      deploymentTimeout: "2m",
    });
    expect(next.step).toBe("update");
    expect(registers(h.server, from)).toBe(0);
    expect(next.outs.deploymentTimeout).toBe("2m");
    expect(next.outs.version).toBe(0);
    state = next;
  });

  it("updates with check-and-set and waits for the new deployment", async () => {
    const from = h.server.requestLog.length;
    const next = await applyJob(state, { jobspec: SERVICE("nginx:1.26") });
    expect(next.step).toBe("update");
    expect(registers(h.server, from)).toBe(1);
    expect(next.outs.version).toBe(1);
    expect(next.outs.deploymentStatus).toBe("successful");
    expect(next.outs.jobModifyIndex).toBeGreaterThan(state.outs.jobModifyIndex);
    state = next;
  });

  it("replaces the job when its type changes (decided at preview, delete before create)", async () => {
    const batch = SERVICE("nginx:1.26")
      .replace('type        = "service"', 'type        = "batch"')
      .replace(/update \{[^}]*\}/, "");
    const d = await captureStderr(() => job.diff(state.id, state.outs, { jobspec: batch }));
    expect(d.value).toMatchObject({ changes: true, replaces: ["jobspec"], deleteBeforeReplace: true });
    expect(d.text).toContain("type service -> batch");
    const next = await applyJob(state, { jobspec: batch });
    expect(next.step).toBe("replace");
    expect(next.outs.type).toBe("batch");
    expect((await h.client.jobs.info("web")).value.Type).toBe("batch");
    state = next;
  });

  it("deletes by stopping; a job already gone is success", async () => {
    await job.delete(state.id, state.outs);
    expect((await h.client.jobs.info("web")).value.Stop).toBe(true);
    await job.delete(state.id, { ...state.outs, purgeOnDestroy: true });
    expect(await h.client.jobs.find("web")).toBeUndefined();
    await job.delete(state.id, state.outs);
  });
});

describe("Job from a job object (service)", () => {
  const obj = (image: string): JobInputs["job"] => ({
    ID: "api-json",
    Name: "api-json",
    Type: "service",
    Datacenters: ["dc1"],
    Constraints: [],
    TaskGroups: [
      {
        Name: "g",
        Count: 1,
        Update: { MaxParallel: 1 },
        Tasks: [{ Name: "t", Driver: "docker", Config: { image }, Resources: { CPU: 100, MemoryMB: 64 } }],
      },
    ],
  });

  it("creates, ignores key order and [] vs null, updates, refuses an existing job, and deletes", async () => {
    const state = await createJob({ job: obj("a:1") });
    expect(state.outs).toMatchObject({ jobId: "api-json", version: 0, deploymentStatus: "successful" });
    const sub = await h.client.versions.submission("api-json", 0);
    expect(sub.value.Format).toBe("json");

    const reordered = JSON.parse(JSON.stringify({ ...obj("a:1"), Constraints: null })) as Record<string, unknown>;
    const keys = Object.keys(reordered).reverse();
    const reversed: Record<string, unknown> = {};
    for (const k of keys) reversed[k] = reordered[k];
    const from = h.server.requestLog.length;
    expect((await job.diff(state.id, state.outs, await checked({ job: reversed }))).changes).toBe(false);
    expect(h.server.requestLog.length).toBe(from);

    const next = await applyJob(state, { job: obj("a:2") });
    expect(next.step).toBe("update");
    expect(next.outs.version).toBe(1);

    const e = await rejection(() => job.create({ job: obj("a:3") }));
    expect(e.message).toContain('Job "api-json" already exists in namespace "default"');
    expect(e).toMatchObject({ name: "ResourceError", code: "already_exists" });
    expect(e.message).toContain("adopt: true");
    expect((await h.client.jobs.info("api-json")).value.Version).toBe(1);

    const adopted = await job.create({ job: obj("a:3"), adopt: true });
    expect(adopted.outs).toMatchObject({ version: 2 });

    await job.delete(next.id, { ...next.outs, purgeOnDestroy: true });
    expect(await h.client.jobs.find("api-json")).toBeUndefined();
  });
});

describe("Job inputs that shape the job", () => {
  const withVars = `
variable "image" {
  type = string
}

variable "replicas" {
  type    = number
  default = 1
}

job "vars" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    count = var.replicas
    task "t" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}
`;

  it("renders a variables map, keeps it in the submission, and sees equal var-file text as no change", async () => {
    const state = await createJob({ jobspec: withVars, variables: { replicas: 2, image: "busybox:1" } });
    const server = (await h.client.jobs.info("vars")).value;
    expect(server.TaskGroups?.[0]?.Count).toBe(2);
    expect(server.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image).toBe("busybox:1");
    const sub = (await h.client.versions.submission("vars", 0)).value;
    expect(sub.VariableFlags).toEqual({ image: "busybox:1", replicas: "2" });

    const from = h.server.requestLog.length;
    expect(
      (
        await job.diff(
          state.id,
          state.outs,
          await checked({ jobspec: withVars, variables: { image: "busybox:1", replicas: 2 } }, state.inputs),
        )
      ).changes,
    ).toBe(false);
    expect(h.server.requestLog.length).toBe(from);
    const asText = await job.diff(
      state.id,
      state.outs,
      await checked({ jobspec: withVars, variables: 'image = "busybox:1"\nreplicas = 2\n' }),
    );
    expect(asText.changes).toBe(false);
    expect(registers(h.server, from)).toBe(0);

    const next = await applyJob(state, { jobspec: withVars, variables: { image: "busybox:2", replicas: 2 } });
    expect(next.step).toBe("update");
    expect((await h.client.jobs.info("vars")).value.TaskGroups?.[0]?.Tasks?.[0]?.Config?.image).toBe("busybox:2");
    await job.delete(next.id, { ...next.outs, purgeOnDestroy: true });
  });

  it("refuses, with code replace_needed, an update whose change needs a replace (the engine replaces on diff)", async () => {
    const jobspec = SERVICE("nginx:1.25").replace('job "web"', 'job "rn-web"');
    const state = await createJob({ jobspec, namespace: "team-a" });
    const moved = await checked({ jobspec, namespace: "team-b" });
    const e = await rejection(() => job.update(state.id, state.outs, moved));
    expect(e).toMatchObject({ name: "ResourceError", code: "replace_needed" });
    expect(e.message).toContain('Job "rn-web" cannot be updated in place');
    await job.delete(state.id, { ...state.outs, purgeOnDestroy: true });
  });

  it("places the job in the namespace input and replaces it when the namespace changes", async () => {
    const jobspec = SERVICE("nginx:1.25").replace('job "web"', 'job "ns-web"');
    const state = await createJob({ jobspec, namespace: "team-a" });
    expect(state.id).toBe("ns-web@team-a");
    expect((await h.client.jobs.info("ns-web", { namespace: "team-a" })).value.Namespace).toBe("team-a");
    expect(await h.client.jobs.find("ns-web", { namespace: "default" })).toBeUndefined();

    const { value: d } = await captureStderr(() => job.diff(state.id, state.outs, { jobspec, namespace: "team-b" }));
    expect(d).toMatchObject({ changes: true, replaces: ["namespace"], deleteBeforeReplace: true });
    const moved = await applyJob(state, { jobspec, namespace: "team-b" });
    expect(moved.step).toBe("replace");
    expect(moved.id).toBe("ns-web@team-b");
    expect((await h.client.jobs.info("ns-web", { namespace: "team-a" })).value.Stop).toBe(true);
    await job.delete(moved.id, { ...moved.outs, purgeOnDestroy: true });
  });

  it("answers a preview with unknown inputs as a change without asking the server", async () => {
    const state = await createJob({ jobspec: SERVICE("nginx:1.25").replace('job "web"', 'job "unknowns"') });
    const from = h.server.requestLog.length;
    expect(await job.diff(state.id, state.outs, { jobspec: UNKNOWN })).toEqual({ changes: true });
    expect(await job.diff(state.id, state.outs, { job: { ID: "unknowns", Meta: { k: UNKNOWN } } })).toEqual({
      changes: true,
    });
    expect(h.server.requestLog.length).toBe(from);
    await job.delete(state.id, { ...state.outs, purgeOnDestroy: true });
  });
});

describe("the connection's namespace", () => {
  afterAll(() => {
    setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: h.server.rootTokens.scheduler });
  });

  it("holds a jobspec that names no namespace, while one that names its own keeps it", async () => {
    setStackConfig({
      schedulerAddress: h.server.urls.scheduler,
      schedulerToken: h.server.rootTokens.scheduler,
      schedulerNamespace: "team-c",
    });
    const plain = await createJob({ jobspec: SERVICE("nginx:1.25").replace('job "web"', 'job "conn-ns"') });
    expect(plain.outs.namespace).toBe("team-c");
    expect((await h.client.jobs.info("conn-ns", { namespace: "team-c" })).value.Namespace).toBe("team-c");
    const own = await createJob({
      jobspec: SERVICE("nginx:1.25").replace('job "web" {', 'job "own-ns" {\n  namespace = "team-d"'),
    });
    expect(own.outs.namespace).toBe("team-d");
    // The same inputs under the same connection are still no change.
    const from = h.server.requestLog.length;
    expect(
      (
        await job.diff(
          plain.id,
          plain.outs,
          await checked({ jobspec: SERVICE("nginx:1.25").replace('job "web"', 'job "conn-ns"') }, plain.inputs),
        )
      ).changes,
    ).toBe(false);
    expect(h.server.requestLog.length).toBe(from);
    await job.delete(plain.id, { ...plain.outs, purgeOnDestroy: true });
    await job.delete(own.id, { ...own.outs, purgeOnDestroy: true });
  });
});

describe("what a register sends and how a rollout is followed", () => {
  it("strips server-managed fields from a job object before sending it", async () => {
    const state = await createJob({
      job: {
        ID: "copied",
        Type: "batch",
        Datacenters: ["dc1"],
        // Copied from a read of another cluster: none of these may reach the server.
        Version: 7,
        VersionTag: { Name: "stale", Description: "from elsewhere", TaggedTime: 1 },
        Stable: true,
        Status: "dead",
        StatusDescription: "x",
        JobModifyIndex: 99,
        ModifyIndex: 99,
        CreateIndex: 98,
        SubmitTime: 1,
        TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "busybox" } }] }],
      },
    });
    const server = (await h.client.jobs.info("copied")).value;
    expect(server.Version).toBe(0);
    expect(server.VersionTag ?? null).toBeNull();
    expect(state.outs.normalizedJob).not.toContain("stale");
    await job.delete(state.id, { ...state.outs, purgeOnDestroy: true });
  });

  it("follows the evaluation and the deployment with blocking queries, not polling", async () => {
    const jobspec = SERVICE("nginx:1.25").replace('job "web"', 'job "watched"');
    // A deployment that outlasts the register by far, so the watch has to wait on it (a cold parse took
    // longer than the default 300 ms rollout when this test ran alone, and then nothing was left to wait on).
    const control = (h.server as StartedDevServer).schedulerControl;
    control?.setTiming({ deploymentMs: 2_000 });
    const from = h.server.requestLog.length;
    const state = await createJob({ jobspec }).finally(() => control?.setTiming({ deploymentMs: 300 }));
    expect(state.outs.deploymentStatus).toBe("successful");
    const reads = h.server.requestLog
      .slice(from)
      .filter((e) => e.method === "GET" && /^\/v1\/job\/watched\/(evaluations|deployments)$/.test(e.path));
    // A handful of reads, each after the first one blocking on the last index seen.
    expect(reads.length).toBeLessThanOrEqual(8);
    expect(reads.filter((e) => /(^|&)index=\d+/.test(e.query)).length).toBeGreaterThanOrEqual(1);
    await job.delete(state.id, { ...state.outs, purgeOnDestroy: true });
  });
});

describe("a spelled-out default with a changed setting", () => {
  it("updates state without a register when the scheduler sees no change", async () => {
    const base = {
      ID: "defaults",
      Type: "batch",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "busybox" } }] }],
    };
    const state = await createJob({ job: base });
    const priority = (await h.client.jobs.info("defaults")).value.Priority;
    const from = h.server.requestLog.length;
    const next = await applyJob(state, { job: { ...base, Priority: priority }, purgeOnDestroy: true });
    expect(next.step).toBe("update");
    expect(countRequests(h.server, "POST", "/v1/job/defaults/plan", from)).toBeGreaterThanOrEqual(1);
    expect(registers(h.server, from)).toBe(0);
    expect(next.outs.purgeOnDestroy).toBe(true);
    // State now holds the spelled-out form: the same inputs are no change without a request.
    const n = h.server.requestLog.length;
    expect(
      (
        await job.diff(
          next.id,
          next.outs,
          await checked({ job: { ...base, Priority: priority }, purgeOnDestroy: true }),
        )
      ).changes,
    ).toBe(false);
    expect(h.server.requestLog.length).toBe(n);
    await job.delete(next.id, next.outs);
  });
});
