/**
 * Property tests (fast-check): generated path segments and job objects never reach an endpoint other than
 * their own. A typed-client call either refuses the input before sending (UsageError, nothing on the wire)
 * or sends exactly one request whose path has the endpoint's shape and whose dynamic segment decodes back
 * to the input. A resource's `check` either refuses (nothing sent) or lets `create` through, and then every
 * request stays on the resource's own endpoints.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDevServer, type DevServer } from "../../../devserver";
import { UsageError } from "../../../provider/errors";
import { SecretsClient } from "../../../provider/clients/secrets";
import { SchedulerClient } from "../../../provider/clients/scheduler";
import { authMount } from "../../../provider/resources/auth-mount";
import { authRole } from "../../../provider/resources/auth-role";
import { job } from "../../../provider/resources/job";
import { jobVersionTag } from "../../../provider/resources/job-version-tag";
import { jobObject } from "./corpus";
import { pointProvidersAt } from "../../helpers/devserver-config";

let dev: DevServer;
let secrets: SecretsClient;
let scheduler: SchedulerClient;

beforeAll(async () => {
  dev = await startDevServer({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  pointProvidersAt(dev);
  secrets = new SecretsClient({
    address: dev.urls.secrets,
    token: dev.rootTokens.secrets,
    env: {},
    retry: { maxAttempts: 1 },
  });
  scheduler = new SchedulerClient({
    address: dev.urls.scheduler,
    token: dev.rootTokens.scheduler,
    env: {},
    retry: { maxAttempts: 1 },
  });
  await secrets.mounts.enable("cloud", { type: "cloud" });
  await scheduler.jobs.register({ Job: jobObject({ ID: "tagged" }) as never });
});

afterAll(async () => {
  await dev?.close();
});

/** Strings rich in what could move a path: dots, slashes, percent signs, query marks, lone surrogates. */
const segment = fc.oneof(
  fc.constantFrom(
    "",
    ".",
    "..",
    "...",
    "/",
    "//",
    "../x",
    "x/..",
    "%2e%2e",
    "%2F",
    ".%2e",
    "?",
    "#",
    "\\..",
    "\uD800",
    "a\uDC00",
  ),
  fc.string({
    unit: fc.constantFrom(".", "/", "%", "2", "e", "E", "f", "F", "?", "#", "\\", "a", " ", ";"),
    maxLength: 8,
  }),
  fc.string({ unit: "binary", maxLength: 12 }),
);

/** Mostly plausible names (dots, dashes and slashes included), sometimes anything from `segment`. */
const name = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9_.-]{1,6}$/) },
  { weight: 1, arbitrary: segment },
);
/** A value that is usually valid (`ok`), sometimes wild. */
const mostly = <T, U>(ok: fc.Arbitrary<T>, wild: fc.Arbitrary<U>): fc.Arbitrary<T | U> =>
  fc.oneof({ weight: 12, arbitrary: ok }, { weight: 1, arbitrary: wild });

/** Runs `call`; resolves to the requests it sent, after checking a refusal sent nothing. */
async function sent(call: () => Promise<unknown>): Promise<{ refused: boolean; paths: string[] }> {
  dev.resetLog();
  let refused = false;
  try {
    await call();
  } catch (e) {
    if (e instanceof UsageError) refused = true;
  }
  const paths = dev.requestLog.map((e) => e.path);
  if (refused) expect(paths).toEqual([]);
  return { refused, paths };
}

/** Asserts one request whose path is `before/<s encoded>/after...` with `s` one segment. */
function oneSegment(paths: string[], before: string[], s: string, after: string[]): void {
  expect(paths).toHaveLength(1);
  const parts = (paths[0] ?? "").split("/");
  expect(parts).toHaveLength(before.length + 1 + after.length);
  expect(parts.slice(0, before.length)).toEqual(before);
  expect(parts.slice(before.length + 1)).toEqual(after);
  const raw = parts[before.length] ?? "";
  expect(raw).not.toMatch(/^\.{1,2}$|^$/);
  expect(decodeURIComponent(raw)).toBe(s);
}

const RUNS = { numRuns: 150 };

