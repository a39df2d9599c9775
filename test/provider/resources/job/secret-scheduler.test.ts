/**
 * What the scheduler stores of a Job's secrets (issue 43, item 2), read back over HTTP from the devserver:
 * a secret variable never reaches the job's stored submission (the register leaves it out of
 * `VariableFlags`/`Variables`), and a secret jobspec or job sends no submission at all; plain variables are
 * kept as before.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createJob, startHarness, type Harness } from "./harness";

const SPEC = (id: string): string => `
variable "db_password" {
  type = string
}
variable "image" {
  type = string
}
job "${id}" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = var.image
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

const PW = "stored-Pw-6612";
let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h.close();
});

/** The submission of version `version` of a job, as any token that can read the job gets it. */
async function submission(id: string, version = 0): Promise<{ status: number; text: string }> {
  const res = await fetch(`${h.server.urls.scheduler}/v1/job/${id}/submission?version=${version}`, {
    headers: { "X-Svc-Token": h.server.rootTokens.scheduler },
  });
  return { status: res.status, text: await res.text() };
}

describe("what the scheduler stores of secret job values", () => {
  it("a secret variable is left out of the submission; the plain ones and the source stay", async () => {
    await createJob({
      jobspec: SPEC("sub-var"),
      variables: { db_password: PW, image: "busybox:1" },
      __secretInputs: ["variables.db_password"],
      waitForDeployment: false,
    });
    const { status, text } = await submission("sub-var");
    expect(status).toBe(200);
    expect(text).not.toContain(PW);
    const sub = JSON.parse(text) as { VariableFlags?: Record<string, string>; Source?: string };
    expect(sub.VariableFlags).toEqual({ image: "busybox:1" });
    expect(sub.Source).toContain('job "sub-var"');
  });

  it("secret var-file text is left out whole; a secret jobspec sends no submission", async () => {
    await createJob({
      jobspec: SPEC("sub-file"),
      variables: `db_password = "${PW}"\nimage = "busybox:1"\n`,
      __secretInputs: ["variables"],
      waitForDeployment: false,
    });
    const file = await submission("sub-file");
    expect(file.text).not.toContain(PW);
    expect((JSON.parse(file.text) as { Variables?: string }).Variables ?? "").toBe("");

    await createJob({
      jobspec: SPEC("sub-spec").replace("var.db_password", `"${PW}"`),
      variables: { db_password: "unused", image: "busybox:1" },
      __secretInputs: ["jobspec"],
      waitForDeployment: false,
    });
    const spec = await submission("sub-spec");
    expect(spec.text).not.toContain(PW);
    expect(spec.status).toBe(404);
  });
});
