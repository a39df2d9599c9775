/**
 * A refresh reads its Jobs through one job list per namespace and region (listing.ts): counted on the
 * devserver, with the reads sent the way the engine sends them (a few at a time, `--parallel`, or all at
 * once). A job changed, stopped or purged outside Pulumi is still read in full and seen.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stripServerManagedFields } from "../../../../provider/clients/scheduler";
import { startFaultProxy } from "../../../helpers/fault-proxy";
import { setStackConfig } from "../../../helpers/stack-config";
import { job } from "../../../../provider/resources/job";
import type { JobOutputs } from "../../../../provider/resources/job/state";
import { checked, createJob, startHarness, type Harness, type Stated } from "./harness";

let h: Harness;

beforeAll(async () => {
  h = await startHarness({ schedulerService: { deploymentMs: 20, evalDelayMs: 1 } });
});

afterAll(async () => {
  await h?.close();
});

function jobOf(id: string, image: string): Record<string, unknown> {
  return {
    ID: id,
    Name: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "server", Driver: "docker", Config: { image } }] }],
  };
}

/** Creates `n` jobs named `<prefix>-<i>`, and waits until the server's report of them settles. */
async function createJobs(prefix: string, n: number, extra: Record<string, unknown> = {}): Promise<Stated[]> {
  const out: Stated[] = [];
  for (let i = 0; i < n; i++)
    out.push(await createJob({ job: jobOf(`${prefix}-${i}`, "app:1"), purgeOnDestroy: true, ...extra }));
  await settle(out);
  return out;
}

/** Reads every resource like a refresh, `parallel` at a time; returns the outputs and the requests sent. */
async function refreshAll(
  states: Stated[],
  parallel = states.length,
): Promise<{ outs: (JobOutputs | undefined)[]; sent: string[] }> {
  const from = h.server.requestLog.length;
  const outs: (JobOutputs | undefined)[] = new Array(states.length);
  let next = 0;
  const worker = async () => {
    while (next < states.length) {
      const i = next++;
      const s = states[i] as Stated;
      const r = await job.read(s.id, s.outs);
      outs[i] = r.id ? (r.props as JobOutputs) : undefined;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return { outs, sent: h.server.requestLog.slice(from).map((e) => `${e.method} ${e.path}`) };
}

/** What a full read of each job reports: state's outputs with the server's status and indexes now. */
async function fullView(states: Stated[]): Promise<JobOutputs[]> {
  return Promise.all(
    states.map(async (s) => {
      const j = (await h.client.jobs.info(s.outs.jobId, { namespace: s.outs.namespace })).value;
      return {
        ...s.outs,
        version: j.Version ?? 0,
        jobModifyIndex: j.JobModifyIndex ?? 0,
        modifyIndex: j.ModifyIndex ?? 0,
        status: j.Status ?? "",
        statusDescription: j.StatusDescription ?? "",
      };
    }),
  );
}

/** Waits until the jobs' status stops changing (the devserver places them shortly after a register). */
async function settle(states: Stated[]): Promise<void> {
  let last = JSON.stringify(await fullView(states));
  for (let i = 0; i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50));
    const now = JSON.stringify(await fullView(states));
    if (now === last) return;
    last = now;
  }
}

const lists = (sent: string[]) => sent.filter((l) => l === "GET /v1/jobs").length;
const others = (sent: string[]) => sent.filter((l) => l !== "GET /v1/jobs");

async function changeOutside(id: string, image: string): Promise<void> {
  const copy = structuredClone(stripServerManagedFields((await h.client.jobs.info(id)).value));
  const task = copy.TaskGroups?.[0]?.Tasks?.[0];
  if (!task) throw new Error("no task");
  task.Config = { ...(task.Config ?? {}), image };
  await h.client.jobs.register({ Job: copy });
}

