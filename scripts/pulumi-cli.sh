#!/usr/bin/env bash
# Builds the Pulumi CLI from the Go module proxy and prints the directory that holds it (the last stdout line).
#
# Where get.pulumi.com cannot be reached (this project's machines and CI), the three executables that a
# TypeScript program with dynamic providers needs are built here:
#   pulumi                          the CLI, from github.com/pulumi/pulumi/pkg/v3 at $PULUMI_CLI_VERSION;
#   pulumi-language-nodejs          the nodejs language host (the last sdk/v3 release that still contains it);
#   pulumi-resource-pulumi-nodejs   the dynamic-provider plugin: runs node on @pulumi/pulumi/cmd/dynamic-provider
#                                   resolved from the program's directory.
# The result is cached outside the repository, keyed by version: ${XDG_CACHE_HOME:-~/.cache}/pulumi-secrets-scheduler.
# A cold build takes about 11 minutes on 2 cores; a cached one returns at once.
#
# Usage: scripts/pulumi-cli.sh            build if needed, print the bin directory
#        scripts/pulumi-cli.sh --check    print the bin directory if it is built, exit 1 otherwise
set -euo pipefail

# Native Windows cannot run what this builds (the dynamic-provider plugin below is a shell script, and the
# npm scripts that call this need WSL there); Linux and macOS, x64 and arm64, can.
case "$(uname -s)" in
  MINGW* | MSYS* | CYGWIN* | Windows*)
    echo "pulumi-cli: cannot build the Pulumi CLI on native Windows: install it (winget install pulumi), or run the npm scripts inside WSL" >&2
    exit 1
    ;;
esac

version="${PULUMI_CLI_VERSION:-v3.259.0}"
lang_version="${PULUMI_LANGUAGE_NODEJS_VERSION:-v3.68.0}"
cache_root="${PULUMI_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-secrets-scheduler}"
dir="$cache_root/pulumi-$version-lang-$lang_version"
bin="$dir/bin"

built() { [ -x "$bin/pulumi" ] && [ -x "$bin/pulumi-language-nodejs" ] && [ -x "$bin/pulumi-resource-pulumi-nodejs" ]; }

if built; then echo "$bin"; exit 0; fi
if [ "${1:-}" = "--check" ]; then exit 1; fi
if ! command -v go >/dev/null 2>&1; then
  echo "pulumi-cli: Go is not on the PATH, so the Pulumi CLI cannot be built here" >&2
  exit 127
fi

mkdir -p "$dir"
exec 9>"$dir/.lock"
if command -v flock >/dev/null 2>&1; then
  # A second caller waits for the first build instead of starting its own.
  flock -n 9 || { echo "pulumi-cli: another build of $version is running; waiting for it" >&2; flock 9; }
fi
if built; then echo "$bin"; exit 0; fi

log="$dir/build.log"
: >"$log"
tmp="$dir/tmp"
rm -rf "$tmp"
mkdir -p "$tmp/cli" "$tmp/lang" "$tmp/bin"

# One progress line every 20 s while a step runs; the full output goes to the log.
progress() {
  local what="$1"; shift
  local start=$SECONDS
  echo "pulumi-cli: $what (log: $log)" >&2
  "$@" >>"$log" 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    sleep 20 & wait $! || true
    kill -0 "$pid" 2>/dev/null && echo "pulumi-cli: $what ... $((SECONDS - start)) s" >&2
  done
  if ! wait "$pid"; then
    echo "pulumi-cli: $what failed after $((SECONDS - start)) s; the last lines of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  echo "pulumi-cli: $what done in $((SECONDS - start)) s" >&2
}

export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"
cli_pkg=github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
lang_pkg=github.com/pulumi/pulumi/sdk/v3/nodejs/cmd/pulumi-language-nodejs

build_cli() {
  cd "$tmp/cli"
  go mod init pulumi-cli-build
  go get "$cli_pkg@$version"
  go build -o "$tmp/bin/pulumi" \
    -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" "$cli_pkg"
}
build_lang() {
  cd "$tmp/lang"
  go mod init pulumi-language-nodejs-build
  go get "github.com/pulumi/pulumi/sdk/v3@$lang_version"
  go build -o "$tmp/bin/pulumi-language-nodejs" "$lang_pkg"
}

progress "building the Pulumi CLI $version from the Go module proxy (about 11 min cold)" build_cli
progress "building the nodejs language host ($lang_version)" build_lang

cat >"$tmp/bin/pulumi-resource-pulumi-nodejs" <<'SH'
#!/bin/sh
# Pulumi's dynamic-provider plugin: node on @pulumi/pulumi/cmd/dynamic-provider, resolved from the
# program's directory (the plugin's working directory), arguments passed on.
provider=$(node -e 'process.stdout.write(require.resolve("@pulumi/pulumi/cmd/dynamic-provider", { paths: [process.cwd()] }))') || {
  echo "pulumi-resource-pulumi-nodejs: @pulumi/pulumi is not installed in $(pwd)" >&2
  exit 1
}
exec node "$provider" "$@"
SH
chmod +x "$tmp/bin/pulumi-resource-pulumi-nodejs"

rm -rf "$bin"
mv "$tmp/bin" "$bin"
rm -rf "$tmp"
"$bin/pulumi" version >&2
echo "$bin"
