// Runs an example program (index.ts in this directory) under pulumi.runtime.setMocks, the way Pulumi's
// Node runtime runs a TypeScript program: compiled with the project's `typescript` to CommonJS, then
// required. Stack config comes from EXAMPLE_CONFIG (JSON of key -> value, project-relative keys).
// Prints every registration the mock monitor saw and the stack outputs.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const pulumi = require("@pulumi/pulumi");
const ts = require("typescript");

async function main() {
  const yaml = fs.readFileSync(path.join(__dirname, "Pulumi.yaml"), "utf8");
  const project = /^name:\s*(\S+)/m.exec(yaml)[1];
  const config = JSON.parse(process.env.EXAMPLE_CONFIG || "{}");
  const full = {};
  for (const [k, v] of Object.entries(config)) full[k.includes(":") ? k : `${project}:${k}`] = v;
  process.env.PULUMI_CONFIG = JSON.stringify(full);

  const registrations = [];
  await pulumi.runtime.setMocks(
    {
      newResource(args) {
        registrations.push({ type: args.type, name: args.name, inputs: args.inputs });
        return { id: `${args.name}-id`, state: { ...args.inputs, ...fakeOutputs(args) } };
      },
      call() {
        return {};
      },
    },
    project,
    "dev",
    false,
  );

  const source = fs.readFileSync(path.join(__dirname, "index.ts"), "utf8");
  const out = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2020, esModuleInterop: true },
    fileName: "index.ts",
  });
  fs.writeFileSync(path.join(__dirname, "index.js"), out.outputText);
  const program = require(path.join(__dirname, "index.js"));
  const outputs = {};
  for (const [k, v] of Object.entries(program)) outputs[k] = await settle(v);
  process.stdout.write(JSON.stringify({ project, registrations, outputs }));
}

// What the engine would add after create: enough for programs that chain outputs into inputs.
function fakeOutputs(args) {
  const i = args.inputs;
  if (args.type.endsWith(":Job")) {
    const fromSpec = typeof i.jobspec === "string" ? /job\s+"([^"]+)"/.exec(i.jobspec) : null;
    const jobId = (i.job && i.job.ID) || (fromSpec && fromSpec[1]) || args.name;
    return {
      jobId,
      version: 0,
      type: (i.job && i.job.Type) || "service",
      status: "running",
      deploymentStatus: "successful",
    };
  }
  if (args.type.endsWith(":JobVersionTag")) return { version: 0 };
  if (args.type.endsWith(":AuthMount")) return { accessor: `auth_cloud_${args.name}`, path: i.path || "cloud" };
  return {};
}

function settle(v) {
  if (!pulumi.Output.isInstance(v)) {
    if (Array.isArray(v)) return Promise.all(v.map(settle));
    return Promise.resolve(v);
  }
  return new Promise((resolve) => v.apply((x) => (resolve(x === undefined ? null : x), x)));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + "\n");
  process.exit(1);
});
