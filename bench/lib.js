// Small helpers shared by the benchmarks: child devserver, timing loops, percentiles.
"use strict";
const { spawn } = require("node:child_process");
const { join } = require("node:path");
const readline = require("node:readline");

/**
 * Starts bench/devserver-child.js; resolves to {info, child, stop()}. The child's stdin is a pipe from this
 * process: it closes when this process ends, however it ends (a benchmark killed half-way), and the child
 * then stops too.
 */
function startChild(mode) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(__dirname, "devserver-child.js"), mode], {
      stdio: ["pipe", "pipe", "inherit"],
    });
    const rl = readline.createInterface({ input: child.stdout });
    rl.once("line", (line) => {
      const info = JSON.parse(line);
      resolve({
        info,
        child,
        stop: () =>
          new Promise((r) => {
            child.once("exit", r);
            child.kill("SIGTERM");
          }),
      });
    });
    child.once("error", reject);
    child.once("exit", (code) => reject(new Error(`devserver child exited with ${code}`)));
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Runs `fn` n times sequentially after `warm` warm-up calls; returns req/s, p50/p99 µs and client CPU µs/op. */
async function sequential(fn, n, warm) {
  for (let i = 0; i < warm; i++) await fn(i);
  const lat = new Array(n);
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    const s = process.hrtime.bigint();
    await fn(i);
    lat[i] = Number(process.hrtime.bigint() - s) / 1000;
  }
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu = process.cpuUsage(cpu0);
  lat.sort((a, b) => a - b);
  return { rps: n / secs, p50: percentile(lat, 50), p99: percentile(lat, 99), cpuUsPerOp: (cpu.user + cpu.system) / n };
}

/** Runs `fn` n times with `conc` workers. */
async function concurrent(fn, n, conc, warm) {
  for (let i = 0; i < warm; i++) await fn(i);
  const lat = [];
  let next = 0;
  const t0 = process.hrtime.bigint();
  async function worker() {
    while (next < n) {
      const i = next++;
      const s = process.hrtime.bigint();
      await fn(i);
      lat.push(Number(process.hrtime.bigint() - s) / 1000);
    }
  }
  await Promise.all(Array.from({ length: conc }, worker));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((a, b) => a - b);
  return { rps: n / secs, p50: percentile(lat, 50), p99: percentile(lat, 99) };
}

/** The median: the middle value, or the mean of the two middle values of an even count. */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

function fmt(n, d = 0) {
  return Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d });
}

module.exports = { startChild, sequential, concurrent, median, fmt };
