#!/usr/bin/env bash
# install-node-tools.sh installs the npm tools the e2e tests drive, each folder from its
# committed package.json and package-lock.json with `npm ci`, at exact versions:
#
#   e2e/mcpclients  the real MCP clients (e2e/mcp_test.go): the official TypeScript SDK
#                   (@modelcontextprotocol/sdk 1.32.2) and the MCP Inspector CLI
#                   (@modelcontextprotocol/inspector 2.12.0);
#   e2e/openapi     the OpenAPI linter (e2e/openapi_test.go): Redocly CLI
#                   (@redocly/cli 2.77.0).
#
# It is idempotent, per folder: a stamp in <folder>/node_modules records the hash of that
# folder's package-lock.json, and a folder is installed only when its node_modules is
# missing, lacks an expected file, or its lock file has changed since.
# It needs node and npm on PATH (Node 20.19 or newer) and the npm registry.
set -euo pipefail

log() { echo "install-node-tools: $*" >&2; }
die() { log "error: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

command -v node >/dev/null 2>&1 ||
  die "node not found on PATH: install Node.js 20.19 or newer with npm (Debian bookworm's nodejs package is 18, too old) and run again"
command -v npm >/dev/null 2>&1 ||
  die "npm not found on PATH: install npm (it comes with Node.js) and run again"
node -e '
  const [maj, min] = process.versions.node.split(".").map(Number);
  process.exit(maj > 20 || (maj === 20 && min >= 19) ? 0 : 1);' ||
  die "node $(node --version) is too old: the tools need Node.js 20.19 or newer"

# install <folder under e2e> <what> <required file>...: npm ci in the folder unless its
# stamp matches its lock and every required file (relative to the folder) exists.
install() {
  local name=$1 what=$2
  shift 2
  local dir="$ROOT/e2e/$name"
  local lock="$dir/package-lock.json"
  local stamp="$dir/node_modules/.meridian-install-stamp"
  [ -f "$lock" ] || die "$lock is missing: $what is installed only from the committed lock file"
  local want f ok=1
  want=$(sha256sum "$lock" | cut -d' ' -f1)
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    for f in "$@"; do
      [ -e "$dir/$f" ] || ok=0
    done
    if [ "$ok" = 1 ]; then
      echo "$what already installed (e2e/$name)"
      return 0
    fi
  fi
  log "installing $what from $lock (npm ci)"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) ||
    die "npm ci failed in $dir (is the npm registry reachable?)"
  for f in "$@"; do
    [ -e "$dir/$f" ] || die "npm ci finished but $dir/$f is missing"
  done
  echo "$want" >"$stamp"
  echo "$what installed (e2e/$name)"
}

version() { node -p "require('$ROOT/e2e/$1/node_modules/$2/package.json').version"; }

# The Inspector declares node >=22.19 but its headless CLI runs on Node 20; npm only
# warns about that. Its postinstall is a no-op when it is installed as a dependency.
install mcpclients "the MCP clients" \
  node_modules/.bin/mcp-inspector \
  node_modules/@modelcontextprotocol/sdk/package.json \
  node_modules/@modelcontextprotocol/inspector/package.json
echo "  @modelcontextprotocol/sdk $(version mcpclients @modelcontextprotocol/sdk)," \
  "@modelcontextprotocol/inspector $(version mcpclients @modelcontextprotocol/inspector)"

install openapi "the OpenAPI linter" \
  node_modules/.bin/redocly \
  node_modules/@redocly/cli/package.json
echo "  @redocly/cli $(version openapi @redocly/cli)"
