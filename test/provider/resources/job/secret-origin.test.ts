/**
 * Secrecy follows a value's origin in the old job too (issue 43, item 1), through the provider against the
 * devserver: a Job deployed with a secret variable keeps, in its secret output `secretMask`, which of its
 * values came from the secret. Once the program drops the variable, or passes the value as plain, the plan a
 * preview prints, the errors of a read or a delete, and the notes of an update mask the old value (and what
 * the jobspec computed from it), although the new inputs say nothing is secret.
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

const spec = (id: string, withSecret: boolean): string => `
${withSecret ? 'variable "db_password" {\n  type = string\n}' : ""}
job "${id}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    task "t" {
      driver = "docker"
      ${withSecret ? "user = upper(var.db_password)" : ""}
      config {
        image = "busybox:1"
      }
      env {
        APP = "demo"
        ${withSecret ? "DB_PASSWORD = var.db_password" : ""}
      }
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

const OLD_PW = "old-Origin-pw-5521";
const PLAIN = "plain-value-8830";
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** A Job deployed with the secret variable (as the SDK marks it). */
async function deployed(id: string): Promise<Stated> {
  return createJob({
    jobspec: spec(id, true),
    variables: { db_password: OLD_PW },
    __secretInputs: ["variables.db_password"],
    waitForDeployment: false,
    purgeOnDestroy: true,
  });
}

/** True when `text` holds the old secret or what the jobspec computed from it. */
function leaks(text: string): boolean {
  return text.includes(OLD_PW) || text.includes(OLD_PW.toUpperCase());
}

describe("a secret that used to be there", () => {
  it("state records which values came from the secret (a secret output), nothing when nothing is secret", async () => {
    const s = await deployed("origin-rec");
    expect(s.outs.secretMask?.config).toBe(true);
    expect(s.outs.secretMask?.values).toEqual(expect.arrayContaining([OLD_PW, OLD_PW.toUpperCase()]));
    const plain = await createJob({ jobspec: spec("origin-plain", false), waitForDeployment: false });
    expect(plain.outs).not.toHaveProperty("secretMask");
  });

  it("the program drops the variable and the env line: the plan shows the old value as [secret]", async () => {
    const s = await deployed("origin-drop");
    const news = await checked({ jobspec: spec("origin-drop", false), waitForDeployment: false }, s.inputs);
    const { value: d, text } = await captureStderr(() => job.diff(s.id, s.outs, news));
    expect(d.changes).toBe(true);
    expect(text).toContain('Scheduler plan for job "origin-drop"');
    expect(text).toContain("- Env[DB_PASSWORD]: [secret]");
    expect(text).toContain("[secret]");
    expect(leaks(text), text).toBe(false);
  });

  it("the program passes the value as plain: the old side is [secret]; after the update the plain job shows as usual", async () => {
    const s = await deployed("origin-plain2");
    const plainInputs = {
      jobspec: spec("origin-plain2", true),
      variables: { db_password: PLAIN },
      waitForDeployment: false,
    };
    const news = await checked(plainInputs, s.inputs);
    const { text } = await captureStderr(() => job.diff(s.id, s.outs, news));
    expect(text).toContain("Env[DB_PASSWORD]: [secret] =>");
    expect(leaks(text), text).toBe(false);

    const updated = await captureStderr(() => applyJob(s, plainInputs));
    expect(updated.value.step).toBe("update");
    expect(leaks(updated.text), updated.text).toBe(false);
    // The job now holds only the plain value: state records nothing secret, and the next change shows values.
    expect(updated.value.outs).not.toHaveProperty("secretMask");
    const next = await checked({ ...plainInputs, variables: { db_password: `${PLAIN}-2` } }, updated.value.inputs);
    const after = await captureStderr(() => job.diff(updated.value.id, updated.value.outs, next));
    expect(after.text).toContain(`Env[DB_PASSWORD]: "${PLAIN}" => "${PLAIN}-2"`);
  });

  it("a read or a delete whose error quotes the old value (the program no longer marks it) shows [secret]", async () => {
    const s = await deployed("origin-errors");
    const body = `job "origin-errors" holds DB_PASSWORD=${OLD_PW} (user ${OLD_PW.toUpperCase()})`;
    h.server.faults.add({
      service: "scheduler",
      method: "GET",
      path: /^\/v1\/jobs?(\/|$)/,
      status: 400,
      body,
      times: 20,
    });
    try {
      const e = await rejection(() => job.read(s.id, s.outs));
      expect(String(e.message)).toContain("[secret]");
      expect(leaks(String(e.message)), String(e.message)).toBe(false);
      expect(leaks(String(e.stack))).toBe(false);
    } finally {
      h.server.faults.clear();
    }
    h.server.faults.add({ service: "scheduler", method: "DELETE", path: /^\/v1\/job\//, status: 400, body, times: 20 });
    try {
      const e = await rejection(() => job.delete(s.id, s.outs));
      expect(String(e.message)).toContain("[secret]");
      expect(leaks(String(e.message)), String(e.message)).toBe(false);
      expect(leaks(String(e.stack))).toBe(false);
    } finally {
      h.server.faults.clear();
    }
    await job.delete(s.id, s.outs);
  });
});
