/** The clusters' balancer on its own: round robin over live nodes, skipping one that refuses. */
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { startBalancer } from "./balancer";

const servers: http.Server[] = [];
async function node(name: string): Promise<string> {
  const s = http.createServer((_req, res) => res.end(name));
  servers.push(s);
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", () => r()));
  return `127.0.0.1:${(s.address() as AddressInfo).port}`;
}
async function closedPort(): Promise<string> {
  const a = await node("closed");
  const s = servers.pop();
  await new Promise<void>((r) => s?.close(() => r()));
  return a;
}
afterAll(() => servers.forEach((s) => s.close()));

async function get(url: string): Promise<string> {
  const res = await fetch(url, { headers: { connection: "close" } });
  return res.text();
}

describe("balancer", () => {
  it("sends each connection to the next live node and skips one that refuses", async () => {
    const targets = [await node("a"), await closedPort(), await node("c")];
    const b = await startBalancer(() => targets);
    try {
      const seen = [];
      for (let i = 0; i < 6; i++) seen.push(await get(b.url));
      expect(new Set(seen)).toEqual(new Set(["a", "c"]));
      expect(seen.filter((s) => s === "a").length).toBeGreaterThanOrEqual(2);
      expect(seen.filter((s) => s === "c").length).toBeGreaterThanOrEqual(2);
    } finally {
      await b.close();
    }
  });

  it("closes a connection that no node accepts", async () => {
    const dead = await closedPort();
    const b = await startBalancer(() => [dead]);
    try {
      await expect(get(b.url)).rejects.toThrow();
    } finally {
      await b.close();
    }
  });
});
