// Scale through the real Pulumi CLI: a stack of N Jobs (typed JSON jobs, waitForDeployment false) beside
// the engine's own floor, a stack of N resources of a trivial inline dynamic provider with the same inputs,
// echoed as its outputs, that sends only the requests the scheduler's API cannot do without. Both run
// against one devserver (its own process), in a temporary directory, with the packed library installed
// the way a user's project has it. Repetitions are interleaved (the projects take turns, each taking every
// place in the order once per cycle) and the table prints medians and ratios. Each command starts with the
// devserver idle (it simulates the deployments of the jobs a project registered: a real cluster's work,
// done on this machine's cores). Timing is reported, never asserted: wall time, and (on Linux, from /proc) the
// CPU time of each command's whole process tree, the engine's and the hosts', which a shared machine moves
// less than wall time.
//
// The floor registers its job on create (and on update), purges it on delete, sends one plan per changed
// diff and nothing else: nothing on refresh (it has no read) or on an unchanged diff. Its jobs are its own
// (IDs `floor-<stack>-<i>`), so that its plans and purges are of jobs it registered.
// BENCH_SCALE_BASELINE=<checkout of another release, built and with its node_modules; the tree
// scripts/previous-release.js builds will do> adds that release's
// library as a third project, taking its turn in every round, so both releases see the same machine load.
// Each round's line carries the load average (the machine may be shared).
//
// Needs the CLI built by scripts/pulumi-cli.sh (or BENCH_PULUMI_BIN=<dir with pulumi and the plugins>);
// without one it says so and skips. Knobs: BENCH_SCALE_N (200; 0 skips that size), BENCH_SCALE_CYCLES (2: the
// rounds at BENCH_SCALE_N are that many cycles of one round per project, 2 x 3 with a baseline, so that each
// project runs first, second and last equally often; BENCH_SCALE_REPS sets the rounds instead), BENCH_SCALE_LARGE_N (2000,
// one round of up, the no-change preview, refresh and destroy; 0 skips it; its up and destroy run with
// PULUMI_SKIP_CHECKPOINTS=true unless BENCH_SCALE_LARGE_CHECKPOINTS=1: the local backend rewrites the whole
// state after every step, which at 2,000 resources is quadratic and made one up take 11-14 minutes of the
// engine's own work, for every project alike; BENCH_SCALE_LARGE_REPS rounds, 1 by default; up and destroy
// then also run without checkpoints at BENCH_SCALE_N, in as many rounds, so growth compares like with like),
// BENCH_SCALE_SMALL_N (2; 0 skips it), BENCH_SCALE_SMALL_REPS (15: a command at N=2 takes 1-3 s, and
// ours minus the floor in one round spreads from -0.5 to +0.6 s around a true difference of about 0.1 s, so
// the median needs many rounds; they are cheap), BENCH_SCALE_KEEP=1 keeps the temporary directory (it prints the environment to rerun a command by hand).
"use strict";
const { execFileSync, spawnSync } = require("node:child_process");
const { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } = require("node:fs");
const { Buffer } = require("node:buffer");
const { loadavg, tmpdir } = require("node:os");
const { dirname, join, relative, sep } = require("node:path");
const { startChild, median, fmt } = require("./lib");

const REPO = join(__dirname, "..");
const PKG = "pulumi-secrets-scheduler";

/** The directory holding pulumi, pulumi-language-nodejs and pulumi-resource-pulumi-nodejs, or undefined. */
function findCli() {
  const given = process.env.BENCH_PULUMI_BIN;
  if (given) return existsSync(join(given, "pulumi")) ? given : undefined;
  const r = spawnSync(join(REPO, "scripts", "pulumi-cli.sh"), ["--check"], { encoding: "utf8" });
  if (r.status !== 0) return undefined;
  const lines = r.stdout.trim().split("\n");
  return lines[lines.length - 1] || undefined;
}

// ---------------------------------------------------------------------------------------------------------
// The temporary projects

