#!/usr/bin/env bash
# Ensure a headless Chromium for the web page's browser tests; print its path (last line).
#
#   bash scripts/chromium.sh        # install Debian's chromium when missing (root + apt-get), then check
#
# The tests drive it through Playwright's Python API with this executable (Playwright's own browser
# download is never used: it cannot reach its download host here). Installs Debian's `chromium`
# package with apt-get when no chromium is on PATH (needs root), then renders one page headless, so
# "installed but cannot start" is caught here too. Idempotent. Progress goes to stderr. Exits
# non-zero with the reason when no working browser can be provided; the browser tests then skip,
# unless DEVOPS_AGENT_REQUIRE_BROWSER=1 (CI), where they fail.
set -euo pipefail

log() { echo "chromium.sh: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

find_chromium() {
    local c
    for c in "${DEVOPS_AGENT_CHROMIUM:-}" chromium chromium-browser; do
        [ -n "$c" ] || continue
        command -v "$c" 2>/dev/null && return 0
    done
    return 1
}

install_chromium() {
    [ "$(id -u)" = 0 ] || die "chromium is not installed and installing it needs root: sudo apt-get install chromium"
    command -v apt-get >/dev/null 2>&1 || die "chromium is not installed and this is not a Debian system: install it, or set DEVOPS_AGENT_CHROMIUM"
    log "installing chromium with apt-get (about 20 s)"
    export DEBIAN_FRONTEND=noninteractive
    # Try without refreshing the package lists first (fast when they are recent), then with.
    apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2 2>/dev/null ||
        { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >&2; } ||
        die "apt-get install chromium failed"
}

bin=$(find_chromium) || { install_chromium; bin=$(find_chromium) || die "chromium is still not on PATH after installing it"; }
if ! out=$(timeout 60 "$bin" --headless --no-sandbox --disable-gpu --dump-dom 'data:text/html,<p>ok</p>' 2>&1); then
    die "chromium is installed but cannot render a page headless: $(echo "$out" | tail -3)"
fi
case "$out" in
    *"<p>ok</p>"*) ;;
    *) die "chromium started but rendered nothing: $(echo "$out" | tail -3)" ;;
esac
echo "$bin"
