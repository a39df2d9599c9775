#!/usr/bin/env node
// `npm run example [-- <quickstart|rollback|json-job>] [--keep]`: runs an example end to end with the
// Pulumi CLI against the devserver, printing each step. It builds and packs the library, installs the
// tarball into a temporary copy of the example (so the program loads the library from node_modules, as a
// user's project does), starts the devserver, uses a local file backend with a passphrase in the same
// temporary directory, and runs the steps in examples/<name>/flow.json (preview, up, an edit whose preview
// shows the scheduler's plan, up, refresh, destroy). Nothing outside the temporary directory is touched.
"use strict";
/* global Buffer */
const { spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const REPO = path.join(__dirname, "..");
const EXAMPLES = ["quickstart", "rollback", "json-job"];
const INSTALL_HELP = `The Pulumi CLI is required for \`npm run example\`, and \`pulumi\` is not on the PATH.
Install it, then run this again:
  Linux, macOS:  curl -fsSL https://get.pulumi.com | sh      (then open a new shell, or add ~/.pulumi/bin to PATH)
  macOS:         brew install pulumi/tap/pulumi
  Windows:       winget install pulumi
  Other ways:    https://www.pulumi.com/docs/iac/download-install/
No Pulumi account or login is needed: the example keeps its state in a temporary local directory.
Without the CLI, the engine path is still tested: npm test drives Pulumi's provider host directly.`;

function main() {
  const args = process.argv.slice(2);
  const keep = args.includes("--keep");
  const name = args.find((a) => !a.startsWith("--")) || "quickstart";
  if (!EXAMPLES.includes(name)) fail(`unknown example "${name}"; choose one of ${EXAMPLES.join(", ")}`);

  // First, before any work: without the CLI nothing below can run.
  const version = spawnSync("pulumi", ["version"], { encoding: "utf8" });
  if (version.error) {
    console.error(INSTALL_HELP);
    process.exit(127);
  }
  console.log(`example: ${name} with pulumi ${version.stdout.trim()}`);

  const flow = JSON.parse(fs.readFileSync(path.join(REPO, "examples", name, "flow.json"), "utf8"));
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `pss-example-${name}-`)));
  let server;
  let failed = false;
  const finish = async () => {
    if (server) await server.close();
    if (keep) console.log(`example: kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  };
  (async () => {
    step("build and pack the library");
    run("npm", ["run", "--silent", "build"], { cwd: REPO });
    const packed = run("npm", ["pack", "--silent", "--pack-destination", work, "--ignore-scripts"], { cwd: REPO, capture: true });
    const tarball = path.join(work, packed.trim().split("\n").pop());
    const project = path.join(work, "project");
    prepareProject(path.join(REPO, "examples", name), project, tarball);

    const { startDevServer } = require(path.join(REPO, "dist", "devserver"));
    server = await startDevServer();
    console.log(`example: devserver at ${server.urls.secrets} (secrets) and ${server.urls.scheduler} (scheduler)`);

    const env = pulumiEnv(work);
    const pulumi = (argv, opts = {}) => run("pulumi", argv, { cwd: project, env, ...opts });
    pulumi(["stack", "init", "dev", "--non-interactive"]);
    const stackConfig = {
      "pulumi-secrets-scheduler:secretsAddress": { value: server.urls.secrets },
      "pulumi-secrets-scheduler:secretsToken": { value: server.rootTokens.secrets, secret: true },
      "pulumi-secrets-scheduler:schedulerAddress": { value: server.urls.scheduler },
      "pulumi-secrets-scheduler:schedulerToken": { value: server.rootTokens.scheduler, secret: true },
      ...flow.config,
    };
    setConfig(pulumi, stackConfig);

    console.log(`\nexample: ${flow.description}`);
    flow.steps.forEach((s, i) => {
      if (s.config) setConfig(pulumi, Object.fromEntries(Object.entries(s.config).map(([k, v]) => [k, { value: v }])));
      const argv = commandArgs(s);
      const edit = s.config ? ` (after pulumi config set ${Object.entries(s.config).map(([k, v]) => `${k} ${v}`).join(", ")})` : "";
      step(`[${i + 1}/${flow.steps.length}] ${s.title}: pulumi ${argv.join(" ")}${edit}`);
      const t0 = Date.now();
      const res = pulumi(argv, { allowFailure: true });
      const ok = res.status === 0;
      console.log(`example: step ${i + 1} ${ok ? "succeeded" : "failed"} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      if (s.expectFailure && ok) throw new Error(`step ${i + 1} was expected to fail and succeeded`);
      if (!s.expectFailure && !ok) throw new Error(`step ${i + 1} failed (exit ${res.status})`);
      if (s.expectFailure) console.log("example: that failure was the point of this step");
    });
    pulumi(["stack", "rm", "dev", "--yes", "--non-interactive"], { allowFailure: true });
    console.log(`\nexample: ${name} finished`);
  })()
    .catch((err) => {
      failed = true;
      console.error(`example: ${err.message}`);
    })
    .then(finish)
    .then(() => process.exit(failed ? 1 : 0));
}

function commandArgs(s) {
  switch (s.command) {
    case "preview":
      return ["preview", "--diff", "--non-interactive"];
    case "up":
      return ["up", "--yes", "--non-interactive"];
    case "refresh":
      return ["refresh", "--yes", "--non-interactive", ...(s.expectNoChanges ? ["--expect-no-changes"] : [])];
    case "destroy":
      return ["destroy", "--yes", "--non-interactive"];
    default:
      throw new Error(`flow step has an unknown command "${s.command}"`);
  }
}

