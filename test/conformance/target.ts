/**
 * Where a conformance test sends its requests. The client-level tests of both services are written once
 * against this and run against any address:
 *
 * - default (CI): a fresh devserver on loopback, with explicit connection options and an empty
 *   environment, so nothing on the machine leaks in;
 * - `CONFORMANCE_TARGET=env` (`npm run conformance`): a real cluster described by the library's own
 *   environment variables (SECRETS_ADDR, SECRETS_TOKEN, SECRETS_HEADER_STYLE=real, SECRETS_TOKEN_HEADER,
 *   SECRETS_NAMESPACE, SECRETS_CACERT, ..., and the SCHEDULER_* equivalents), resolved by the library
 *   exactly as a user's program resolves them; CONFORMANCE_METHOD_TYPE names the auth method's type on
 *   that cluster (`azure` on the real service; default `cloud`). Objects are created under names unique
 *   to the run and removed afterwards; use a cluster where that is acceptable.
 *
 * `CONFORMANCE_HEADERS=real` runs the devserver target with the real services' header names and the
 * clients with `headerStyle: "real"`, to check that path without a cluster.
 *
 * `CONFORMANCE_OTHER_NAMESPACE` names a second scheduler namespace that exists on the cluster (the
 * devserver accepts any, and uses `other`); tests that need one skip without it.
 *
 * Some tests need a client node that runs the job fixtures (datacenter `dc1`, the docker driver), as a
 * `nomad agent -dev` with docker offers; `CONFORMANCE_DRIVER=raw_exec` runs them as a `sleep` with the
 * raw_exec driver instead, for a node without docker.
 *
 * `CONFORMANCE_DEVSERVER_RELEASE=1.6.5` runs the devserver target as that older scheduler release (see the
 * devserver's `release` option), to check that the tests of newer features skip and say why. It and
 * `CONFORMANCE_HEADERS` shape the devserver target only (`npx vitest run test/conformance`); with
 * CONFORMANCE_TARGET=env (`npm run conformance`) they are refused rather than ignored.
 *
 * Writing a test:
 * ```ts
 * let target: ConformanceTarget;
 * beforeAll(async () => { target = await openTarget(); });
 * afterAll(() => target?.close());   // target is unset when openTarget threw
 * it("registers a job", async () => {
 *   const client = new SchedulerClient(target.scheduler);
 *   const id = target.name("web");            // unique per run: real clusters are shared
 *   target.cleanup(() => client.jobs.stop(id, { purge: true }));
 *   ...
 * });
 * it("reverts a failed deployment", async (t) => {
 *   const dev = devserverOr(t, target, "needs the devserver's deployment fail switch");
 *   ...
 * });
 * ```
 */
import { randomBytes } from "node:crypto";
import type { TestContext } from "vitest";
import { REAL_HEADER_NAMES, startDevServer, type DevServerOptions, type StartedDevServer } from "../../devserver";
import { CONFIG_KEYS } from "../../provider/config";
import type { ConnectionOptions, HttpHooks } from "../../provider/http/settings";

export type TargetKind = "devserver" | "env";

/** A service pair to test against. */
export interface ConformanceTarget {
  readonly kind: TargetKind;
  /** Connection options for the secrets service (clients and resource providers take them as they are). */
  readonly secrets: ConnectionOptions;
  /** Connection options for the scheduler. */
  readonly scheduler: ConnectionOptions;
  /** The devserver and its controls (`schedulerControl`; `secretsControls(devserver)`); undefined against a real cluster. */
  readonly devserver: StartedDevServer | undefined;
  /** Type name of the cloud-identity auth method: `cloud` (spec, devserver); a real cluster's name via CONFORMANCE_METHOD_TYPE (e.g. `azure`). */
  readonly methodType: string;
  /** A second scheduler namespace to write to: `other` on the devserver; CONFORMANCE_OTHER_NAMESPACE on a cluster, else undefined. */
  readonly otherNamespace: string | undefined;
  /** Returns the stack config that points the resource providers at the target (`setStackConfig`); empty for `env`, where the environment does. */
  stackConfig(): Record<string, string>;
  /** Returns a name unique to this run (`pss-<run>-<label>`), so runs against a shared cluster do not collide. */
  name(label: string): string;
  /** Registers clean-up work, run by `close()` newest first; failures are reported, not thrown. */
  cleanup(fn: () => Promise<unknown>): void;
  /** Runs the clean-ups and stops the devserver, if any. */
  close(): Promise<void>;
}

/** The variables that shape the devserver target, refused with CONFORMANCE_TARGET=env. */
const DEVSERVER_ONLY = ["CONFORMANCE_DEVSERVER_RELEASE", "CONFORMANCE_HEADERS"] as const;

/** Returns the target kind chosen by CONFORMANCE_TARGET (default `devserver`). */
export function targetKind(): TargetKind {
  const v = process.env.CONFORMANCE_TARGET ?? "devserver";
  if (v !== "devserver" && v !== "env")
    throw new TypeError(`CONFORMANCE_TARGET must be "devserver" or "env", got "${v}"`);
  return v;
}

/** True when the tests run against a real cluster from the environment. */
export const againstCluster = targetKind() === "env";

