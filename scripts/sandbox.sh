#!/usr/bin/env bash
# Ensure bubblewrap can start the agent's read-only sandbox here; print the bwrap path (last line).
#
#   bash scripts/sandbox.sh            # install when missing (root + apt-get), then check
#
# Commands the safety policy allows as read-only run inside `bwrap` (see docs/safety.md). This
# installs Debian's `bubblewrap` package with apt-get when `bwrap` is missing (needs root), then
# starts one sandbox with the options the agent uses, so "installed but refused by the kernel"
# (user namespaces off) is caught here too. Idempotent. Progress goes to stderr. Exits non-zero
# with the reason when no working sandbox can be provided; the agent still runs then, with the
# sandbox inactive and a warning (`devops-agent doctor` says why).
set -euo pipefail

log() { echo "sandbox.sh: $*" >&2; }
die() {
    log "error: $*"
    exit 1
}

[ "$(uname -s)" = Linux ] || die "not Linux: the sandbox needs Linux namespaces"

install_bwrap() {
    [ "$(id -u)" = 0 ] || die "bubblewrap is not installed and installing it needs root: sudo apt-get install bubblewrap"
    command -v apt-get >/dev/null 2>&1 || die "bubblewrap is not installed and this is not a Debian system: install it with your package manager"
    log "installing bubblewrap with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    # Try without refreshing the package lists first (fast when they are recent), then with.
    apt-get install -y -qq --no-install-recommends bubblewrap >&2 2>/dev/null ||
        { apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends bubblewrap >&2; } ||
        die "apt-get install bubblewrap failed"
}

command -v bwrap >/dev/null 2>&1 || install_bwrap
bwrap=$(command -v bwrap) || die "bwrap is still not on PATH after installing bubblewrap"
if ! out=$("$bwrap" --ro-bind / / --dev /dev --unshare-pid --die-with-parent --new-session --cap-drop ALL true 2>&1); then
    die "bwrap is installed but cannot start a sandbox here (user namespaces refused?): $out"
fi
echo "$bwrap"
