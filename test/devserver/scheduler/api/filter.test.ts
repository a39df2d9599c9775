import { describe, expect, it } from "vitest";
import { evalFilter, parseFilter } from "../../../../devserver/scheduler/api/filter";
import type { JsonObject } from "../../../../devserver/scheduler/state/json";

describe("filter", () => {
  const datum = {
    Name: "web",
    Priority: 50,
    Stop: false,
    Meta: { "team.name": "blue" },
    Datacenters: ["dc1"],
  } as JsonObject;
  it.each([
    ['Name == "web"', true],
    ["Priority == 50", true],
    ["Stop == false", true],
    ['Meta["team.name"] == "blue"', true],
    ['Meta.missing == "x"', false],
    ['Meta.missing != "x"', true],
    ['"dc1" in Datacenters', true],
    ['"dc2" not in Datacenters', true],
    ["Meta is not empty", true],
    ['not Name == "web" or Priority != 50', false],
    ['Name matches "^w.b$"', true],
  ])("%s → %s", (expr, expected) => {
    expect(evalFilter(parseFilter(expr), datum)).toBe(expected);
  });

  it("rejects malformed expressions", () => {
    for (const bad of ["Name ==", '(Name == "x"', "Name ~ 1", '"x" Name']) expect(() => parseFilter(bad)).toThrow();
  });
});
