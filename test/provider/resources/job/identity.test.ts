/**
 * A Job's identity joins its checked inputs, so that a preview knows the outputs it makes. In a preview the
 * engine does not call `update`: it takes the checked inputs as the outputs, and an output not among them is
 * unknown (a dependent JobVersionTag then showed `jobId: "web" => [unknown]` and counted as an update that
 * `up` never made; `stables` from `diff` would not help: the dynamic-provider host drops them).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import { applyJob, countRequests, createJob, startHarness, type Harness } from "./harness";

const spec = (id: string, count: number, namespace?: string) => `
job "${id}" {
  ${namespace ? `namespace = "${namespace}"` : ""}
  datacenters = ["dc1"]
  group "g" {
    count = ${count}
    task "t" {
      driver = "docker"
      config {
        image = "app:1"
      }
    }
  }
}
`;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
});
afterAll(async () => {
  await h.close();
});

const IDENTITY = ["jobId", "namespace", "region", "type"] as const;

describe("Job identity in the checked inputs", () => {
  it("an update's preview outputs (the checked inputs) carry the outputs that only a replacement changes", async () => {
    const state = await createJob({ jobspec: spec("ident", 1) });
    const r = await job.check(state.inputs ?? {}, { jobspec: spec("ident", 2) });
    expect(r.failures ?? []).toEqual([]);
    for (const k of IDENTITY) expect(r.inputs, k).toHaveProperty(k, state.outs[k]);
    // The update does what the preview said: the same identity in the outputs.
    const applied = await applyJob(state, { jobspec: spec("ident", 2) });
    expect(applied.step).toBe("update");
    for (const k of IDENTITY) expect(applied.outs[k], k).toBe(state.outs[k]);
  });

  it("reuses the identity of the old inputs for the same sources, without a request", async () => {
    const state = await createJob({ jobspec: spec("ident-same", 1) });
    const from = h.server.requestLog.length;
    const r = await job.check(state.inputs ?? {}, { jobspec: spec("ident-same", 1) });
    expect(r.inputs).toEqual(state.inputs);
    expect(h.server.requestLog.length).toBe(from);
    // Changed sources are parsed again (one request), whatever the old inputs say.
    await job.check(state.inputs ?? {}, { jobspec: spec("ident-same", 3) });
    expect(countRequests(h.server, "POST", "/v1/jobs/parse", from)).toBe(1);
  });

  it("inputs stored without the identity (from before 0.1.0): check resolves it once, a changed setting too", async () => {
    // Inputs stored by a build whose check did not add the identity: the user's inputs alone.
    const olds = { jobspec: spec("ident-old", 1), waitForDeployment: false };
    const from = h.server.requestLog.length;
    const same = await job.check(olds, { ...olds });
    expect(same.failures ?? []).toEqual([]);
    expect(same.inputs).toHaveProperty("jobId", "ident-old");
    expect(countRequests(h.server, "POST", "/v1/jobs/parse", from)).toBe(1);
    // A changed setting: the identity joins too (the same sources: the parse just kept serves it).
    const changed = await job.check(olds, { ...olds, purgeOnDestroy: true });
    expect(countRequests(h.server, "POST", "/v1/jobs/parse", from)).toBe(1);
    expect(changed.inputs).toHaveProperty("jobId", "ident-old");
  });

  it("a jobspec that moves the job to another namespace shows the new one (a replacement)", async () => {
    const state = await createJob({ jobspec: spec("ident-move", 1) });
    const r = await job.check(state.inputs ?? {}, { jobspec: spec("ident-move", 1, "other") });
    expect(r.inputs).toMatchObject({ jobId: "ident-move", namespace: "other" });
    const d = await job.diff(state.id, state.outs, r.inputs as never);
    expect(d.replaces?.length ?? 0).toBeGreaterThan(0);
  });

  it("keeps what the user wrote apart: a written namespace stays, create and diff see only the user's inputs", async () => {
    const r = await job.check(
      {},
      {
        job: {
          ID: "ident-obj",
          Type: "batch",
          TaskGroups: [{ Name: "g", Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" } }] }],
        },
        namespace: "default",
      },
    );
    expect(r.inputs).toMatchObject({
      jobId: "ident-obj",
      type: "batch",
      namespace: "default",
      region: "global",
      __resolvedKeys: ["jobId", "type", "region"],
    });
  });
});