describe("refresh through one job list", () => {
  let states: Stated[];

  beforeAll(async () => {
    states = await createJobs("listed", 12, { waitForDeployment: false });
  });

  it("sends one list for N unchanged Jobs read at once, and reports what a full read reports", async () => {
    const { outs, sent } = await refreshAll(states);
    expect(sent).toEqual(["GET /v1/jobs"]);
    expect(outs).toEqual(await fullView(states));
  });

  it("sends one list whatever the parallelism: reads one at a time, two, a few, or all at once", async () => {
    for (const parallel of [1, 2, 4, 12]) {
      const { outs, sent } = await refreshAll(states, parallel);
      expect(sent).toEqual(["GET /v1/jobs"]);
      expect(outs).toEqual(await fullView(states));
    }
  });

  it("lists the namespace once with other jobs on it, and reads none of them", async () => {
    await createJobs("other", 3, { waitForDeployment: false });
    for (const parallel of [1, 12]) {
      const { sent } = await refreshAll(states, parallel);
      expect(sent).toEqual(["GET /v1/jobs"]);
    }
  });

  it("reads in full, once each, only the jobs changed, stopped or purged outside Pulumi, and sees them", async () => {
    await changeOutside("listed-3", "app:hotfix");
    await h.client.jobs.deregister("listed-5");
    await h.client.jobs.deregister("listed-7", { purge: true });
    const { outs, sent } = await refreshAll(states);
    expect(lists(sent)).toBe(1);
    expect(others(sent).sort()).toEqual(["GET /v1/job/listed-3", "GET /v1/job/listed-5", "GET /v1/job/listed-7"]);
    expect(outs[3]).toMatchObject({ version: 1, inputsHash: "" });
    expect(outs[3]?.normalizedJob).toContain("app:hotfix");
    expect(outs[5]).toMatchObject({ stopped: true });
    expect(outs[7]).toBeUndefined();
    const same = [0, 1, 2, 4, 6, 8, 9, 10, 11];
    expect(same.map((i) => outs[i])).toEqual(await fullView(same.map((i) => states[i] as Stated)));
  });
});

/**
 * A scheduler whose job lists come in pages of at most `page` jobs, whatever `per_page` asks: the fault
 * proxy on loopback in front of the devserver's scheduler API, with no fault, rewriting `per_page`. `lists`
 * is the query of every job list as the provider sent it. The provider asks for pages of 1,000 jobs and
 * takes at most 10 of them: with pages of 5, a few dozen jobs reach both limits.
 */
async function smallPages(
  page: number,
): Promise<{ url: string; readonly lists: URLSearchParams[]; close(): Promise<void> }> {
  const proxy = await startFaultProxy(h.server.urls.scheduler, "scheduler", {
    rewrite: (method, url) => {
      if (method === "GET" && url.pathname === "/v1/jobs" && Number(url.searchParams.get("per_page") ?? 0) > page)
        url.searchParams.set("per_page", String(page));
    },
  });
  return {
    url: proxy.url,
    get lists() {
      return proxy.log
        .filter((e) => e.method === "GET" && e.path === "/v1/jobs")
        .map((e) => new URLSearchParams(e.query));
    },
    close: () => proxy.close(),
  };
}

/** The provider's page size and most pages (listing.ts), as its requests show them. */
const PAGE_SIZE = "1000";
const MOST_PAGES = 10;

/**
 * A namespace of other stacks' jobs (`othersJobs` of them, sorted before this stack's but one) and this stack's
 * jobs (z-mine-0..5 and a-00-mine), listed by a scheduler that pages by 5 (see {@link smallPages}): every read
 * is answered by the lists, none reads its job in full, and each sees what a full read sees.
 */
function crowdedNamespace(ns: string, othersJobs: number) {
  let states: Stated[] = [];
  let proxy: Awaited<ReturnType<typeof smallPages>>;

  beforeAll(async () => {
    await Promise.all(
      Array.from({ length: othersJobs }, (_, i) => {
        const id = `a-${String(i).padStart(2, "0")}`;
        return h.client.jobs.register({ Job: { ...jobOf(id, "app:1"), Namespace: ns } }, { namespace: ns });
      }),
    );
    states = await createJobs("z-mine", 6, { waitForDeployment: false, namespace: ns });
    states.push(...(await createJobs("a-00-mine", 1, { waitForDeployment: false, namespace: ns })));
    proxy = await smallPages(5);
    setStackConfig({ schedulerAddress: proxy.url, schedulerToken: h.server.rootTokens.scheduler });
  });

  afterAll(async () => {
    setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: h.server.rootTokens.scheduler });
    await proxy.close();
  });

  /** Refreshes `which` (all by default) `parallel` at a time, quietly; returns the lists the provider sent. */
  const quietRefreshLists = async (parallel: number, which: Stated[] = states) => {
    const from = proxy.lists.length;
    const { outs, sent } = await refreshAll(which, parallel);
    expect(outs).toEqual(await fullView(which));
    expect(others(sent)).toEqual([]);
    return proxy.lists.slice(from);
  };
  return { states: () => states, quietRefreshLists };
}

describe("a namespace holding more jobs than one list page", () => {
  // 27 jobs: 6 pages of 5.
  const ns = crowdedNamespace("crowded", 20);

  it("takes the namespace's other pages once, for the first read the first page does not answer", async () => {
    for (const parallel of [ns.states().length, 3, 1]) {
      const listed = await ns.quietRefreshLists(parallel);
      // 27 jobs, 5 a page: 6 pages, each once, none filtered.
      expect(listed).toHaveLength(6);
      for (const q of listed) {
        expect(q.get("per_page")).toBe(PAGE_SIZE);
        expect(q.get("filter")).toBeNull();
      }
    }
  });
});

