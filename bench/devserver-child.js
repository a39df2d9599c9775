// Runs a devserver in its own process for the benchmarks; prints its URLs and tokens as one JSON line.
"use strict";
const { startDevServer, DevHttpError } = require("../dist/devserver");

const echo = {
  name: "secrets",
  routes(r) {
    r.get("/v1/bench/echo", () => ({ json: { ok: true, data: { keys: ["a", "b", "c"] } } }));
    r.post("/v1/bench/echo", (req) => ({ json: { got: req.json() } }));
    r.get("/v1/bench/missing", () => {
      throw new DevHttpError(404, "not here");
    });
  },
};

async function main() {
  const mode = process.argv[2] || "echo";
  // "full": both services, with a node pool every benchmark job fits in (3 nodes of 10^7 MHz and MB). With
  // the default pool (12,000 MHz) a scale run's jobs overflow it, their evaluations stay blocked, and the
  // simulation re-queues every blocked evaluation whenever capacity frees: at 2,000 Jobs that kept the
  // devserver busy through a whole destroy (283 s where the same deletes took 5 s with room for all).
  const big = { count: 3, cpu: 10_000_000, memoryMB: 10_000_000 };
  const opts = mode === "echo" ? { services: [echo] } : { schedulerService: { nodes: big } };
  const dev = await startDevServer({ ...opts, acl: true });
  process.stdout.write(JSON.stringify({ urls: dev.urls, rootTokens: dev.rootTokens }) + "\n");
  const stop = () => dev.close().then(() => process.exit(0));
  process.on("SIGTERM", stop);
  // The parent holds the other end of stdin: it closes when the parent ends, even when killed (bench/lib.js).
  process.stdin.on("end", stop);
  process.stdin.resume();
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
