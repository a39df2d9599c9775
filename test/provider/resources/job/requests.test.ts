/**
 * Requests per operation, counted on the devserver: the scale benchmark (bench/scale.js) times these
 * operations over hundreds of Jobs, and a request added to one of them costs that many round trips. Each
 * operation's exact requests are pinned here, so a change that adds one fails and has to say why.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import type { JobInputs } from "../../../../provider/resources/job/inputs";
import { captureStderr, checked, createJob, startHarness, type Harness, type Stated } from "./harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 30, evalDelayMs: 1 } });
});

afterAll(async () => {
  await h?.close();
});

/** The bench's job: a typed JSON service job. */
function jobOf(id: string, image: string): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "web",
        Count: 1,
        Networks: [{ DynamicPorts: [{ Label: "http", To: 8080 }] }],
        Tasks: [
          {
            Name: "server",
            Driver: "docker",
            Config: { image, ports: ["http"] },
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
  };
}

const JOBSPEC = (image: string) => `job "counted-spec" {
  datacenters = ["dc1"]
  group "web" {
    task "server" {
      driver = "docker"
      config { image = "${image}" }
    }
  }
}
`;

/** Runs `fn` and returns the requests it sent, as `METHOD path` lines in order. */
async function requestsOf(fn: () => Promise<unknown>): Promise<string[]> {
  const from = h.server.requestLog.length;
  await captureStderr(fn);
  return h.server.requestLog.slice(from).map((e) => `${e.method} ${e.path}`);
}

/** What a write reads back without waitForDeployment: the job alone (no deployment is followed). */
const READS = (id: string) => [`GET /v1/job/${id}`];
const sorted = (xs: string[]) => [...xs].sort();

describe("requests per Job operation (typed JSON job, waitForDeployment false)", () => {
  const id = "counted";
  const settings = { waitForDeployment: false, purgeOnDestroy: true };
  let state: Stated;
  let inputs: JobInputs;

  it("check sends none", async () => {
    expect(
      await requestsOf(async () => (inputs = await checked({ job: jobOf(id, "nginx:1.27"), ...settings }))),
    ).toEqual([]);
  });

  it("create: the register alone (check-and-set index 0 refuses an existing job; its answer has the index)", async () => {
    const sent = await requestsOf(async () => (state = await createJob({ job: jobOf(id, "nginx:1.27"), ...settings })));
    expect(sent).toEqual(["POST /v1/jobs"]);
    // No deployment is followed, so none is recorded.
    expect(state.outs).toMatchObject({ deploymentId: "", deploymentStatus: "", version: 0, status: "pending" });
    const server = (await h.client.jobs.info(id)).value;
    expect(state.outs.jobModifyIndex).toBe(server.JobModifyIndex);
    expect(state.outs.version).toBe(server.Version);
  });

  it("diff with nothing changed sends none", async () => {
    expect(await requestsOf(() => job.diff(state.id, state.outs, inputs))).toEqual([]);
  });

  it("diff with the image changed sends one plan", async () => {
    const next = await checked({ job: jobOf(id, "nginx:1.28"), ...settings });
    expect(await requestsOf(() => job.diff(state.id, state.outs, next))).toEqual([`POST /v1/job/${id}/plan`]);
  });

  it("diff with a setting changed sends none", async () => {
    const next = await checked({ job: jobOf(id, "nginx:1.27"), ...settings, purgeOnDestroy: false });
    expect(await requestsOf(() => job.diff(state.id, state.outs, next))).toEqual([]);
  });

  it("read (refresh) sends the job list alone: the job is read only when the list shows it moved", async () => {
    expect(await requestsOf(() => job.read(state.id, state.outs))).toEqual(["GET /v1/jobs"]);
  });

  it("update with the image changed: a plan, the register, then the job", async () => {
    const next = await checked({ job: jobOf(id, "nginx:1.28"), ...settings });
    let outs: Stated["outs"] | undefined;
    const sent = await requestsOf(
      async () => (outs = (await job.update(state.id, state.outs, next)).outs as Stated["outs"]),
    );
    state = { id: state.id, outs: outs as Stated["outs"] };
    expect(sent.slice(0, 2)).toEqual([`POST /v1/job/${id}/plan`, "POST /v1/jobs"]);
    expect(sent.slice(2)).toEqual(READS(id));
  });

  it("update with only a setting changed sends only the job read", async () => {
    const next = await checked({ job: jobOf(id, "nginx:1.28"), ...settings, deploymentTimeout: "2m" });
    expect(await requestsOf(() => job.update(state.id, state.outs, next))).toEqual(READS(id));
  });

  it("delete sends one deregister", async () => {
    expect(await requestsOf(() => job.delete(state.id, state.outs))).toEqual([`DELETE /v1/job/${id}`]);
  });
});

describe("requests per Job operation (jobspec)", () => {
  let state: Stated;

  it("diff with the jobspec unchanged sends none; changed, one plan (check's parse serves it, #23.4)", async () => {
    state = await createJob({ jobspec: JOBSPEC("nginx:1.27"), waitForDeployment: false, purgeOnDestroy: true });
    expect(
      await requestsOf(async () =>
        job.diff(
          state.id,
          state.outs,
          await checked(
            { jobspec: JOBSPEC("nginx:1.27"), waitForDeployment: false, purgeOnDestroy: true },
            state.inputs,
          ),
        ),
      ),
    ).toEqual([]);
    const next = await checked(
      { jobspec: JOBSPEC("nginx:1.28"), waitForDeployment: false, purgeOnDestroy: true },
      state.inputs,
    );
    expect(await requestsOf(() => job.diff(state.id, state.outs, next))).toEqual(["POST /v1/job/counted-spec/plan"]);
    await job.delete(state.id, state.outs);
  });
});

describe("requests per Job operation (waitForDeployment, the default)", () => {
  const id = "counted-wait";
  let state: Stated;

  it("create follows the deployment; then refresh sends the job list alone, the deployment being finished", async () => {
    state = await createJob({ job: jobOf(id, "nginx:1.27"), purgeOnDestroy: true });
    expect(state.outs.deploymentStatus).toBe("successful");
    expect(await requestsOf(() => job.read(state.id, state.outs))).toEqual(["GET /v1/jobs"]);
  });

  it("refresh reads the job list and a deployment state knows of that had not finished", async () => {
    const running = { ...state.outs, deploymentStatus: "running" };
    let outs: Stated["outs"] | undefined;
    expect(
      sorted(await requestsOf(async () => (outs = (await job.read(state.id, running)).props as Stated["outs"]))),
    ).toEqual([`GET /v1/job/${id}/deployment`, "GET /v1/jobs"]);
    expect(outs?.deploymentStatus).toBe("successful");
    expect(outs?.deploymentId).toBe(state.outs.deploymentId);
    await job.delete(state.id, state.outs);
  });
});

describe("requests per Job operation (batch job)", () => {
  it("refresh sends only the job list: a batch job has no deployment to follow", async () => {
    const batch = {
      ID: "counted-batch",
      Type: "batch",
      Datacenters: ["dc1"],
      TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "busybox" } }] }],
    };
    const state = await createJob({ job: batch, purgeOnDestroy: true });
    expect(state.outs.deploymentId).toBe("");
    expect(await requestsOf(() => job.read(state.id, state.outs))).toEqual(["GET /v1/jobs"]);
    await job.delete(state.id, state.outs);
  });
});
