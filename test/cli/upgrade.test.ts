/**
 * Upgrades: a stack deployed with an earlier release previews and updates with no change once
 * the project installs the new one. Through the Automation API and the real Pulumi CLI, against the
 * devserver, for each earlier release whose state this one migrates (the previous release, and the release
 * of this checkout's version when CHANGELOG.md names its commit: this checkout is then past it):
 *   1. the release (scripts/previous-release.js: by default the newest release CHANGELOG.md names below this
 *      checkout's version, at the commit named there, built and packed as a release, cached outside the
 *      repository) is installed into a copy of the quickstart
 *      AS THAT RELEASE HAD IT (the program does not change in an upgrade), with the dependencies it was
 *      locked with, and `pulumi up` deploys it: all five resource types;
 *   2. the AuthConfig's client is changed outside Pulumi and adopted in the program's stack config, and the
 *      release refreshes it (storing what it read as the resource's inputs);
 *   3. the project's node_modules is replaced by the tarball this checkout builds, as `npm install` of the
 *      new release does;
 *   4. a refresh, `pulumi preview` and `pulumi up` (all --expect-no-changes) and a refresh show no change, the
 *      stack's outputs are what they were, the refresh left every resource's state in the current layout
 *      (provider/resources/migrate.ts), an edit (webCount) updates the Job in place, and `pulumi destroy`
 *      removes everything with the new release.
 * Whatever the resources' code becomes, the new tarball is the current checkout's build, so this test
 * always checks the real upgrade path from that release to this one.
 *
 * Opt-in like test/cli/examples.test.ts: `npm run test:upgrade` (or UPGRADE_CLI_RUN=1); `.ci/run` runs it
 * after the CLI is there. Opted in (or in CI) without a CLI, it fails instead of skipping.
 */
import { mkdtempSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConfigMap } from "@pulumi/pulumi/automation";
import { afterAll, describe, expect, it } from "vitest";
import { startDevServer } from "../../devserver";
import { REPO_ROOT, hashTree, packLibrary } from "../engine/harness/pack";
import { SECRET_SIG_KEY } from "../engine/harness/host";
import { createProject, PACKAGE_NAME } from "../engine/harness/project";
import { SCHEMA_VERSION } from "../../provider/resources/migrate";
import { changes, cliGate, cliStack, devserverConfig, requireCli } from "../helpers/cli";

const CLI = cliGate("UPGRADE_CLI_RUN");

interface PreviousRelease {
  commit: string;
  /** The cache directory; `tree/` in it is the release's source with its node_modules. */
  dir: string;
  tarball: string;
  modules: string;
}
const { previousRelease, previousReleaseEntry, changelogReleases } = createRequire(join(REPO_ROOT, "package.json"))(
  "./scripts/previous-release.js",
) as {
  previousRelease: (ref?: string, log?: (s: string) => void) => PreviousRelease;
  previousReleaseEntry: () => { version: string; commit: string };
  changelogReleases: () => Array<{ version: string; commit?: string }>;
};
const { version: CURRENT_VERSION } = createRequire(join(REPO_ROOT, "package.json"))("./package.json") as {
  version: string;
};

/** The releases upgraded from: the previous one, and this version's own release when it names a commit. */
function upgradedReleases(): Array<{ version: string; commit?: string }> {
  if (process.env.PSS_PREVIOUS_RELEASE) return [{ version: "PSS_PREVIOUS_RELEASE", commit: undefined }];
  const own = changelogReleases().find((r) => r.version === CURRENT_VERSION && r.commit !== undefined);
  return [previousReleaseEntry(), ...(own !== undefined ? [own] : [])];
}

const KINDS = ["AuthMount", "AuthConfig", "AuthRole", "Job", "JobVersionTag"];
/** The client ID the method is changed to outside Pulumi before the upgrade. */
const DRIFTED_CLIENT_ID = "77777777-8888-4999-8aaa-bbbbbbbbbbbb";