/** Finds a package the way Node does, upwards from a package or node_modules directory. */
function resolvePackageDir(fromDir, name) {
  for (let d = fromDir; ; d = dirname(d)) {
    const base = d.endsWith(`${sep}node_modules`) ? d : join(d, "node_modules");
    if (existsSync(join(base, name, "package.json"))) return join(base, name);
    if (dirname(d) === d) return undefined;
  }
}

function collectClosure(pkgDir, seen) {
  if (seen.has(pkgDir)) return;
  seen.add(pkgDir);
  const pj = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
  for (const name of Object.keys({ ...pj.dependencies, ...pj.optionalDependencies, ...pj.peerDependencies })) {
    const found = resolvePackageDir(pkgDir, name);
    if (found !== undefined) collectClosure(found, seen);
  }
}

/**
 * Packs the built library (dist/, from `npm run bench`'s build) and installs it into `<dir>/node_modules`
 * as a real directory; its declared dependencies, @pulumi/pulumi and typescript come hard-linked from the
 * repository's node_modules (a symlink would resolve into the repository, where Pulumi's serializer and the
 * provider host would not find the package).
 */
function installLibrary(dir, repo = REPO) {
  const out = execFileSync("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dir], {
    cwd: repo,
    encoding: "utf8",
  });
  const tarball = join(dir, JSON.parse(out)[0].filename);
  const modules = join(dir, "node_modules");
  const unpack = join(dir, ".unpack");
  mkdirSync(unpack, { recursive: true });
  mkdirSync(modules, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", unpack]);
  renameSync(join(unpack, "package"), join(modules, PKG));
  const pj = JSON.parse(readFileSync(join(modules, PKG, "package.json"), "utf8"));
  const repoModules = join(repo, "node_modules");
  const closure = new Set();
  for (const name of [...Object.keys(pj.dependencies ?? {}), "@pulumi/pulumi", "typescript"]) {
    const from = resolvePackageDir(repoModules, name);
    if (from === undefined) throw new Error(`${name} is not installed in ${repoModules} (run npm ci)`);
    collectClosure(from, closure);
  }
  const byParent = new Map();
  for (const d of closure) {
    const rel = relative(repoModules, d);
    if (rel.split(sep).includes("node_modules")) continue; // nested ones come with their parent
    const parent = join(modules, dirname(rel));
    byParent.set(parent, [...(byParent.get(parent) ?? []), d]);
  }
  for (const [parent, sources] of byParent) {
    mkdirSync(parent, { recursive: true });
    try {
      execFileSync("cp", ["-al", ...sources, parent]);
    } catch {
      execFileSync("cp", ["-a", ...sources, parent]);
    }
  }
}

/** The job both stacks declare: one service group, one task, the image from config. */
const JOB_DEF = `
function jobOf(id, image) {
  return {
    ID: id,
    Name: id,
    Type: "service",
    Datacenters: ["dc1"],
    TaskGroups: [
      {
        Name: "web",
        Count: 1,
        Networks: [{ DynamicPorts: [{ Label: "http", To: 8080 }] }],
        Tasks: [
          {
            Name: "server",
            Driver: "docker",
            Config: { image, ports: ["http"], args: ["--port", "8080"] },
            Env: { MODE: "bench" },
            Resources: { CPU: 100, MemoryMB: 64 },
          },
        ],
      },
    ],
  };
}
module.exports = { jobOf };
`;

const OURS = `
const pulumi = require("@pulumi/pulumi");
const { Job } = require("${PKG}");
const { jobOf } = require("./job-def");
const cfg = new pulumi.Config();
const n = cfg.requireNumber("count");
const image = cfg.require("image");
// The job IDs' prefix: the stack's name, or the one set (a baseline release's project sets its own, so that
// its jobs are not ours).
const prefix = cfg.get("jobPrefix") ?? pulumi.getStack();
for (let i = 0; i < n; i++) {
  new Job("job-" + i, { job: jobOf(prefix + "-" + i, image), waitForDeployment: false, purgeOnDestroy: true });
}
`;