describe("a namespace holding more jobs than the most pages a list takes", () => {
  // 67 jobs: the 10 pages of 5 hold a-00, a-00-mine and a-01..a-48; z-mine-0..5 are beyond them.
  const ns = crowdedNamespace("packed", 60);

  it("beyond the most pages, lists the jobs they did not hold by their IDs, one filtered list per batch of reads", async () => {
    for (const parallel of [ns.states().length, 3, 1]) {
      const listed = await ns.quietRefreshLists(parallel);
      const paged = listed.filter((q) => q.get("per_page") === PAGE_SIZE);
      const filtered = listed.filter((q) => q.get("filter") !== null);
      expect(paged).toHaveLength(MOST_PAGES);
      expect(paged.every((q) => q.get("filter") === null)).toBe(true);
      expect(filtered.length + paged.length).toBe(listed.length);
      // The six beyond the pages, `parallel` at a time (the one on the first page needs no filtered list).
      expect(filtered.length).toBeGreaterThanOrEqual(1);
      expect(filtered.length).toBeLessThanOrEqual(Math.ceil(6 / Math.min(parallel, 6)) + 1);
      for (const q of filtered) {
        expect(q.get("per_page")).toBeNull();
        expect(q.get("filter")).toMatch(/^ID matches `\^\(\?:z-mine-\d(\|z-mine-\d)*\)\$`$/);
      }
    }
  });

  it("a batch of reads beyond the pages: one list by their IDs' common prefix and their exact IDs", async () => {
    const [zero, one] = ns.states();
    const filtered = (await ns.quietRefreshLists(2, [zero!, one!])).filter((q) => q.get("filter") !== null);
    expect(filtered.map((q) => [q.get("prefix"), q.get("filter")])).toEqual([
      ["z-mine-", "ID matches `^(?:z-mine-0|z-mine-1)$`"],
    ]);
  });

  it("sees a job beyond the pages that was purged outside Pulumi as gone", async () => {
    const states = ns.states();
    await h.client.jobs.deregister("z-mine-2", { namespace: "packed", purge: true });
    const { outs, sent } = await refreshAll(states);
    expect(outs[2]).toBeUndefined();
    expect(others(sent)).toEqual(["GET /v1/job/z-mine-2"]);
  });
});

describe("the filter of a list by IDs", () => {
  // 60 others' jobs fill the 10 pages of 5 a list takes (see smallPages): the jobs read are all beyond them.
  it("escapes what regular expressions treat as syntax in the IDs, and lists by the common prefix alone when the IDs' filter would make the request line too long", async () => {
    const ns = "sifted";
    await Promise.all(
      Array.from({ length: 60 }, (_, i) => {
        const id = `a-${String(i).padStart(2, "0")}`;
        return h.client.jobs.register({ Job: { ...jobOf(id, "app:1"), Namespace: ns } }, { namespace: ns });
      }),
    );
    const odd = await Promise.all(
      ["z.a", "z-(b)", "z+c|d", "z[e]"].map((id) =>
        createJob({ job: jobOf(id, "app:1"), purgeOnDestroy: true, waitForDeployment: false, namespace: ns }),
      ),
    );
    // Eight IDs of 1,000 characters: their filter would be over 6,000 characters.
    const long = await createJobs(`z-${"x".repeat(1000)}`, 8, { waitForDeployment: false, namespace: ns });
    await settle([...odd, ...long]);
    const proxy = await smallPages(5);
    setStackConfig({ schedulerAddress: proxy.url, schedulerToken: h.server.rootTokens.scheduler });
    try {
      for (const [which, prefix, filter] of [
        [odd, "z", "ID matches `^(?:z\\+c\\|d|z-\\(b\\)|z\\.a|z\\[e\\])$`"],
        [long, `z-${"x".repeat(1000)}-`, null],
      ] as const) {
        const from = proxy.lists.length;
        const { outs, sent } = await refreshAll([...which]);
        expect(outs).toEqual(await fullView([...which]));
        expect(others(sent)).toEqual([]);
        const filtered = proxy.lists.slice(from).filter((q) => q.get("per_page") === null);
        expect(filtered.map((q) => [q.get("prefix"), q.get("filter")])).toEqual([[prefix, filter]]);
      }
    } finally {
      setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: h.server.rootTokens.scheduler });
      await proxy.close();
    }
  });
});

