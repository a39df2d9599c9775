/** What values mean for both services (provider/values.ts): durations, lists, CIDRs. */
import { describe, expect, it } from "vitest";
import { canonicalCidr, cleanList, durationSeconds, parseGoDuration, sameSet } from "../../provider/values";

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

describe("durationSeconds", () => {
  it.each<{ v: string | number; s: number | undefined }>([
    { v: 3600, s: 3600 },
    { v: "3600", s: 3600 },
    { v: "90s", s: 90 },
    { v: "1h30m", s: 5400 },
    { v: "768h", s: 2764800 },
    { v: "2d", s: 172800 },
    { v: "1.5h", s: 5400 },
    { v: "1500ms", s: 1 },
    { v: "-5s", s: -5 },
    { v: "0", s: 0 },
    { v: "", s: undefined },
    { v: "soon", s: undefined },
    { v: "5x", s: undefined },
    { v: Number.NaN, s: undefined },
  ])("$v → $s", ({ v, s }) => {
    expect(durationSeconds(v)).toBe(s);
  });
});

describe("lists", () => {
  it('treats null, [] and [""] alike', () => {
    expect(cleanList(null)).toEqual([]);
    expect(cleanList([""])).toEqual([]);
    expect(sameSet(null, [""])).toBe(true);
    expect(sameSet([], undefined)).toBe(true);
    expect(sameSet([" a", "b "], ["b", "a"])).toBe(true);
  });
  it("compares sets without order or duplicates, lists with order", () => {
    expect(sameSet(["a", "b"], ["b", "a", "a"])).toBe(true);
    expect(sameSet(["a"], ["a", "b"])).toBe(false);
  });
});

describe("canonicalCidr", () => {
  it.each([
    ["10.0.0.1", "10.0.0.1/32"],
    ["10.0.0.0/8", "10.0.0.0/8"],
    ["::1", "::1/128"],
    ["not-an-ip", "not-an-ip"],
  ])("%s → %s", (a, b) => {
    expect(canonicalCidr(a)).toBe(b);
  });
});
