/**
 * State written by an earlier release must keep working: refresh (Read: the state comes back in the current
 * layout, nothing changed), `up` (Update from the stored outputs, with the new provider text in the inputs,
 * as the engine sends it), a preview of the program it was deployed with (no change) and `destroy` (Delete
 * with the provider text stored in state). Each fixture set holds, per kind, the checked inputs and the
 * state outputs (with `__provider` and `schemaVersion`) an earlier build wrote, and the devserver's
 * persisted state at that moment, so the objects exist with the indexes the state names:
 *   - `release-0.1.0`, `release-0.2.0`: recorded by those releases (their commits in CHANGELOG.md), each with
 *     its own recorder below, run in an export of its commit;
 *   - `state-v1`: recorded before the 0.1.0 release commit (its index says 0.1.0), with shapes no release
 *     wrote: Job outputs echoing the sources, an unsalted inputs hash, Job inputs without the identity.
 * Both releases wrote layout version 1; provider/resources/migrate.ts brings each to the current one.
 *
 * Fixture sets are kept forever; never re-record an existing set to make a failure go away. After a release,
 * record its set in an export of its commit (`git archive`, as scripts/previous-release.js builds it) with
 * ENGINE_RECORD_FIXTURES=state-v1 npx vitest run test/engine -t "records the", copy
 * test/engine/fixtures/state-v1 from there to release-<version> here, and register it in engine.test.ts.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import type { ProviderKind } from "../../../provider";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { migratedOutputs } from "../../helpers/migrated-state";
import { REPO_ROOT } from "../harness/pack";
import { scrubbedEnv, secretValue, type EngineContext, type Kind } from "../harness/context";
import { ProviderHost, urnOf, type Props } from "../harness/host";
import { SCENARIOS, scenarioClients, type ScenarioEnv } from "./scenarios";

const FIXTURES = join(REPO_ROOT, "test", "engine", "fixtures");

/** The fixture set's index. */
interface FixtureIndex {
  release: string;
  pulumi: string;
  node: string;
  recordedAt: string;
  env: { mount: string; jobId: string; clientSecret: string };
  kinds: Kind[];
}

/** One resource as the earlier release left it in state. */
interface FixtureResource {
  kind: Kind;
  type: string;
  urn: string;
  id: string;
  inputs: Props;
  outputs: Props;
}

function stackConfig(dev: DevServer): Props {
  return {
    "pulumi-secrets-scheduler:secretsAddress": dev.urls.secrets,
    "pulumi-secrets-scheduler:secretsToken": secretValue(dev.rootTokens.secrets),
    "pulumi-secrets-scheduler:schedulerAddress": dev.urls.scheduler,
    "pulumi-secrets-scheduler:schedulerToken": secretValue(dev.rootTokens.scheduler),
  };
}

/** A devserver restored from the fixture, a fresh host configured for it, and the scenario clients. */
async function restore(
  ctx: EngineContext,
  set: string,
  round: string,
): Promise<{ dev: DevServer; host: ProviderHost; env: ScenarioEnv }> {
  const index = readIndex(set);
  const file = join(ctx.workDir, `${set}-${round}-devserver.json`);
  copyFileSync(join(FIXTURES, set, "devserver.json"), file);
  const dev = await startDevServer({ persistPath: file });
  // A new host per round, as each CLI command starts one (and providers are configured once per host).
  const host = await ProviderHost.start(ctx.projects[0], scrubbedEnv(join(ctx.workDir, "cache-home")));
  await host.configure(stackConfig(dev));
  ctx.secrets.push(dev.rootTokens.secrets, dev.rootTokens.scheduler, index.env.clientSecret);
  return { dev, host, env: { ...index.env, ...scenarioClients(dev.urls, dev.rootTokens) } };
}

/** The provider's name of a fixture's kind: `auth-mount` is `authMount`. */
function providerKind(kind: Kind): ProviderKind {
  return kind.replace(/-([a-z])/g, (_m, c: string) => c.toUpperCase()) as ProviderKind;
}

/**
 * What the program wrote: stored inputs without what `check` added (the keys `__resolvedKeys` names, or
 * `resolvedKeys` as releases up to 0.2.0 stored it).
 */
function programOf(inputs: Props): Props {
  const names = inputs.__resolvedKeys ?? inputs.resolvedKeys;
  const added = Array.isArray(names) ? (names as string[]) : [];
  const bookkeeping = ["resolvedKeys", "__resolvedKeys"];
  return Object.fromEntries(Object.entries(inputs).filter(([k]) => !bookkeeping.includes(k) && !added.includes(k)));
}

function readIndex(set: string): FixtureIndex {
  return JSON.parse(readFileSync(join(FIXTURES, set, "index.json"), "utf8")) as FixtureIndex;
}

function readResource(set: string, kind: Kind): FixtureResource {
  return JSON.parse(readFileSync(join(FIXTURES, set, `${kind}.json`), "utf8")) as FixtureResource;
}

