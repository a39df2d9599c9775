#!/usr/bin/env node
// `npm run example [-- <quickstart|rollback|json-job|batch|multi-cluster|root|all>...] [--keep]`: runs examples end to end with the
// Pulumi CLI against the devserver, printing each step. It builds and packs the library, installs the
// tarball into a temporary copy of the example (so the program loads the library from node_modules, as a
// user's project does), starts the devserver, uses a local file backend with a passphrase in the same
// temporary directory, and runs the steps in examples/<name>/flow.json (preview, up, an edit whose preview
// shows the scheduler's plan, up, refresh, destroy; a step with `scheduler` instead of `command` changes the
// job through the scheduler's API, as an autoscaler or the garbage collector would; one with `check` checks
// the state or the servers). A flow with `clusters` (multi-cluster) gets a devserver per cluster, and stack
// config `cluster<X>SchedulerAddress`, `cluster<X>SchedulerToken`, `cluster<X>SecretsAddress`,
// `cluster<X>SecretsToken` for each. Nothing outside the temporary directory is touched.
//
// `root` is the repository's own project (the root Pulumi.yaml, program examples/root/index.ts): it runs in
// place, from the repository root, with the library this checkout builds (found by the package's
// self-reference, not installed), the stack's config file in the temporary directory (--config-file), so
// nothing is written into the repository either.
//
// The CLI: `pulumi` from the PATH; else the copy scripts/pulumi-cli.sh built before; else, with Go on the
// PATH, that script builds it (asking first in an interactive terminal; in CI or without a terminal it just
// does it); else the install instructions. The devserver runs in this process, so every `pulumi` command
// runs as an asynchronous child: the event loop keeps serving the provider's requests meanwhile.
"use strict";
/* global Buffer, fetch */
const { spawn, spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const readline = require("node:readline");

const REPO = path.join(__dirname, "..");
const EXAMPLES = ["quickstart", "rollback", "json-job", "batch", "multi-cluster", "root"];
const INSTALL_HELP = `Install the Pulumi CLI (or Go 1.26, for scripts/pulumi-cli.sh to build it), then run this again:
  Linux, macOS:  curl -fsSL https://get.pulumi.com | sh      (then open a new shell, or add ~/.pulumi/bin to PATH)
  macOS:         brew install pulumi/tap/pulumi
  Windows:       winget install pulumi
  Other ways:    https://www.pulumi.com/docs/iac/download-install/
No Pulumi account or login is needed: the example keeps its state in a temporary local directory.
Without the CLI, the engine path is still tested: npm test drives Pulumi's provider host directly.`;

async function main() {
  const args = process.argv.slice(2);
  const keep = args.includes("--keep");
  let names = args.filter((a) => !a.startsWith("--"));
  if (names.length === 0) names = ["quickstart"];
  if (names.includes("all")) names = EXAMPLES;
  for (const n of names)
    if (!EXAMPLES.includes(n)) fail(`unknown example "${n}"; choose from ${EXAMPLES.join(", ")} or all`);

  // First, before any work: without the CLI nothing below can run.
  const cli = await findPulumi();
  const env = { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" };
  if (cli.binDir) env.PATH = `${cli.binDir}${path.delimiter}${process.env.PATH ?? ""}`;
  const version = spawnSync("pulumi", ["version"], { encoding: "utf8", env });
  if (version.error || version.status !== 0) fail(`pulumi version failed: ${version.error?.message ?? version.stderr}`);
  console.log(
    `example: pulumi ${version.stdout.trim()} (${cli.binDir ? `built by scripts/pulumi-cli.sh in ${cli.binDir}` : "from the PATH"})`,
  );
  // The CLI's language host and its dynamic-provider plugin run the first `node` on the PATH: under npm
  // scripts, this project's own (node_modules/.bin/node).
  const node = spawnSync("node", ["-p", "process.version + ' ' + process.execPath"], { encoding: "utf8", env });
  console.log(`example: programs and provider hosts run on node ${node.stdout.trim()}`);

  step("build and pack the library");
  run("npm", ["run", "--silent", "build"], { cwd: REPO });
  const times = [];
  let failed = false;
  for (const name of names) {
    const t0 = Date.now();
    const ok = await runExample(name, { keep, env });
    times.push(`${name} ${ok ? "finished" : "FAILED"} in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    if (!ok) {
      failed = true;
      break;
    }
  }
  console.log(`\nexample: ${times.join("; ")}`);
  process.exit(failed ? 1 : 0);
}

/**
 * Finds the Pulumi CLI: on the PATH (binDir undefined), or built by scripts/pulumi-cli.sh (now or before).
 * Exits with the install instructions when there is none and none can be built.
 */
async function findPulumi() {
  const onPath = spawnSync("pulumi", ["version"], { encoding: "utf8" });
  if (!onPath.error && onPath.status === 0) return {};
  const script = path.join(REPO, "scripts", "pulumi-cli.sh");
  const cached = spawnSync(script, ["--check"], { encoding: "utf8" });
  if (cached.status === 0) return { binDir: lastLine(cached.stdout) };
  const go = spawnSync("go", ["version"], { encoding: "utf8" });
  if (go.error || go.status !== 0) {
    console.error(
      "The Pulumi CLI is required for `npm run example`: `pulumi` is not on the PATH, and neither is Go (to build it).",
    );
    console.error(INSTALL_HELP);
    process.exit(127);
  }
  const why = `\`pulumi\` is not on the PATH, but Go is: scripts/pulumi-cli.sh can build the Pulumi CLI from the Go module proxy (about 11 minutes on 2 cores the first time; cached under ${process.env.PULUMI_CLI_CACHE || "~/.cache/pulumi-secrets-scheduler"}, later runs reuse it)`;
  const interactive = process.stdin.isTTY && process.stdout.isTTY && !isTruthy(process.env.CI);
  if (interactive) {
    const answer = await ask(`example: ${why}.\nBuild it now? [Y/n] `);
    if (/^n/i.test(answer.trim())) {
      console.error("Not building it. The Pulumi CLI is required for `npm run example`.");
      console.error(INSTALL_HELP);
      process.exit(127);
    }
  } else {
    console.log(`example: ${why}. Not interactive${isTruthy(process.env.CI) ? " (CI)" : ""}, so building it now.`);
  }
  const built = spawnSync(script, [], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (built.error || built.status !== 0)
    fail(`scripts/pulumi-cli.sh failed (exit ${built.status}); see the lines above`);
  return { binDir: lastLine(built.stdout) };
}

function lastLine(text) {
  return String(text).trim().split("\n").pop().trim();
}

function isTruthy(v) {
  return v !== undefined && v !== "" && v !== "0" && v.toLowerCase() !== "false";
}

function ask(question) {
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout });
  return new Promise((resolve) =>
    rl.question(question, (a) => {
      rl.close();
      resolve(a);
    }),
  );
}

/** Runs one example's flow in its own temporary directory; resolves to true when every step went as expected. */
async function runExample(name, { keep, env: baseEnv }) {
  const flow = JSON.parse(fs.readFileSync(path.join(REPO, "examples", name, "flow.json"), "utf8"));
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), `pss-example-${name}-`)));
  let server;
  const clusters = [];
  try {
    let project = REPO;
    // The root project's stack config goes to the temporary directory, not beside the repository's Pulumi.yaml.
    // Its stack has a name of its own, so that a stack of the user's in the repository is never touched.
    const stackName = name === "root" ? "example-root" : "dev";
    const configFile = name === "root" ? ["--config-file", path.join(work, `Pulumi.${stackName}.yaml`)] : [];
    if (name === "root") {
      step(
        "root: the repository's own project, in place: Pulumi.yaml runs examples/root/index.ts with this checkout's dist/",
      );
    } else {
      step(`${name}: install the packed library into a copy of examples/${name}`);
      const packed = run("npm", ["pack", "--silent", "--pack-destination", work, "--ignore-scripts"], {
        cwd: REPO,
        capture: true,
      });
      const tarball = path.join(work, lastLine(packed));
      project = path.join(work, "project");
      prepareProject(path.join(REPO, "examples", name), project, tarball);
    }

    const { startDevServer } = require(path.join(REPO, "dist", "devserver"));
    server = await startDevServer();
    console.log(`example: devserver at ${server.urls.secrets} (secrets) and ${server.urls.scheduler} (scheduler)`);
    // A flow with clusters: one devserver each (the first is the one above), named in stack config.
    const clusterConfig = {};
    for (const [i, c] of (flow.clusters || []).entries()) {
      const dev = i === 0 ? server : await startDevServer();
      clusters.push({ name: c, dev });
      const key = (setting) => `cluster${c.toUpperCase()}${setting}`;
      clusterConfig[key("SchedulerAddress")] = { value: dev.urls.scheduler };
      clusterConfig[key("SchedulerToken")] = { value: dev.rootTokens.scheduler, secret: true };
      clusterConfig[key("SecretsAddress")] = { value: dev.urls.secrets };
      clusterConfig[key("SecretsToken")] = { value: dev.rootTokens.secrets, secret: true };
      console.log(`example: cluster ${c}: ${dev.urls.scheduler} (scheduler) and ${dev.urls.secrets} (secrets)`);
    }

    const env = pulumiEnv(work, baseEnv);
    const pulumi = (argv, opts = {}) => runAsync("pulumi", argv, { cwd: project, env, ...opts });
    const besideProject = path.join(project, `Pulumi.${stackName}.yaml`);
    if (configFile.length > 0 && fs.existsSync(besideProject))
      throw new Error(`${besideProject} exists; move it away first`);
    await pulumi(["stack", "init", stackName, "--non-interactive"]);
    if (configFile.length > 0) {
      // `stack init` has no --config-file: it writes the stack's file (the passphrase's salt) beside
      // Pulumi.yaml, which moves at once to where the other commands read it.
      fs.copyFileSync(besideProject, configFile[1]);
      fs.rmSync(besideProject);
    }
    const stackConfig = {
      "pulumi-secrets-scheduler:secretsAddress": { value: server.urls.secrets },
      "pulumi-secrets-scheduler:secretsToken": { value: server.rootTokens.secrets, secret: true },
      "pulumi-secrets-scheduler:schedulerAddress": { value: server.urls.scheduler },
      "pulumi-secrets-scheduler:schedulerToken": { value: server.rootTokens.scheduler, secret: true },
      ...clusterConfig,
      ...flow.config,
    };
    await setConfig(pulumi, stackConfig, configFile);

    console.log(`\nexample: ${flow.description}`);
    for (const [i, s] of flow.steps.entries()) {
      if (s.scheduler) {
        // A change made outside Pulumi, through the scheduler's API (what an autoscaler or the GC does).
        step(`[${i + 1}/${flow.steps.length}] ${s.title}: ${await schedulerAction(server, s.scheduler)}`);
        continue;
      }
      if (s.check) {
        const tokens = [server, ...clusters.map((c) => c.dev)].flatMap((d) => Object.values(d.rootTokens));
        step(`[${i + 1}/${flow.steps.length}] ${s.title}: ${await runCheck(s.check, { pulumi, tokens, clusters })}`);
        continue;
      }
      if (s.config)
        await setConfig(
          pulumi,
          Object.fromEntries(Object.entries(s.config).map(([k, v]) => [k, { value: v }])),
          configFile,
        );
      const argv = [...commandArgs(s), ...configFile];
      const edit = s.config
        ? ` (after pulumi config set ${Object.entries(s.config)
            .map(([k, v]) => `${k} ${v}`)
            .join(", ")})`
        : "";
      step(`[${i + 1}/${flow.steps.length}] ${s.title}: pulumi ${argv.join(" ")}${edit}`);
      const t0 = Date.now();
      const res = await pulumi(argv, { allowFailure: true, tee: true });
      const ok = res.status === 0;
      console.log(
        `example: step ${i + 1} ${ok ? "succeeded" : "failed"} in ${((Date.now() - t0) / 1000).toFixed(1)} s`,
      );
      if (s.expectFailure && ok) throw new Error(`step ${i + 1} was expected to fail and succeeded`);
      if (!s.expectFailure && !ok) throw new Error(`step ${i + 1} failed (exit ${res.status})`);
      if (s.expectFailure) console.log("example: that failure was the point of this step");
      for (const text of s.expectOutput || []) {
        if (!res.output.includes(text))
          throw new Error(`step ${i + 1}: its output does not contain ${JSON.stringify(text)}`);
      }
      if (s.expectOutputs) {
        const outs = JSON.parse((await pulumi(["stack", "output", "--json"], { quiet: true })).stdout);
        for (const [k, v] of Object.entries(s.expectOutputs)) {
          if (JSON.stringify(outs[k]) !== JSON.stringify(v))
            throw new Error(
              `step ${i + 1}: stack output ${k} is ${JSON.stringify(outs[k])}, expected ${JSON.stringify(v)}`,
            );
        }
        console.log(`example: stack outputs as expected: ${JSON.stringify(s.expectOutputs)}`);
      }
    }
    // --preserve-config: stack rm would otherwise delete Pulumi.<stack>.yaml beside Pulumi.yaml.
    await pulumi(["stack", "rm", stackName, "--yes", "--non-interactive", "--preserve-config"], { allowFailure: true });
    console.log(`\nexample: ${name} finished`);
    return true;
  } catch (err) {
    console.error(`example: ${name}: ${err.message}`);
    return false;
  } finally {
    for (const c of clusters) if (c.dev !== server) await c.dev.close();
    if (server) await server.close();
    if (keep) console.log(`example: kept ${work}`);
    else fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Runs a flow step's `scheduler` action against the devserver's scheduler API with its root token, then
 * waits until the simulation is idle; returns what was done, as a line. Actions: `scale` (`{job, group,
 * count}`: POST /v1/job/:job/scale) and `gc` (PUT /v1/system/gc).
 */
async function schedulerAction(server, action) {
  const call = async (method, urlPath, body) => {
    const res = await fetch(`${server.urls.scheduler}${urlPath}`, {
      method,
      headers: {
        authorization: `Bearer ${server.rootTokens.scheduler}`,
        ...(body ? { "content-type": "application/json" } : {}),
      },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    if (!res.ok) throw new Error(`${method} ${urlPath} returned ${res.status}: ${await res.text()}`);
  };
  let done;
  if (action.scale) {
    const { job, group, count } = action.scale;
    await call("POST", `/v1/job/${encodeURIComponent(job)}/scale`, {
      Target: { Group: group },
      Count: count,
      Message: "scaled outside Pulumi by the example flow",
    });
    done = `POST /v1/job/${job}/scale (group ${group} to ${count})`;
  } else if (action.gc) {
    await call("PUT", "/v1/system/gc");
    done = "PUT /v1/system/gc";
  } else {
    throw new Error(`flow step has an unknown scheduler action ${JSON.stringify(action)}`);
  }
  await server.schedulerControl?.idle();
  return done;
}

/** The Pulumi secret signature: a value of state that is `{ [SECRET_SIG]: SECRET_VALUE, ciphertext }` is a secret. */
const SECRET_SIG = "4dabf18193072939515e22adb298388d";

/**
 * Runs a flow step's `check`; returns what was checked, as a line.
 * - `state-holds-no-token`: `pulumi stack export` holds none of the servers' tokens, and every connection
 *   in a resource's inputs or outputs holds its token as a Pulumi secret.
 * - `clusters-empty`: no cluster's scheduler has a job left, and no cluster's secrets service a `cloud/` mount.
 */
async function runCheck(check, { pulumi, tokens, clusters }) {
  if (check === "state-holds-no-token") {
    const text = (await pulumi(["stack", "export"], { quiet: true })).stdout;
    for (const t of tokens) if (text.includes(t)) throw new Error("pulumi stack export holds a token in plaintext");
    const resources = JSON.parse(text).deployment.resources || [];
    let connections = 0;
    for (const r of resources) {
      for (const part of ["inputs", "outputs"]) {
        const conn = r[part] && r[part].connection;
        if (conn === undefined) continue;
        connections++;
        const token = conn[SECRET_SIG] !== undefined ? conn : conn.token;
        if (token === undefined || token[SECRET_SIG] === undefined)
          throw new Error(`${r.urn}: the connection's token in its ${part} is not a Pulumi secret`);
      }
    }
    if (connections === 0) throw new Error("no resource in the state has a connection");
    return `pulumi stack export: no token in plaintext; ${connections} connections (inputs and outputs) hold theirs as secrets`;
  }
  if (check === "clusters-empty") {
    const { SchedulerClient, SecretsClient } = require(path.join(REPO, "dist", "provider", "clients"));
    for (const { name, dev } of clusters) {
      const scheduler = new SchedulerClient({ address: dev.urls.scheduler, token: dev.rootTokens.scheduler, env: {} });
      const jobs = await scheduler.jobs.listAll();
      if (jobs.length > 0) throw new Error(`cluster ${name}: jobs left: ${jobs.map((j) => j.ID).join(", ")}`);
      const secrets = new SecretsClient({ address: dev.urls.secrets, token: dev.rootTokens.secrets, env: {} });
      if ((await secrets.mounts.find("cloud")) !== undefined)
        throw new Error(`cluster ${name}: cloud/ is still enabled`);
    }
    return `no job and no cloud/ mount left on clusters ${clusters.map((c) => c.name).join(", ")}`;
  }
  throw new Error(`flow step has an unknown check "${check}"`);
}

function commandArgs(s) {
  switch (s.command) {
    case "preview":
      return ["preview", "--diff", "--non-interactive", ...(s.expectNoChanges ? ["--expect-no-changes"] : [])];
    case "up":
      return ["up", "--yes", "--non-interactive", ...(s.expectNoChanges ? ["--expect-no-changes"] : [])];
    case "refresh":
      return ["refresh", "--yes", "--non-interactive", ...(s.expectNoChanges ? ["--expect-no-changes"] : [])];
    case "destroy":
      return ["destroy", "--yes", "--non-interactive"];
    default:
      throw new Error(`flow step has an unknown command "${s.command}"`);
  }
}

async function setConfig(pulumi, entries, configFile = []) {
  for (const [key, { value, secret }] of Object.entries(entries)) {
    // The value goes on stdin (`--` would put tokens on the process list). Plain values need --plaintext:
    // the CLI refuses values it thinks look like secrets (an address with a port) without one of the two.
    await pulumi(["config", "set", key, secret ? "--secret" : "--plaintext", "--non-interactive", ...configFile], {
      input: String(value),
      quiet: true,
    });
  }
}

/** The CLI's environment: a local backend and a passphrase in the temp dir; no service variables. */
function pulumiEnv(work, baseEnv) {
  const env = {};
  for (const [k, v] of Object.entries(baseEnv)) if (!/^(SECRETS|SCHEDULER)_/.test(k)) env[k] = v;
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
    if (f === "node_modules" || f === "bin" || (f.startsWith("Pulumi.") && f !== "Pulumi.yaml")) continue;
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
    // As npm does: optional peers (the devserver's HCL parser, which runs in this process) are left out.
    ...Object.keys(libPkg.peerDependencies || {}).filter((n) => !(libPkg.peerDependenciesMeta || {})[n]?.optional),
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
    stdio: [
      opts.input !== undefined ? "pipe" : "inherit",
      opts.capture || opts.quiet ? "pipe" : "inherit",
      opts.quiet ? "pipe" : "inherit",
    ],
    maxBuffer: 64 * 1024 * 1024,
  });
  if (res.error) throw res.error;
  if (res.status !== 0 && !opts.allowFailure) {
    const detail = opts.quiet ? `\n${String(res.stderr || Buffer.alloc(0)).trim()}` : "";
    throw new Error(`${cmd} ${argv[0]} ${argv[1] || ""} failed (exit ${res.status})${detail}`);
  }
  return opts.capture ? res.stdout : res;
}

/** Runs a command as an asynchronous child (the devserver in this process keeps serving meanwhile). */
function runAsync(cmd, argv, opts = {}) {
  return new Promise((resolve, reject) => {
    const piped = opts.quiet || opts.tee;
    const child = spawn(cmd, argv, {
      cwd: opts.cwd,
      env: opts.env || process.env,
      stdio: [opts.input !== undefined ? "pipe" : "ignore", piped ? "pipe" : "inherit", piped ? "pipe" : "inherit"],
    });
    let stderr = "";
    let stdout = "";
    let output = "";
    if (opts.quiet) {
      child.stdout.on("data", (d) => (stdout += d));
      child.stderr.on("data", (d) => (stderr += d));
    } else if (opts.tee) {
      // Shown as it comes, and kept for the step's expectations.
      child.stdout.on("data", (d) => {
        process.stdout.write(d);
        output += d;
      });
      child.stderr.on("data", (d) => {
        process.stderr.write(d);
        output += d;
      });
    }
    if (opts.input !== undefined) child.stdin.end(opts.input);
    child.on("error", reject);
    child.on("close", (status, signal) => {
      if (status !== 0 && !opts.allowFailure) {
        const detail = opts.quiet ? `\n${stderr.trim()}` : "";
        reject(
          new Error(
            `${cmd} ${argv[0]} ${argv[1] || ""} failed (${signal ? `signal ${signal}` : `exit ${status}`})${detail}`,
          ),
        );
      } else resolve({ status: status ?? 1, stdout, output });
    });
  });
}

function fail(message) {
  console.error(`example: ${message}`);
  process.exit(2);
}

main().catch((err) => {
  console.error(`example: ${err.stack || err.message}`);
  process.exit(1);
});
