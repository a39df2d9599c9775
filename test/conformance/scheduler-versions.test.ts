/**
 * Conformance of versions through the client over real HTTP: diffs, tags (also on an older version),
 * revert by number, by TaggedVersion (the spec's body) and by a tag resolved client-side, stable,
 * submissions. Runs against the devserver by default and against a real cluster with
 * CONFORMANCE_TARGET=env; job IDs are unique to the run and purged afterwards. On a scheduler older than
 * 1.9 (no tags, no diff_version) the tests of those features skip with the library's reason.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  newerOrSkip,
  rejection,
  schedulerSide,
  serviceJob,
  withLogLevel,
  type SchedulerSide,
} from "./scheduler-fixture";
import { openTarget, type ConformanceTarget } from "./target";

let target: ConformanceTarget;
let f: SchedulerSide;
beforeAll(async () => {
  target = await openTarget();
  f = schedulerSide(target);
});
afterAll(() => target?.close());

/** Registers versions 0, 1, 2 of a job unique to the run with LOG_LEVEL info, debug, warn; resolves to its ID. */
async function threeVersions(label: string): Promise<string> {
  const id = target.name(label);
  await f.register({ Job: serviceJob(id) });
  await f.register({ Job: withLogLevel(serviceJob(id), "debug") });
  await f.register({ Job: withLogLevel(serviceJob(id), "warn") });
  return id;
}

async function logLevel(id: string): Promise<{ version: number | null | undefined; level: string | undefined }> {
  const { value } = await f.client.jobs.info(id);
  return { version: value.Version, level: value.TaskGroups?.[0]?.Tasks?.[0]?.Env?.LOG_LEVEL };
}

describe("JobVersions.versions", () => {
  it("lists versions newest first, with diffs when asked", async (t) => {
    const id = await threeVersions("v-list");
    const { value } = await f.client.versions.versions(id);
    expect(value.Versions?.map((v) => v.Version)).toEqual([2, 1, 0]);
    const withDiffs = await f.client.versions.versions(id, { diffs: true });
    expect(withDiffs.value.Diffs?.length).toBeGreaterThan(0);
    expect(withDiffs.value.Diffs?.[0]?.Type).toBe("Edited");
    const against0 = await newerOrSkip(t, f.client.versions.versions(id, { diffs: true, diffVersion: 0 }));
    const env = against0.value.Diffs?.[0]?.TaskGroups?.[0]?.Tasks?.[0]?.Fields?.find(
      (x) => x.Name === "Env[LOG_LEVEL]",
    );
    expect(env).toMatchObject({ Old: "info", New: "warn" });
  });
});

describe("version tags", () => {
  it("tags an older version without changing the job's version or JobModifyIndex", async (t) => {
    const id = await threeVersions("v-tag");
    const before = (await f.client.jobs.info(id)).value;
    const { value: tag } = await newerOrSkip(
      t,
      f.client.versions.tagVersion(id, "golden", { Version: 0, Description: "known good" }),
    );
    expect(tag).toMatchObject({ Name: "golden", Description: "known good" });
    expect(tag.TaggedTime).toBeGreaterThan(0);
    const { value } = await f.client.versions.versions(id);
    const v0 = value.Versions?.find((v) => v.Version === 0);
    expect(v0?.VersionTag).toMatchObject({ Name: "golden", Description: "known good" });
    const after = (await f.client.jobs.info(id)).value;
    expect(after.Version).toBe(before.Version);
    expect(after.JobModifyIndex).toBe(before.JobModifyIndex);
  });

  it("updates the description when the same name is sent again, and refuses it on another version", async (t) => {
    const id = await threeVersions("v-tag2");
    await newerOrSkip(t, f.client.versions.tagVersion(id, "rc", { Version: 1, Description: "first" }));
    await f.client.versions.tagVersion(id, "rc", { Version: 1, Description: "second" });
    const v1 = (await f.client.versions.versions(id)).value.Versions?.find((v) => v.Version === 1);
    expect(v1?.VersionTag?.Description).toBe("second");
    const e = await rejection(f.client.versions.tagVersion(id, "rc", { Version: 2 }));
    expect(e.code).toBe("conflict");
    expect(e.message).toMatch(/already exists on a different version/);
  });

  it("sends the current version explicitly when none is given", async (t) => {
    const id = await threeVersions("v-tag3");
    f.record.clear();
    await newerOrSkip(t, f.client.versions.tagVersion(id, "latest-one"));
    const v = (await f.client.versions.versions(id)).value.Versions?.find((x) => x.VersionTag?.Name === "latest-one");
    expect(v?.Version).toBe(2);
    const tagCalls = f.record.sent.map((s) => s.split(" ")[1]).filter((path) => path?.endsWith("/tag"));
    expect(tagCalls).toEqual([`/v1/job/${id}/versions/latest-one/tag`]);
  });

  it("sends the tag request with ?namespace=", async (t) => {
    const id = await threeVersions("v-tag3q");
    f.record.clear();
    await newerOrSkip(t, f.client.versions.tagVersion(id, "latest-one"));
    const tagCall = f.record.requests.find((e) => e.path.endsWith("/tag"));
    expect(tagCall?.path).toBe(`/v1/job/${id}/versions/latest-one/tag`);
    expect(new URLSearchParams(tagCall?.query).get("namespace")).toBe(f.namespace);
  });

  it("URL-encodes tag names with spaces and non-ASCII characters", async (t) => {
    const id = await threeVersions("v-tag4");
    await newerOrSkip(t, f.client.versions.tagVersion(id, "blue green ✓", { Version: 1 }));
    const v1 = (await f.client.versions.versions(id)).value.Versions?.find((v) => v.Version === 1);
    expect(v1?.VersionTag?.Name).toBe("blue green ✓");
    await f.client.versions.untagVersion(id, "blue green ✓");
    const again = (await f.client.versions.versions(id)).value.Versions?.find((v) => v.Version === 1);
    expect(again?.VersionTag ?? undefined).toBeUndefined();
  });

  it("fails to untag a tag that does not exist", async (t) => {
    const id = await threeVersions("v-tag5");
    const e = await rejection(f.client.versions.untagVersion(id, "nope"));
    if (e.code === "unsupported") t.skip(`skipped on this older scheduler: ${e.hint ?? e.message}`);
    expect(e.message).toMatch(/not found/);
  });
});

