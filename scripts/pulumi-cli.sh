#!/usr/bin/env bash
# Builds the Pulumi CLI from the Go module proxy and prints the directory that holds it (the last stdout line).
#
# Where get.pulumi.com cannot be reached (this project's machines and CI), the three executables that a
# TypeScript program with dynamic providers needs are built here:
#   pulumi                          the CLI, from github.com/pulumi/pulumi/pkg/v3 at $PULUMI_CLI_VERSION;
#   pulumi-language-nodejs          the nodejs language host (the last sdk/v3 release that still contains it);
#   pulumi-resource-pulumi-nodejs   the dynamic-provider plugin: runs node on @pulumi/pulumi/cmd/dynamic-provider
#                                   resolved from the program's directory.
# The result is cached outside the repository, keyed by version: ${XDG_CACHE_HOME:-~/.cache}/pulumi-secrets-scheduler
# (or $PULUMI_CLI_CACHE). A cached build runs only when its directories and executables are owned by this user
# and not writable by group or others, and the directories above are root's or this user's (see trust_cache).
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

# The owner (uid) and permission bits (octal) of a path itself, not of what a link points to: GNU stat,
# else BSD/macOS stat.
owner_mode() { stat -c '%u %a' -- "$1" 2>/dev/null || stat -f '%u %Lp' -- "$1"; }

# What is wrong with trusting one path of the cache (nothing printed when it is fine). `own`: a path the
# cache holds, which must be ours (owned by this user, no symbolic link, not writable by group or others);
# `ancestor`: a directory above the cache, owned by root or this user, not writable by others unless sticky
# (as /tmp is). The same rules provider/user-cache.ts applies to the provider's cache.
distrust() {
  local kind="$1" path="$2" me uid mode
  me=$(id -u)
  if [ -L "$path" ]; then echo "$path is a symbolic link"; return; fi
  read -r uid mode < <(owner_mode "$path") || { echo "$path cannot be examined"; return; }
  mode=$((8#$mode))
  if [ "$kind" = own ]; then
    [ "$uid" = "$me" ] || { echo "$path is owned by uid $uid, not by you (uid $me)"; return; }
    (( (mode & 8#022) == 0 )) || echo "$path is writable by its group or by others"
  else
    [ "$uid" = "$me" ] || [ "$uid" = 0 ] || { echo "$path is owned by uid $uid, neither you nor root"; return; }
    (( (mode & 8#022) == 0 || (mode & 8#1000) != 0 )) || echo "$path is writable by its group or by others"
  fi
}

# Refuses (exit 1) a cached build that someone else could have planted or changed: the directories from the
# filesystem's root down to the cache, the cache's own directories, and the three executables.
trust_cache() {
  local path problem="" up
  for path in "$cache_root" "$dir" "$bin" "$bin/pulumi" "$bin/pulumi-language-nodejs" "$bin/pulumi-resource-pulumi-nodejs"; do
    problem=$(distrust own "$path")
    [ -z "$problem" ] || break
  done
  if [ -z "$problem" ]; then
    up=$(dirname -- "$cache_root")
    while :; do
      problem=$(distrust ancestor "$up")
      [ -z "$problem" ] && [ "$up" != / ] && [ "$up" != . ] || break
      up=$(dirname -- "$up")
    done
  fi
  if [ -n "$problem" ]; then
    echo "pulumi-cli: not running the cached build in $dir: $problem. Remove it (or make it yours and chmod go-w), then run this again." >&2
    exit 1
  fi
}

if built; then trust_cache; echo "$bin"; exit 0; fi
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
if built; then trust_cache; echo "$bin"; exit 0; fi
# The build goes into a directory that must be ours too (an existing one someone else owns is refused).
for path in "$cache_root" "$dir"; do
  problem=$(distrust own "$path")
  if [ -n "$problem" ]; then echo "pulumi-cli: not building into $dir: $problem." >&2; exit 1; fi
done

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
