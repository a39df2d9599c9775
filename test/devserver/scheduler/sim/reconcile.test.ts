import { describe, expect, it } from "vitest";
import { reconcile } from "../../../../devserver/scheduler/sim/reconcile";
import type { JsonObject } from "../../../../devserver/scheduler/state/json";
import type { AllocRecord } from "../../../../devserver/scheduler/state/store";
import type { Allocation } from "../../../../devserver/scheduler/state/types";
import { serviceJob } from "../http";

const job = (o: Record<string, unknown> = {}): JsonObject => serviceJob("u", o) as JsonObject;

describe("reconcile", () => {
  const alloc = (name: string, jmi: number, status = "running"): AllocRecord => ({
    alloc: { ID: name, Name: name, TaskGroup: "web", DesiredStatus: "run", ClientStatus: status } as Allocation,
    job: job({ JobModifyIndex: jmi }),
  });
  const opts = { rolling: true, promoted: false, systemCount: 0 };

  it("ignores assigned dynamic port values but not their labels when it decides on a destructive update", () => {
    /** How the plan moves one running allocation of `from` to `to`: updated in place or replaced. */
    const update = (from: JsonObject, to: JsonObject): { inplace: number; destructive: number } => {
      const running: AllocRecord = { ...alloc("u.web[0]", 0), job: from };
      const [p] = reconcile(to, [running], opts);
      return { inplace: p?.inplace.length ?? -1, destructive: p?.destructive.length ?? -1 };
    };
    const a = serviceJob(
      "u",
      {},
      { Networks: [{ DynamicPorts: [{ Label: "http", Value: 21000, To: 8080 }] }] },
    ) as JsonObject;
    const b = serviceJob(
      "u",
      {},
      { Networks: [{ DynamicPorts: [{ Label: "http", Value: 0, To: 8080 }] }] },
    ) as JsonObject;
    const c = serviceJob("u", {}, { Networks: [{ DynamicPorts: [{ Label: "web", To: 8080 }] }] }) as JsonObject;
    expect(update(a, b)).toEqual({ inplace: 1, destructive: 0 });
    expect(update(a, c)).toEqual({ inplace: 0, destructive: 1 });
  });

  it("stops surplus allocations from older versions first", () => {
    const next = serviceJob("u", { JobModifyIndex: 2, Priority: 60 }, { Count: 2 }) as JsonObject;
    const [p] = reconcile(next, [alloc("u.web[0]", 1), alloc("u.web[1]", 2), alloc("u.web[2]", 2)], opts);
    expect(p?.stop.map((r) => r.alloc.Name)).toEqual(["u.web[0]"]);
    expect(p?.desired).toMatchObject({ Stop: 1, Ignore: 2 });
  });

  it("stops every allocation of a stopped job", () => {
    const [p] = reconcile(job({ Stop: true, JobModifyIndex: 3 }), [alloc("a", 1), alloc("b", 1)], opts);
    expect(p?.desired).toMatchObject({ Stop: 2 });
  });
});