describe("a list and this host's own writes", () => {
  it("does not serve a read after a write the connection sent since the list", async () => {
    const states = await createJobs("own", 3, { waitForDeployment: false });
    // The first read lists the namespace (own-2 too); the second is answered from that list.
    await job.read(states[0]!.id, states[0]!.outs);
    await job.read(states[1]!.id, states[1]!.outs);
    // This host updates own-2: the namespace list taken before no longer describes it.
    const s2 = states[2]!;
    const next = await checked({
      job: jobOf("own-2", "app:2"),
      purgeOnDestroy: true,
      waitForDeployment: false,
      allowPlanDrift: true,
    });
    const updated = (await job.update(s2.id, s2.outs, next)).outs as JobOutputs;
    expect(updated.jobModifyIndex).toBeGreaterThan(s2.outs.jobModifyIndex);
    // Read with the state written before the update: the job moved, so it is read in full and seen.
    const from = h.server.requestLog.length;
    const r = await job.read(s2.id, s2.outs);
    const sent = h.server.requestLog.slice(from).map((e) => `${e.method} ${e.path}`);
    expect(sent).toContain("GET /v1/job/own-2");
    expect((r.props as JobOutputs).jobModifyIndex).toBe(updated.jobModifyIndex);
  });
});

describe("lists per namespace", () => {
  it("sends one list per namespace", async () => {
    const a = await createJobs("ns-a", 3, { waitForDeployment: false, namespace: "team-a" });
    const b = await createJobs("ns-b", 3, { waitForDeployment: false, namespace: "team-b" });
    const { outs, sent } = await refreshAll([...a, ...b]);
    expect(sent).toEqual(["GET /v1/jobs", "GET /v1/jobs"]);
    expect(outs).toEqual(await fullView([...a, ...b]));
    const namespaces = h.server.requestLog
      .filter((e) => e.path === "/v1/jobs")
      .slice(-2)
      .map((e) => new URLSearchParams(e.query).get("namespace"))
      .sort();
    expect(namespaces).toEqual(["team-a", "team-b"]);
  });
});

describe("a job list the token may not read", () => {
  it("falls back to reading each job in full", async () => {
    const states = await createJobs("acl", 2, { waitForDeployment: false });
    const token = h.server.createToken("scheduler", { capabilities: ["namespace:read-job"] });
    setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: token });
    try {
      const { outs, sent } = await refreshAll(states);
      expect(outs).toEqual(await fullView(states));
      expect(lists(sent)).toBe(1);
      expect(others(sent).sort()).toEqual(["GET /v1/job/acl-0", "GET /v1/job/acl-1"]);
    } finally {
      setStackConfig({ schedulerAddress: h.server.urls.scheduler, schedulerToken: h.server.rootTokens.scheduler });
    }
  });
});

describe("what a refresh holds open", () => {
  it("reads and diffs N Jobs over at most one new connection: no pool or socket is made per call", async () => {
    const states = await createJobs("sockets", 12, { waitForDeployment: false });
    const before = h.server.stats().scheduler.connections;
    const { sent } = await refreshAll(states, 4);
    for (const s of states) {
      if (s.inputs === undefined) throw new Error("no inputs in state");
      const d = await job.diff(s.id, s.outs, s.inputs);
      expect(d.changes).toBe(false);
    }
    expect(sent).toEqual(["GET /v1/jobs"]);
    // The pool's kept-alive socket may have idled out since the jobs were created: one new one, then.
    expect(h.server.stats().scheduler.connections - before).toBeLessThanOrEqual(1);
  });
});

// Last: a list that failed leaves this process's reads of that namespace to full reads from then on.
describe("a job list the server answers with a stub that has no ID", () => {
  it("is refused as a whole: each read reads its job in full", async () => {
    const states = await createJobs("noid", 2, { waitForDeployment: false });
    // What the list checks of each stub is its ID alone (each kept as sent, unknown fields and all); one
    // without a string ID fails the list, and the reads go on without it.
    const stubs = (await h.client.jobs.listLoosePage()).value;
    expect(stubs.find((s) => s.ID === "noid-0")).toHaveProperty("JobSummary");
    h.server.faults.add({
      service: "scheduler",
      method: "GET",
      path: "/v1/jobs",
      status: 200,
      body: [...stubs, { Name: "nameless" }] as unknown as Record<string, unknown>,
    });
    const { outs, sent } = await refreshAll(states);
    expect(outs).toEqual(await fullView(states));
    expect(lists(sent)).toBe(1);
    expect(others(sent).sort()).toEqual(["GET /v1/job/noid-0", "GET /v1/job/noid-1"]);
  });
});
