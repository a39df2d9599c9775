import { describe, expect, it } from "vitest";
import { humanBytes, mergeWarnings } from "../../../../devserver/scheduler/ops/rules";

describe("humanBytes and mergeWarnings", () => {
  it("formats sizes and warnings like the server", () => {
    expect(humanBytes(5)).toBe("5 B");
    expect(humanBytes(1_000_001)).toBe("1.0 MB");
    expect(humanBytes(25_300)).toBe("25 kB");
    expect(mergeWarnings([])).toBe("");
    expect(mergeWarnings(["a", "b"])).toBe("2 warning(s):\n\n* a\n* b");
  });
});
