/**
 * Conformance of the scheduler client's job operations over real HTTP: register, read, paging, plan,
 * parse and stop (blocking queries: scheduler-blocking; dispatch, scale and records: scheduler-launch). Runs
 * against the devserver by default and against a real cluster with CONFORMANCE_TARGET=env; job IDs are
 * unique to the run and purged afterwards. Query strings are read from the client's hooks, so their
 * checks run on any target.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rejection, schedulerSide, serviceJob, withLogLevel, type SchedulerSide } from "./scheduler-fixture";
import { openTarget, type ConformanceTarget } from "./target";
import { JobStubSchema } from "../../provider/schemas/scheduler";

let target: ConformanceTarget;
let f: SchedulerSide;
beforeAll(async () => {
  target = await openTarget();
  f = schedulerSide(target);
});
afterAll(() => target?.close());

describe("Jobs.register and Jobs.info", () => {
  let reg1: string;
  beforeAll(() => {
    reg1 = target.name("reg-1");
  });

  it("registers a job and reads it back with version 0 and the write's JobModifyIndex", async () => {
    const { value: res } = await f.register({ Job: serviceJob(reg1) });
    expect(res.EvalID).toMatch(/^[0-9a-f-]{36}$/);
    const { value: job, meta } = await f.client.jobs.info(reg1);
    expect(job.ID).toBe(reg1);
    expect(job.Version).toBe(0);
    expect(job.JobModifyIndex).toBe(res.JobModifyIndex);
    expect(job.Namespace).toBe(f.namespace);
    expect(meta.lastIndex).toBeGreaterThan(0);
  });

  it("throws not_found from info and returns undefined from find for a missing job", async () => {
    const missing = target.name("no-such-job");
    const e = await rejection(f.client.jobs.info(missing));
    expect(e.code).toBe("not_found");
    expect(e.status).toBe(404);
    expect(e.message).toMatch(new RegExp(`^read job: GET /v1/job/${missing} returned 404`));
    expect(await f.client.jobs.find(missing)).toBeUndefined();
  });

  it("encodes a job ID with '/' and '?' as one path segment", async () => {
    const id = `${target.name("team-a")}/web?x`;
    await f.register({ Job: serviceJob(id) });
    f.record.clear();
    const { value } = await f.client.jobs.info(id);
    expect(value.ID).toBe(id);
    expect(f.record.sent).toEqual([`GET /v1/job/${target.name("team-a")}%2Fweb%3Fx`]);
  });

  it("updates through /v1/job/:id, creating version 1 only when the spec changes", async () => {
    const id = target.name("upd-1");
    const job = serviceJob(id);
    await f.register({ Job: job });
    const { value: same } = await f.client.jobs.update(id, { Job: job });
    expect((await f.client.jobs.info(id)).value.Version).toBe(0);
    const { value: changed } = await f.client.jobs.update(id, { Job: withLogLevel(job, "debug") });
    const { value: now } = await f.client.jobs.info(id);
    expect(now.Version).toBe(1);
    expect(now.JobModifyIndex).toBe(changed.JobModifyIndex);
    expect(changed.JobModifyIndex).toBeGreaterThan(same.JobModifyIndex ?? 0);
  });

  it("refuses check-and-set registers with a conflict carrying the server's text", async () => {
    const id = target.name("cas-1");
    const { value: first } = await f.register({ Job: serviceJob(id), EnforceIndex: true, JobModifyIndex: 0 });
    const again = await rejection(
      f.client.jobs.register({ Job: serviceJob(id), EnforceIndex: true, JobModifyIndex: 0 }),
    );
    expect(again.code).toBe("conflict");
    expect(again.message).toMatch(/Enforcing job modify index 0: job already exists/);
    const stale = await rejection(
      f.client.jobs.register({
        Job: withLogLevel(serviceJob(id), "x"),
        EnforceIndex: true,
        JobModifyIndex: (first.JobModifyIndex ?? 0) + 1000,
      }),
    );
    expect(stale.code).toBe("conflict");
    expect(stale.message).toMatch(/conflicting job modify index/);
    const ok = await f.client.jobs.register({
      Job: withLogLevel(serviceJob(id), "x"),
      EnforceIndex: true,
      JobModifyIndex: first.JobModifyIndex ?? 0,
    });
    expect(ok.value.JobModifyIndex).toBeGreaterThan(first.JobModifyIndex ?? 0);
  });

  it("always sends ?namespace=, defaulting from the connection", async () => {
    f.record.clear();
    await f.client.jobs.info(reg1);
    expect(f.record.lastQuery("GET", `/v1/job/${reg1}`).get("namespace")).toBe(f.namespace);
  });
});

describe("Jobs.list", () => {
  let prefix: string;
  let ids: string[];
  beforeAll(async () => {
    prefix = target.name("page-");
    ids = ["a", "b", "c", "d", "e", "f", "g"].map((x) => `${prefix}${x}`);
    for (const id of ids) await f.register({ Job: serviceJob(id, { Meta: { tier: id === ids[0] ? "gold" : "std" } }) });
  });

  it("follows the next-page token over several pages and yields every job once, in ID order", async () => {
    f.record.clear();
    const seen: string[] = [];
    for await (const stub of f.client.jobs.list({ prefix, perPage: 3 })) seen.push(stub.ID ?? "");
    expect(seen).toEqual(ids);
    expect(f.record.sent.filter((s) => s === "GET /v1/jobs")).toHaveLength(3);
  });

  it("asks for the pages with per_page and the next-page token", async () => {
    f.record.clear();
    const seen: string[] = [];
    for await (const stub of f.client.jobs.list({ prefix, perPage: 3 })) seen.push(stub.ID ?? "");
    expect(seen).toEqual(ids);
    const pages = f.record.requests.filter((e) => e.path === "/v1/jobs");
    expect(pages).toHaveLength(3);
    expect(new URLSearchParams(pages[1]?.query).get("next_token")).toBeTruthy();
    expect(new URLSearchParams(pages[0]?.query).get("per_page")).toBe("3");
  });

  it("returns one page with its next token from listPage, and everything from listAll", async () => {
    const page = await f.client.jobs.listPage({ prefix, perPage: 2 });
    expect(page.value.map((s) => s.ID)).toEqual(ids.slice(0, 2));
    expect(page.meta.nextToken).toBeTruthy();
    const rest = await f.client.jobs.listAll({ prefix, perPage: 2, nextToken: page.meta.nextToken });
    expect(rest.map((s) => s.ID)).toEqual(ids.slice(2));
    expect((await f.client.jobs.listAll({ prefix })).map((s) => s.ID)).toEqual(ids);
  });

  it("includes Meta only when asked, and passes a filter expression", async () => {
    const plain = await f.client.jobs.listAll({ prefix: ids[0] });
    expect(plain[0]?.Meta ?? undefined).toBeUndefined();
    const withMeta = await f.client.jobs.listAll({ prefix: ids[0], meta: true });
    expect(withMeta[0]?.Meta).toEqual({ tier: "gold" });
    // The prefix keeps other people's jobs on a shared cluster out; the filter still has six to drop.
    const filtered = await f.client.jobs.listAll({ prefix, filter: 'Meta.tier == "gold"', meta: true });
    expect(filtered.map((s) => s.ID)).toEqual([ids[0]]);
  });

  it("lists across namespaces with namespace '*'", async (t) => {
    const other = target.otherNamespace;
    if (other === undefined)
      t.skip("skipped against a real cluster: set CONFORMANCE_OTHER_NAMESPACE to a second namespace that exists");
    const id = target.name("ns-job");
    await f.register({ Job: serviceJob(id, { Namespace: other }) }, { namespace: other });
    const inDefault = await f.client.jobs.listAll({ prefix: id });
    expect(inDefault).toEqual([]);
    const all = await f.client.jobs.listAll({ prefix: id, namespace: "*" });
    expect(all.map((s) => [s.ID, s.Namespace])).toEqual([[id, other]]);
  });
});

describe("the job list a refresh reads (listing.ts)", () => {
  it("lists a namespace's jobs with index, stop and status", async () => {
    const prefix = target.name("sel");
    const ids = [`${prefix}.a`, `${prefix}-(b)`, `${prefix}+c|d`];
    const written = new Map<string, number>();
    for (const id of ids) {
      const { value } = await f.register({ Job: serviceJob(id, { Datacenters: ["pss-nowhere"] }) });
      written.set(id, value.JobModifyIndex ?? 0);
    }
    const stubs = (await f.client.jobs.listLoosePage()).value.filter((s) => written.has(s.ID));
    expect(stubs.map((s) => s.ID).sort()).toEqual([...ids].sort());
    for (const s of stubs.map((x) => JobStubSchema.parse(x))) {
      expect(s.JobModifyIndex).toBe(written.get(s.ID ?? ""));
      expect(s.Stop).toBe(false);
      expect(s.Status).toBe("pending");
    }
  });

  it("pages the list (per_page, next token) and filters it to IDs with regular-expression syntax in them", async () => {
    const prefix = target.name("sift");
    const ids = [`${prefix}.a`, `${prefix}-(b)`, `${prefix}+c|d`, `${prefix}[e]`];
    for (const id of ids) await f.register({ Job: serviceJob(id, { Datacenters: ["pss-nowhere"] }) });
    const first = await f.client.jobs.listLoosePage({ prefix, perPage: 2 });
    expect(first.value).toHaveLength(2);
    expect(first.meta.nextToken).toBeTruthy();
    const rest = await f.client.jobs.listLoosePage({ prefix, perPage: 2, nextToken: first.meta.nextToken });
    expect([...first.value, ...rest.value].map((s) => s.ID).sort()).toEqual([...ids].sort());
    const picked = new Set([ids[0] as string, ids[2] as string, ids[3] as string]);
    // The filter the provider's refresh sends for these IDs, their syntax escaped (as
    // test/provider/resources/job/listing.test.ts checks the provider writes it): the run's name is letters,
    // digits and dashes.
    const filter = `ID matches \`^(?:${prefix}\\+c\\|d|${prefix}\\.a|${prefix}\\[e\\])$\``;
    const listed = await f.client.jobs.listLoosePage({ prefix, filter });
    expect(listed.value.map((s) => s.ID).sort()).toEqual([...picked].sort());
  });

  it("answers a new job's register with the index a read then shows; unplaced, the job is pending at that index", async () => {
    const id = target.name("fresh");
    const { value: res } = await f.register({
      Job: serviceJob(id, { Datacenters: ["pss-nowhere"] }),
      EnforceIndex: true,
      JobModifyIndex: 0,
    });
    const { value: job } = await f.client.jobs.info(id);
    expect(job.Version).toBe(0);
    expect(job.JobModifyIndex).toBe(res.JobModifyIndex);
    expect(job.ModifyIndex).toBe(res.JobModifyIndex);
    expect(job.Status).toBe("pending");
  });
});

describe("Jobs.plan", () => {
  it("returns a diff of the change and registers nothing", async () => {
    const id = target.name("plan-1");
    const { value: reg } = await f.register({ Job: serviceJob(id) });
    const { value: plan } = await f.client.jobs.plan(id, { Job: withLogLevel(serviceJob(id), "debug"), Diff: true });
    expect(plan.Diff?.Type).toBe("Edited");
    const tg = plan.Diff?.TaskGroups?.find((g) => g.Name === "web");
    const task = tg?.Tasks?.find((t) => t.Name === "app");
    expect(task?.Type).toBe("Edited");
    const field = task?.Fields?.find((x) => x.Name === "Env[LOG_LEVEL]");
    expect(field).toMatchObject({ Type: "Edited", Old: "info", New: "debug" });
    expect(plan.JobModifyIndex).toBe(reg.JobModifyIndex);
    expect(plan.Annotations?.DesiredTGUpdates?.web).toBeDefined();
    const { value: after } = await f.client.jobs.info(id);
    expect(after.Version).toBe(0);
    expect(after.JobModifyIndex).toBe(reg.JobModifyIndex);
  });

  it("reports an unchanged job as diff type None", async () => {
    const id = target.name("plan-2");
    await f.register({ Job: serviceJob(id) });
    const { value: plan } = await f.client.jobs.plan(id, { Job: serviceJob(id), Diff: true });
    expect(plan.Diff?.Type).toBe("None");
  });

  it("plans a new job as Added with JobModifyIndex 0, and the job still does not exist", async () => {
    const id = target.name("plan-new");
    const { value: plan } = await f.client.jobs.plan(id, { Job: serviceJob(id), Diff: true });
    expect(plan.Diff?.Type).toBe("Added");
    expect(plan.JobModifyIndex ?? 0).toBe(0);
    expect(await f.client.jobs.find(id)).toBeUndefined();
  });

  it("counts nodes a constraint filtered under the constraint's own text, per constraint", async () => {
    const id = target.name("plan-constraint");
    const never = { LTarget: "${attr.kernel.name}", RTarget: "no-such-kernel", Operand: "=" };
    const { value: plan } = await f.client.jobs.plan(id, { Job: serviceJob(id, { Constraints: [never] }), Diff: true });
    const m = plan.FailedTGAllocs?.web;
    expect(m?.NodesEvaluated ?? 0).toBeGreaterThan(0);
    expect(m?.NodesFiltered).toBe(m?.NodesEvaluated);
    // The first node is counted under the constraint's text; on a real cluster, further nodes of the same
    // computed class may be counted as "computed class ineligible" instead.
    const filtered = m?.ConstraintFiltered ?? {};
    expect(filtered["${attr.kernel.name} = no-such-kernel"] ?? 0).toBeGreaterThan(0);
    expect(Object.values(filtered).reduce((a, b) => a + b, 0)).toBe(m?.NodesFiltered);
  });
});

describe("Jobs.parse", () => {
  const hcl = `
job "parsed" {
  datacenters = ["dc1"]
  group "g" {
    task "t" {
      driver = "docker"
      config { image = "nginx:1.27" }
    }
  }
}
`;
  it("parses HCL2 into the job JSON, and canonicalizes when asked", async () => {
    const { value: raw } = await f.client.jobs.parse({ JobHCL: hcl });
    expect(raw.ID).toBe("parsed");
    expect(raw.TaskGroups?.[0]?.Tasks?.[0]?.Config).toEqual({ image: "nginx:1.27" });
    const { value: canon } = await f.client.jobs.parse({ JobHCL: hcl, Canonicalize: true });
    expect(canon).toMatchObject({ Region: "global", Namespace: "default", Priority: 50, Type: "service" });
  });

  it("reports a syntax error as bad_request", async () => {
    const e = await rejection(f.client.jobs.parse({ JobHCL: 'job "x" {' }));
    expect(e.code).toBe("bad_request");
  });
});

describe("Jobs.stop", () => {
  it("stops a job without purge (still readable, Stop true) and purges it with purge", async () => {
    const id = target.name("stop-1");
    await f.register({ Job: serviceJob(id) });
    const { value: res } = await f.client.jobs.stop(id);
    expect(res.EvalID).toBeTruthy();
    const { value: stopped } = await f.client.jobs.info(id);
    expect(stopped.Stop).toBe(true);
    await f.client.jobs.deregister(id, { purge: true });
    expect(await f.client.jobs.find(id)).toBeUndefined();
  });

  it("sends purge=true to purge", async () => {
    const id = target.name("stop-1q");
    await f.register({ Job: serviceJob(id) });
    await f.client.jobs.deregister(id, { purge: true });
    expect(await f.client.jobs.find(id)).toBeUndefined();
    expect(f.record.lastQuery("DELETE", `/v1/job/${id}`).get("purge")).toBe("true");
  });

  it("sends the stop options as query parameters", async () => {
    const id = target.name("stop-2");
    await f.register({ Job: serviceJob(id) });
    await f.client.jobs.stop(id, { global: true, evalPriority: 70, noShutdownDelay: true });
    expect(Object.fromEntries(f.record.lastQuery("DELETE", `/v1/job/${id}`))).toEqual({
      namespace: f.namespace,
      global: "true",
      eval_priority: "70",
      no_shutdown_delay: "true",
    });
  });

  it("treats stopping a job that does not exist as success with no evaluation", async () => {
    const { value } = await f.client.jobs.stop(target.name("never-registered"));
    expect(value.EvalID ?? "").toBe("");
  });
});
