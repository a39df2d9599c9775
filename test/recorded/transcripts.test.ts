/**
 * The devserver, acting as the release a transcript was recorded from, answers each rollout scenario with
 * the same sequence of statuses, descriptions and counts as the real server did, and each secrets-service
 * scenario (remount, plugin version, workload identity, a DELETE of a tune) with the same statuses, errors and fields (test/recorded/record.test.ts
 * records them; IDs, times and indexes are left out of both).
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REAL_HEADER_NAMES, startDevServer, type DevServer } from "../../devserver";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { SCENARIOS, type Transcript } from "./scenarios";
import { SECRETS_SCENARIOS, type SecretsTranscript } from "./secrets-scenarios";

const root = path.join(__dirname, "..", "fixtures", "recorded");

/** Recorded transcripts of scheduler releases: `nomad-<release>/<scenario>.json`. */
const recorded = readdirSync(root)
  .filter((d) => /^nomad-[\d.]+$/.test(d)) // nomad-<release>-cluster holds answers, not transcripts
  .flatMap((d) =>
    readdirSync(path.join(root, d))
      .filter((f) => f.endsWith(".json"))
      .map((f) => ({
        release: d.slice("nomad-".length),
        file: `${d}/${f}`,
        transcript: JSON.parse(readFileSync(path.join(root, d, f), "utf8")) as Transcript,
      })),
  );

describe.each([...new Set(recorded.map((r) => r.release))])("the devserver as scheduler %s", (release) => {
  let server: DevServer;
  let client: SchedulerClient;
  beforeAll(async () => {
    server = await startDevServer({
      // One node, as the `nomad agent -dev` the transcripts were recorded on.
      schedulerService: { release, deploymentMs: 150, batchMs: 150, evalDelayMs: 1, nodes: { count: 1 } },
    });
    client = new SchedulerClient({ address: server.urls.scheduler, token: server.rootTokens.scheduler });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const r of recorded.filter((x) => x.release === release)) {
    it(`answers ${r.transcript.scenario} as recorded (${r.file})`, async () => {
      const scenario = SCENARIOS[r.transcript.scenario];
      if (scenario === undefined) throw new Error(`no scenario "${r.transcript.scenario}"`);
      const got = await scenario({ client, name: (l) => `ci-${l}`, timeoutMs: 10_000 });
      expect(got.steps).toEqual(r.transcript.steps);
    });
  }
});

/** Recorded transcripts of the secrets service: `openbao-<release>/<scenario>.json`. */
const recordedSecrets = readdirSync(root)
  // `-cluster` directories hold a three-node cluster's answers (test/recorded/cluster-answers.test.ts, test/recorded/openbao-cluster-answers.test.ts).
  .filter((d) => d.startsWith("openbao-") && !d.endsWith("-cluster"))
  .flatMap((d) =>
    readdirSync(path.join(root, d))
      .filter((f) => f.endsWith(".json"))
      .map((f) => ({
        release: d,
        file: `${d}/${f}`,
        transcript: JSON.parse(readFileSync(path.join(root, d, f), "utf8")) as SecretsTranscript,
      })),
  );

/**
 * Where the devserver is known to answer differently from the recorded server, and why. These still run:
 * each must still differ (so the entry is removed once the devserver is fixed), and every other step must
 * match. None today: the devserver as OpenBao 2.6.2 answers plugin versions and workload identity as
 * recorded.
 */
const KNOWN_DIFFERENCES: Readonly<Record<string, { steps: readonly string[]; why: string }>> = {};

describe.each([...new Set(recordedSecrets.map((r) => r.release))])("the devserver as secrets service %s", (release) => {
  let server: DevServer;
  beforeAll(async () => {
    server = await startDevServer({
      secretsService: { methodType: "azure", release },
      secrets: { headerNames: REAL_HEADER_NAMES.secrets },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  for (const r of recordedSecrets.filter((x) => x.release === release)) {
    it(`answers ${r.transcript.scenario} as recorded (${r.file})`, async () => {
      const scenario = SECRETS_SCENARIOS[r.transcript.scenario];
      if (scenario === undefined) throw new Error(`no scenario "${r.transcript.scenario}"`);
      const target = { address: server.urls.secrets, token: server.rootTokens.secrets, methodType: "azure" };
      const got = await scenario({ target, name: (l) => `ci-${l}`, timeoutMs: 10_000 });
      const known = KNOWN_DIFFERENCES[r.file];
      if (known === undefined) {
        expect(got.steps).toEqual(r.transcript.steps);
        return;
      }
      const differing = got.steps
        .filter((step, i) => JSON.stringify(step) !== JSON.stringify(r.transcript.steps[i]))
        .map((step) => step.step);
      expect(got.steps.map((step) => step.step)).toEqual(r.transcript.steps.map((step) => step.step));
      expect(differing, `known difference: ${known.why}`).toEqual(known.steps);
    });
  }
});
