/**
 * Rules the client checks before anything is sent: each broken rule is a UsageError with a clear
 * message, and no request reaches the server (counted by the client hook and the devserver's log).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { UsageError } from "../../../../provider/errors";
import { startScheduler, serviceJob, type SchedulerFixture } from "./fixture";

let f: SchedulerFixture;
beforeAll(async () => {
  f = await startScheduler();
});
afterAll(async () => {
  await f.server.close();
});
beforeEach(() => {
  f.sent.length = 0;
  f.server.resetLog();
});

function schedulerRequests(): number {
  return f.server.requestLog.filter((e) => e.service === "scheduler").length;
}

async function refused(call: () => Promise<unknown>, fragment: RegExp): Promise<void> {
  const err = await call().then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UsageError);
  expect((err as Error).message).toMatch(fragment);
  expect(f.sent).toEqual([]);
  expect(schedulerRequests()).toBe(0);
}

describe("client-side rules", () => {
  it("refuses a revert with both JobVersion and TaggedVersion", async () => {
    await refused(
      () => f.client.versions.revert("web", { JobVersion: 1, TaggedVersion: "golden" }),
      /JobVersion or TaggedVersion, not both/,
    );
  });

  it("refuses a revert with neither JobVersion nor TaggedVersion", async () => {
    await refused(() => f.client.versions.revert("web", {}), /give JobVersion or TaggedVersion/);
  });

  it("refuses a scale without Target.Group", async () => {
    await refused(
      () => f.client.jobs.scale("web", { Target: { Group: "" }, Count: 2, Message: "up" }),
      /Target\.Group/,
    );
    await refused(
      () => f.client.jobs.scale("web", { Target: {} as { Group: string }, Count: 2, Message: "up" }),
      /Target\.Group/,
    );
  });

  it("refuses a scale with both Message and Error, or with neither", async () => {
    await refused(
      () => f.client.jobs.scale("web", { Target: { Group: "web" }, Count: 2, Message: "up", Error: "bad" }),
      /exactly one of Message or Error/,
    );
    await refused(
      () => f.client.jobs.scale("web", { Target: { Group: "web" }, Count: 2 }),
      /exactly one of Message or Error/,
    );
  });

  it("refuses a dispatch payload over 16384 decoded bytes, for both dispatch forms", async () => {
    const big = new Uint8Array(16385);
    await refused(() => f.client.jobs.dispatch("report", { Payload: big }), /16385 bytes.*at most 16384/);
    await refused(() => f.client.jobs.dispatchPayload("report", big), /16385 bytes.*at most 16384/);
    // Text counts in UTF-8 bytes: 5462 three-byte characters are 16386 bytes.
    await refused(() => f.client.jobs.dispatch("report", { Payload: "€".repeat(5462) }), /16386 bytes/);
  });

  it("sends a dispatch payload of exactly 16384 bytes (the limit applies to decoded bytes, not base64)", async () => {
    await f.client.jobs.dispatch("report-missing", { Payload: new Uint8Array(16384) }).catch(() => undefined);
    expect(f.sent).toEqual(["POST /v1/job/report-missing/dispatch"]);
  });

  it("refuses EnforceIndex without a JobModifyIndex on register, update and scale", async () => {
    await refused(
      () => f.client.jobs.register({ Job: serviceJob("web"), EnforceIndex: true }),
      /EnforceIndex is set but JobModifyIndex is missing/,
    );
    await refused(
      () => f.client.jobs.update("web", { Job: serviceJob("web"), EnforceIndex: true }),
      /JobModifyIndex is missing/,
    );
    await refused(
      () => f.client.jobs.scale("web", { Target: { Group: "web" }, Count: 1, Message: "m", EnforceIndex: true }),
      /JobModifyIndex is missing/,
    );
  });

  it("refuses a version tag name containing '/' or empty, on tag and untag", async () => {
    await refused(() => f.client.versions.tagVersion("web", "release/1", { Version: 0 }), /contains "\/"/);
    await refused(() => f.client.versions.untagVersion("web", "a/b"), /contains "\/"/);
    await refused(() => f.client.versions.tagVersion("web", "", { Version: 0 }), /non-empty/);
  });

  it("refuses empty job IDs and bad blocking-query options", async () => {
    await refused(() => f.client.jobs.info(""), /jobId must be a non-empty string/);
    await refused(() => f.client.jobs.info("web", { waitIndex: -1 }), /waitIndex/);
    await refused(() => f.client.jobs.listAll({ perPage: 1.5 }), /perPage/);
  });
});
