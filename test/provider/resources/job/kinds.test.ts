import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import { applyJob, checked, countRequests, createJob, registers, startHarness, type Harness } from "./harness";

/** One kind of job, as HCL and as a job object, with a change that updates and one that replaces. */
interface Kind {
  kind: string;
  id: string;
  hcl(image: string, extra?: string): string;
  json(image: string): Record<string, unknown>;
  /** The same job turned into something the server cannot update in place. */
  replacedHcl(image: string): string;
  replacedJson(image: string): Record<string, unknown>;
  expectedType: string;
}

const task = (image: string) => `
    task "run" {
      driver = "docker"
      config {
        image   = "${image}"
        command = "true"
      }
      resources {
        cpu    = 50
        memory = 32
      }
    }`;

const jsonTask = (image: string) => ({
  Name: "run",
  Driver: "docker",
  Config: { image, command: "true" },
  Resources: { CPU: 50, MemoryMB: 32 },
});

const batchHcl = (id: string, image: string, block = "") => `
job "${id}" {
  datacenters = ["dc1"]
  type        = "batch"
${block}
  group "work" {${task(image)}
  }
}
`;

const batchJson = (id: string, image: string, more: Record<string, unknown> = {}) => ({
  ID: id,
  Name: id,
  Type: "batch",
  Datacenters: ["dc1"],
  TaskGroups: [{ Name: "work", Count: 1, Tasks: [jsonTask(image)] }],
  ...more,
});

const PERIODIC = `  periodic {
    cron             = "0 3 * * *"
    prohibit_overlap = true
  }`;
const PARAMETERIZED = `  parameterized {
    payload       = "optional"
    meta_required = ["input"]
  }`;

const KINDS: Kind[] = [
  {
    kind: "batch",
    id: "nightly-batch",
    hcl: (image) => batchHcl("nightly-batch", image),
    json: (image) => batchJson("nightly-batch", image),
    // A batch job cannot become a service job under the same ID.
    replacedHcl: (image) => batchHcl("nightly-batch", image).replace('"batch"', '"service"'),
    replacedJson: (image) => ({ ...batchJson("nightly-batch", image), Type: "service" }),
    expectedType: "batch",
  },
  {
    kind: "periodic",
    id: "cron-job",
    hcl: (image) => batchHcl("cron-job", image, PERIODIC),
    json: (image) =>
      batchJson("cron-job", image, {
        Periodic: { Enabled: true, Spec: "0 3 * * *", SpecType: "cron", ProhibitOverlap: true },
      }),
    replacedHcl: (image) => batchHcl("cron-job", image),
    replacedJson: (image) => batchJson("cron-job", image),
    expectedType: "batch",
  },
  {
    kind: "parameterized",
    id: "render",
    hcl: (image) => batchHcl("render", image, PARAMETERIZED),
    json: (image) => batchJson("render", image, { ParameterizedJob: { Payload: "optional", MetaRequired: ["input"] } }),
    replacedHcl: (image) => batchHcl("render", image),
    replacedJson: (image) => batchJson("render", image),
    expectedType: "batch",
  },
];

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1, batchMs: 20 } });
});

afterAll(async () => {
  await h?.close();
});

const SOURCES = [
  {
    source: "jobspec",
    make: (k: Kind, image: string) => ({ jobspec: k.hcl(image) }),
    replaced: (k: Kind, image: string) => ({ jobspec: k.replacedHcl(image) }),
  },
  {
    source: "job",
    make: (k: Kind, image: string) => ({ job: k.json(image) }),
    replaced: (k: Kind, image: string) => ({ job: k.replacedJson(image) }),
  },
] as const;

describe.each(KINDS)("$kind job", (k) => {
  describe.each(SOURCES)("from $source", (src) => {
    it("creates, shows no change, updates, replaces and deletes", async () => {
      const start = h.server.requestLog.length;
      const created = await createJob(src.make(k, "busybox:1"));
      expect(created.outs).toMatchObject({ jobId: k.id, type: k.expectedType, version: 0, deploymentId: "" });
      if (k.kind !== "batch") expect(created.outs.evalId).toBe("");
      // No deployment to follow: nothing was waited for.
      expect(countRequests(h.server, "GET", `/v1/job/${k.id}/deployments`, start)).toBe(0);

      let from = h.server.requestLog.length;
      const d = await job.diff(created.id, created.outs, await checked(src.make(k, "busybox:1")));
      expect(d.changes).toBe(false);
      expect(registers(h.server, from)).toBe(0);

      from = h.server.requestLog.length;
      const updated = await applyJob(created, src.make(k, "busybox:2"));
      expect(updated.step).toBe("update");
      expect(registers(h.server, from)).toBe(1);
      expect(updated.outs.version).toBe(1);
      expect(updated.outs.jobModifyIndex).toBeGreaterThan(created.outs.jobModifyIndex);

      const replaced = await applyJob(updated, src.replaced(k, "busybox:2"));
      expect(replaced.step).toBe("replace");
      expect(replaced.id).toBe(created.id);
      const server = (await h.client.jobs.info(k.id)).value;
      expect(server.Stop).toBe(false);
      expect(replaced.outs.type).toBe(server.Type);

      await job.delete(replaced.id, { ...replaced.outs, purgeOnDestroy: true });
      expect(await h.client.jobs.find(k.id)).toBeUndefined();
    });
  });
});
