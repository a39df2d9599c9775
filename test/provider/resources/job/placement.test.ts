/**
 * Preview of failed placements: every constraint that filtered nodes and every exhausted
 * dimension of a group is shown, from the devserver's plan, not only the first.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import { captureStderr, checked, createJob, startHarness, type Harness } from "./harness";

const BATCH = (constraints: string, memory: number) => `
job "report" {
  type = "batch"
  ${constraints}

  group "work" {
    task "run" {
      driver = "exec"

      config {
        command = "/bin/true"
      }

      resources {
        cpu    = 100
        memory = ${memory}
      }
    }
  }
}
`;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    schedulerService: { deploymentMs: 20, evalDelayMs: 1, batchMs: 20, nodes: { count: 3, cpu: 4000, memoryMB: 8192 } },
  });
});
afterAll(async () => {
  await h.close();
});

describe("preview of failed placements", () => {
  it("names each constraint that filtered nodes and each exhausted dimension", async () => {
    const state = await createJob({ jobspec: BATCH("", 128) });
    const cons = `
  constraint {
    attribute = "\${node.unique.name}"
    operator  = "!="
    value     = "devserver-node-0"
  }
  constraint {
    attribute = "\${node.unique.name}"
    operator  = "!="
    value     = "devserver-node-1"
  }`;
    const news = await checked({ jobspec: BATCH(cons, 9000) }, state.inputs);
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain("! Failed placement: 1 allocation could not be placed");
    expect(text).toContain("- memory exhausted on 1 node");
    expect(text).toContain("- constraint ${node.unique.name} != devserver-node-0 filtered 1 node");
    expect(text).toContain("- constraint ${node.unique.name} != devserver-node-1 filtered 1 node");
    expect(text).toContain("- nodes: 3 in pool, 3 evaluated, 2 filtered, 1 exhausted");
  });
});
