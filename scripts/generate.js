// `npm run generate`: runs the code generator (codegen/generate.ts) on this repository. The generator is
// TypeScript that imports the provider's resource definitions by extensionless paths, which Node's own type
// stripping cannot resolve, so esbuild (a devDependency) bundles it in memory first, leaving packages (zod,
// prettier) to load from node_modules, and Node runs the bundle as a CommonJS module of codegen/ (its code in
// the module wrapper, through `vm`, with a `require` from `module.createRequire`: documented APIs only, and
// no file written). Plain Node, so it runs wherever Node does. `node scripts/generate.js --check` writes
// nothing and exits 1 when a file is stale.
"use strict";
const { buildSync } = require("esbuild");
const { createRequire } = require("node:module");
const vm = require("node:vm");
const { dirname, join } = require("node:path");

const ROOT = join(__dirname, "..");
const ENTRY = join(ROOT, "codegen", "generate.ts");

const bundle = buildSync({
  entryPoints: [ENTRY],
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node22",
  packages: "external",
  sourcemap: "inline",
  write: false,
  logLevel: "error",
});
const filename = join(ROOT, "codegen", "generate.bundle.js");
const mod = { exports: {} };
const wrapped = `(function (exports, require, module, __filename, __dirname) {${bundle.outputFiles[0].text}\n})`;
vm.runInThisContext(wrapped, { filename })(mod.exports, createRequire(filename), mod, filename, dirname(filename));

mod.exports.main(ROOT, process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e) => {
    console.error(e);
    process.exitCode = 1;
  },
);
