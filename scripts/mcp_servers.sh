#!/usr/bin/env bash
# Install the npm MCP servers the tests run, pinned, into a cache directory; print its bin dir.
#
#   bin=$(bash scripts/mcp_servers.sh | tail -1)   # then $bin/mcp-server-filesystem DIR, …
#
# Packages: @modelcontextprotocol/server-filesystem, server-memory and server-everything, and the
# MCP inspector (its --cli mode drives our server in a test; it runs offline once installed). The cache
# (default ${XDG_CACHE_HOME:-~/.cache}/devops-agent/mcp-servers, or $DEVOPS_AGENT_MCP_CACHE, or the
# first argument) is what CI keeps between runs: with it in place nothing is fetched. Idempotent: an
# install of the same versions is reused. Needs node and npm (Debian: apt-get install nodejs npm);
# without them it exits 1 with a message, and the tests that need these servers skip, unless
# DEVOPS_AGENT_REQUIRE_MCP_SERVERS=1 (CI), where they fail. Progress goes to stderr.
set -euo pipefail

PACKAGES=(
    "@modelcontextprotocol/server-filesystem@2026.8.31"
    "@modelcontextprotocol/server-memory@2026.8.31"
    "@modelcontextprotocol/server-everything@2026.8.31"
    "@modelcontextprotocol/inspector@2.12.0"
)
BINS=(mcp-server-filesystem mcp-server-memory mcp-server-everything mcp-inspector)

log() { echo "mcp_servers.sh: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

DIR="${1:-${DEVOPS_AGENT_MCP_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/devops-agent/mcp-servers}}"
command -v node >/dev/null 2>&1 || die "node is not installed (Debian: apt-get install nodejs npm)"
command -v npm >/dev/null 2>&1 || die "npm is not installed (Debian: apt-get install npm)"
mkdir -p "$DIR" || die "cannot create $DIR"
DIR=$(cd "$DIR" && pwd)
BIN="$DIR/node_modules/.bin"
want="${PACKAGES[*]}"

bins_ok() {
    local b
    for b in "${BINS[@]}"; do [ -x "$BIN/$b" ] || return 1; done
}

# Parallel test workers (pytest -n) may get here together: one installs, the others wait for it
# and then find the servers in place.
exec 9>"$DIR/.install.lock"
flock 9
if [ "$(cat "$DIR/.installed" 2>/dev/null)" != "$want" ] || ! bins_ok; then
    log "installing ${PACKAGES[*]} into $DIR"
    [ -f "$DIR/package.json" ] || echo '{"name": "devops-agent-mcp-servers", "private": true}' > "$DIR/package.json"
    npm install --prefix "$DIR" --no-audit --no-fund --loglevel=error "${PACKAGES[@]}" >&2 \
        || die "npm install failed (is the npm registry reachable, or the cache in place?)"
    bins_ok || die "installed, but the server programs are missing under $BIN"
    echo "$want" > "$DIR/.installed"
fi
echo "$BIN"
