/**
 * Versions through the client against the devserver: diffs, tags (also on an older version), revert by
 * number, by TaggedVersion (the spec's body) and by a tag resolved client-side, stable, submissions.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isApiError, type ApiError } from "../../../provider/errors";
import { serviceJob, startScheduler, withLogLevel, type SchedulerFixture } from "./client-fixture";

let f: SchedulerFixture;
beforeAll(async () => {
  f = await startScheduler();
});
afterAll(async () => {
  await f.server.close();
});

async function rejection(p: Promise<unknown>): Promise<ApiError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isApiError(e)) throw new Error(`expected an ApiError, got ${String(e)}`);
  return e;
}

/** Registers versions 0, 1, 2 of `id` with LOG_LEVEL info, debug, warn. */
async function threeVersions(id: string): Promise<void> {
  await f.client.jobs.register({ Job: serviceJob(id) });
  await f.client.jobs.register({ Job: withLogLevel(serviceJob(id), "debug") });
  await f.client.jobs.register({ Job: withLogLevel(serviceJob(id), "warn") });
}

async function logLevel(id: string): Promise<{ version: number | null | undefined; level: string | undefined }> {
  const { value } = await f.client.jobs.info(id);
  return { version: value.Version, level: value.TaskGroups?.[0]?.Tasks?.[0]?.Env?.LOG_LEVEL };
}

describe("JobVersions.versions", () => {
  it("lists versions newest first, with diffs when asked", async () => {
    await threeVersions("v-list");
    const { value } = await f.client.versions.versions("v-list");
    expect(value.Versions?.map((v) => v.Version)).toEqual([2, 1, 0]);
    const withDiffs = await f.client.versions.versions("v-list", { diffs: true });
    expect(withDiffs.value.Diffs?.length).toBeGreaterThan(0);
    expect(withDiffs.value.Diffs?.[0]?.Type).toBe("Edited");
    const against0 = await f.client.versions.versions("v-list", { diffs: true, diffVersion: 0 });
    const env = against0.value.Diffs?.[0]?.TaskGroups?.[0]?.Tasks?.[0]?.Fields?.find((x) => x.Name === "Env[LOG_LEVEL]");
    expect(env).toMatchObject({ Old: "info", New: "warn" });
  });
});

describe("version tags", () => {
  it("tags an older version without changing the job's version or JobModifyIndex", async () => {
    await threeVersions("v-tag");
    const before = (await f.client.jobs.info("v-tag")).value;
    const { value: tag } = await f.client.versions.tagVersion("v-tag", "golden", { Version: 0, Description: "known good" });
    expect(tag).toMatchObject({ Name: "golden", Description: "known good" });
    expect(tag.TaggedTime).toBeGreaterThan(0);
    const { value } = await f.client.versions.versions("v-tag");
    const v0 = value.Versions?.find((v) => v.Version === 0);
    expect(v0?.VersionTag).toMatchObject({ Name: "golden", Description: "known good" });
    const after = (await f.client.jobs.info("v-tag")).value;
    expect(after.Version).toBe(before.Version);
    expect(after.JobModifyIndex).toBe(before.JobModifyIndex);
  });

  it("updates the description when the same name is sent again, and refuses it on another version", async () => {
    await threeVersions("v-tag2");
    await f.client.versions.tagVersion("v-tag2", "rc", { Version: 1, Description: "first" });
    await f.client.versions.tagVersion("v-tag2", "rc", { Version: 1, Description: "second" });
    const v1 = (await f.client.versions.versions("v-tag2")).value.Versions?.find((v) => v.Version === 1);
    expect(v1?.VersionTag?.Description).toBe("second");
    const e = await rejection(f.client.versions.tagVersion("v-tag2", "rc", { Version: 2 }));
    expect(e.code).toBe("conflict");
    expect(e.message).toMatch(/already exists on a different version/);
  });

  it("sends the current version explicitly when none is given", async () => {
    await threeVersions("v-tag3");
    f.server.resetLog();
    await f.client.versions.tagVersion("v-tag3", "latest-one");
    const v = (await f.client.versions.versions("v-tag3")).value.Versions?.find((x) => x.VersionTag?.Name === "latest-one");
    expect(v?.Version).toBe(2);
    const tagCall = f.server.requestLog.find((e) => e.path.endsWith("/tag"));
    expect(tagCall?.path).toBe("/v1/job/v-tag3/versions/latest-one/tag");
    expect(new URLSearchParams(tagCall?.query).get("namespace")).toBe("default");
  });

  it("URL-encodes tag names with spaces and non-ASCII characters", async () => {
    await threeVersions("v-tag4");
    await f.client.versions.tagVersion("v-tag4", "blue green ✓", { Version: 1 });
    const v1 = (await f.client.versions.versions("v-tag4")).value.Versions?.find((v) => v.Version === 1);
    expect(v1?.VersionTag?.Name).toBe("blue green ✓");
    await f.client.versions.untagVersion("v-tag4", "blue green ✓");
    const again = (await f.client.versions.versions("v-tag4")).value.Versions?.find((v) => v.Version === 1);
    expect(again?.VersionTag ?? undefined).toBeUndefined();
  });

  it("fails to untag a tag that does not exist", async () => {
    await threeVersions("v-tag5");
    const e = await rejection(f.client.versions.untagVersion("v-tag5", "nope"));
    expect(e.message).toMatch(/not found/);
  });
});

