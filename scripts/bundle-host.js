// Part of `npm run build`, after tsc: bundles the provider entry (dist/provider/index.js, the code the
// dynamic-provider host runs) with zod and undici's HTTP parts into one file, dist/provider/host-bundle.js,
// which dist/provider/host.js loads for the `pulumi-secrets-scheduler/provider` export (with Node's own
// compile cache where the running Node has one: provider/host.ts).
//
// Why: Pulumi starts a new provider host for every command, and the host loads this code on the first
// call. In a host-like process on this project's (shared, busy) machine, medians of 2 x 21 interleaved
// runs, loading the Job code on Node 20 took 235-240 ms as about 130 separate modules against 195-197 ms
// as this one file (CPU 162-170 and 137-143 ms); on Node 22 with Node's compile cache warm, 197-206
// against 144-189 ms. The README's "Files the provider host keeps" has the table.
//
// Left outside the bundle, loaded from node_modules as before: undici's index (the action stream's
// WebSocket), jose and @cdktf/hcl2json (loaded when used), @pulumi/pulumi (the host's own copy), zod's
// locale index, which provider/lazy-zod-locales.ts defers (zod requires it by a relative path, so it is
// renamed to the package path the stand-in is installed under).
//
// Usage: node scripts/bundle-host.js [dist directory]   (default: this repository's dist/)
"use strict";
const { build } = require("esbuild");
const { readdirSync, readFileSync, writeFileSync } = require("node:fs");
const { dirname, join, resolve } = require("node:path");

const ROOT = join(__dirname, "..");
// The build's output directory: dist/, or the one given (the engine tests build into a staging directory).
const DIST = resolve(process.argv[2] ?? join(ROOT, "dist"));
const OUT = join(DIST, "provider", "host-bundle.js");
const EXTERNAL = ["jose", "@cdktf/hcl2json", "@pulumi/pulumi", "@pulumi/pulumi/*", "zod/v4/locales"];

/** undici's index (WebSocket, for the action stream) stays outside; the parts the HTTP core loads by path go in. */
const undiciIndexOutside = {
  name: "undici-index-outside",
  setup(b) {
    b.onResolve({ filter: /^undici$/ }, () => ({ path: "undici", external: true }));
  },
};

/** zod's classic entry requires "../locales/index.cjs": keep it outside, under the package path. */
const zodLocalesOutside = {
  name: "zod-locales-outside",
  setup(b) {
    b.onResolve({ filter: /[\\/]locales[\\/]index\.cjs$/ }, (args) =>
      /[\\/]node_modules[\\/]zod[\\/]/.test(args.importer) ? { path: "zod/v4/locales", external: true } : undefined,
    );
  },
};

/**
 * The bundle carries other packages' code (zod, undici's HTTP parts): their licenses go beside it, in
 * host-bundle.LICENSES.txt, as their licenses ask of every copy.
 */
function writeNotices(inputs) {
  const packages = new Set();
  for (const input of inputs) {
    const m = /^(.*node_modules[\\/](?:@[^\\/]+[\\/])?[^\\/]+)[\\/]/.exec(input);
    if (m !== null) packages.add(m[1]);
  }
  const parts = [];
  for (const rel of [...packages].sort()) {
    const dir = join(dirname(DIST), rel);
    const pj = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    const licenseFile = readdirSync(dir).find((f) => /^licen[cs]e(\.(md|txt))?$/i.test(f));
    if (licenseFile === undefined) throw new Error(`bundle-host: ${pj.name} ships no license file to copy`);
    parts.push(`${pj.name} ${pj.version} (${pj.license})\n\n${readFileSync(join(dir, licenseFile), "utf8").trim()}\n`);
  }
  writeFileSync(
    join(DIST, "provider", "host-bundle.LICENSES.txt"),
    `host-bundle.js contains code of these packages, under these licenses:\n\n${parts.join("\n" + "-".repeat(72) + "\n\n")}`,
  );
}

/**
 * esbuild writes each module of the bundle as a method, `"<path>"(exports, module) { ... }`, which V8
 * compiles only when the module is first required. Node's compile cache holds the code V8 compiled when
 * the file loaded, so those bodies were compiled afresh by every command. Written as a parenthesized
 * function expression instead, V8 compiles each module's top level with the file and the cache holds it
 * (the functions inside still compile on first call). Measured in a host-like process with the cache warm
 * (load the provider entry, a Job's check and create or its delete against the devserver, CPU medians of 8
 * interleaved runs): 85 ms before and 79 after for the delete, 93 and 83 for the create; with no cache
 * the two cost the same.
 */
function compileModulesWithFile(text) {
  const modules = (text.match(/= __commonJS\(\{$/gm) ?? []).length;
  let rewritten = 0;
  const out = text.replace(
    /^ {2}("[^"\n]+")\(([^)\n]*)\) \{\n([\s\S]*?)\n {2}\}\n\}\);$/gm,
    (_, name, params, body) => {
      rewritten++;
      return `  ${name}: (function(${params}) {\n${body}\n  })\n});`;
    },
  );
  if (modules === 0 || rewritten !== modules || /\b__esm\(/.test(text))
    throw new Error(`bundle-host: ${rewritten} of ${modules} module wrappers rewritten; esbuild's output changed`);
  return out;
}

async function main() {
  const result = await build({
    // Module paths in the bundle are relative to the build's root (its node_modules may be a link to this
    // repository's, kept as a link), so two builds of the same sources are byte-identical wherever they are.
    absWorkingDir: dirname(DIST),
    preserveSymlinks: true,
    entryPoints: [join(DIST, "provider", "index.js")],
    outfile: OUT,
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node22",
    external: EXTERNAL,
    plugins: [zodLocalesOutside, undiciIndexOutside],
    // undici's own bundle for Node's core (its `build:node` script) defines this: its HTTP/1 client then uses
    // llhttp alone and leaves out the experimental milo parser (off unless asked for; about 200 kB of the
    // bundle, most of it wasm as text, which the compile cache carried too).
    define: { esbuildDetection: "1" },
    // Not minified: it loaded slower here (29 ms against 27), and stack traces keep their names.
    minify: false,
    legalComments: "inline",
    logLevel: "warning",
    metafile: true,
  });
  // A bundle that pulled in one of the outside packages would load it twice (and break instanceof across them).
  const inside = Object.keys(result.metafile.inputs).filter((p) =>
    /node_modules[\\/](jose|@cdktf|@pulumi)[\\/]/.test(p),
  );
  if (inside.length > 0) throw new Error(`bundle-host: these belong outside the bundle: ${inside.join(", ")}`);
  writeFileSync(OUT, compileModulesWithFile(readFileSync(OUT, "utf8")));
  writeNotices(Object.keys(result.metafile.inputs));
  // jose is ESM-only: its dynamic import must stay an import() (a require of it fails on Node 20).
  const dynamic = Object.entries(result.metafile.inputs).flatMap(([file, input]) =>
    input.imports
      .filter((i) => i.kind === "dynamic-import" && i.path !== "jose")
      .map((i) => `${file} imports ${i.path}`),
  );
  if (dynamic.length > 0)
    throw new Error(`bundle-host: unexpected dynamic imports in the bundle: ${dynamic.join("; ")}`);
  if (!/\bimport\("jose"\)/.test(readFileSync(OUT, "utf8")))
    throw new Error("bundle-host: jose's import() was rewritten; Node 20 cannot require it");
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
