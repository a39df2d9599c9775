/**
 * What the scheduler stores of a Job's secrets (issue 43, item 2), read back over HTTP from the devserver:
 * a secret variable never reaches the job's stored submission (the register leaves it out of
 * `VariableFlags`/`Variables`), and a secret jobspec or job sends no submission at all; plain variables are
 * kept as before. A secret trigger's hash in the job's meta is keyed (an HMAC whose key state keeps as a
 * secret), so a short secret cannot be guessed from the job; plain triggers keep their plain hash.
 */
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StartedDevServer } from "../../../../devserver";
import { job } from "../../../../provider/resources/job";
import { applyJob, captureStderr, checked, createJob, registers, startHarness, type Harness } from "./harness";

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

/** The hash of `triggers` in the job's meta as it was before keying: sha256 of their canonical JSON, 16 hex. */
function plainHash(triggers: Record<string, string>): string {
  const sorted = Object.fromEntries(Object.entries(triggers).sort(([a], [b]) => (a < b ? -1 : 1)));
  return createHash("sha256").update(JSON.stringify(sorted)).digest("hex").slice(0, 16);
}

async function triggersMeta(id: string): Promise<unknown> {
  return ((await h.client.jobs.find(id))?.value.Meta ?? {})["pulumi-triggers"];
}

describe("a secret trigger on the scheduler", () => {
  const spec = (id: string): string => SPEC(id).replace("var.db_password", '"none"');
  const base = (id: string) => ({
    jobspec: spec(id),
    variables: { db_password: "x", image: "busybox:1" },
    waitForDeployment: false,
  });

  it("plain triggers keep the plain hash they always had", async () => {
    await createJob({ ...base("trig-plain"), triggers: { token: "ab" } });
    expect(await triggersMeta("trig-plain")).toBe(plainHash({ token: "ab" }));
  });

  it("is hashed with a key state keeps: the meta is not the plain hash, an equal value is no change, a new one runs", async () => {
    const first = await createJob({
      ...base("trig-secret"),
      triggers: { token: "ab" },
      __secretInputs: ["triggers.token"],
    });
    const meta = await triggersMeta("trig-secret");
    expect(meta).toMatch(/^[0-9a-f]{32}$/);
    expect(meta).not.toBe(plainHash({ token: "ab" }));
    expect(first.outs.secretMask?.key).toEqual(expect.any(String));

    const same = await applyJob(first, {
      ...base("trig-secret"),
      triggers: { token: "ab" },
      __secretInputs: ["triggers.token"],
    });
    expect(same.step).toBe("same");
    const from = h.server.requestLog.length;
    const news = { ...base("trig-secret"), triggers: { token: "cd" }, __secretInputs: ["triggers.token"] };
    const checkedNews = await checked(news, same.inputs);
    const { value: d } = await captureStderr(() => job.diff(same.id, same.outs, checkedNews));
    expect(d.changes).toBe(true);
    const next = await applyJob(same, news);
    expect(next.step).toBe("update");
    expect(registers(h.server, from)).toBe(1);
    expect(next.outs.secretMask?.key).toBe(first.outs.secretMask?.key);
    expect(await triggersMeta("trig-secret")).not.toBe(meta);
  });

  it("a job state has no key for yet: the diff and the update of one up hash alike (no plan-drift refusal)", async () => {
    // A service job whose meta change is a destructive update: a plan that changed between diff and update is refused.
    const svc = (id: string, token: string, secret: boolean) => ({
      job: {
        ID: id,
        Type: "service",
        Datacenters: ["dc1"],
        TaskGroups: [{ Name: "g", Count: 1, Tasks: [{ Name: "t", Driver: "docker", Config: { image: "busybox:1" } }] }],
      },
      triggers: { token },
      waitForDeployment: false,
      ...(secret ? { __secretInputs: ["triggers.token"] } : {}),
    });
    const before = await createJob(svc("trig-later", "ab", false));
    expect(before.outs).not.toHaveProperty("secretMask");
    // The allocation settles first: a plan made while it is still being placed counts its update otherwise
    // than one made after, which is a plan drift of the devserver's timing, not of the hash.
    await (h.server as StartedDevServer).schedulerControl?.idle();
    const next = await applyJob(before, svc("trig-later", "cd", true));
    expect(next.step).toBe("update");
    expect(await triggersMeta("trig-later")).toMatch(/^[0-9a-f]{32}$/);
    expect(next.outs.secretMask?.key).toEqual(expect.any(String));
  });
});