describe("revert", () => {
  it("reverts by TaggedVersion (the spec's body) to the tagged older version, as a new version", async () => {
    await threeVersions("r-tag");
    await f.client.versions.tagVersion("r-tag", "golden", { Version: 0 });
    f.server.resetLog();
    const { value } = await f.client.versions.revert("r-tag", { TaggedVersion: "golden" });
    expect(value.EvalID).toBeTruthy();
    expect(await logLevel("r-tag")).toEqual({ version: 3, level: "info" });
  });

  it("reverts to a tag resolved client-side, sent as JobVersion with EnforcePriorVersion", async () => {
    await threeVersions("r-tag2");
    await f.client.versions.tagVersion("r-tag2", "candidate", { Version: 1 });
    const res = await f.client.versions.revertToTag("r-tag2", "candidate");
    expect(res.revertedTo).toBe(1);
    expect(await logLevel("r-tag2")).toEqual({ version: 3, level: "debug" });
  });

  it("refuses a tag revert whose prior version no longer matches, creating no version", async () => {
    await threeVersions("r-tag3");
    await f.client.versions.tagVersion("r-tag3", "golden", { Version: 0 });
    const e = await rejection(f.client.versions.revertToTag("r-tag3", "golden", { enforcePriorVersion: 1 }));
    expect(e.code).toBe("conflict");
    expect(e.message).toMatch(/Current job has version 2; enforcing version 1/);
    expect((await logLevel("r-tag3")).version).toBe(2);
  });

  it("reports a tag no version carries as not_found without sending a revert", async () => {
    await threeVersions("r-tag4");
    f.sent.length = 0;
    const e = await rejection(f.client.versions.revertToTag("r-tag4", "missing"));
    expect(e.code).toBe("not_found");
    expect(e.message).toMatch(/no version of job "r-tag4" carries the tag "missing"/);
    expect(f.sent).toEqual(["GET /v1/job/r-tag4/versions"]);
  });

  it("reverts by JobVersion with EnforcePriorVersion", async () => {
    await threeVersions("r-num");
    await f.client.versions.revert("r-num", { JobVersion: 1, EnforcePriorVersion: 2 });
    expect(await logLevel("r-num")).toEqual({ version: 3, level: "debug" });
  });
});

describe("stable and submissions", () => {
  it("marks a version stable", async () => {
    await threeVersions("s-stable");
    await f.client.versions.setStable("s-stable", 1, true);
    const v1 = (await f.client.versions.versions("s-stable")).value.Versions?.find((v) => v.Version === 1);
    expect(v1?.Stable).toBe(true);
  });

  it("returns the submission registered with a version, and not_found for a version without one", async () => {
    const source = 'job "s-sub" {\n  # the original text\n}\n';
    await f.client.jobs.register({ Job: serviceJob("s-sub"), Submission: { Source: source, Format: "hcl2", VariableFlags: { image: "nginx" } } });
    const { value } = await f.client.versions.submission("s-sub", 0);
    expect(value).toMatchObject({ Source: source, Format: "hcl2", VariableFlags: { image: "nginx" }, Version: 0 });
    const e = await rejection(f.client.versions.submission("s-sub", 7));
    expect(e.code).toBe("not_found");
  });
});