/** Creates all five resources on a persisting devserver and writes the fixture set. */
async function recordFixtures(ctx: EngineContext, set: string): Promise<void> {
  const dir = join(FIXTURES, set);
  mkdirSync(dir, { recursive: true });
  const persist = join(ctx.workDir, `${set}-record.json`);
  const dev = await startDevServer({ persistPath: persist });
  const host = await ProviderHost.start(ctx.projects[0], scrubbedEnv(join(ctx.workDir, "cache-home")));
  try {
    await host.configure(stackConfig(dev));
    const env = { mount: "fixture-cloud", jobId: "fixture-web", clientSecret: "fixture-client-secret-not-real" };
    const senv: ScenarioEnv = { ...env, ...scenarioClients(dev.urls, dev.rootTokens) };
    for (const s of SCENARIOS) {
      const urn = urnOf(s.type, `${s.kind}-1`);
      const checked = await host.check(urn, {}, { ...s.inputs(senv), __provider: ctx.provider(s.kind) });
      if (checked.failures.length > 0) throw new Error(`${s.kind}: check failed: ${JSON.stringify(checked.failures)}`);
      const created = await host.create(urn, checked.inputs);
      const res: FixtureResource = {
        kind: s.kind,
        type: s.type,
        urn,
        id: created.id,
        inputs: checked.inputs,
        outputs: created.properties,
      };
      writeFileSync(join(dir, `${s.kind}.json`), JSON.stringify(res, null, 2) + "\n");
    }
    await dev.flush();
    const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string };
    const index: FixtureIndex = {
      release: pkg.version,
      pulumi: ctx.projects[0].pulumiVersion,
      node: process.version,
      recordedAt: new Date().toISOString().slice(0, 10),
      env,
      kinds: SCENARIOS.map((s) => s.kind),
    };
    writeFileSync(join(dir, "index.json"), JSON.stringify(index, null, 2) + "\n");
  } finally {
    await host.close();
    await dev.close();
  }
  copyFileSync(persist, join(dir, "devserver.json"));
}

/** Registers the old-state tests for one fixture set. */
export function oldStateSuite(get: () => EngineContext, set = "state-v1"): void {
  describe(`state written by an earlier release (${set})`, () => {
    if (process.env.ENGINE_RECORD_FIXTURES === set) {
      it(`records the ${set} fixture`, async () => {
        await recordFixtures(get(), set);
      });
    }

    it("is present in the repository", () => {
      expect(existsSync(join(FIXTURES, set, "index.json")), `missing fixture; see ${set} in suites/old-state.ts`).toBe(
        true,
      );
      for (const s of SCENARIOS) expect(existsSync(join(FIXTURES, set, `${s.kind}.json`))).toBe(true);
    });

    it("reads (refresh) and updates (up) with the current release", async () => {
      const ctx = get();
      const { dev, host, env } = await restore(ctx, set, "update");
      try {
        for (const s of SCENARIOS) {
          const old = readResource(set, s.kind);
          const read = await host.read(old.urn, old.id, old.outputs, old.inputs);
          expect(read.id, `${s.kind} read`).toBe(old.id);
          // Refresh keeps the stored provider text: the engine reads with the code in state.
          expect(read.properties.__provider).toBe(old.outputs.__provider);
          // A refresh reads the state in the current layout and finds nothing changed (a job's modifyIndex
          // moves with its allocations, which the restored devserver places again).
          const migrated = await migratedOutputs(providerKind(s.kind), old.outputs);
          expect(read.properties, `${s.kind} read`).toEqual({ ...migrated, modifyIndex: read.properties.modifyIndex });

          const news = { ...s.edited(env), __provider: ctx.provider(s.kind) };
          const checked = await host.check(old.urn, old.inputs, news);
          expect(checked.failures, `${s.kind} check`).toEqual([]);
          const diff = await host.diff(old.urn, old.id, old.outputs, checked.inputs);
          expect(diff, `${s.kind} diff`).toMatchObject({ changes: "some", replaces: [] });
          const outs = await host.update(old.urn, old.id, old.outputs, checked.inputs);
          expect(outs.__provider).toBe(ctx.provider(s.kind));
          // Updating migrates old state to the current layout.
          expect(outs.schemaVersion).toBe(SCHEMA_VERSION);
        }
      } finally {
        await host.close();
        await dev.close();
      }
      for (const secret of ctx.secrets) expect(host.output).not.toContain(secret);
    });

    it("previews the program each resource was deployed with as no change, sending no request (one parse for a Job from before 0.1.0)", async () => {
      // The stored inputs are what that release's program gave (with what its `check` added); the new provider
      // text comes with them, as after `npm install` of this release.
      const ctx = get();
      const { dev, host } = await restore(ctx, set, "preview");
      try {
        for (const s of SCENARIOS) {
          const old = readResource(set, s.kind);
          const program = { ...programOf(old.inputs), __provider: ctx.provider(s.kind) };
          dev.resetLog();
          const checked = await host.check(old.urn, old.inputs, program);
          expect(checked.failures, `${s.kind} check`).toEqual([]);
          const diff = await host.diff(old.urn, old.id, old.outputs, checked.inputs);
          expect(diff.changes, `${s.kind} diff`).toBe("none");
          // Stored Job inputs from before the first release lack the identity `check` adds: it parses once.
          const resolved =
            s.kind !== "job" || Array.isArray(old.inputs.resolvedKeys) || Array.isArray(old.inputs.__resolvedKeys);
          expect(
            dev.requestLog.map((e) => `${e.method} ${e.path}`),
            `${s.kind} requests`,
          ).toEqual(resolved ? [] : ["POST /v1/jobs/parse"]);
        }
      } finally {
        await host.close();
        await dev.close();
      }
    });

    it("deletes (destroy) with the provider text stored in state", async () => {
      const ctx = get();
      const { dev, host, env } = await restore(ctx, set, "delete");
      try {
        for (const s of [...SCENARIOS].reverse()) {
          const old = readResource(set, s.kind);
          expect(await s.exists(env), `${s.kind} restored`).toBe(true);
          await host.delete(old.urn, old.id, old.outputs);
          expect(await s.exists(env), `${s.kind} deleted`).toBe(false);
        }
      } finally {
        await host.close();
        await dev.close();
      }
    });
  });
}
