// Runs a small Pulumi program under pulumi.runtime.setMocks in a plain Node process, with the library
// loaded from the project's node_modules. Reads [{cls, name, args, secretArgs?, state?}] on stdin,
// constructs `new (require("pulumi-secrets-scheduler")[cls])(name, args)` for each (args named in
// secretArgs wrapped in pulumi.secret), and prints what the mock monitor saw: each registration's inputs
// (secrets keep their wrapper), its additionalSecretOutputs, and each output's value and secretness.
"use strict";
/* global setTimeout */
const pulumi = require("@pulumi/pulumi");
const { MockMonitor } = require("@pulumi/pulumi/runtime/mocks");

const registrations = [];
const original = MockMonitor.prototype.registerResource;
MockMonitor.prototype.registerResource = function (req, callback) {
  registrations.push({
    type: req.getType(),
    name: req.getName(),
    additionalSecretOutputs: req.getAdditionalsecretoutputsList(),
  });
  return original.call(this, req, callback);
};

function readStdin() {
  return new Promise((resolve) => {
    let s = "";
    process.stdin.on("data", (d) => (s += d));
    process.stdin.on("end", () => resolve(s));
  });
}

function settle(output) {
  return new Promise((resolve) => {
    let done = false;
    output.apply((v) => {
      done = true;
      resolve(v === undefined ? null : v);
      return v;
    });
    // An output that never resolves (unknown) must not hang the run.
    setTimeout(() => done || resolve("<unresolved>"), 5000).unref();
  });
}

async function main() {
  const specs = JSON.parse(await readStdin());
  const byName = new Map(specs.map((s) => [s.name, s]));
  const seen = {};
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        seen[args.name] = { type: args.type, inputs: args.inputs };
        const extra = (byName.get(args.name) || {}).state || {};
        return { id: `${args.name}-id`, state: { ...args.inputs, ...extra } };
      },
      call() {
        return {};
      },
    },
    "engine-project",
    "dev",
    false,
  );
  const lib = require("pulumi-secrets-scheduler");
  const resources = specs.map((s) => {
    const args = { ...s.args };
    for (const k of s.secretArgs || []) args[k] = pulumi.secret(args[k]);
    const Cls = lib[s.cls];
    if (typeof Cls !== "function") throw new Error(`pulumi-secrets-scheduler exports no class ${s.cls}`);
    return [s.name, new Cls(s.name, args)];
  });
  const outputs = {};
  for (const [name, r] of resources) {
    const props = {};
    for (const key of Object.keys(r)) {
      if (!pulumi.Output.isInstance(r[key]) || key === "urn") continue;
      props[key] = { secret: await pulumi.isSecret(r[key]), value: await settle(r[key]) };
    }
    outputs[name] = props;
  }
  process.stdout.write(JSON.stringify({ registrations, seen, outputs }));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + "\n");
  process.exit(1);
});
