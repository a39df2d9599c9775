// `npm run bench`: builds first (see package.json), then runs each benchmark and prints a report.
"use strict";
const suites = process.argv.slice(2);
// `scale` runs the real Pulumi CLI (about 10 minutes on 2 cores; it skips, saying so, without a CLI):
// `npm run bench -- scale` runs it alone.
const all = {
  http: "./http",
  startup: "./startup",
  host: "./host-startup",
  provider: "./provider",
  devserver: "./devserver",
  scale: "./scale",
};

async function main() {
  const report = (line) => console.log(line);
  report(`# Benchmarks (${process.version}, ${require("node:os").cpus().length} cores)`);
  for (const [name, path] of Object.entries(all)) {
    if (suites.length > 0 && !suites.includes(name)) continue;
    let mod;
    try {
      mod = require(path);
    } catch (e) {
      if (e.code === "MODULE_NOT_FOUND" && String(e.message).includes(path.slice(2))) continue;
      throw e;
    }
    report("");
    report(`## ${name}`);
    await mod.run(report);
  }
}
main().catch((e) => {
  console.error(e);
  process.exit(1);
});
