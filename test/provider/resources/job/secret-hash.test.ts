/**
 * Job.inputsHash with a secret variable: the hash is salted and keyed, so a low-entropy
 * secret cannot be confirmed from state with a quick hash of a guess; no output derived from the secret is
 * plaintext (the echoed inputs keep their inputs' secretness; the derived ones are listed as secret outputs
 * by the SDK, which test/sdk/job.test.ts checks).
 */
import { createHash, createHmac } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { job } from "../../../../provider/resources/job";
import { migrating } from "../../../../provider/resources/migrate";
import { desiredInputsHash, inputsHashMatches } from "../../../../provider/resources/job/hashes";
import type { JobInputs } from "../../../../provider/resources/job/inputs";
import { canonicalJson } from "../../../../provider/resources/common";
import { userInputs } from "../../../../provider/resources/job/checked";
import { checked as checkedWithIdentity, createJob, startHarness, type Harness } from "./harness";

/** The inputs as the provider's diff and update see them: checked, without the identity `check` adds. */
const checked = async (inputs: Parameters<typeof checkedWithIdentity>[0]): Promise<JobInputs> =>
  userInputs(await checkedWithIdentity(inputs));

const PW = "hunter2";
const SPEC = `
variable "pw" {
  type = string
}

job "hashed" {
  datacenters = ["dc1"]
  type        = "batch"
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = "busybox:1"
      }
      env {
        PASSWORD = var.pw
      }
    }
  }
}
`;

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 10, evalDelayMs: 1 } });
});
afterAll(async () => {
  await h?.close();
});

/** What the inputs hash is taken of, for a jobspec with the variable `pw` and the harness's connection. */
function material(inputs: JobInputs, pw: string): string {
  return canonicalJson({
    v: 1,
    jobspec: inputs.jobspec ?? null,
    job: null,
    variables: `pw = ${JSON.stringify(pw)}\n`,
    namespace: null,
    region: null,
    connNamespace: null,
    connRegion: null,
  });
}

/** The unsalted hash older versions stored: what an attacker with the state could recompute from a guess. */
function unsalted(inputs: JobInputs, pw: string): string {
  return createHash("sha256").update(material(inputs, pw)).digest("hex").slice(0, 32);
}

describe("Job.inputsHash with a secret variable", () => {
  it("is salted and keyed: a guess cannot be checked by hashing it, equal inputs give unrelated values, and it still matches its inputs", async () => {
    const inputs = await checked({ jobspec: SPEC, variables: { pw: PW } });
    const state = await createJob({ jobspec: SPEC, variables: { pw: PW } });
    const stored = state.outs.inputsHash;
    expect(stored).toMatch(/^hmac-sha256\$[A-Za-z0-9_-]{22}\$[0-9a-f]{64}$/);
    expect(stored).not.toContain(unsalted(inputs, PW));
    expect(desiredInputsHash(inputs, h.client)).not.toBe(desiredInputsHash(inputs, h.client));
    expect(inputsHashMatches(stored, inputs, h.client)).toBe(true);
    expect(inputsHashMatches(stored, await checked({ jobspec: SPEC, variables: { pw: "hunter3" } }), h.client)).toBe(
      false,
    );
    // The same inputs still diff to no change, without asking the server.
    const from = h.server.requestLog.length;
    expect((await job.diff(state.id, state.outs, inputs)).changes).toBe(false);
    expect(h.server.requestLog.length).toBe(from);
  });

  it("is the HMAC-SHA-256 that createHmac gives, for keys of every length: hashes already in state still match", async () => {
    // What the provider writes: the salt is the key.
    const spec = SPEC.replace('job "hashed"', 'job "hashed-hmac"');
    const state = await createJob({ jobspec: spec, variables: { pw: PW } });
    const [, salt, mac] = String(state.outs.inputsHash).split("$");
    const inputs = await checked({ jobspec: spec, variables: { pw: PW } });
    const key16 = Buffer.from(salt ?? "", "base64url");
    expect(key16.length).toBe(16);
    expect(mac).toBe(createHmac("sha256", key16).update(material(inputs, PW)).digest("hex"));
    // Keys shorter than, as long as and longer than a block (the HMAC hashes those first), and messages of
    // every kind (through the jobspec the hash covers).
    for (const length of [1, 16, 63, 64, 65, 200]) {
      const key = Buffer.from(Array.from({ length }, (_, i) => (i * 37 + length) % 256));
      for (const jobspec of ["", "{}", "pässwörd \u{1F511}", "x".repeat(1000)]) {
        const message = material({ ...inputs, jobspec }, PW);
        expect(desiredInputsHash({ ...inputs, jobspec }, h.client, key)).toBe(
          `hmac-sha256$${key.toString("base64url")}$${createHmac("sha256", key).update(message).digest("hex")}`,
        );
      }
    }
  });

  it("no output derived from the secret is plaintext except those the SDK always keeps secret", async () => {
    const state = await createJob({ jobspec: SPEC.replace('job "hashed"', 'job "hashed-2"'), variables: { pw: PW } });
    // Outputs named like an input take that input's secretness; these two are derived and listed as
    // additionalSecretOutputs by the SDK's Job.
    const echoed = new Set(["jobspec", "job", "variables"]);
    const alwaysSecret = new Set(["normalizedJob", "inputsHash"]);
    const leaking = Object.entries(state.outs).filter(
      ([k, v]) => JSON.stringify(v).includes(PW) && !echoed.has(k) && !alwaysSecret.has(k),
    );
    expect(leaking).toEqual([]);
    const legacy = unsalted(
      await checked({ jobspec: SPEC.replace('job "hashed"', 'job "hashed-2"'), variables: { pw: PW } }),
      PW,
    );
    expect(JSON.stringify(state.outs)).not.toContain(legacy);
  });

  it("state from before 0.1.0 with the unsalted hash migrates: no change shown, and the hash leaves state", async () => {
    const spec = SPEC.replace('job "hashed"', 'job "hashed-3"');
    const state = await createJob({ jobspec: spec, variables: { pw: PW } });
    const inputs = await checked({ jobspec: spec, variables: { pw: PW } });
    const legacy = unsalted(inputs, PW);
    const old = { ...state.outs, inputsHash: legacy, schemaVersion: 1 };
    // As the provider host loads it (provider/index.ts): stored state migrated before every method.
    const provider = migrating("job", job);
    // The job is compared by its normal form (one parse), as for a hash that came from the server.
    expect((await provider.diff(state.id, old, inputs)).changes).toBe(false);
    const read = await provider.read(state.id, old);
    expect(read.props?.inputsHash).toBe("");
    expect(JSON.stringify(read)).not.toContain(legacy);
  });
});
