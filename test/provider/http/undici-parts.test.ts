/**
 * The HTTP core loads only undici's Pool and request API (see `undiciParts` in provider/http/pools.ts). These
 * checks fail when an undici upgrade moves those files or stops them from standing alone.
 */
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { undiciParts } from "../../../provider/http/pools";

const requireHere = createRequire(__filename);

describe("undiciParts", () => {
  it("are the Pool and the request method of the full package", () => {
    const full = requireHere("undici") as typeof import("undici");
    const parts = undiciParts();
    expect(parts.Pool).toBe(full.Pool);
    expect(parts.request).toBe(full.Dispatcher.prototype.request);
  });

  it("load without the package's index, and a pool sends a request with them alone", () => {
    // A plain Node process (no test runner in between): only the two parts are required.
    const script = `
      const http = require("node:http");
      const Pool = require("undici/lib/dispatcher/pool");
      const request = require("undici/lib/api/api-request");
      const server = http.createServer((req, res) => res.end(JSON.stringify({ path: req.url })));
      server.listen(0, "127.0.0.1", async () => {
        const pool = new Pool("http://127.0.0.1:" + server.address().port);
        const res = await request.call(pool, { path: "/v1/job/x", method: "GET" });
        const body = await res.body.json();
        const loaded = Object.keys(require.cache).filter((k) => k.includes("/node_modules/undici/"));
        await pool.close();
        server.close();
        console.log(JSON.stringify({ status: res.statusCode, body, index: loaded.some((k) => k.endsWith("/undici/index.js")), fetch: loaded.some((k) => k.includes("/lib/web/fetch/")), count: loaded.length }));
      });`;
    const out = JSON.parse(execFileSync(process.execPath, ["-e", script], { cwd: __dirname, encoding: "utf8" })) as {
      status: number;
      body: unknown;
      index: boolean;
      fetch: boolean;
      count: number;
    };
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ path: "/v1/job/x" });
    expect(out.index).toBe(false);
    expect(out.fetch).toBe(false);
    expect(out.count).toBeLessThan(60);
  });
});
