import { describe, expect, it } from "vitest";
import {
  canonicalCidr,
  canonicalRoleName,
  cleanList,
  durationSeconds,
  encodeMount,
  sameList,
  sameSet,
  trimMountPath,
} from "../../../../provider/clients/secrets/normalize";

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
    expect(sameList([" a", "b "], ["a", "b"])).toBe(true);
  });
  it("compares sets without order or duplicates, lists with order", () => {
    expect(sameSet(["a", "b"], ["b", "a", "a"])).toBe(true);
    expect(sameSet(["a"], ["a", "b"])).toBe(false);
    expect(sameList(["a", "b"], ["b", "a"])).toBe(false);
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

describe("mount paths and role names", () => {
  it("trims slashes and encodes each segment on its own", () => {
    expect(trimMountPath("/cloud/")).toBe("cloud");
    expect(encodeMount("team/cloud")).toBe("team/cloud");
    expect(encodeMount("a b/c")).toBe("a%20b/c");
  });
  it("lowercases role names", () => {
    expect(canonicalRoleName("Web-App")).toBe("web-app");
  });
});
