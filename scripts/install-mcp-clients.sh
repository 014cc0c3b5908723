#!/usr/bin/env bash
# install-mcp-clients.sh installs the real MCP clients the e2e tests drive
# (e2e/mcp_test.go): the official TypeScript SDK (@modelcontextprotocol/sdk 1.32.2) and
# the MCP Inspector CLI (@modelcontextprotocol/inspector 2.12.0), at the exact versions
# pinned in e2e/mcpclients/package.json and package-lock.json, with `npm ci`.
#
# It is idempotent: a stamp in node_modules records the hash of package-lock.json, and
# the install runs only when node_modules is missing or the lock file has changed since.
# It needs node and npm on PATH (Node 20 or newer) and the npm registry.
set -euo pipefail

log() { echo "install-mcp-clients: $*" >&2; }
die() { log "error: $*"; exit 1; }

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR="$ROOT/e2e/mcpclients"
LOCK="$DIR/package-lock.json"
STAMP="$DIR/node_modules/.meridian-install-stamp"

command -v node >/dev/null 2>&1 ||
  die "node not found on PATH: install Node.js 20 or newer with npm (Debian bookworm's nodejs package is 18, too old) and run again"
command -v npm >/dev/null 2>&1 ||
  die "npm not found on PATH: install npm (it comes with Node.js) and run again"
major=$(node -p 'process.versions.node.split(".")[0]')
[ "$major" -ge 20 ] || die "node $(node --version) is too old: the MCP clients need Node.js 20 or newer"
[ -f "$LOCK" ] || die "$LOCK is missing: the clients are installed only from the committed lock file"

want=$(sha256sum "$LOCK" | cut -d' ' -f1)
if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] &&
  [ -x "$DIR/node_modules/.bin/mcp-inspector" ] && [ -d "$DIR/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "MCP clients already installed"
  exit 0
fi

log "installing the MCP clients from $LOCK (npm ci)"
# The Inspector declares node >=22.19 but its headless CLI runs on Node 20; npm only
# warns about that. Its postinstall is a no-op when it is installed as a dependency.
(cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error) ||
  die "npm ci failed in $DIR (is the npm registry reachable?)"
for f in node_modules/.bin/mcp-inspector node_modules/@modelcontextprotocol/sdk/package.json; do
  [ -e "$DIR/$f" ] || die "npm ci finished but $DIR/$f is missing"
done
echo "$want" >"$STAMP"
sdk=$(node -p "require('$DIR/node_modules/@modelcontextprotocol/sdk/package.json').version")
insp=$(node -p "require('$DIR/node_modules/@modelcontextprotocol/inspector/package.json').version")
echo "MCP clients installed: @modelcontextprotocol/sdk $sdk, @modelcontextprotocol/inspector $insp"
