// Devserver start-up against bare node: time from spawn to the first line of output.
"use strict";
const { spawn } = require("node:child_process");
const { join } = require("node:path");
const { median, fmt } = require("./lib");

function timeSpawn(args) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.once("data", () => {
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      child.kill("SIGTERM");
      child.once("exit", () => resolve(ms));
    });
    child.once("error", reject);
  });
}

async function run(report) {
  const bare = [];
  const dev = [];
  for (let i = 0; i < 7; i++) {
    bare.push(await timeSpawn(["-e", "process.stdout.write('x\\n'); setTimeout(() => {}, 10000)"]));
    dev.push(await timeSpawn([join(__dirname, "devserver-child.js"), "full"]));
  }
  report(
    `Start-up to first output (median of 7): bare node ${fmt(median(bare))} ms, devserver with both services ${fmt(median(dev))} ms (${fmt(median(dev) / median(bare), 2)}x; goal <= 1.5x)`,
  );
}

module.exports = { run };
