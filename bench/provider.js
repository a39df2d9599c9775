// Library CPU per operation, without the network: input checks, job normalization and canonical text.
"use strict";
const { checkJobInputs } = require("../dist/provider/resources/job/inputs");
const { serverJobText } = require("../dist/provider/resources/job/normal-form");
const { JobSchema } = require("../dist/provider/schemas/scheduler");
const { authRole } = require("../dist/provider/resources/auth-role");
const { median, fmt } = require("./lib");

/** A realistic job record (about 3 KB): 2 groups, 3 tasks, networks, services with checks, templates, constraints. */
function bigJob() {
  const task = (name) => ({
    Name: name,
    Driver: "docker",
    Config: {
      image: `registry.example/${name}:1.2.3`,
      ports: ["http"],
      args: ["--port", "${NOMAD_PORT_http}", "--verbose"],
    },
    Env: { LOG_LEVEL: "info", REGION: "eu-west", FEATURE_X: "on" },
    Resources: { CPU: 500, MemoryMB: 256 },
    Templates: [
      { DestPath: "local/app.env", EmbeddedTmpl: 'KEY={{ key "app/config" }}\nOTHER=1\n', ChangeMode: "restart" },
    ],
    Services: [
      {
        Name: `${name}-svc`,
        PortLabel: "http",
        Tags: ["a", "b"],
        Checks: [
          { Name: "alive", Type: "http", Path: "/health", Interval: 10e9, Timeout: 2e9 },
          { Name: "tcp", Type: "tcp", Interval: 5e9, Timeout: 1e9 },
        ],
      },
    ],
    KillTimeout: 5e9,
  });
  const group = (name, tasks) => ({
    Name: name,
    Count: 3,
    Networks: [{ Mode: "bridge", DynamicPorts: [{ Label: "http", To: 8080 }] }],
    Update: { MaxParallel: 1, Canary: 1, AutoRevert: true, MinHealthyTime: 10e9, HealthyDeadline: 300e9 },
    RestartPolicy: { Attempts: 2, Interval: 1800e9, Delay: 15e9, Mode: "fail" },
    Constraints: [{ LTarget: "${attr.kernel.name}", RTarget: "linux", Operand: "=" }],
    Tasks: tasks.map(task),
  });
  return {
    ID: "web",
    Name: "web",
    Type: "service",
    Datacenters: ["dc1", "dc2"],
    Meta: { owner: "team-a", tier: "frontend" },
    TaskGroups: [group("web", ["app", "sidecar"]), group("worker", ["worker"])],
  };
}

function timeIt(fn, n) {
  for (let i = 0; i < 2000; i++) fn();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) fn();
  return Number(process.hrtime.bigint() - t0) / 1000 / n;
}

async function run(report) {
  const job = bigJob();
  const text = JSON.stringify(job);
  const rounds = { stringify: [], parse: [], check: [], canon: [], role: [] };
  for (let r = 0; r < 3; r++) {
    rounds.stringify.push(timeIt(() => JSON.stringify(job), 5000));
    rounds.parse.push(timeIt(() => JobSchema.parse(job), 5000));
    rounds.check.push(timeIt(() => checkJobInputs({ job, waitForDeployment: true }), 5000));
    rounds.canon.push(timeIt(() => serverJobText(job), 5000));
  }
  const roleInputs = {
    name: "web",
    boundServicePrincipalIds: ["a", "b"],
    boundGroupIds: ["g"],
    policies: ["web", "ops"],
    tokenTtl: "1h",
    tokenMaxTtl: "2h",
  };
  for (let r = 0; r < 3; r++) {
    const n = 3000;
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await authRole.check({}, roleInputs);
    rounds.role.push(Number(process.hrtime.bigint() - t0) / 1000 / n);
  }
  const m = (k) => median(rounds[k]);
  report(
    `Job record of ${fmt(text.length)} bytes (medians of 3 rounds; yardstick JSON.stringify ${fmt(m("stringify"), 1)} µs)`,
  );
  report(`| operation | µs/op | × JSON.stringify |`);
  report(`|---|---|---|`);
  for (const [k, label] of [
    ["parse", "JobSchema.parse (zod)"],
    ["check", "Job check (inputs + job schema)"],
    ["canon", "normalize + canonical text"],
    ["role", "AuthRole check"],
  ]) {
    report(`| ${label} | ${fmt(m(k), 1)} | ${fmt(m(k) / m("stringify"), 2)} |`);
  }
  report(`Budget: library CPU per op <= 250 µs; Job check + canonical text = ${fmt(m("check") + m("canon"), 1)} µs.`);
}

module.exports = { run };
