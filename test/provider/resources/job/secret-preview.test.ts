/**
 * Through the provider against the devserver: a Job whose variables hold a secret shows
 * `[secret]` in its preview plan (and in the replacement note and errors), never the value; the input that
 * says so (`__secretInputs`, set by the SDK) never makes a diff of its own, and state without it shows what it
 * showed before. Secrecy follows the value's origin in the old job too (issue 43): once the program drops the
 * secret or passes the value as plain, the old value state holds stays masked in the plan, the notes and errors.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import {
  applyJob,
  captureStderr,
  checked,
  createJob,
  rejection,
  startHarness,
  type Harness,
  type Stated,
} from "./harness";

const SPEC = `
variable "db_password" {
  type = string
}
variable "region_name" {
  type    = string
  default = "global"
}
job "pwjob" {
  datacenters = ["dc1"]
  type        = "batch"
  region      = var.region_name
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = "busybox:1"
        args  = ["--password", var.db_password]
      }
      env {
        DB_PASSWORD = var.db_password
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

const OLD_PW = "old-Pa55word-7781";
const NEW_PW = "new-Pa55word-7782";
let h: Harness;
let state: Stated;

beforeAll(async () => {
  h = await startHarness();
  state = await createJob({
    jobspec: SPEC,
    variables: { db_password: OLD_PW },
    __secretInputs: ["variables.db_password"],
    waitForDeployment: false,
  });
});
afterAll(async () => {
  await h.close();
});

describe("a Job with a secret variable", () => {
  it("previews a changed secret as [secret] => [secret], the value nowhere in the text", async () => {
    const news = await checked(
      {
        jobspec: SPEC,
        variables: { db_password: NEW_PW },
        __secretInputs: ["variables.db_password"],
        waitForDeployment: false,
      },
      state.inputs,
    );
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain('Scheduler plan for job "pwjob"');
    expect(text).toContain("Env[DB_PASSWORD]: [secret] => [secret]");
    expect(text).not.toContain(OLD_PW);
    expect(text).not.toContain(NEW_PW);
  });

  it("a whole secret variables map masks the same way", async () => {
    const news = await checked(
      { jobspec: SPEC, variables: { db_password: NEW_PW }, __secretInputs: ["variables"], waitForDeployment: false },
      state.inputs,
    );
    const { text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(text).toContain("Env[DB_PASSWORD]: [secret] => [secret]");
    expect(text).not.toContain(NEW_PW);
  });

  it("with nothing secret, in state or program, the plan shows values as it always did", async () => {
    const spec = SPEC.replace('"pwjob"', '"pwjob-plain"');
    const plain = await createJob({ jobspec: spec, variables: { db_password: OLD_PW }, waitForDeployment: false });
    expect(plain.outs).not.toHaveProperty("secretMask");
    const news = await checked(
      { jobspec: spec, variables: { db_password: NEW_PW }, waitForDeployment: false },
      plain.inputs,
    );
    const { text } = await captureStderr(() => job.diff(plain.id, plain.outs, news));
    expect(text).toContain(`Env[DB_PASSWORD]: "${OLD_PW}" => "${NEW_PW}"`);
  });

  it("adding secretInputs to a stack deployed without it is no change, and neither is dropping it", async () => {
    const before = await createJob({
      jobspec: SPEC.replace('"pwjob"', '"pwjob2"'),
      variables: { db_password: OLD_PW },
      waitForDeployment: false,
    });
    const added = await captureStderr(() =>
      applyJob(before, {
        jobspec: SPEC.replace('"pwjob"', '"pwjob2"'),
        variables: { db_password: OLD_PW },
        __secretInputs: ["variables.db_password"],
        waitForDeployment: false,
      }),
    );
    expect(added.value.step).toBe("same");
    expect(added.text).toBe("");
    const dropped = await applyJob(added.value, {
      jobspec: SPEC.replace('"pwjob"', '"pwjob2"'),
      variables: { db_password: OLD_PW },
      waitForDeployment: false,
    });
    expect(dropped.step).toBe("same");
  });

  it("a secret that decides a replacement (the region) is masked in the replacement note", async () => {
    const secretRegion = "eu-secret-region-1";
    const news = await checked(
      {
        jobspec: SPEC,
        variables: { db_password: OLD_PW, region_name: secretRegion },
        __secretInputs: ["variables.region_name"],
        waitForDeployment: false,
      },
      state.inputs,
    );
    const { value: d, text } = await captureStderr(() => job.diff(state.id, state.outs, news));
    expect(d.replaces).toBeDefined();
    expect(text).toContain("will be replaced");
    // The old value sits where the secret now goes, so it is masked too (the safe side).
    expect(text).toContain("region [secret] -> [secret]");
    expect(text).not.toContain(secretRegion);
  });

  it("an error that repeats a secret value (a server message quoting the source) holds [secret] instead, message and stack", async () => {
    // A server that quotes the offending source line in its parse error, as HCL diagnostics can.
    h.server.faults.add({
      service: "scheduler",
      method: "POST",
      path: "/v1/jobs/parse",
      status: 400,
      body: `input.hcl:14,9-20: Invalid value "${NEW_PW}"`,
      times: 4,
    });
    try {
      const e = await rejection(() =>
        job.create({ jobspec: SPEC, variables: { db_password: NEW_PW }, __secretInputs: ["variables.db_password"] }),
      );
      expect(String(e.message)).toContain("Invalid value");
      expect(String(e.message)).toContain("[secret]");
      expect(String(e.message)).not.toContain(NEW_PW);
      expect(String(e.stack)).not.toContain(NEW_PW);
    } finally {
      h.server.faults.clear();
    }
  });
});
