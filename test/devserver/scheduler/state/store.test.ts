/**
 * The store's tables of allocations, evaluations and deployments keep a per-job index beside the map by ID
 * (a list of thousands of jobs reads every job's records for its summary, and every evaluation reads its
 * job's): the index must follow every change of the map.
 */
import { describe, expect, it } from "vitest";
import { Store, type AllocRecord } from "../../../../devserver/scheduler/state/store";
import type { Allocation, Deployment, Evaluation } from "../../../../devserver/scheduler/state/types";

function record(id: string, jobId: string, createIndex: number, namespace = "default"): AllocRecord {
  const alloc = { ID: id, JobID: jobId, Namespace: namespace, CreateIndex: createIndex } as unknown as Allocation;
  return { alloc, job: { ID: jobId, CreateIndex: 1 } };
}

const ids = (records: Iterable<AllocRecord>): string[] => [...records].map((r) => r.alloc.ID).sort();

describe("the tables' index by job", () => {
  it("follows set, replace, delete and clear, per namespace", () => {
    const t = new Store(() => 0).allocs;
    t.set("a1", record("a1", "web", 1));
    t.set("a2", record("a2", "web", 2));
    t.set("b1", record("b1", "db", 3));
    t.set("c1", record("c1", "web", 4, "other"));
    expect(ids(t.ofJob("default", "web"))).toEqual(["a1", "a2"]);
    expect(ids(t.ofJob("other", "web"))).toEqual(["c1"]);
    // The same ID set again with another job's record moves it in the index.
    t.set("a2", record("a2", "db", 5));
    expect(ids(t.ofJob("default", "web"))).toEqual(["a1"]);
    expect(ids(t.ofJob("default", "db"))).toEqual(["a2", "b1"]);
    expect(t.delete("a1")).toBe(true);
    expect(t.delete("a1")).toBe(false);
    expect(ids(t.ofJob("default", "web"))).toEqual([]);
    expect(t.size).toBe(3);
    t.clear();
    expect(ids(t.ofJob("default", "db"))).toEqual([]);
    expect(t.size).toBe(0);
  });

  it("holding() reads the records still in the held state; one that left it is dropped for good", () => {
    // The allocations' held state is "live" (desired to run, not ended). A record is counted on its node as it
    // enters and taken back as it is let go: `ask` sees each entry, the store's usage what is still counted.
    const entered: string[] = [];
    const store = new Store(
      () => 0,
      (r) => {
        entered.push(r.alloc.ID);
        return { cpu: 1, memoryMB: 1 };
      },
    );
    const t = store.allocs;
    const running = (id: string): AllocRecord => {
      const r = record(id, "web", 1);
      Object.assign(r.alloc, { NodeID: `node-${id}`, DesiredStatus: "run", ClientStatus: "running" });
      return r;
    };
    /** The records entered and not let go, by their nodes (each counted once). */
    const counted = (): Record<string, unknown> => Object.fromEntries(store.usage(new Set()));
    const once = (...held: string[]): Record<string, unknown> =>
      Object.fromEntries(held.map((id) => [`node-${id}`, { cpu: 1, memoryMB: 1 }]));
    const a = running("a");
    t.set("a", a);
    t.set("b", running("b"));
    t.set("c", running("c"));
    t.set("d", record("d", "web", 1)); // set outside the state: never held
    expect(ids(t.holding())).toEqual(["a", "b", "c"]);
    expect(counted()).toEqual(once("a", "b", "c"));
    a.alloc.ClientStatus = "complete";
    expect(ids(t.holding())).toEqual(["b", "c"]);
    expect(counted()).toEqual(once("b", "c"));
    // Back in the state after it was dropped: not read again (the state is one a record never re-enters).
    a.alloc.ClientStatus = "running";
    expect(ids(t.holding())).toEqual(["b", "c"]);
    expect(counted()).toEqual(once("b", "c"));
    // Replaced, deleted, cleared: the index follows the map.
    t.set("b", record("b", "web", 2));
    t.delete("c");
    expect(ids(t.holding())).toEqual([]);
    expect(counted()).toEqual({});
    t.set("e", running("e"));
    expect(ids(t.holding())).toEqual(["e"]);
    expect(counted()).toEqual(once("e"));
    t.clear();
    expect(ids(t.holding())).toEqual([]);
    // Each held record entered once and was let go.
    expect([entered.sort(), counted()]).toEqual([["a", "b", "c", "e"], {}]);
    // A table without a held state holds nothing.
    const plain = store.deployments;
    const deployment = { ID: "x", JobID: "web", Namespace: "default", Status: "running" } as unknown as Deployment;
    plain.set("x", deployment);
    expect([...plain.holding()]).toEqual([]);
  });

  it("the store keeps what the live allocations use per node as they start and stop", () => {
    let index = 0;
    const store = new Store(
      () => ++index,
      (r) => (r.alloc.TaskGroup === "none" ? null : { cpu: 100, memoryMB: r.alloc.TaskGroup === "big" ? 512 : 256 }),
    );
    const live = (id: string, node: string, group = "web"): AllocRecord => {
      const r = record(id, "web", 1);
      Object.assign(r.alloc, { NodeID: node, TaskGroup: group, DesiredStatus: "run", ClientStatus: "running" });
      return r;
    };
    const a1 = live("a1", "n1");
    store.allocs.set("a1", a1);
    store.allocs.set("a2", live("a2", "n1", "big"));
    store.allocs.set("a3", live("a3", "n2"));
    store.allocs.set("a4", live("a4", "n2", "none"));
    const stopped = live("a5", "n2");
    stopped.alloc.DesiredStatus = "stop";
    store.allocs.set("a5", stopped);
    const usage = store.usage(new Set());
    expect(Object.fromEntries(usage)).toEqual({
      n1: { cpu: 200, memoryMB: 768 },
      n2: { cpu: 100, memoryMB: 256 },
    });
    // The caller's map is its own.
    usage.clear();
    // Left out: the allocations being stopped or replaced.
    expect(Object.fromEntries(store.usage(new Set(["a2", "a5", "nope"])))).toEqual({
      n1: { cpu: 100, memoryMB: 256 },
      n2: { cpu: 100, memoryMB: 256 },
    });
    // An allocation that stopped, one deleted and one replaced by a stopped record no longer count.
    a1.alloc.ClientStatus = "complete";
    store.allocs.delete("a3");
    const a2stopped = live("a2", "n1", "big");
    a2stopped.alloc.DesiredStatus = "stop";
    store.allocs.set("a2", a2stopped);
    expect(Object.fromEntries(store.usage(new Set()))).toEqual({});
    store.allocs.set("a6", live("a6", "n3"));
    store.restore({});
    expect(Object.fromEntries(store.usage(new Set()))).toEqual({});
  });

  it("the store's job allocations come from it: in creation order, of the job's current registration", () => {
    let index = 0;
    const store = new Store(() => ++index);
    store.allocs.set("x2", record("x2", "web", 7));
    store.allocs.set("x1", record("x1", "web", 3));
    store.allocs.set("y1", record("y1", "api", 4));
    const old = record("x0", "web", 1);
    old.job = { ID: "web", CreateIndex: 0 };
    store.allocs.set("x0", old);
    expect(store.jobAllocs("default", "web", true).map((r) => r.alloc.ID)).toEqual(["x0", "x1", "x2"]);
    expect(store.jobAllocs("default", "nope")).toEqual([]);
  });

  it("the store's job evaluations and deployments come from it too: newest first, other jobs left out", () => {
    let index = 0;
    const store = new Store(() => ++index);
    const ev = (id: string, jobId: string, createIndex: number, namespace = "default"): Evaluation =>
      ({ ID: id, JobID: jobId, Namespace: namespace, CreateIndex: createIndex }) as unknown as Evaluation;
    store.evals.set("e1", ev("e1", "web", 2));
    store.evals.set("e2", ev("e2", "web", 9));
    store.evals.set("e3", ev("e3", "api", 5));
    store.evals.set("e4", ev("e4", "web", 4, "other"));
    expect(store.jobEvals("default", "web").map((e) => e.ID)).toEqual(["e2", "e1"]);
    expect(store.jobEvals("other", "web").map((e) => e.ID)).toEqual(["e4"]);
    store.evals.delete("e2");
    expect(store.jobEvals("default", "web").map((e) => e.ID)).toEqual(["e1"]);

    const dep = (id: string, jobId: string, createIndex: number): Deployment =>
      ({
        ID: id,
        JobID: jobId,
        Namespace: "default",
        CreateIndex: createIndex,
        JobCreateIndex: 1,
      }) as unknown as Deployment;
    store.deployments.set("d1", dep("d1", "web", 3));
    store.deployments.set("d2", dep("d2", "web", 8));
    store.deployments.set("d3", dep("d3", "api", 6));
    expect(store.jobDeployments("default", "web").map((d) => d.ID)).toEqual(["d2", "d1"]);
    expect(store.latestDeployment("default", "api")?.ID).toBe("d3");
    store.restore({});
    expect(store.jobEvals("default", "web")).toEqual([]);
    expect(store.jobDeployments("default", "web")).toEqual([]);
  });
});
