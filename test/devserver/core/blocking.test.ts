import { describe, expect, it } from "vitest";
import { DevHttpError, IndexClock, MAX_WAIT_MS, parseBlockingQuery, parseGoDuration } from "../../../devserver/core";

describe("parseGoDuration", () => {
  it.each([
    ["0", 0],
    ["5s", 5000],
    ["300ms", 300],
    ["1m", 60_000],
    ["1m30s", 90_000],
    ["1.5h", 5_400_000],
    ["2500us", 2.5],
    ["1000000ns", 1],
    ["+2s", 2000],
  ])("parses %s", (text, ms) => {
    expect(parseGoDuration(text)).toBe(ms);
  });

  it.each(["", "5", "s", "5x", "-5s", "5s ", "1d", "abc"])("rejects %j", (text) => {
    expect(parseGoDuration(text)).toBeUndefined();
  });
});

describe("parseBlockingQuery", () => {
  const q = (s: string) => parseBlockingQuery(new URLSearchParams(s));

  it("returns undefined without an index or with index 0", () => {
    expect(q("wait=5s")).toBeUndefined();
    expect(q("index=0&wait=5s")).toBeUndefined();
  });

  it("reads index and wait, capping the wait at 300s", () => {
    expect(q("index=7&wait=5s")).toEqual({ index: 7, waitMs: 5000 });
    expect(q("index=7&wait=1h")).toEqual({ index: 7, waitMs: MAX_WAIT_MS });
    expect(q("index=7")).toEqual({ index: 7, waitMs: MAX_WAIT_MS });
  });

  it.each([
    ["index=7&wait=soon", "Invalid wait time"],
    ["wait=5", "Invalid wait time"],
    ["index=-1", "Invalid index"],
    ["index=abc", "Invalid index"],
    ["index=99999999999999999999", "Invalid index"],
  ])("rejects %s with 400 %s", (query, message) => {
    let caught: unknown;
    try {
      q(query);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(DevHttpError);
    expect(caught).toMatchObject({ status: 400, message });
  });
});

describe("IndexClock.waitForChange", () => {
  it("resolves at once when the index is already past", async () => {
    const clock = new IndexClock(5);
    await expect(clock.waitForChange(4, 60_000)).resolves.toBe(5);
    expect(clock.waiting()).toBe(0);
  });

  it("resolves on the next change, without polling", async () => {
    const clock = new IndexClock(5);
    const pending = clock.waitForChange(5, 60_000);
    expect(clock.waiting()).toBe(1);
    clock.next();
    await expect(pending).resolves.toBe(6);
    expect(clock.waiting()).toBe(0);
  });

  it("keeps waiting while the watched resource's index does not move", async () => {
    const clock = new IndexClock(10);
    let resourceIndex = 10;
    let settled = false;
    const pending = clock
      .waitForChange(10, 60_000, () => resourceIndex)
      .then((v) => {
        settled = true;
        return v;
      });
    clock.next(); // another resource changed
    await Promise.resolve();
    expect(settled).toBe(false);
    resourceIndex = clock.next();
    await expect(pending).resolves.toBe(12);
  });

  it("resolves with the unchanged index when the wait elapses", async () => {
    const clock = new IndexClock(3);
    await expect(clock.waitForChange(3, 5)).resolves.toBe(3);
    expect(clock.waiting()).toBe(0);
  });

  it("releases every waiter on close", async () => {
    const clock = new IndexClock(3);
    const a = clock.waitForChange(3, 60_000);
    const b = clock.waitForChange(3, 60_000);
    clock.close();
    await expect(Promise.all([a, b])).resolves.toEqual([3, 3]);
    await expect(clock.waitForChange(3, 60_000)).resolves.toBe(3);
  });

  it("never moves backwards on advanceTo", () => {
    const clock = new IndexClock(10);
    clock.advanceTo(4);
    expect(clock.current()).toBe(10);
    clock.advanceTo(40);
    expect(clock.current()).toBe(40);
  });
});