function setConfig(pulumi, entries) {
  for (const [key, { value, secret }] of Object.entries(entries)) {
    // The value goes on stdin (`--` would put tokens on the process list).
    pulumi(["config", "set", key, ...(secret ? ["--secret"] : []), "--non-interactive"], { input: String(value), quiet: true });
  }
}

/** The CLI's environment: a local backend and a passphrase in the temp dir; no service variables. */
function pulumiEnv(work) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(SECRETS|SCHEDULER)_/.test(k)) env[k] = v;
  const state = path.join(work, "state");
  fs.mkdirSync(state, { recursive: true });
  return {
    ...env,
    PULUMI_BACKEND_URL: `file://${state}`,
    PULUMI_CONFIG_PASSPHRASE: crypto.randomBytes(12).toString("hex"),
    PULUMI_SKIP_UPDATE_CHECK: "true",
  };
}

/** Copies the example and installs the packed library with the repo's locked dependencies. */
function prepareProject(exampleDir, project, tarball) {
  fs.mkdirSync(path.join(project, "node_modules"), { recursive: true });
  for (const f of fs.readdirSync(exampleDir)) {
    if (f === "node_modules" || f === "bin" || f.startsWith("Pulumi.") && f !== "Pulumi.yaml") continue;
    fs.cpSync(path.join(exampleDir, f), path.join(project, f), { recursive: true });
  }
  const pkgFile = path.join(project, "package.json");
  const pkg = JSON.parse(fs.readFileSync(pkgFile, "utf8"));
  pkg.dependencies["pulumi-secrets-scheduler"] = `file:${tarball}`;
  fs.writeFileSync(pkgFile, JSON.stringify(pkg, null, 2) + "\n");

  const unpack = path.join(project, ".unpack");
  fs.mkdirSync(unpack);
  run("tar", ["-xzf", tarball, "-C", unpack]);
  const lib = path.join(project, "node_modules", "pulumi-secrets-scheduler");
  fs.renameSync(path.join(unpack, "package"), lib);
  fs.rmSync(unpack, { recursive: true });
  // The library's declared dependencies, the program's, and what they need, hard-linked from the repo's
  // node_modules in its layout (offline, a second); each file's real path stays inside the project.
  const libPkg = JSON.parse(fs.readFileSync(path.join(lib, "package.json"), "utf8"));
  const names = new Set([
    ...Object.keys(libPkg.dependencies || {}),
    ...Object.keys(libPkg.peerDependencies || {}),
    ...Object.keys(pkg.dependencies).filter((n) => n !== "pulumi-secrets-scheduler"),
    ...Object.keys(pkg.devDependencies || {}),
  ]);
  const repoModules = path.join(REPO, "node_modules");
  const closure = new Set();
  for (const n of names) {
    const dir = resolvePackage(repoModules, n);
    if (!dir) throw new Error(`${n} is not installed in the repository; run npm ci first`);
    collect(dir, closure);
  }
  const byParent = new Map();
  for (const dir of closure) {
    const rel = path.relative(repoModules, dir);
    if (rel.split(path.sep).includes("node_modules")) continue;
    const parent = path.join(project, "node_modules", path.dirname(rel));
    byParent.set(parent, [...(byParent.get(parent) || []), dir]);
  }
  for (const [parent, dirs] of byParent) {
    fs.mkdirSync(parent, { recursive: true });
    const linked = spawnSync("cp", ["-al", ...dirs, parent]);
    if (linked.status !== 0) run("cp", ["-a", ...dirs, parent]);
  }
}

function resolvePackage(from, name) {
  for (let d = from; ; d = path.dirname(d)) {
    const base = path.basename(d) === "node_modules" ? d : path.join(d, "node_modules");
    if (fs.existsSync(path.join(base, name, "package.json"))) return path.join(base, name);
    if (path.dirname(d) === d) return undefined;
  }
}

function collect(dir, seen) {
  if (seen.has(dir)) return;
  seen.add(dir);
  const pj = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  for (const n of Object.keys({ ...pj.dependencies, ...pj.optionalDependencies, ...pj.peerDependencies })) {
    const found = resolvePackage(dir, n);
    if (found) collect(found, seen);
  }
}

function step(title) {
  console.log(`\n==> ${title}`);
}

function run(cmd, argv, opts = {}) {
  const res = spawnSync(cmd, argv, {
    cwd: opts.cwd,
    env: opts.env || process.env,
    input: opts.input,
    encoding: "utf8",
    stdio: [opts.input !== undefined ? "pipe" : "inherit", opts.capture || opts.quiet ? "pipe" : "inherit", opts.quiet ? "pipe" : "inherit"],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  if (res.status !== 0 && !opts.allowFailure) {
    const detail = opts.quiet ? `\n${String(res.stderr || Buffer.alloc(0)).trim()}` : "";
    throw new Error(`${cmd} ${argv[0]} ${argv[1] || ""} failed (exit ${res.status})${detail}`);
  }
  return opts.capture ? res.stdout : res;
}

function fail(message) {
  console.error(`example: ${message}`);
  process.exit(2);
}

main();