describe("revert", () => {
  it("reverts by TaggedVersion (the spec's body) to the tagged older version, as a new version", async (t) => {
    const id = await threeVersions("r-tag");
    await newerOrSkip(t, f.client.versions.tagVersion(id, "golden", { Version: 0 }));
    const { value } = await f.client.versions.revert(id, { TaggedVersion: "golden" });
    expect(value.EvalID).toBeTruthy();
    expect(await logLevel(id)).toEqual({ version: 3, level: "info" });
  });

  it("reverts to a tag resolved client-side, sent as JobVersion with EnforcePriorVersion", async (t) => {
    const id = await threeVersions("r-tag2");
    await newerOrSkip(t, f.client.versions.tagVersion(id, "candidate", { Version: 1 }));
    const res = await f.client.versions.revertToTag(id, "candidate");
    expect(res.revertedTo).toBe(1);
    expect(await logLevel(id)).toEqual({ version: 3, level: "debug" });
  });

  it("refuses a tag revert whose prior version no longer matches, creating no version", async (t) => {
    const id = await threeVersions("r-tag3");
    await newerOrSkip(t, f.client.versions.tagVersion(id, "golden", { Version: 0 }));
    const e = await rejection(f.client.versions.revertToTag(id, "golden", { enforcePriorVersion: 1 }));
    expect(e.code).toBe("conflict");
    expect(e.message).toMatch(/Current job has version 2; enforcing version 1/);
    expect((await logLevel(id)).version).toBe(2);
  });

  it("reports a tag no version carries as not_found without sending a revert", async () => {
    const id = await threeVersions("r-tag4");
    f.record.clear();
    const e = await rejection(f.client.versions.revertToTag(id, "missing"));
    expect(e.code).toBe("not_found");
    expect(e.message).toMatch(new RegExp(`no version of job "${id}" carries the tag "missing"`));
    expect(f.record.sent).toEqual([`GET /v1/job/${id}/versions`]);
  });

  it("reverts by JobVersion with EnforcePriorVersion", async () => {
    const id = await threeVersions("r-num");
    await f.client.versions.revert(id, { JobVersion: 1, EnforcePriorVersion: 2 });
    expect(await logLevel(id)).toEqual({ version: 3, level: "debug" });
  });
});

describe("stable and submissions", () => {
  it("marks a version stable", async () => {
    const id = await threeVersions("s-stable");
    await f.client.versions.setStable(id, 1, true);
    const v1 = (await f.client.versions.versions(id)).value.Versions?.find((v) => v.Version === 1);
    expect(v1?.Stable).toBe(true);
  });

  it("returns the submission registered with a version, and not_found for a version without one", async () => {
    const id = target.name("s-sub");
    const source = `job "${id}" {\n  # the original text\n}\n`;
    await f.register({
      Job: serviceJob(id),
      Submission: { Source: source, Format: "hcl2", VariableFlags: { image: "nginx" } },
    });
    const { value } = await f.client.versions.submission(id, 0);
    expect(value).toMatchObject({ Source: source, Format: "hcl2", VariableFlags: { image: "nginx" }, Version: 0 });
    const e = await rejection(f.client.versions.submission(id, 7));
    expect(e.code).toBe("not_found");
  });
});