/** Opens the target chosen by the environment; `devserver` options apply to the devserver target only. */
export async function openTarget(options: { devserver?: DevServerOptions } = {}): Promise<ConformanceTarget> {
  const run = randomBytes(3).toString("hex");
  const cleanups: Array<() => Promise<unknown>> = [];
  const common = {
    methodType: process.env.CONFORMANCE_METHOD_TYPE || "cloud",
    name: (label: string) => `pss-${run}-${label}`,
    cleanup: (fn: () => Promise<unknown>) => void cleanups.push(fn),
  };
  const runCleanups = async (): Promise<void> => {
    for (const fn of cleanups.reverse()) {
      try {
        await fn();
      } catch (err) {
        // A leftover object on a real cluster is worth a line, never a failed suite.
        console.warn(`conformance clean-up failed: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    cleanups.length = 0;
  };

  if (targetKind() === "env") {
    // These shape the devserver target only: under `npm run conformance` they would be ignored without a word.
    for (const v of DEVSERVER_ONLY) {
      if (process.env[v])
        throw new Error(
          `${v} applies to the devserver target only (npx vitest run test/conformance); ` +
            "CONFORMANCE_TARGET=env (npm run conformance) tests the cluster the environment names",
        );
    }
    for (const v of ["SECRETS_ADDR", "SCHEDULER_ADDR"]) {
      if (!process.env[v])
        throw new Error(`CONFORMANCE_TARGET=env needs ${v} (and the matching *_TOKEN, header style, CA settings)`);
    }
    // Empty options: the library resolves everything from the environment, as it does for users.
    return {
      kind: "env",
      secrets: {},
      scheduler: {},
      devserver: undefined,
      otherNamespace: process.env.CONFORMANCE_OTHER_NAMESPACE || undefined,
      stackConfig: () => ({}),
      ...common,
      close: runCleanups,
    };
  }

  const real = process.env.CONFORMANCE_HEADERS === "real";
  const release = process.env.CONFORMANCE_DEVSERVER_RELEASE || undefined;
  const dev = await startDevServer({
    ...options.devserver,
    ...(release !== undefined ? { schedulerService: { ...options.devserver?.schedulerService, release } } : {}),
    ...(real
      ? {
          secrets: { ...options.devserver?.secrets, headerNames: REAL_HEADER_NAMES.secrets },
          scheduler: { ...options.devserver?.scheduler, headerNames: REAL_HEADER_NAMES.scheduler },
        }
      : {}),
  });
  const style = real ? { headerStyle: "real" as const } : {};
  return {
    kind: "devserver",
    secrets: { address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {}, ...style },
    scheduler: { address: dev.urls.scheduler, token: dev.rootTokens.scheduler, env: {}, ...style },
    devserver: dev,
    otherNamespace: "other",
    stackConfig: () => {
      const config: Record<string, string> = {};
      for (const service of ["secrets", "scheduler"] as const) {
        const keys = CONFIG_KEYS[service];
        config[keys.address] = dev.urls[service];
        config[keys.token] = dev.rootTokens[service];
        if (real) config[keys.headerStyle] = "real";
      }
      return config;
    },
    ...common,
    close: async () => {
      await runCleanups();
      await dev.close();
    },
  };
}

/**
 * Returns the devserver for a test that needs one of its controls (faults, the deployment fail switch,
 * the fake metadata service, the request log); against a real cluster, skips the test saying why. Query
 * strings need no devserver: `requestRecord()` keeps them.
 */
export function devserverOr(t: Pick<TestContext, "skip">, target: ConformanceTarget, need: string): StartedDevServer {
  if (target.devserver === undefined) t.skip(`skipped against a real cluster: ${need}`);
  return target.devserver as StartedDevServer;
}

/** One attempt as a client's hook saw it. */
export interface SentRequest {
  readonly method: string;
  /** Path as sent (segments percent-encoded), without the query string. */
  readonly path: string;
  /** Encoded query string without `?` ("" when none). */
  readonly query: string;
}

/** What a client sent and what came back, recorded by its hooks: works against any target. */
export interface RequestRecord {
  /** `METHOD path` of every attempt, without the query string. */
  readonly sent: string[];
  /** Every attempt with its query string, in order. */
  readonly requests: SentRequest[];
  /** `METHOD path status` of every answered attempt (status 0 for a network failure). */
  readonly answered: string[];
  /** Hooks to pass in a client's connection options. */
  readonly hooks: HttpHooks;
  /** Returns the query of the last `method path` attempt (empty when there was none). */
  lastQuery(method: string, path: string): URLSearchParams;
  /** Forgets everything recorded so far. */
  clear(): void;
}

/** Returns a fresh request record; pass `record.hooks` to the client whose requests a test counts. */
export function requestRecord(): RequestRecord {
  const sent: string[] = [];
  const requests: SentRequest[] = [];
  const answered: string[] = [];
  return {
    sent,
    requests,
    answered,
    hooks: {
      onRequest: (i) => {
        sent.push(`${i.method} ${i.path}`);
        requests.push({ method: i.method, path: i.path, query: i.query });
      },
      onResponse: (i) => void answered.push(`${i.method} ${i.path} ${i.status ?? 0}`),
    },
    lastQuery: (method, path) =>
      new URLSearchParams(requests.filter((r) => r.method === method && r.path === path).at(-1)?.query),
    clear: () => {
      sent.length = 0;
      requests.length = 0;
      answered.length = 0;
    },
  };
}
