import { describe, expect, it } from "vitest";
import { jobDiff } from "../../../../devserver/scheduler/ops/diff";
import type { JsonObject } from "../../../../devserver/scheduler/state/json";
import { serviceJob } from "../http";

const job = (o: Record<string, unknown> = {}): JsonObject => serviceJob("u", o) as JsonObject;

describe("jobDiff", () => {
  it("is None for identical jobs and Added/Deleted against nothing", () => {
    expect(jobDiff(job(), job()).Type).toBe("None");
    expect(jobDiff(undefined, job()).Type).toBe("Added");
    expect(jobDiff(job(), undefined).Type).toBe("Deleted");
  });

  it("ignores server-managed fields and reports the rest as strings", () => {
    const d = jobDiff(
      job({ Version: 1, ModifyIndex: 5, Status: "running" }),
      job({ Version: 2, ModifyIndex: 9, Status: "dead", AllAtOnce: true }),
    );
    expect(d.Fields).toEqual([{ Type: "Added", Name: "AllAtOnce", Old: "", New: "true", Annotations: null }]);
  });

  it("shows datacenter set changes only when they changed", () => {
    expect(jobDiff(job(), job()).Objects).toBeNull();
    const d = jobDiff(job(), job({ Datacenters: ["dc1", "dc2"] }));
    // Sorted by name, then old value, then new value, as the server sorts field diffs.
    expect(d.Objects).toEqual([
      {
        Type: "Added",
        Name: "Datacenters",
        Objects: null,
        Fields: [
          { Type: "Added", Name: "Datacenters", Old: "", New: "dc2", Annotations: null },
          { Type: "None", Name: "Datacenters", Old: "dc1", New: "dc1", Annotations: null },
        ],
      },
    ]);
  });

  it("matches services by name and port, so reordering is not a change", () => {
    const two = [
      { Name: "a", PortLabel: "http" },
      { Name: "b", PortLabel: "admin" },
    ];
    const a = serviceJob("u", {}, { Services: two }) as JsonObject;
    const b = serviceJob("u", {}, { Services: [...two].reverse() }) as JsonObject;
    const groups = jobDiff(a, b).TaskGroups ?? [];
    expect(groups[0]?.Objects).toBeNull();
  });
});
