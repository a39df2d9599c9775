/**
 * The Job's settings come from its definition: every input that is not a source (nor the SDK's
 * `secretInputs`) is a setting, echoed into the outputs and compared by `diff`. A setting missing from the
 * echo would be lost from state: `purgeOnDestroy` would turn into a plain stop at delete.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import { inputsSchema } from "../../../../provider/resources/definition";
import { jobDefinition } from "../../../../provider/resources/definitions/job";
import { SETTING_KEYS, SOURCE_KEYS, type JobInputs } from "../../../../provider/resources/job/inputs";
import { NO_DEPLOYMENT, buildOutputs } from "../../../../provider/resources/job/state";
import { SMALL_SPEC } from "../../../helpers/jobspecs";
import { applyJob, createJob, startHarness, type Harness } from "./harness";

/** A value of each setting that differs from what leaving it out means. */
const SET: Record<(typeof SETTING_KEYS)[number], unknown> = {
  policyOverride: true,
  preserveCounts: true,
  preserveResources: true,
  waitForCompletion: true,
  runOnce: true,
  triggers: { build: "2" },
  evalPriority: 70,
  waitForDeployment: false,
  deploymentTimeout: "10m",
  onDeploymentFailure: { revertTo: "good" },
  promotion: { soak: "1m", groups: ["g"] },
  allowPlanDrift: true,
  purgeOnDestroy: true,
  adopt: true,
  connection: { address: "http://127.0.0.1:1" },
};

describe("Job settings from the definition", () => {
  it("every input but the sources and secretInputs is a setting: echoed into the outputs, each with its value", () => {
    // The schema `check` validates the inputs with.
    const inputs = Object.keys(inputsSchema(jobDefinition).shape);
    expect(SOURCE_KEYS).toEqual(["jobspec", "job", "variables", "namespace", "region"]);
    expect([...SETTING_KEYS].sort()).toEqual(
      inputs.filter((k) => !(SOURCE_KEYS as string[]).includes(k) && k !== "__secretInputs").sort(),
    );
    // SET names every setting: a field added to the definition fails here until the test gives it a value.
    expect(Object.keys(SET).sort()).toEqual([...SETTING_KEYS].sort());
    const ref = { jobId: "e", namespace: "default", region: "global" };
    const outs = buildOutputs(
      { jobspec: "job", __secretInputs: ["jobspec"], ...(SET as Partial<JobInputs>) },
      ref,
      { job: { ID: "e" }, deployment: NO_DEPLOYMENT },
      { evalId: "", normalizedJob: "{}", inputsHash: "" },
    );
    for (const k of SETTING_KEYS) expect(outs[k], k).toEqual(SET[k]);
    expect(outs).not.toHaveProperty("jobspec");
    expect(outs).not.toHaveProperty("__secretInputs");
  });

  it("the defaults the provider applies to unset settings are the definition's", () => {
    const shown = Object.fromEntries(
      Object.entries(jobDefinition.fields).flatMap(([k, f]) => (f.unsetMeans === undefined ? [] : [[k, f.unsetMeans]])),
    );
    expect(shown).toEqual({
      waitForDeployment: true,
      deploymentTimeout: "5m",
      onDeploymentFailure: "revert",
      promotion: "manual",
      purgeOnDestroy: false,
      adopt: false,
    });
  });

  describe("against the devserver", () => {
    let h: Harness;
    beforeAll(async () => {
      h = await startHarness();
    });
    afterAll(async () => {
      await h.close();
    });

    it("purgeOnDestroy set at create, or by an update of that setting only, purges at delete with the state as written", async () => {
      const created = await createJob({
        jobspec: SMALL_SPEC("echo-a", "app:1"),
        waitForDeployment: false,
        purgeOnDestroy: true,
      });
      expect(created.outs.purgeOnDestroy).toBe(true);
      await job.delete(created.id, created.outs);
      expect(await h.client.jobs.find("echo-a")).toBeUndefined();

      const plain = await createJob({ jobspec: SMALL_SPEC("echo-b", "app:1"), waitForDeployment: false });
      const updated = await applyJob(plain, {
        jobspec: SMALL_SPEC("echo-b", "app:1"),
        waitForDeployment: false,
        purgeOnDestroy: true,
      });
      expect(updated.step).toBe("update");
      await job.delete(updated.id, updated.outs);
      expect(await h.client.jobs.find("echo-b")).toBeUndefined();
    });
  });
});