// The floor: the engine's cost for the same inputs. Its provider is an installed module (FLOOR_PROVIDER, in the
// floor project's node_modules), so that what Pulumi serializes into every resource's state is a bare
// `require` of it, as with ours (an inline provider's closure text, about 2.6 kB, would be copied into the
// inputs and the outputs of every resource and weigh on every command of the floor alone). The scheduler's
// address and token come from stack config through \`configure\`, as ours do.
const FLOOR_PROVIDER = `
const imageOf = (j) => j.TaskGroups[0].Tasks[0].Config.image;
let address;
let token;
// One request to the scheduler; throws on a refusal (a floor that fails quietly would be no floor).
async function send(method, path, body) {
  const { request } = require("undici");
  const res = await request(address + path, {
    method,
    headers: { "content-type": "application/json", "x-svc-token": token },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  if (res.statusCode >= 300) throw new Error(method + " " + path + ": " + res.statusCode + " " + text);
}
module.exports = {
  async configure(req) {
    address = req.config.get("floor:address");
    token = req.config.get("floor:token");
  },
  async diff(id, olds, news) {
    if (imageOf(olds.job) === imageOf(news.job)) return { changes: false };
    await send("POST", "/v1/job/" + encodeURIComponent(news.job.ID) + "/plan", { Job: news.job, Diff: true });
    return { changes: true };
  },
  async create(inputs) {
    await send("POST", "/v1/jobs", { Job: inputs.job });
    return { id: inputs.job.ID, outs: inputs };
  },
  async update(id, olds, news) {
    await send("POST", "/v1/jobs", { Job: news.job });
    return { outs: news };
  },
  async delete(id) {
    await send("DELETE", "/v1/job/" + encodeURIComponent(id) + "?purge=true");
  },
};
`;

const FLOOR = `
const pulumi = require("@pulumi/pulumi");
const provider = require("bench-floor");
const { jobOf } = require("./job-def");
const cfg = new pulumi.Config();
const n = cfg.requireNumber("count");
const image = cfg.require("image");
const prefix = cfg.require("jobPrefix");
class Floor extends pulumi.dynamic.Resource {
  constructor(name, props, opts) {
    super(provider, name, props, opts, "bench", "Floor");
  }
}
for (let i = 0; i < n; i++) {
  new Floor("floor-" + i, { job: jobOf(prefix + "-" + i, image) });
}
`;

function writeProject(dir, name, program) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "Pulumi.yaml"), `name: ${name}\nruntime: nodejs\ndescription: scale benchmark (${name})\n`);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name, private: true, main: "index.js" }) + "\n");
  writeFileSync(join(dir, "job-def.js"), JOB_DEF);
  writeFileSync(join(dir, "index.js"), program);
  if (program === FLOOR) {
    const pkg = join(dir, "node_modules", "bench-floor");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "bench-floor", main: "index.js" }) + "\n");
    writeFileSync(join(pkg, "index.js"), FLOOR_PROVIDER);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Running the CLI

function pulumiEnv(bin, tmp) {
  const env = { ...process.env };
  for (const k of Object.keys(env))
    if (k.startsWith("SCHEDULER_") || k.startsWith("SECRETS_") || k.startsWith("PULUMI_")) delete env[k];
  return {
    ...env,
    PATH: `${bin}:${process.env.PATH}`,
    PULUMI_SKIP_UPDATE_CHECK: "1",
    PULUMI_BACKEND_URL: `file://${join(tmp, "state")}`,
    PULUMI_CONFIG_PASSPHRASE: "x",
    PULUMI_HOME: join(tmp, "pulumi-home"),
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
  };
}

/**
 * CPU seconds (user + system) of this process's waited-for children so far, from /proc (Linux); undefined
 * elsewhere. A pulumi command's children (the language host, the provider hosts) are waited for by pulumi,
 * so the difference around one command is the CPU of its whole process tree: the engine's and the hosts'.
 */
function childrenCpu() {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(f[13]) + Number(f[14])) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
/** The kernel's clock ticks per second (USER_HZ), 100 on Linux. */
const CLOCK_TICKS = 100;

/**
 * Runs one pulumi command in a project; resolves to wall seconds and the CPU seconds of its process tree
 * (undefined where /proc is not there); throws with its output on failure.
 */
