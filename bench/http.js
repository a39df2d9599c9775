// HTTP core overhead: our core's request() against raw undici Pool.request, devserver in another process.
"use strict";
const { Pool } = require("undici");
const { HttpCore } = require("../dist/provider/http/core");
const { startChild, sequential, concurrent, median, fmt } = require("./lib");

async function run(report) {
  const { info, stop } = await startChild("echo");
  const url = info.urls.secrets;
  const token = info.rootTokens.secrets;
  const pool = new Pool(url, { connections: 32, pipelining: 1 });
  const core = new HttpCore("secrets", { address: url, token, env: {} });
  const raw = async () => {
    const res = await pool.request({ path: "/v1/bench/echo", method: "GET", headers: { "X-Svc-Token": token } });
    JSON.parse(await res.body.text());
  };
  const ours = () => core.request({ operation: "bench", method: "GET", path: "/v1/bench/echo" });
  const rounds = { raw: [], ours: [], rawC: [], oursC: [] };
  const N = 5000;
  for (let r = 0; r < 3; r++) {
    rounds.raw.push(await sequential(raw, N, 500));
    rounds.ours.push(await sequential(ours, N, 500));
    rounds.rawC.push(await concurrent(raw, N, 10, 200));
    rounds.oursC.push(await concurrent(ours, N, 10, 200));
  }
  const m = (k, f) => median(rounds[k].map((x) => x[f]));
  report("HTTP core vs raw undici Pool (separate-process devserver, GET, medians of 3 rounds of 5,000)");
  report(`| variant | req/s | p50 µs | p99 µs | client CPU µs/op |`);
  report(`|---|---|---|---|---|`);
  report(
    `| raw Pool, sequential | ${fmt(m("raw", "rps"))} | ${fmt(m("raw", "p50"))} | ${fmt(m("raw", "p99"))} | ${fmt(m("raw", "cpuUsPerOp"))} |`,
  );
  report(
    `| HttpCore, sequential | ${fmt(m("ours", "rps"))} | ${fmt(m("ours", "p50"))} | ${fmt(m("ours", "p99"))} | ${fmt(m("ours", "cpuUsPerOp"))} |`,
  );
  report(
    `| raw Pool, concurrency 10 | ${fmt(m("rawC", "rps"))} | ${fmt(m("rawC", "p50"))} | ${fmt(m("rawC", "p99"))} | |`,
  );
  report(
    `| HttpCore, concurrency 10 | ${fmt(m("oursC", "rps"))} | ${fmt(m("oursC", "p50"))} | ${fmt(m("oursC", "p99"))} | |`,
  );
  report(
    `HttpCore/raw sequential throughput: ${fmt(m("ours", "rps") / m("raw", "rps"), 2)}x; extra client CPU per op: ${fmt(m("ours", "cpuUsPerOp") - m("raw", "cpuUsPerOp"))} µs (budget: library CPU per op <= 250 µs)`,
  );
  report(
    `Devserver (trivial route) at concurrency 10 from a separate process: ${fmt(m("rawC", "rps"))} req/s, p99 ${fmt(m("rawC", "p99") / 1000, 2)} ms (goal >= 5,000 req/s, p99 < 5 ms)`,
  );
  await pool.close();
  await require("../dist/provider/http/pools").closeConnections();
  await stop();
}

module.exports = { run };
