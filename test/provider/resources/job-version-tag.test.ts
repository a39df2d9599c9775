import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { jobVersionTag } from "../../../provider/resources/job-version-tag";
import { UNKNOWN } from "../../helpers/unknown";
import { SCHEMA_VERSION } from "../../../provider/resources/migrate";
import { applyJob, countRequests, createJob, startHarness, type Harness } from "./job/harness";
import type { JobVersionTagInputs, JobVersionTagOutputs } from "../../helpers/resource-types";

const spec = (image: string) => `
job "tagged" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "docker"
      config {
        image = "${image}"
      }
    }
  }
}
`;

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
  const state = await createJob({ jobspec: spec("app:1") });
  await applyJob(state, { jobspec: spec("app:2") });
});

afterAll(async () => {
  await h?.close();
});

async function check(news: Record<string, unknown>): Promise<JobVersionTagInputs> {
  const r = await jobVersionTag.check({}, news);
  if (r.failures && r.failures.length > 0) throw new Error(JSON.stringify(r.failures));
  return r.inputs as JobVersionTagInputs;
}

async function tagOf(version: number): Promise<{ Name?: string | null; Description?: string | null } | undefined> {
  const versions = (await h.client.versions.versions("tagged")).value.Versions ?? [];
  return versions.find((v) => v.Version === version)?.VersionTag ?? undefined;
}