function pulumi(ctx, project, args) {
  const cpu0 = childrenCpu();
  const t0 = process.hrtime.bigint();
  const r = spawnSync("pulumi", [...args, "--non-interactive", "--color", "never"], {
    cwd: project.dir,
    env: ctx.env,
    encoding: "utf8",
    maxBuffer: 256 * 1024 * 1024,
  });
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cpu1 = childrenCpu();
  const cpu = cpu0 === undefined || cpu1 === undefined ? undefined : cpu1 - cpu0;
  if (r.status !== 0) {
    const how = r.error
      ? `failed to run (${r.error.message})`
      : r.signal
        ? `was killed by ${r.signal}`
        : `exited ${r.status}`;
    throw new Error(
      `pulumi ${args.join(" ")} (${project.name}) ${how}:\n${(r.stdout ?? "").slice(-3000)}\n${(r.stderr ?? "").slice(-3000)}`,
    );
  }
  return { secs, cpu, stdout: r.stdout };
}

function initStack(ctx, project, stack, n, dev) {
  const s = ["--stack", stack];
  pulumi(ctx, project, ["stack", "init", stack]);
  pulumi(ctx, project, ["config", "set", "count", String(n), "--plaintext", ...s]);
  pulumi(ctx, project, ["config", "set", "image", "nginx:1.27", "--plaintext", ...s]);
  // Each project registers jobs of its own: the floor's and a baseline's IDs carry their name.
  if (project.name !== "ours") pulumi(ctx, project, ["config", "set", "jobPrefix", `${project.name}-${stack}`, ...s]);
  if (project.library) {
    pulumi(ctx, project, ["config", "set", `${PKG}:schedulerAddress`, dev.info.urls.scheduler, "--plaintext", ...s]);
    pulumi(ctx, project, ["config", "set", `${PKG}:schedulerToken`, dev.info.rootTokens.scheduler, "--secret", ...s]);
  } else {
    pulumi(ctx, project, ["config", "set", "address", dev.info.urls.scheduler, "--plaintext", ...s]);
    pulumi(ctx, project, ["config", "set", "token", dev.info.rootTokens.scheduler, "--secret", ...s]);
  }
}

/** The commands of one round, in order; each leaves the stack as the next one expects. */
const COMMANDS = [
  {
    key: "up",
    label: "`up`, N creates (floor: N registers)",
    run: (ctx, p, s) => pulumi(ctx, p, ["up", "--yes", "--skip-preview", "--stack", s]),
  },
  {
    key: "preview",
    label: "`preview`, nothing changed (floor: no request)",
    run: (ctx, p, s) => pulumi(ctx, p, ["preview", "--stack", s]),
  },
  {
    key: "refresh",
    label: "`refresh` (floor: no request)",
    run: (ctx, p, s) => pulumi(ctx, p, ["refresh", "--yes", "--skip-preview", "--stack", s]),
  },
  {
    key: "previewChanged",
    label: "`preview`, all N changed (floor: N plans)",
    run: (ctx, p, s) => {
      pulumi(ctx, p, ["config", "set", "image", "nginx:1.28", "--plaintext", "--stack", s]);
      try {
        return pulumi(ctx, p, ["preview", "--stack", s]);
      } finally {
        pulumi(ctx, p, ["config", "set", "image", "nginx:1.27", "--plaintext", "--stack", s]);
      }
    },
  },
  {
    key: "destroy",
    label: "`destroy` (floor: N purges)",
    run: (ctx, p, s) => pulumi(ctx, p, ["destroy", "--yes", "--skip-preview", "--stack", s]),
  },
];
const TABLE_ORDER = ["preview", "refresh", "previewChanged", "up", "destroy"];

/** Bytes of one resource in `pulumi stack export` (inputs + outputs + metadata), averaged over the type. */
function stateBytes(ctx, project, stack, typeSuffix) {
  const { stdout } = pulumi(ctx, project, ["stack", "export", "--stack", stack]);
  const resources = JSON.parse(stdout).deployment.resources ?? [];
  const mine = resources.filter((r) => typeof r.type === "string" && r.type.endsWith(typeSuffix));
  if (mine.length === 0) return undefined;
  const total = mine.reduce((a, r) => a + Buffer.byteLength(JSON.stringify(r)), 0);
  const outputs = mine.reduce((a, r) => a + Buffer.byteLength(JSON.stringify(r.outputs ?? {})), 0);
  return { perResource: total / mine.length, outputsPerResource: outputs / mine.length };
}

