/**
 * The shared fixture of the engine-path suite: two independent builds of the library packed and installed
 * into two temporary projects, their serialized providers, a devserver, and a running provider host.
 * Built once in `setUpEngine` (one test file, so the packing is not repeated per file).
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startDevServer, type DevServer } from "../../../devserver";
import { runChild } from "./child";
import { ProviderHost, SECRET_SIG, SECRET_SIG_KEY, type Props } from "./host";
import { packLibrary, type PackedLibrary } from "./pack";
import { createProject, type EngineProject } from "./project";

/** The five kinds, by shim file name. */
export const KINDS = ["auth-mount", "auth-config", "auth-role", "job", "job-version-tag"] as const;
export type Kind = (typeof KINDS)[number];

/** What serialize.cjs prints per kind. */
export interface SerializedKind {
  readonly text: string;
  readonly again: string;
  readonly containsSecrets: boolean;
  readonly firstMs: number;
  readonly shimPath: string;
}

export interface SerializeOutput {
  readonly pulumiVersion: string;
  readonly node: string;
  readonly kinds: Record<Kind, SerializedKind>;
}

/** Everything the suites share. */
export interface EngineContext {
  readonly workDir: string;
  readonly packs: readonly [PackedLibrary, PackedLibrary];
  readonly projects: readonly [EngineProject, EngineProject];
  /** serialize.cjs output of each project (separate processes, separate builds, different paths). */
  readonly serialized: readonly [SerializeOutput, SerializeOutput];
  readonly devserver: DevServer;
  readonly host: ProviderHost;
  /** The stack config sent in Configure (token values included, secret-wrapped as the engine sends them). */
  readonly stackConfig: Props;
  /** Every secret value the suite handed out; none may appear in `__provider`, state or host output. */
  readonly secrets: string[];
  /** Measurements printed at the end. */
  readonly report: Record<string, unknown>;
  /** Returns the `__provider` text of a kind (from the first project). */
  provider(kind: Kind): string;
}

/** Stores one measurement under `report[group][key]`. */
export function record(ctx: EngineContext, group: string, key: string, value: unknown): void {
  const g = (ctx.report[group] ?? {}) as Record<string, unknown>;
  g[key] = value;
  ctx.report[group] = g;
}

/** Wraps a value in the engine's secret wrapper. */
export function secretValue(value: unknown): Props {
  return { [SECRET_SIG_KEY]: SECRET_SIG, value };
}

/** Builds the whole fixture. */
export async function setUpEngine(): Promise<EngineContext> {
  // realpath: /tmp may be a symlink, and the serializer maps paths relative to the real cwd.
  const workDir = realpathSync(mkdtempSync(join(tmpdir(), "pss-engine-")));
  const report: Record<string, unknown> = {};
  // Concurrently: a shorter window for a file edited mid-run to make the two builds differ.
  const [pa, pb] = await Promise.all([packLibrary(workDir, "a"), packLibrary(workDir, "b")]);
  if (pa === undefined || pb === undefined) throw new Error("packing failed");
  const packs = [pa, pb] as const;
  const first = await createProject({ tarball: packs[0].tarball, dir: join(workDir, "project-a") });
  const second = await createProject({
    tarball: packs[1].tarball,
    dir: join(workDir, "elsewhere", "project-b"),
    ...(first.install === "npm" ? { install: "link" as const, modulesFrom: join(first.dir, "node_modules") } : {}),
  });
  const projects = [first, second] as const;
  report.build = {
    buildMs: packs.map((p) => p.buildMs),
    packMs: packs.map((p) => p.packMs),
    tscErrors: packs[0].tscErrors !== "",
  };
  report.install = {
    mode: projects[0].install,
    ms: projects.map((p) => p.installMs),
    pulumi: projects[0].pulumiVersion,
    node: projects[0].node,
  };
  const [sa, sb] = await Promise.all(projects.map((p) => runChild<SerializeOutput>(p, "serialize.cjs", [...KINDS])));
  if (sa === undefined || sb === undefined) throw new Error("serialization produced no output");
  report.serializeProcessMs = [sa.ms, sb.ms];

  const devserver = await startDevServer();
  const secrets = [devserver.rootTokens.secrets, devserver.rootTokens.scheduler];
  const stackConfig: Props = {
    "pulumi-secrets-scheduler:secretsAddress": devserver.urls.secrets,
    "pulumi-secrets-scheduler:secretsToken": secretValue(devserver.rootTokens.secrets),
    "pulumi-secrets-scheduler:schedulerAddress": devserver.urls.scheduler,
    "pulumi-secrets-scheduler:schedulerToken": secretValue(devserver.rootTokens.scheduler),
    // Unrelated keys of other packages arrive too: the engine sends the whole stack config.
    "aws:region": "us-east-1",
  };
  // No SECRETS_*/SCHEDULER_* in the host's environment: connection settings must come from Configure.
  const host = await ProviderHost.start(projects[0], scrubbedEnv(join(workDir, "cache-home")));
  const accepts = await host.configure(stackConfig);
  report.host = { startMs: host.startMs, acceptSecrets: accepts };
  return {
    workDir,
    packs,
    projects,
    serialized: [sa.value, sb.value],
    devserver,
    host,
    stackConfig,
    secrets,
    report,
    provider: (kind) => sa.value.kinds[kind].text,
  };
}

/**
 * The environment minus the services' connection variables, so only stack config can point at them; with
 * `cacheHome`, that as XDG_CACHE_HOME, so the host's compile cache and plan markers stay in the test's
 * directory and not in the user's cache home.
 */
export function scrubbedEnv(cacheHome?: string): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SECRETS|SCHEDULER)_/.test(k)) out[k] = v;
  if (cacheHome !== undefined) out["XDG_CACHE_HOME"] = cacheHome;
  return out;
}

/** Stops the host and the devserver and removes the temp directory (kept with ENGINE_KEEP=1). */
export async function tearDownEngine(ctx: EngineContext | undefined): Promise<void> {
  if (ctx === undefined) return;
  await ctx.host.close();
  await ctx.devserver.close();
  if (process.env.ENGINE_KEEP !== "1") rmSync(ctx.workDir, { recursive: true, force: true });
  else console.log(`engine: kept ${ctx.workDir}`);
}
