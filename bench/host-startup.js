// Where the dynamic-provider host's start-up goes, in fresh processes, with the library installed the way a
// user's project has it (bench/scale.js's installLibrary): Node itself (`node -e`, spawn to first output),
// Pulumi's provider host (`@pulumi/pulumi/cmd/dynamic-provider`, spawn to the port it prints: what the engine
// waits for; given an engine address it does not call at start), and, in a process that loaded @pulumi/pulumi first as the host has, this library's provider
// entry and a Job's first `check` (a JSON job: no request). Each configuration runs in turn, RUNS rounds,
// medians. Configurations: Node's compile cache off, the library's own (Node >= 22.1 only: the host caches
// the bundle it loads), and NODE_COMPILE_CACHE set for the whole process (warmed by one run first).
//
// Knobs: BENCH_HOST_RUNS (11), BENCH_HOST_NODES (more Node binaries to compare, separated by ':').
"use strict";
const { spawn, spawnSync } = require("node:child_process");
const { mkdtempSync, mkdirSync, rmSync, writeFileSync } = require("node:fs");
const { tmpdir } = require("node:os");
const { join } = require("node:path");
const { median, fmt } = require("./lib");
const { installLibrary } = require("./scale");

/** Spawns `node args` and resolves to ms until its first stdout line, or to that line when `line` is set. */
function firstLine(node, args, env, cwd, line = false) {
  return new Promise((resolve, reject) => {
    const t0 = process.hrtime.bigint();
    const child = spawn(node, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stderr.on("data", (d) => (err += d));
    child.stdout.on("data", (d) => {
      out += d;
      if (!out.includes("\n")) return;
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      child.kill("SIGTERM");
      child.once("exit", () => resolve(line ? out.slice(0, out.indexOf("\n")) : ms));
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      if (!out.includes("\n")) reject(new Error(`${args.join(" ")} exited ${code} before any output: ${err}`));
    });
  });
}

const LIB_SCRIPT = `
const t0 = process.hrtime.bigint();
require("@pulumi/pulumi");
const t1 = process.hrtime.bigint();
const { provider } = require("pulumi-secrets-scheduler/provider");
const t2 = process.hrtime.bigint();
const job = { ID: "j", Name: "j", Type: "service", Datacenters: ["dc1"],
  TaskGroups: [{ Name: "web", Count: 1, Tasks: [{ Name: "server", Driver: "docker", Config: { image: "nginx:1.27" } }] }] };
provider("job").check({}, { job, waitForDeployment: false }).then((r) => {
  if (r.failures && r.failures.length > 0) throw new Error(JSON.stringify(r.failures));
  const t3 = process.hrtime.bigint();
  const ms = (a, b) => Number(b - a) / 1e6;
  process.stdout.write(JSON.stringify({ pulumi: ms(t0, t1), library: ms(t1, t2), check: ms(t2, t3) }) + "\\n");
  setTimeout(() => {}, 10000);
});
`;

async function run(report) {
  const runs = Number(process.env.BENCH_HOST_RUNS ?? 11);
  const nodes = [process.execPath, ...(process.env.BENCH_HOST_NODES ?? "").split(":").filter((x) => x !== "")];
  const tmp = mkdtempSync(join(tmpdir(), "pss-host-"));
  try {
    installLibrary(tmp);
    writeFileSync(join(tmp, "lib.js"), LIB_SCRIPT);
    const host = join(tmp, "node_modules", "@pulumi", "pulumi", "cmd", "dynamic-provider", "index.js");
    const base = { ...process.env, XDG_CACHE_HOME: join(tmp, "cache"), SCHEDULER_ADDR: "http://127.0.0.1:9" };
    delete base.NODE_COMPILE_CACHE;
    delete base.NODE_OPTIONS;
    report(`Fresh processes, medians of ${runs} rounds (configurations interleaved); ms.`);
    report("");
    report(
      "| Node | compile cache | `node -e` | provider host to its port | @pulumi/pulumi load | library load | first Job check |",
    );
    report("|---|---|---|---|---|---|---|");
    for (const node of nodes) {
      const version = spawnSync(node, ["--version"], { encoding: "utf8" }).stdout.trim();
      const major = Number(version.slice(1).split(".")[0]);
      const whole = join(tmp, `ncc-${major}`);
      mkdirSync(whole, { recursive: true });
      const configs = [
        { label: "off", env: { ...base, NODE_DISABLE_COMPILE_CACHE: "1" } },
        ...(major >= 22 ? [{ label: "the library's own (bundle only)", env: base }] : []),
        { label: "NODE_COMPILE_CACHE (whole process, warm)", env: { ...base, NODE_COMPILE_CACHE: whole } },
      ];
      for (const c of configs) await firstLine(node, ["lib.js"], c.env, tmp, true); // warm every cache
      const times = configs.map(() => ({ bare: [], host: [], pulumi: [], library: [], check: [] }));
      for (let r = 0; r < runs; r++) {
        for (const [i, c] of configs.entries()) {
          const t = times[i];
          t.bare.push(
            await firstLine(node, ["-e", "process.stdout.write('x\\n'); setTimeout(() => {}, 10000)"], c.env, tmp),
          );
          t.host.push(await firstLine(node, [host, "127.0.0.1:1"], c.env, tmp));
          const lib = JSON.parse(await firstLine(node, ["lib.js"], c.env, tmp, true));
          t.pulumi.push(lib.pulumi);
          t.library.push(lib.library);
          t.check.push(lib.check);
        }
      }
      for (const [i, c] of configs.entries()) {
        const t = times[i];
        report(
          `| ${version} | ${c.label} | ${fmt(median(t.bare))} | ${fmt(median(t.host))} | ${fmt(median(t.pulumi))} | ${fmt(median(t.library))} | ${fmt(median(t.check), 1)} |`,
        );
      }
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

module.exports = { run };
