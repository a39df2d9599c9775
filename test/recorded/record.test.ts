/**
 * Records the transcripts of test/recorded/scenarios.ts against a real scheduler (nothing runs without
 * RECORD_RELEASE): `npm run record:transcripts` with the server's address in the library's own environment
 * variables (SCHEDULER_ADDR, SCHEDULER_TOKEN, SCHEDULER_HEADER_STYLE=real) and RECORD_RELEASE naming the
 * release it runs (e.g. `nomad-1.6.5`). The server needs a client node in datacenter dc1 with the raw_exec
 * driver (a `nomad agent -dev` with raw_exec enabled). Writes test/fixtures/recorded/<release>/<scenario>.json;
 * RECORD_SCENARIOS (comma-separated) limits the run to some scenarios.
 *
 * The secrets service's scenarios record with RECORD_SECRETS_RELEASE (e.g. `openbao-2.6.2`), SECRETS_ADDR and
 * SECRETS_TOKEN (a token that may enable and move auth mounts), and RECORD_METHOD_TYPE (default `azure`).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { describe, it } from "vitest";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { SCENARIOS } from "./scenarios";
import { SECRETS_SCENARIOS } from "./secrets-scenarios";

const release = process.env.RECORD_RELEASE ?? "";
const only = (process.env.RECORD_SCENARIOS ?? "").split(",").filter((s) => s !== "");

describe.runIf(/^[a-z]+-\d+\.\d+\.\d+$/.test(release))(`record transcripts of ${release}`, () => {
  const dir = path.join(__dirname, "..", "fixtures", "recorded", release);
  const run = randomBytes(3).toString("hex");
  for (const [name, scenario] of Object.entries(SCENARIOS)) {
    it.runIf(only.length === 0 || only.includes(name))(name, { timeout: 180_000 }, async () => {
      const client = new SchedulerClient();
      const t = await scenario({ client, name: (l) => `rec-${run}-${l}`, timeoutMs: 90_000 });
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        path.join(dir, `${name}.json`),
        `${JSON.stringify({ recordedFrom: release, recordedOn: new Date().toISOString().slice(0, 10), ...t }, null, 2)}\n`,
      );
    });
  }
});

const secretsRelease = process.env.RECORD_SECRETS_RELEASE ?? "";

describe.runIf(/^[a-z]+-\d+\.\d+\.\d+$/.test(secretsRelease))(`record transcripts of ${secretsRelease}`, () => {
  const dir = path.join(__dirname, "..", "fixtures", "recorded", secretsRelease);
  const run = randomBytes(3).toString("hex");
  for (const [name, scenario] of Object.entries(SECRETS_SCENARIOS)) {
    it.runIf(only.length === 0 || only.includes(name))(name, { timeout: 60_000 }, async () => {
      const target = {
        address: (process.env.SECRETS_ADDR ?? "").replace(/\/+$/, ""),
        token: process.env.SECRETS_TOKEN ?? "",
        methodType: process.env.RECORD_METHOD_TYPE || "azure",
      };
      const t = await scenario({ target, name: (l) => `rec-${run}-${l}`, timeoutMs: 30_000 });
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        path.join(dir, `${name}.json`),
        `${JSON.stringify({ recordedFrom: secretsRelease, recordedOn: new Date().toISOString().slice(0, 10), ...t }, null, 2)}\n`,
      );
    });
  }
});