describe("JobVersionTag", () => {
  it("rejects a name with a slash, an empty job ID and a long description at check", async () => {
    const r = await jobVersionTag.check({}, { jobId: "", name: "a/b", description: "x".repeat(1000) });
    expect(r.failures?.map((f) => f.property).sort()).toEqual(["description", "jobId", "name"]);
    expect(r.failures?.find((f) => f.property === "name")?.reason).toContain('"/"');
    expect((await jobVersionTag.check({}, { jobId: "j", name: UNKNOWN })).failures).toEqual([]);
  });

  it("tags the current version by default, updates the description in place, and untags", async () => {
    const c = await jobVersionTag.create(await check({ jobId: "tagged", name: "release", description: "first" }));
    expect(c.id).toBe("tagged@default/release");
    expect(c.outs).toMatchObject({
      jobId: "tagged",
      namespace: "default",
      name: "release",
      version: 1,
      description: "first",
      schemaVersion: SCHEMA_VERSION,
    });
    expect(c.outs?.taggedTime).toBeGreaterThan(0);
    expect(await tagOf(1)).toMatchObject({ Name: "release", Description: "first" });
    const outs = c.outs as JobVersionTagOutputs;

    // Unchanged inputs, with or without the version that was resolved at create time.
    expect(
      (await jobVersionTag.diff(c.id, outs, await check({ jobId: "tagged", name: "release", description: "first" })))
        .changes,
    ).toBe(false);
    expect(
      (
        await jobVersionTag.diff(
          c.id,
          outs,
          await check({ jobId: "tagged", name: "release", version: 1, description: "first" }),
        )
      ).changes,
    ).toBe(false);

    const d = await jobVersionTag.diff(
      c.id,
      outs,
      await check({ jobId: "tagged", name: "release", description: "second" }),
    );
    expect(d).toEqual({ changes: true });
    const from = h.server.requestLog.length;
    const u = await jobVersionTag.update(
      c.id,
      outs,
      await check({ jobId: "tagged", name: "release", description: "second" }),
    );
    expect(countRequests(h.server, "POST", "/v1/job/tagged/versions/release/tag", from)).toBe(1);
    expect(u.outs).toMatchObject({ version: 1, description: "second" });
    expect(await tagOf(1)).toMatchObject({ Name: "release", Description: "second" });

    const r = await jobVersionTag.read(c.id, u.outs as JobVersionTagOutputs);
    expect(r).toMatchObject({ id: c.id, props: { version: 1, description: "second" } });

    await jobVersionTag.delete(c.id, u.outs as JobVersionTagOutputs);
    expect(await tagOf(1)).toBeUndefined();
    expect(await jobVersionTag.read(c.id, u.outs as JobVersionTagOutputs)).toEqual({ id: "" });
    // Already gone is success.
    await jobVersionTag.delete(c.id, u.outs as JobVersionTagOutputs);
  });

  it("tags an older version, and replaces on a version, name or job change", async () => {
    const c = await jobVersionTag.create(await check({ jobId: "tagged", name: "first-release", version: 0 }));
    expect(c.outs).toMatchObject({ version: 0, description: "" });
    expect(await tagOf(0)).toMatchObject({ Name: "first-release" });
    const outs = c.outs as JobVersionTagOutputs;
    // No description is the tag's "": no change, before or after a refresh.
    const same = await check({ jobId: "tagged", name: "first-release", version: 0 });
    expect(await jobVersionTag.diff(c.id, outs, same)).toEqual({ changes: false });
    const read = await jobVersionTag.read(c.id, outs);
    expect(read.props).toEqual(outs);
    expect(await jobVersionTag.diff(c.id, read.props as JobVersionTagOutputs, same)).toEqual({ changes: false });
    expect(
      await jobVersionTag.diff(c.id, outs, await check({ jobId: "tagged", name: "first-release", version: 1 })),
    ).toEqual({
      changes: true,
      replaces: ["version"],
      deleteBeforeReplace: true,
    });
    expect(
      (await jobVersionTag.diff(c.id, outs, await check({ jobId: "tagged", name: "renamed", version: 0 }))).replaces,
    ).toEqual(["name"]);
    expect(
      (await jobVersionTag.diff(c.id, outs, await check({ jobId: "other", name: "first-release", version: 0 })))
        .replaces,
    ).toEqual(["jobId"]);
    expect(
      (await jobVersionTag.diff(c.id, outs, await check({ jobId: "tagged", namespace: "prod", name: "first-release" })))
        .replaces,
    ).toEqual(["namespace"]);

    // The engine's delete-before-replace: untag, then tag the other version under the same name.
    await jobVersionTag.delete(c.id, outs);
    const moved = await jobVersionTag.create(await check({ jobId: "tagged", name: "first-release", version: 1 }));
    expect(moved.outs).toMatchObject({ version: 1 });
    expect(await tagOf(0)).toBeUndefined();
    expect(await tagOf(1)).toMatchObject({ Name: "first-release" });
    await jobVersionTag.delete(moved.id, moved.outs as JobVersionTagOutputs);
  });

  it("refuses a tag name the job already carries, naming the tag and its version, and leaves it untouched", async () => {
    await h.client.versions.tagVersion("tagged", "outside", { Version: 0, Description: "set by hand" });
    const from = h.server.requestLog.length;
    const err = (await jobVersionTag
      .create(await check({ jobId: "tagged", name: "outside", description: "ours" }))
      .catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).toContain(
      'job "tagged" in namespace "default" already has a tag "outside" on version 0 (description "set by hand")',
    );
    expect(err.message).toContain("adopt: true");
    expect(countRequests(h.server, "POST", "/v1/job/tagged/versions/outside/tag", from)).toBe(0);
    expect(await tagOf(0)).toMatchObject({ Name: "outside", Description: "set by hand" });
    // With another version asked for, even adopt cannot take it over in place.
    const moved = (await jobVersionTag
      .create(await check({ jobId: "tagged", name: "outside", version: 1, adopt: true }))
      .catch((e: unknown) => e)) as Error;
    expect(moved.message).toContain("on version 0");
    expect(moved.message).toContain("not version 1");
    expect(await tagOf(0)).toMatchObject({ Name: "outside", Description: "set by hand" });
    await h.client.versions.untagVersion("tagged", "outside");
  });

  it("adopts an existing tag with adopt: true, on its own version, and writes the description over it", async () => {
    await h.client.versions.tagVersion("tagged", "handmade", { Version: 0, Description: "by hand" });
    const c = await jobVersionTag.create(
      await check({ jobId: "tagged", name: "handmade", description: "now ours", adopt: true }),
    );
    expect(c.id).toBe("tagged@default/handmade");
    expect(c.outs).toMatchObject({ version: 0, description: "now ours", adopt: true });
    expect(await tagOf(0)).toMatchObject({ Name: "handmade", Description: "now ours" });
    const outs = c.outs as JobVersionTagOutputs;
    // Dropping adopt later changes state only: no request is sent.
    const news = await check({ jobId: "tagged", name: "handmade", description: "now ours" });
    expect((await jobVersionTag.diff(c.id, outs, news)).changes).toBe(true);
    const from = h.server.requestLog.length;
    const u = await jobVersionTag.update(c.id, outs, news);
    expect(h.server.requestLog.length).toBe(from);
    expect(u.outs).toMatchObject({ version: 0, description: "now ours" });
    expect(u.outs?.adopt).toBeUndefined();
    expect((await jobVersionTag.read(c.id, outs)).props).toMatchObject({ adopt: true });
    // Destroying an adopted tag removes it.
    await jobVersionTag.delete(c.id, outs);
    expect(
      (await h.client.versions.versions("tagged")).value.Versions?.some((v) => v.VersionTag?.Name === "handmade"),
    ).toBe(false);
  });

  it("refuses to tag a version that carries another tag, which the server would drop", async () => {
    await h.client.versions.tagVersion("tagged", "theirs", { Version: 1, Description: "keep me" });
    const from = h.server.requestLog.length;
    const err = (await jobVersionTag
      .create(await check({ jobId: "tagged", name: "mine", adopt: true }))
      .catch((e: unknown) => e)) as Error;
    expect(err.message).toContain('version 1 of job "tagged" in namespace "default" already carries the tag "theirs"');
    expect(countRequests(h.server, "POST", /\/tag$/, from)).toBe(0);
    expect(await tagOf(1)).toMatchObject({ Name: "theirs", Description: "keep me" });
    await h.client.versions.untagVersion("tagged", "theirs");
  });

  it("finds a tag that was removed outside Pulumi gone on refresh, and a purged job's tag too", async () => {
    const c = await jobVersionTag.create(await check({ jobId: "tagged", name: "ephemeral" }));
    await h.client.versions.untagVersion("tagged", "ephemeral");
    expect(await jobVersionTag.read(c.id, c.outs as JobVersionTagOutputs)).toEqual({ id: "" });
    const again = await jobVersionTag.create(await check({ jobId: "tagged", name: "ephemeral" }));
    await h.client.jobs.deregister("tagged", { purge: true });
    expect(await jobVersionTag.read(again.id, again.outs as JobVersionTagOutputs)).toEqual({ id: "" });
    await jobVersionTag.delete(again.id, again.outs as JobVersionTagOutputs);
  });
});
