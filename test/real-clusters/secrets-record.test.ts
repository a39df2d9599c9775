/**
 * Records a real three-node OpenBao cluster's answers during an active-node change and its standby reads
 * (./record-openbao.ts) into test/fixtures/recorded/openbao-2.6.2-cluster/, which
 * test/recorded/openbao-cluster-answers.test.ts makes the devserver reproduce in `npm test`.
 *
 * Opt-in: REAL_CLUSTERS_RECORD=1 with BAO_BIN and BAO_PLUGIN_DIR (see ./openbao.ts). It writes the fixtures
 * only; review the diff before committing (nothing secret is in them: no header is recorded).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { truthy } from "../helpers/cli";
import { startBaoCluster, type BaoCluster } from "./openbao";
import { recordActiveNodeKilled, recordStandbyReads } from "./record-openbao";

const OUT = join(__dirname, "..", "fixtures", "recorded", "openbao-2.6.2-cluster");

let cluster: BaoCluster | undefined;
afterAll(async () => {
  await cluster?.close();
});

describe("record a real OpenBao cluster's leader-change answers", () => {
  it("records active-node-killed and standby-reads", { timeout: 600_000 }, async (t) => {
    if (!truthy(process.env.REAL_CLUSTERS_RECORD))
      t.skip("opt-in: REAL_CLUSTERS_RECORD=1 with BAO_BIN and BAO_PLUGIN_DIR");
    const bin = process.env.BAO_BIN;
    const pluginDir = process.env.BAO_PLUGIN_DIR;
    if (bin === undefined || pluginDir === undefined)
      throw new Error("REAL_CLUSTERS_RECORD=1 needs BAO_BIN and BAO_PLUGIN_DIR");
    cluster = await startBaoCluster({ bin, pluginDir });
    const token = cluster.rootToken();
    mkdirSync(OUT, { recursive: true });
    const killed = await recordActiveNodeKilled(cluster, "rec");
    const standby = await recordStandbyReads(cluster, "rec", 20);
    for (const [file, value] of [
      ["active-node-killed.json", killed],
      ["standby-reads.json", standby],
    ] as const) {
      const text = JSON.stringify(value, null, 2) + "\n";
      expect(text.includes(token)).toBe(false);
      writeFileSync(join(OUT, file), text);
    }
  });
});
