// Serializes each kind's shim exactly as pulumi.dynamic.Resource does for `__provider`, in a plain Node
// process whose require.cache is Node's own (vitest's loader would hide the package from the serializer).
// Usage: node serialize.cjs <kebab-kind>...  Prints one JSON object on stdout.
"use strict";
const pulumi = require("@pulumi/pulumi");

async function main() {
  const kinds = process.argv.slice(2);
  const out = { pulumiVersion: require("@pulumi/pulumi/package.json").version, node: process.version, kinds: {} };
  for (const kind of kinds) {
    const shimPath = require.resolve(`pulumi-secrets-scheduler/shim/${kind}`);
    const provider = require(`pulumi-secrets-scheduler/shim/${kind}`);
    const t0 = process.hrtime.bigint();
    const first = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
    const firstMs = Number(process.hrtime.bigint() - t0) / 1e6;
    // A second, separate provider object of the same kind: must serialize to the same text.
    const again = await pulumi.runtime.serializeFunction(() => provider, { allowSecrets: true });
    out.kinds[kind] = {
      text: first.text,
      again: again.text,
      containsSecrets: first.containsSecrets,
      firstMs,
      shimPath,
    };
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => {
  process.stderr.write(String((err && err.stack) || err) + "\n");
  process.exit(1);
});
