import { describe, expect, it } from "vitest";
import { makeNodes } from "../../../../devserver/scheduler/sim/cluster";

describe("makeNodes", () => {
  it("derives stable node IDs from their position", () => {
    expect(makeNodes({ count: 2 }).map((n) => n.ID)).toEqual(makeNodes({ count: 2 }).map((n) => n.ID));
    expect(makeNodes({ count: 2 })[0]?.ID).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
