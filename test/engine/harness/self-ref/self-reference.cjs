// A program inside the library's own package (no package.json of its own between it and the package's),
// as the repository's root Pulumi.yaml runs one: it loads the library by the package's self-reference, so
// Pulumi serializes the shims by value. Run from a directory of such a package, this serializes one
// shim as pulumi.dynamic.Resource does and evaluates the text as Pulumi's dynamic-provider host does
// (require-from-string: a module without a file name, in the working directory), then calls configure
// and check. Usage: node self-reference.cjs   Prints one JSON object on stdout.
"use strict";
const pulumi = require("@pulumi/pulumi");
const requireFromString = require(
  require.resolve("require-from-string", { paths: [require.resolve("@pulumi/pulumi")] }),
);

async function main() {
  const provider = require("pulumi-secrets-scheduler/shim/auth-mount");
  const { text } = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
  const out = { byReference: text.includes('require("pulumi-secrets-scheduler/shim/'), calls: {} };
  const handler = requireFromString(text).handler();
  try {
    await handler.configure({ config: { get: () => undefined } });
    const checked = await handler.check({}, { path: "cloud" });
    out.calls.check = { inputKeys: Object.keys(checked.inputs ?? {}).sort(), failures: checked.failures ?? [] };
  } catch (e) {
    out.error = String((e && e.message) || e).split("\n")[0];
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + "\n");
  process.exit(1);
});