describe("typed clients: a generated segment is one segment of the endpoint, or refused before sending", () => {
  it("jobs.info(jobId)", async () => {
    await fc.assert(
      fc.asyncProperty(segment, async (s) => {
        const { refused, paths } = await sent(() => scheduler.jobs.info(s));
        if (!refused) oneSegment(paths, ["", "v1", "job"], s, []);
      }),
      RUNS,
    );
  });

  it("versions.untagVersion(jobId, tagName)", async () => {
    await fc.assert(
      fc.asyncProperty(segment, async (s) => {
        const { refused, paths } = await sent(() => scheduler.versions.untagVersion("tagged", s));
        if (!refused) oneSegment(paths, ["", "v1", "job", "tagged", "versions"], s, ["tag"]);
      }),
      RUNS,
    );
  });

  it("records.summary(jobId)", async () => {
    await fc.assert(
      fc.asyncProperty(segment, async (s) => {
        const { refused, paths } = await sent(() => scheduler.records.summary(s));
        if (!refused) oneSegment(paths, ["", "v1", "job"], s, ["summary"]);
      }),
      RUNS,
    );
  });

  it("roles.read(mount, name)", async () => {
    await fc.assert(
      fc.asyncProperty(segment, async (s) => {
        const { refused, paths } = await sent(() => secrets.roles.read("cloud", s));
        if (!refused) oneSegment(paths, ["", "v1", "auth", "cloud", "role"], s, []);
      }),
      RUNS,
    );
  });

  it("config.read(mount) and mounts.readTune(mount) with generated multi-segment mounts", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(segment, { minLength: 1, maxLength: 3 }), async (segs) => {
        const mount = segs.join("/");
        for (const [call, before, after] of [
          [() => secrets.config.read(mount), ["", "v1", "auth"], ["config"]],
          [() => secrets.mounts.readTune(mount), ["", "v1", "sys", "auth"], ["tune"]],
        ] as const) {
          const { refused, paths } = await sent(call);
          if (refused) continue;
          expect(paths.length).toBeGreaterThanOrEqual(1);
          for (const p of paths) {
            const prefix = p.startsWith("/v1/sys/mounts/auth/") ? ["", "v1", "sys", "mounts", "auth"] : before;
            const parts = p.split("/");
            expect(parts.slice(0, prefix.length)).toEqual(prefix);
            expect(parts.slice(parts.length - after.length)).toEqual(after);
            const middle = parts.slice(prefix.length, parts.length - after.length);
            for (const m of middle) expect(m).not.toMatch(/^\.{1,2}$|^$/);
            // The mount's own segments, surrounding slashes trimmed, each decoded back.
            expect(middle.map(decodeURIComponent).join("/")).toBe(mount.replace(/^\/+/, "").replace(/\/+$/, ""));
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});

describe("resources: what check lets through stays on the resource's own endpoints", () => {
  it("AuthMount paths", async () => {
    let n = 0;
    let through = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(name, { minLength: 1, maxLength: 3 }), async (segs) => {
        dev.resetLog();
        const res = await authMount.check({}, { path: segs.join("/"), type: "kv" });
        if (res.failures && res.failures.length > 0) {
          expect(dev.requestLog).toHaveLength(0);
          return;
        }
        const path = `p${n++}-${(res.inputs as { path: string }).path}`;
        through++;
        const inputs = { ...(res.inputs as object), path };
        const made = await authMount.create(inputs as never).catch((e: unknown) => {
          expect(e).not.toBeInstanceOf(UsageError);
          return undefined;
        });
        for (const e of dev.requestLog) expect(e.path).toMatch(/^\/v1\/sys\/auth(\/[^/]+)*$/);
        expect(dev.requestLog[0]?.path).toBe(`/v1/sys/auth/${path.split("/").map(encodeURIComponent).join("/")}`);
        if (made) await authMount.delete(made.id, made.outs as never);
      }),
      { numRuns: 80 },
    );
    // Not vacuous: some generated paths passed check and were sent.
    expect(through).toBeGreaterThan(5);
  });

  it("AuthRole names", async () => {
    await fc.assert(
      fc.asyncProperty(segment, async (s) => {
        dev.resetLog();
        const res = await authRole.check({}, { name: s, boundServicePrincipalIds: ["sp"] });
        if (res.failures && res.failures.length > 0) {
          expect(dev.requestLog).toHaveLength(0);
          return;
        }
        await authRole.create(res.inputs as never).catch((e: unknown) => expect(e).not.toBeInstanceOf(UsageError));
        for (const e of dev.requestLog)
          expect(e.path).toBe(`/v1/auth/cloud/role/${encodeURIComponent(s.toLowerCase())}`);
      }),
      RUNS,
    );
  });

  it("JobVersionTag names and job IDs", async () => {
    await fc.assert(
      fc.asyncProperty(segment, fc.boolean(), async (s, asJobId) => {
        dev.resetLog();
        const inputs = asJobId ? { jobId: s, name: "t", version: 0 } : { jobId: "tagged", name: s, version: 0 };
        const res = await jobVersionTag.check({}, inputs);
        if (res.failures && res.failures.length > 0) {
          expect(dev.requestLog).toHaveLength(0);
          return;
        }
        await jobVersionTag.create(res.inputs as never).catch((e: unknown) => expect(e).not.toBeInstanceOf(UsageError));
        const [jobId, name] = asJobId ? [s, "t"] : ["tagged", s];
        const own = [
          `/v1/job/${encodeURIComponent(jobId)}/versions`,
          `/v1/job/${encodeURIComponent(jobId)}/versions/${encodeURIComponent(name)}/tag`,
        ];
        for (const e of dev.requestLog) expect(own).toContain(e.path);
      }),
      RUNS,
    );
  });

  it("Job objects", async () => {
    const task = fc.record({
      Name: mostly(fc.constantFrom("t", "u", "web.1"), fc.oneof(fc.constantFrom("", "a/b", "a\\b"), segment)),
      Driver: mostly(fc.constantFrom("docker", "exec"), fc.constantFrom("", 5)),
      Leader: mostly(fc.constant(false), fc.constant(true)),
    });
    const group = fc.record(
      {
        Name: mostly(fc.constantFrom("g", "h"), fc.constantFrom("", "a\u0000")),
        Count: mostly(fc.integer({ min: 0, max: 3 }), fc.constantFrom(-1, 1.5, "2")),
        Tasks: mostly(
          fc.uniqueArray(task, { minLength: 1, maxLength: 2, selector: (t) => t.Name }),
          fc.constantFrom([], null),
        ),
        Update: fc.record(
          {
            MaxParallel: mostly(fc.integer({ min: 0, max: 2 }), fc.constant(-1)),
            HealthCheck: mostly(fc.constantFrom("checks", "manual"), fc.constantFrom("bogus", "")),
          },
          { requiredKeys: [] },
        ),
      },
      { requiredKeys: ["Name", "Tasks"] },
    );
    const jobArb = fc.record(
      {
        ID: mostly(fc.stringMatching(/^[a-z][a-z0-9./-]{0,10}$/), segment),
        Type: mostly(
          fc.constantFrom("service", "batch", "system", "sysbatch"),
          fc.constantFrom("daemon", "SERVICE", "", "core"),
        ),
        Priority: mostly(fc.integer({ min: 0, max: 100 }), fc.integer({ min: -5, max: 1000 })),
        Datacenters: fc.constant(["dc1"]),
        TaskGroups: mostly(
          fc.uniqueArray(group, { minLength: 1, maxLength: 2, selector: (g) => g.Name }),
          fc.constantFrom([], null),
        ),
        Dispatched: mostly(fc.constant(false), fc.constant(true)),
      },
      { requiredKeys: ["ID", "TaskGroups"] },
    );
    let n = 0;
    let created = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(jobArb, async (generated) => {
        dev.resetLog();
        const res = await job.check({}, { job: generated, waitForDeployment: false });
        if (res.failures && res.failures.length > 0) {
          refused++;
          expect(dev.requestLog).toHaveLength(0);
          return;
        }
        // A fresh ID suffix per run keeps runs independent; the generated ID stays in front.
        const id = `${generated.ID}-${n++}`;
        const again = await job.check(
          {},
          { job: { ...generated, ID: id }, waitForDeployment: false, purgeOnDestroy: true },
        );
        if (again.failures && again.failures.length > 0) return;
        created++;
        const made = await job.create(again.inputs as never).catch((e: unknown) => {
          expect(e).not.toBeInstanceOf(UsageError);
          return undefined;
        });
        const own = new RegExp(`^/v1/(jobs|job/${escape(encodeURIComponent(id))}(/[a-z]+)?)$`);
        for (const e of dev.requestLog) expect(e.path).toMatch(own);
        if (made) await job.delete(made.id, made.outs as never);
      }),
      { numRuns: 60 },
    );
    // Not vacuous: generated jobs were both refused and sent.
    expect(created).toBeGreaterThan(3);
    expect(refused).toBeGreaterThan(3);
  });
});

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
