/**
 * Features newer than the connected scheduler, against the devserver acting as release 1.6.5 (whose router
 * hands unknown job sub-paths to the register, read and deregister handlers, as the real one does): each
 * fails with ApiError `unsupported` naming the release it needs, decided from the one answer received, and
 * the same calls against the newest release still work.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setStackConfig } from "../../../helpers/stack-config";
import { FEATURE_RELEASES } from "../../../../provider/clients/scheduler";
import { isApiError, type ApiError } from "../../../../provider/errors";
import { jobVersionTag } from "../../../../provider/resources/job-version-tag";
import { batchJob, serviceJob, startScheduler, withLogLevel, type SchedulerFixture } from "./fixture";
import type { JobVersionTagInputs } from "../../../helpers/resource-types";

let old: SchedulerFixture;
let newest: SchedulerFixture;
beforeAll(async () => {
  old = await startScheduler({ schedulerService: { release: "1.6.5", deploymentMs: 20, evalDelayMs: 1 } });
  newest = await startScheduler({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  for (const f of [old, newest]) {
    await f.client.jobs.register({ Job: serviceJob("web") });
    await f.client.jobs.register({ Job: withLogLevel(serviceJob("web"), "debug") });
    await f.client.jobs.register({ Job: withLogLevel(serviceJob("web"), "warn") });
    await f.client.jobs.register({ Job: batchJob("report", { ParameterizedJob: { Payload: "optional" } }) });
  }
});
afterAll(async () => {
  setStackConfig({});
  await Promise.all([old?.server.close(), newest?.server.close()]);
});

async function failure(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isApiError(e)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}

/** Runs `fn` and returns the requests the old server's client sent meanwhile. */
async function sentDuring(fn: () => Promise<unknown>): Promise<string[]> {
  old.sent.length = 0;
  await fn();
  return [...old.sent];
}

describe("version tags on a release before 1.9", () => {
  it("says tags need release 1.9 instead of passing on the register handler's 'Job must be specified', in one request", async () => {
    let e: ApiError | undefined;
    const sent = await sentDuring(async () => {
      e = await failure(old.client.versions.tagVersion("web", "golden", { Version: 0 }));
    });
    expect(sent).toEqual(["POST /v1/job/web/versions/golden/tag"]);
    expect(e?.code).toBe("unsupported");
    expect(e?.status).toBe(400);
    expect(e?.message).toMatch(
      /^tag job version: POST \/v1\/job\/web\/versions\/golden\/tag returned 400\. version tags need a scheduler of release 1\.9 or newer/,
    );
    expect(FEATURE_RELEASES.versionTags).toBe("1.9");
    expect((await newest.client.versions.tagVersion("web", "golden", { Version: 0 })).value.Name).toBe("golden");
  });

  it("says so for an untag too, which the older router turns into stopping a job that does not exist", async () => {
    const e = await failure(old.client.versions.untagVersion("web", "golden"));
    expect(e.code).toBe("unsupported");
    expect(e.message).toMatch(/version tags need a scheduler of release 1\.9 or newer/);
    expect((await old.client.jobs.info("web")).value.Stop ?? false).toBe(false);
    await newest.client.versions.tagVersion("web", "rc", { Version: 1 });
    await newest.client.versions.untagVersion("web", "rc");
  });

  it("fails the JobVersionTag resource's create with the same message", async () => {
    setStackConfig({ schedulerAddress: old.server.urls.scheduler, schedulerToken: old.server.rootTokens.scheduler });
    const checked = await jobVersionTag.check({}, { jobId: "web", name: "v1", version: 1 });
    const e = await failure(jobVersionTag.create(checked.inputs as JobVersionTagInputs));
    expect(e.code).toBe("unsupported");
    expect(e.message).toMatch(/version tags need a scheduler of release 1\.9 or newer/);
  });
});

describe("diffVersion on a release before 1.9", () => {
  it("fails instead of returning diffs against the previous versions, in one request", async () => {
    let e: ApiError | undefined;
    const sent = await sentDuring(async () => {
      e = await failure(old.client.versions.versions("web", { diffs: true, diffVersion: 0 }));
    });
    expect(sent).toEqual(["GET /v1/job/web/versions"]);
    expect(e?.code).toBe("unsupported");
    expect(e?.message).toMatch(
      /diffs against a chosen version \(diffVersion\) need a scheduler of release 1\.9 or newer; this scheduler ignored diff_version/,
    );
  });

  it("still lists versions with diffs against the previous ones, and honours diffVersion on the newest release", async () => {
    const plain = (await old.client.versions.versions("web", { diffs: true })).value;
    expect(plain.Diffs).toHaveLength(2);
    const against0 = (await newest.client.versions.versions("web", { diffs: true, diffVersion: 0 })).value;
    expect(against0.Diffs).toHaveLength(3);
  });
});

describe("dispatchPayload on a release before 1.10", () => {
  it("says raw-body dispatches need release 1.10 and points at dispatch with Payload, for text and JSON bodies", async () => {
    for (const body of ["hello payload", '{"a":1}', ""]) {
      const e = await failure(old.client.jobs.dispatchPayload("report", body));
      expect(e.code).toBe("unsupported");
      expect(e.message).toMatch(
        /raw-body dispatches \(dispatchPayload\) need a scheduler of release 1\.10 or newer.*Use jobs\.dispatch with Payload instead/,
      );
    }
    const { value } = await old.client.jobs.dispatch("report", { Payload: Buffer.from("hello payload") });
    expect(value.DispatchedJobID).toMatch(/^report\/dispatch-/);
    expect((await newest.client.jobs.dispatchPayload("report", "hello payload")).value.DispatchedJobID).toMatch(
      /^report\/dispatch-/,
    );
  });

  it("passes on other 400s of the newest release as they are", async () => {
    const e = await failure(newest.client.jobs.dispatchPayload("web", "x"));
    expect(e.code).not.toBe("unsupported");
  });
});
