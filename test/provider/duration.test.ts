/** The provider's one Go-duration parser (provider/duration.ts). */
import { describe, expect, it } from "vitest";
import { parseGoDuration } from "../../provider/duration";

describe("parseGoDuration", () => {
  it("reads a sequence of numbers with units, in milliseconds", () => {
    expect(parseGoDuration("90s")).toBe(90_000);
    expect(parseGoDuration("1h30m")).toBe(5_400_000);
    expect(parseGoDuration("1.5h")).toBe(5_400_000);
    expect(parseGoDuration("250ms")).toBe(250);
    expect(parseGoDuration("1500us")).toBeCloseTo(1.5);
    expect(parseGoDuration("1500µs")).toBeCloseTo(1.5);
    expect(parseGoDuration("1500μs")).toBeCloseTo(1.5);
    expect(parseGoDuration("2000000ns")).toBeCloseTo(2);
    expect(parseGoDuration("0s")).toBe(0);
    expect(parseGoDuration("-5m")).toBe(-300_000);
  });

  it("takes the day unit only when asked", () => {
    expect(parseGoDuration("2d")).toBeUndefined();
    expect(parseGoDuration("2d12h", { days: true })).toBe(216_000_000);
  });

  it("is undefined for anything else: a bare number, an unknown unit, stray text", () => {
    for (const t of ["", "-", "90", "5x", "s", "1h 30m", " 5s", "5s ", "+5s", "--5s", "1.2.3s", "5s0", ".5s"])
      expect(parseGoDuration(t), JSON.stringify(t)).toBeUndefined();
  });
});
