/**
 * The engine path: the packed library installed in a temporary Pulumi project, its providers serialized
 * there as the SDK does, and Pulumi's own dynamic-provider host driven over gRPC against the devserver.
 * One file, so the build, pack and install happen once; the suites live in ./suites.
 *
 * Env: ENGINE_INSTALL=link|npm, ENGINE_PULUMI=<version> (npm mode), ENGINE_NODE=<node binary for the
 * children>, ENGINE_KEEP=1 (keep the temp projects), ENGINE_REPORT=<file> (write the measurements as JSON).
 */
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll } from "vitest";
import { setUpEngine, tearDownEngine, type EngineContext } from "./harness/context";
import { engineMessagesSuite } from "./suites/engine-messages";
import { lifecycleSuite } from "./suites/lifecycle";
import { oldStateSuite } from "./suites/old-state";
import { programSuite } from "./suites/program";
import { serializationSuite } from "./suites/serialization";

let ctx: EngineContext | undefined;
const get = (): EngineContext => {
  if (ctx === undefined) throw new Error("engine fixture not set up");
  return ctx;
};

beforeAll(async () => {
  ctx = await setUpEngine();
}, 300_000);

afterAll(async () => {
  if (ctx !== undefined) {
    ctx.report.hostCalls = summarizeTimings(ctx);
    console.log(`engine report: ${JSON.stringify(ctx.report, null, 2)}`);
    if (process.env.ENGINE_REPORT) writeFileSync(process.env.ENGINE_REPORT, JSON.stringify(ctx.report, null, 2));
  }
  await tearDownEngine(ctx);
});

function summarizeTimings(c: EngineContext): Record<string, { calls: number; firstMs: number; medianMs: number }> {
  const by = new Map<string, number[]>();
  for (const t of c.host.timings) by.set(t.method, [...(by.get(t.method) ?? []), t.ms]);
  const out: Record<string, { calls: number; firstMs: number; medianMs: number }> = {};
  for (const [m, ms] of by) {
    const sorted = [...ms].sort((a, b) => a - b);
    out[m] = {
      calls: ms.length,
      firstMs: Math.round((ms[0] ?? 0) * 10) / 10,
      medianMs: Math.round((sorted[Math.floor(sorted.length / 2)] ?? 0) * 10) / 10,
    };
  }
  return out;
}

serializationSuite(get);
programSuite(get);
lifecycleSuite(get);
engineMessagesSuite(get);
oldStateSuite(get, "state-v1");
oldStateSuite(get, "release-0.1.0");
oldStateSuite(get, "release-0.2.0");
