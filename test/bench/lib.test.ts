/**
 * The benchmarks' median: the README's and docs/performance.md's ratios are medians of rounds, and the
 * 2,000-Job round runs an even number of times (2 by default).
 */
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";

const { median } = createRequire(__filename)("../../bench/lib.js") as { median(xs: number[]): number };

describe("bench median", () => {
  it("is the middle value of an odd count, whatever the order", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([2.5])).toBe(2.5);
  });

  it("is the mean of the two middle values of an even count", () => {
    expect(median([4, 1])).toBe(2.5);
    expect(median([10, 2, 8, 4])).toBe(6);
  });
});
