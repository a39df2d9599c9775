/**
 * The blocking-query iterator's index bookkeeping, driven by a scripted read function (its requests over
 * HTTP: test/conformance/scheduler-blocking.test.ts).
 */
import { describe, expect, it } from "vitest";
import { watch, type ReadOptions, type Result } from "../../../../provider/clients/scheduler";

function scripted(indexes: Array<number | undefined>) {
  const calls: ReadOptions[] = [];
  let i = 0;
  const read = async (o: ReadOptions): Promise<Result<number>> => {
    calls.push({ waitIndex: o.waitIndex, waitMs: o.waitMs });
    const idx = indexes[Math.min(i, indexes.length - 1)];
    i++;
    return {
      value: i,
      meta: { status: 200, attempts: 1, requestMs: 0, ...(idx !== undefined ? { lastIndex: idx } : {}) },
    };
  };
  return { read, calls };
}

async function take<T>(it: AsyncIterable<T>, n: number): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) {
    out.push(v);
    if (out.length === n) break;
  }
  return out;
}

describe("watch", () => {
  it("yields at once, skips waits that end without a change, and feeds the last index back", async () => {
    const { read, calls } = scripted([5, 5, 5, 9]);
    const got = await take(watch(read, { waitMs: 1000 }), 2);
    expect(got.map((r) => r.meta.lastIndex)).toEqual([5, 9]);
    expect(calls).toEqual([
      { waitIndex: undefined, waitMs: undefined },
      { waitIndex: 5, waitMs: 1000 },
      { waitIndex: 5, waitMs: 1000 },
      { waitIndex: 5, waitMs: 1000 },
    ]);
  });

  it("starts after startIndex when given", async () => {
    const { read, calls } = scripted([3, 4]);
    const got = await take(watch(read, { startIndex: 3 }), 1);
    expect(got.map((r) => r.meta.lastIndex)).toEqual([4]);
    expect(calls[0]?.waitIndex).toBe(3);
  });

  it("never blocks on index 0 (a server without an index header would spin otherwise)", async () => {
    const { read, calls } = scripted([undefined, undefined, 2]);
    await take(watch(read), 2);
    expect(calls[1]?.waitIndex).toBe(1);
  });

  it("reads afresh when the index goes backwards (a restored server)", async () => {
    const { read, calls } = scripted([10, 4, 4, 6]);
    const got = await take(watch(read), 3);
    expect(got.map((r) => r.meta.lastIndex)).toEqual([10, 4, 6]);
    expect(calls.map((c) => c.waitIndex)).toEqual([undefined, 10, undefined, 4]);
  });

  it("ends quietly when the signal aborts", async () => {
    const abort = new AbortController();
    const { read } = scripted([1, 2, 3]);
    const got: number[] = [];
    for await (const r of watch(read, { signal: abort.signal })) {
      got.push(r.meta.lastIndex ?? 0);
      if (got.length === 2) abort.abort();
    }
    expect(got).toEqual([1, 2]);
  });
});
