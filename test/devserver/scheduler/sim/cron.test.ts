import { describe, expect, it } from "vitest";
import { nextCronIn, parseCron } from "../../../../devserver/scheduler/sim/cron";

describe("cron", () => {
  const from = new Date("2030-01-15T10:17:30Z");
  it.each([
    ["*/15 * * * *", "2030-01-15T10:30:00.000Z"],
    ["0 3 * * *", "2030-01-16T03:00:00.000Z"],
    ["@hourly", "2030-01-15T11:00:00.000Z"],
    ["0 0 1 * *", "2030-02-01T00:00:00.000Z"],
    ["0 9 * * MON", "2030-01-21T09:00:00.000Z"],
    ["30 0 12 * * * *", "2030-01-15T12:00:30.000Z"],
  ])("%s after %s, in UTC", (spec, expected) => {
    expect(nextCronIn(parseCron(spec), from, "UTC")?.toISOString()).toBe(expected);
  });

  it("reads the spec in the job's time zone, across daylight saving changes", () => {
    expect(nextCronIn(parseCron("0 3 * * *"), from, "America/New_York")?.toISOString()).toBe(
      "2030-01-16T08:00:00.000Z",
    );
    expect(
      nextCronIn(parseCron("0 3 * * *"), new Date("2030-07-01T00:00:00Z"), "America/New_York")?.toISOString(),
    ).toBe("2030-07-01T07:00:00.000Z");
    expect(nextCronIn(parseCron("0 3 * * *"), from, "UTC")?.toISOString()).toBe("2030-01-16T03:00:00.000Z");
    expect(() => nextCronIn(parseCron("0 3 * * *"), from, "Not/AZone")).toThrow(RangeError);
  });

  it("rejects invalid specs", () => {
    expect(() => parseCron("61 * * * *")).toThrow();
    expect(() => parseCron("* *")).toThrow();
  });
});
