/**
 * The devserver, acting as the release a transcript was recorded from, answers each rollout scenario with
 * the same sequence of statuses, descriptions and counts as the real server did (test/recorded/record.test.ts
 * records them; IDs, times and indexes are left out of both).
 */
import { readdirSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../devserver";
import { SchedulerClient } from "../../provider/clients/scheduler";
import { SCENARIOS, type Transcript } from "./scenarios";

const root = path.join(__dirname, "..", "fixtures", "recorded");

/** Recorded transcripts of scheduler releases: `nomad-<release>/<scenario>.json`. */
const recorded = readdirSync(root)
  .filter((d) => d.startsWith("nomad-"))
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