/** CPU time (user + system, in clock ticks) the process has used, from /proc; undefined where there is none. */
function cpuTicks(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]);
  } catch {
    return undefined;
  }
}

/**
 * Waits (up to 60 s) until the devserver has used no CPU for 0.3 s. After a project registers many jobs the
 * devserver simulates their deployments for a while; on a real cluster that work is the server's, but here
 * it shares the machine's cores with the next command, whichever project that is.
 */
function waitIdle(pid) {
  const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  const until = Date.now() + 60_000;
  let last = cpuTicks(pid);
  while (last !== undefined && Date.now() < until) {
    sleep(300);
    const now = cpuTicks(pid);
    if (now === last) return;
    last = now;
  }
}

/**
 * Runs the rounds for one size; resolves to {key: {<project>: [secs]}}, the same of CPU seconds (`cpus`,
 * undefined where /proc is not there) and, with `recordState`, the state sizes after the first up (a stack
 * export: only the table's size reports them).
 */
function measure(ctx, n, stack, reps, report, commands = COMMANDS, recordState = false) {
  const empty = () =>
    Object.fromEntries(commands.map((c) => [c.key, Object.fromEntries(ctx.projects.map((p) => [p.name, []]))]));
  const times = empty();
  const cpus = empty();
  let withCpu = true;
  let state;
  let floorState;
  for (let rep = 0; rep < reps; rep++) {
    // Each project takes every place in the order in turn.
    const k = rep % ctx.projects.length;
    const order = [...ctx.projects.slice(k), ...ctx.projects.slice(0, k)];
    const load = loadavg()[0];
    for (const c of commands) {
      for (const p of order) {
        waitIdle(ctx.devPid);
        const r = c.run(ctx, p, stack);
        times[c.key][p.name].push(r.secs);
        if (r.cpu === undefined) withCpu = false;
        else cpus[c.key][p.name].push(r.cpu);
        if (recordState && c.key === "up" && rep === 0) {
          if (p.name === "ours") state = stateBytes(ctx, p, stack, ":Job");
          else if (p.name === "floor") floorState = stateBytes(ctx, p, stack, ":Floor");
        }
      }
    }
    const of = (t, unit) =>
      commands.map((c) => `${c.key} ${ctx.projects.map((p) => fmt(t[c.key][p.name][rep], 2)).join("/")}${unit}`);
    report(
      `  round ${rep + 1}/${reps} at N=${n} (load ${fmt(load, 1)} to ${fmt(loadavg()[0], 1)}): ` +
        of(times, " s").join(", ") +
        (withCpu ? `; CPU ${of(cpus, " s").join(", ")}` : "") +
        ` (${ctx.projects.map((p) => p.name).join("/")})`,
    );
  }
  return { times, cpus: withCpu ? cpus : undefined, state, floorState };
}

/**
 * Prints one size's table: the medians of ours and the floor, `op` of the two medians, and the median of
 * `op` over the rounds (ours and the floor ran back to back in each round, so that one cancels what drifts
 * between rounds; at N=2 a command's time varies by a few tenths from round to round).
 */
function table(report, times, n, label, op, format, projects, keys = TABLE_ORDER, commands = COMMANDS, what = "") {
  const others = projects.filter((p) => p.name !== "floor");
  const pairedLabel = `median of paired ${label === "ratio" ? "ratios" : "differences"}`;
  report("");
  report(
    `| command (N = ${n})${what} | floor | ${others.map((p) => `${p.name} | ${p.name}: ${label} | ${p.name}: ${pairedLabel}`).join(" | ")} |`,
  );
  report(`|---|---|${others.map(() => "---|---|---|").join("")}`);
  for (const key of keys) {
    const c = commands.find((x) => x.key === key);
    const t = times[key];
    if (t === undefined) continue;
    const f = median(t.floor);
    const cells = others.map((p) => {
      const o = median(t[p.name]);
      const paired = median(t[p.name].map((x, i) => op(x, t.floor[i])));
      return `${fmt(o, 2)} s | ${format(op(o, f))} | ${format(paired)}`;
    });
    report(`| ${c.label.replace(/\bN\b/g, String(n))} | ${fmt(f, 2)} s | ${cells.join(" | ")} |`);
  }
}

