/**
 * At preview the engine runs `check` and then `diff` for each Job in one provider process; both resolve a
 * jobspec through the scheduler's parse endpoint. The result `check` got serves the `diff` right after it:
 * one parse, not two. Only the very same request shares it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SchedulerClient } from "../../../../provider/clients/scheduler";
import { job } from "../../../../provider/resources/job";
import { userInputs } from "../../../../provider/resources/job/checked";
import { resolveDesired } from "../../../../provider/resources/job/spec";
import { startDevServer } from "../../../../devserver";
import { SPEC } from "../../../helpers/jobspecs";
import { captureStderr, checked, countRequests, createJob, startHarness, type Harness } from "./harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 30, evalDelayMs: 1 } });
});

afterAll(async () => {
  await h?.close();
});

const parses = (from: number): number => countRequests(h.server, "POST", "/v1/jobs/parse", from);

/** A jobspec whose image is a variable. */
const VAR_SPEC = `
variable "image" {
  type = string
}
job "memo-vars" {
  datacenters = ["dc1"]
  group "api" {
    task "server" {
      driver = "docker"
      config {
        image = var.image
      }
    }
  }
}
`;

describe("parse requests of check and diff (#23.4)", () => {
  it("check then diff of a changed jobspec send one parse, not two", async () => {
    const settings = { waitForDeployment: false, purgeOnDestroy: true };
    const state = await createJob({ jobspec: SPEC("memo-once", "nginx:1.27"), ...settings });
    const from = h.server.requestLog.length;
    const news = await checked({ jobspec: SPEC("memo-once", "nginx:1.28"), ...settings }, state.inputs);
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain("nginx:1.28");
    expect(parses(from)).toBe(1);
    await job.delete(state.id, state.outs);
  });

  it("each different input is parsed once, and its result serves only that input", async () => {
    const settings = { waitForDeployment: false, purgeOnDestroy: true };
    const state = await createJob({ jobspec: VAR_SPEC, variables: { image: "nginx:1.27" }, ...settings });
    const from = h.server.requestLog.length;
    const a = await checked({ jobspec: VAR_SPEC, variables: { image: "nginx:1.28" }, ...settings }, state.inputs);
    const b = await checked({ jobspec: VAR_SPEC, variables: { image: "nginx:1.29" }, ...settings }, state.inputs);
    expect(parses(from)).toBe(2);
    const diffB = await captureStderr(() => job.diff(state.id, state.outs, b));
    expect(diffB.text).toContain("nginx:1.29");
    expect(diffB.text).not.toContain("nginx:1.28");
    const diffA = await captureStderr(() => job.diff(state.id, state.outs, a));
    expect(diffA.text).toContain("nginx:1.28");
    expect(diffA.text).not.toContain("nginx:1.29");
    expect(parses(from)).toBe(2);
    // Inputs no check parsed: the diff sends its own parse, and sees its own variables.
    const unchecked = { jobspec: VAR_SPEC, variables: { image: "nginx:1.30" }, ...settings };
    const diffC = await captureStderr(() => job.diff(state.id, state.outs, unchecked));
    expect(diffC.text).toContain("nginx:1.30");
    expect(parses(from)).toBe(3);
    // A result serves once: the same diff again parses again.
    await captureStderr(() => job.diff(state.id, state.outs, b));
    expect(parses(from)).toBe(4);
    await job.delete(state.id, state.outs);
  });

  it("a result serves only the connection it was parsed on", async () => {
    // The same token on another server: only the address tells the two connections apart.
    const other = await startDevServer({ scheduler: { rootToken: h.server.rootTokens.scheduler } });
    try {
      const there = new SchedulerClient({ address: other.urls.scheduler, token: other.rootTokens.scheduler });
      const from = h.server.requestLog.length;
      // check parses on the stack's connection (this harness's server) and keeps the result.
      // (What diff resolves: the inputs without the identity check added.)
      const inputs = userInputs(await checked({ jobspec: SPEC("memo-conn", "nginx:1.27"), waitForDeployment: false }));
      expect(parses(from)).toBe(1);
      // The same request to another server is sent there, not answered from the first server's parse.
      const elsewhere = await resolveDesired(there, inputs);
      expect(countRequests(other, "POST", "/v1/jobs/parse")).toBe(1);
      expect(elsewhere.job.ID).toBe("memo-conn");
      // The kept result still waits for its own connection, which takes it without a parse.
      await resolveDesired(h.client, inputs);
      expect(parses(from)).toBe(1);
    } finally {
      await other.close();
    }
  });
});
