// The devserver's real routes under load from another process: job reads and plans at concurrency 10.
"use strict";
const { Pool } = require("undici");
const { startChild, concurrent, median, fmt } = require("./lib");

async function run(report) {
  const { info, stop } = await startChild("full");
  const url = info.urls.scheduler;
  const headers = { "X-Svc-Token": info.rootTokens.scheduler, "content-type": "application/json" };
  const pool = new Pool(url, { connections: 32 });
  const job = {
    ID: "bench",
    Name: "bench",
    Type: "batch",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "g",
        Count: 1,
        Tasks: [{ Name: "t", Driver: "docker", Config: { image: "x" }, Resources: { CPU: 100, MemoryMB: 64 } }],
      },
    ],
  };
  const reg = await pool.request({ path: "/v1/jobs", method: "POST", headers, body: JSON.stringify({ Job: job }) });
  await reg.body.text();
  const read = async () => {
    const res = await pool.request({ path: "/v1/job/bench", method: "GET", headers });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`GET /v1/job/bench: ${res.statusCode}`);
  };
  const planBody = JSON.stringify({ Job: { ...job, Meta: { v: "2" } }, Diff: true });
  const plan = async () => {
    const res = await pool.request({ path: "/v1/job/bench/plan", method: "POST", headers, body: planBody });
    await res.body.text();
    if (res.statusCode !== 200) throw new Error(`plan: ${res.statusCode}`);
  };
  const reads = [];
  const plans = [];
  for (let r = 0; r < 3; r++) {
    reads.push(await concurrent(read, 5000, 10, 300));
    plans.push(await concurrent(plan, 2000, 10, 100));
  }
  const m = (xs, f) => median(xs.map((x) => x[f]));
  report("Devserver scheduler routes, separate process, concurrency 10 (medians of 3 rounds)");
  report(`| route | req/s | p50 µs | p99 µs |`);
  report(`|---|---|---|---|`);
  report(`| GET /v1/job/:id | ${fmt(m(reads, "rps"))} | ${fmt(m(reads, "p50"))} | ${fmt(m(reads, "p99"))} |`);
  report(
    `| POST /v1/job/:id/plan (Diff) | ${fmt(m(plans, "rps"))} | ${fmt(m(plans, "p50"))} | ${fmt(m(plans, "p99"))} |`,
  );
  report(`Goal: >= 5,000 req/s with p99 < 5 ms for reads.`);
  await pool.close();
  await stop();
}

module.exports = { run };