/**
 * Names a baseline checkout: its commit, or, for a tree that is no git checkout (the build
 * scripts/previous-release.js makes from `git archive`), its package's version.
 */
function baselineName(dir) {
  try {
    return execFileSync("git", ["-C", dir, "log", "-1", "--format=%h"], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } catch {
    return `${JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version} (not a git checkout)`;
  }
}

async function run(report) {
  const bin = findCli();
  if (bin === undefined) {
    report(
      "Skipped: no Pulumi CLI here. Build it with scripts/pulumi-cli.sh (or set BENCH_PULUMI_BIN to a directory holding pulumi, pulumi-language-nodejs and pulumi-resource-pulumi-nodejs).",
    );
    return;
  }
  const n = Number(process.env.BENCH_SCALE_N ?? 200);
  const large = Number(process.env.BENCH_SCALE_LARGE_N ?? 2000);
  const small = Number(process.env.BENCH_SCALE_SMALL_N ?? 2);
  const cycles = Number(process.env.BENCH_SCALE_CYCLES ?? 2);
  const smallReps = Number(process.env.BENCH_SCALE_SMALL_REPS ?? 15);
  const largeReps = Number(process.env.BENCH_SCALE_LARGE_REPS ?? 1);
  const baseline = process.env.BENCH_SCALE_BASELINE || undefined;
  const tmp = mkdtempSync(join(tmpdir(), "pss-scale-"));
  const dev = await startChild("full");
  try {
    installLibrary(tmp);
    const ours = { name: "ours", dir: join(tmp, "ours"), library: true };
    const floor = { name: "floor", dir: join(tmp, "floor") };
    const projects = [ours, floor];
    if (baseline !== undefined) {
      // Its own node_modules beside its program: Node resolves the library (and its dependencies) there first.
      const b = { name: "baseline", dir: join(tmp, "baseline"), library: true };
      mkdirSync(b.dir, { recursive: true });
      installLibrary(b.dir, baseline);
      projects.push(b);
    }
    // Whole cycles: each project runs first, second (and last) equally often.
    const reps = Number(process.env.BENCH_SCALE_REPS ?? cycles * projects.length);
    const ctx = { env: pulumiEnv(bin, tmp), ours, floor, projects, devPid: dev.child.pid };
    mkdirSync(join(tmp, "state"), { recursive: true });
    for (const p of projects) writeProject(p.dir, p.name, p.library ? OURS : FLOOR);
    const stacks = [n, large, small].filter((x) => x > 0).map((x) => ({ n: x, stack: `n${x}` }));
    for (const s of stacks) for (const p of projects) initStack(ctx, p, s.stack, s.n, dev);
    if (process.env.BENCH_SCALE_KEEP) {
      report(
        `Keeping ${tmp}. To rerun by hand: cd ${ours.dir} && PATH=${bin}:$PATH PULUMI_SKIP_UPDATE_CHECK=1 PULUMI_BACKEND_URL=file://${join(tmp, "state")} PULUMI_CONFIG_PASSPHRASE=x PULUMI_HOME=${join(tmp, "pulumi-home")} pulumi preview --stack ${stacks[0].stack} (the devserver stops with this run)`,
      );
    }
    const version = pulumi(ctx, ours, ["version"]).stdout.trim();
    const baselineNote = baseline === undefined ? "" : `; baseline: ${baselineName(baseline)}`;
    const rounds = [
      ...(n > 0
        ? [
            process.env.BENCH_SCALE_REPS === undefined
              ? `${cycles} cycles x ${projects.length} interleaved rounds at N=${n}`
              : `${reps} interleaved rounds at N=${n}`,
          ]
        : []),
      ...(large > 0 ? [`${largeReps} at N=${large} (up, no-change preview, refresh, destroy)`] : []),
      ...(small > 0 ? [`${smallReps} at N=${small}`] : []),
    ].join(", ");
    report(
      `Pulumi CLI ${version}, local backend${baselineNote}; ${rounds}; medians (per round below: seconds of ${projects.map((p) => p.name).join("/")}).`,
    );
    const ratio = [(a, b) => a / b, (v) => fmt(v, 2)];
    const big = n > 0 ? measure(ctx, n, `n${n}`, reps, report, COMMANDS, true) : undefined;
    const skipCheckpoints = (c) => ({
      ...c,
      label: `${c.label}, PULUMI_SKIP_CHECKPOINTS=true`,
      run: (cx, p, s) => c.run({ ...cx, env: { ...cx.env, PULUMI_SKIP_CHECKPOINTS: "true" } }, p, s),
    });
    const uncheckpointed = (c) => (c.key === "up" || c.key === "destroy") && !process.env.BENCH_SCALE_LARGE_CHECKPOINTS;
    const largeCommands = COMMANDS.filter((c) => ["up", "preview", "refresh", "destroy"].includes(c.key)).map((c) =>
      uncheckpointed(c) ? skipCheckpoints(c) : c,
    );
    // Growth is judged like for like: when the large size runs up and destroy without checkpoints, so do
    // these rounds at the first size (with checkpoints the engine's own per-step writes hide the library's
    // share at 200 Jobs, and the large size has none to hide it).
    const growthCommands = largeCommands.filter(uncheckpointed);
    const grow =
      n > 0 && large > 0 && growthCommands.length > 0
        ? measure(ctx, n, `n${n}`, reps, report, growthCommands)
        : undefined;
    const huge = large > 0 ? measure(ctx, large, `n${large}`, largeReps, report, largeCommands) : undefined;
    const little = small > 0 ? measure(ctx, small, `n${small}`, smallReps, report) : undefined;
    // Wall time, then the CPU time of each command's process tree (the engine's and the hosts'), which a busy
    // machine moves less: a command that waits on the cores others use takes longer, not more CPU.
    for (const [what, key] of [
      ["", "times"],
      [", CPU", "cpus"],
    ]) {
      if (big?.[key]) table(report, big[key], n, "ratio", ...ratio, projects, TABLE_ORDER, COMMANDS, what);
      if (grow?.[key])
        table(
          report,
          grow[key],
          n,
          "ratio",
          ...ratio,
          projects,
          growthCommands.map((c) => c.key),
          growthCommands,
          what,
        );
      if (huge?.[key])
        table(
          report,
          huge[key],
          large,
          "ratio",
          ...ratio,
          projects,
          ["preview", "refresh", "up", "destroy"],
          largeCommands,
          what,
        );
      if (little?.[key])
        table(
          report,
          little[key],
          small,
          "minus floor",
          (a, b) => a - b,
          (v) => `${fmt(v, 2)} s`,
          projects,
          TABLE_ORDER,
          COMMANDS,
          what,
        );
    }
    if (big?.state) {
      report("");
      report(
        `State per Job resource (stack export, after the first up): ${fmt(big.state.perResource)} bytes, of which outputs ${fmt(big.state.outputsPerResource)} bytes` +
          (big.floorState
            ? ` (the floor's resource, same inputs echoed as outputs: ${fmt(big.floorState.perResource)} bytes).`
            : "."),
      );
    }
  } finally {
    await dev.stop();
    if (!process.env.BENCH_SCALE_KEEP) rmSync(tmp, { recursive: true, force: true });
  }
}

// The pieces, for a script that profiles or reruns one command (a project set up the way this benchmark does).
module.exports = {
  run,
  findCli,
  installLibrary,
  writeProject,
  pulumiEnv,
  pulumi,
  initStack,
  COMMANDS,
  OURS,
  FLOOR,
  FLOOR_PROVIDER,
  JOB_DEF,
};