let workDir: string | undefined;
afterAll(() => {
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

let current: Awaited<ReturnType<typeof packLibrary>> | undefined;

describe.each(upgradedReleases())("upgrade from release $version through the Pulumi CLI", (release) => {
  it(
    "a stack that release deployed previews and updates with no change after installing this one",
    { timeout: 900_000 },
    async (t) => {
      const cliDir = requireCli(CLI, t, "npm run test:upgrade");
      const timings: string[] = [];
      const timed = async <T>(label: string, f: () => Promise<T> | T): Promise<T> => {
        const t0 = Date.now();
        try {
          return await f();
        } finally {
          timings.push(`${label} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
        }
      };
      workDir ??= realpathSync(mkdtempSync(join(tmpdir(), "pss-upgrade-cli-")));
      const base = realpathSync(mkdtempSync(join(workDir, `from-${release.version}-`)));
      const previous = await timed("previous release (build or cache)", () =>
        previousRelease(release.commit, (s) => console.log(s)),
      );
      const dir = workDir;
      current ??= await timed("this checkout's build and pack", () => packLibrary(dir, "new"));
      const pack = current;

      // The program as the previous release's quickstart had it: an upgrade changes the library, not the program.
      const template = join(previous.dir, "tree", "examples", "quickstart");
      const projectDir = join(base, "project");
      await timed("install the previous release", () =>
        createProject({
          tarball: previous.tarball,
          dir: projectDir,
          install: "link",
          template,
          modulesFrom: previous.modules,
        }),
      );
      const flow = JSON.parse(readFileSync(join(template, "flow.json"), "utf8")) as { config: ConfigMap };

      const dev = await startDevServer();
      const output: string[] = [];
      const onOutput = (s: string): void => {
        output.push(s);
      };
      try {
        const { stack } = await cliStack({
          cliDir,
          projectDir,
          backendDir: join(base, "state"),
          config: { ...devserverConfig(dev), ...flow.config },
        });

        const deployed = await timed("pulumi up (previous release)", () => stack.up({ onOutput }));
        expect(deployed.summary.result).toBe("succeeded");
        const types =
          ((await stack.exportStack()).deployment as { resources?: Array<{ type: string }> }).resources?.map(
            (r) => r.type,
          ) ?? [];
        for (const kind of KINDS)
          expect(
            types.filter((ty) => ty.endsWith(`:${kind}`)),
            `the stack holds a ${kind}`,
          ).not.toHaveLength(0);
        // Drift the previous release refreshes: the method's client changed outside Pulumi and adopted by the
        // program (stack config), so state and program agree again. That release stores what it read as the
        // AuthConfig's inputs (0.1.0 with the secret's hash among them, 0.2.0 with a flag instead).
        const written = await fetch(`${dev.urls.secrets}/v1/auth/cloud/config`, {
          method: "POST",
          headers: { authorization: `Bearer ${dev.rootTokens.secrets}`, "content-type": "application/json" },
          body: JSON.stringify({ client_id: DRIFTED_CLIENT_ID }),
        });
        expect(written.status, "the change outside Pulumi").toBeLessThan(300);
        await stack.setConfig("clientId", { value: DRIFTED_CLIENT_ID });
        await timed("pulumi refresh of the drift (previous release)", () => stack.refresh({ onOutput }));
        const configInputs = (
          (await stack.exportStack()).deployment as { resources?: Array<{ type: string; inputs?: object }> }
        ).resources?.find((r) => r.type.endsWith(":AuthConfig"))?.inputs;
        expect(Object.keys(configInputs ?? {}), "the refreshed AuthConfig's inputs").toEqual(
          expect.arrayContaining([expect.stringMatching(/^clientSecret(Hash|Kept)$/)]),
        );
        const outputsBefore = await stack.outputs();

        // `npm install` of the new release: its tarball and the dependencies this checkout locks.
        rmSync(join(projectDir, "node_modules"), { recursive: true, force: true });
        await timed("install this checkout's release", () =>
          createProject({ tarball: pack.tarball, dir: projectDir, install: "link", template }),
        );
        expect(hashTree(join(projectDir, "node_modules", PACKAGE_NAME, "dist"))).toEqual(
          hashTree(join(pack.stageDir, "dist")),
        );

        // First a refresh, which reads the state exactly as the previous release left it.
        const first = await timed("pulumi refresh --expect-no-changes first (this release)", () =>
          stack.refresh({ expectNoChanges: true, onOutput }),
        );
        expect(changes(first.summary.resourceChanges), "the first refresh after the upgrade").toEqual({});
        const preview = await timed("pulumi preview --expect-no-changes (this release)", () =>
          stack.preview({ diff: true, expectNoChanges: true, onOutput }),
        );
        expect(changes(preview.changeSummary), "the preview after the upgrade").toEqual({});
        const up = await timed("pulumi up --expect-no-changes (this release)", () =>
          stack.up({ expectNoChanges: true, onOutput }),
        );
        expect(changes(up.summary.resourceChanges), "the up after the upgrade").toEqual({});
        const refresh = await timed("pulumi refresh --expect-no-changes (this release)", () =>
          stack.refresh({ expectNoChanges: true, onOutput }),
        );
        expect(changes(refresh.summary.resourceChanges), "the refresh after the upgrade").toEqual({});
        const again = await timed("pulumi preview --expect-no-changes again", () =>
          stack.preview({ expectNoChanges: true, onOutput }),
        );
        expect(changes(again.changeSummary), "the preview after the refresh").toEqual({});
        expect(await stack.outputs()).toEqual(outputsBefore);
        // The refresh wrote every resource's state in the current layout.
        const layouts = (
          (await stack.exportStack()).deployment as {
            resources?: Array<{ type: string; outputs?: { schemaVersion?: unknown } }>;
          }
        ).resources
          ?.filter((r) => KINDS.some((k) => r.type.endsWith(`:${k}`)))
          .map((r) => [r.type, r.outputs?.schemaVersion]);
        expect(new Set(layouts?.map(([, v]) => v))).toEqual(new Set([SCHEMA_VERSION]));
        // The release before kept a Job's stored job secret whatever its sources; the refreshes and the
        // unchanged up keep what state had. Its next update stores it as its sources are: plain here.
        const storedJob = async (): Promise<string> =>
          JSON.stringify(
            (
              (await stack.exportStack()).deployment as {
                resources?: Array<{ type: string; outputs?: { normalizedJob?: unknown } }>;
              }
            ).resources?.find((r) => r.type.endsWith(":Job"))?.outputs?.normalizedJob,
          );
        // exportStack shows secrets (--show-secrets): a secret is the engine's wrapper around the plaintext.
        expect(await storedJob(), "the Job's stored job after the upgrade").toContain(SECRET_SIG_KEY);

        // An edit updates the Job in place from the migrated state.
        await stack.setConfig("webCount", { value: "3" });
        const edited = await timed("pulumi up of an edit (this release)", () => stack.up({ onOutput }));
        expect(changes(edited.summary.resourceChanges), "the edit").toEqual({ update: 1 });
        expect((await stack.outputs()).webVersion?.value).toBe(Number(outputsBefore.webVersion?.value ?? 0) + 1);
        expect(await storedJob(), "the Job's stored job after its update").not.toContain(SECRET_SIG_KEY);

        const destroyed = await timed("pulumi destroy (this release)", () => stack.destroy({ onOutput }));
        const removed = changes(destroyed.summary.resourceChanges);
        expect(Object.keys(removed), "destroy only deletes").toEqual(["delete"]);
        expect(removed.delete).toBeGreaterThanOrEqual(
          types.filter((ty) => KINDS.some((k) => ty.endsWith(`:${k}`))).length,
        );
        await stack.workspace.removeStack("dev");
        const all = output.join("");
        for (const token of Object.values(dev.rootTokens)) expect(all).not.toContain(token);
      } catch (e) {
        console.log(output.join(""));
        throw e;
      } finally {
        console.log(`upgrade from ${previous.commit.slice(0, 12)}: ${timings.join("; ")}`);
        await dev.close();
      }
    },
  );
});
