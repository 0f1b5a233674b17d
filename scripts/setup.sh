#!/usr/bin/env bash
# Set up .venv with the package installed (editable). Idempotent; re-installs only when
# pyproject.toml changed. Usage: scripts/setup.sh [--dev]   (--dev adds test and lint tools)
# Also provides bubblewrap for the read-only command sandbox (scripts/sandbox.sh; installs it as
# root on Debian); without it the agent still works, with a warning, and setup does not fail.
set -euo pipefail
cd "$(dirname "$0")/.."

extras=""
[ "${1:-}" = "--dev" ] && extras="[dev]"

pick_python() {
  for c in "${PYTHON:-}" python3.11 python3.12 python3.13 python3; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
      echo "$c"; return 0
    fi
  done
  echo "setup: Python 3.11 or newer is required (set PYTHON=/path/to/python3.11)" >&2
  return 1
}

if [ ! -x .venv/bin/python ]; then
  py=$(pick_python)
  echo "setup: creating .venv with $($py --version)" >&2
  "$py" -m venv .venv
  .venv/bin/python -m pip install --quiet --upgrade pip
fi

stamp=".venv/.installed${extras}"
want=$(cat pyproject.toml | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing devops-agent${extras} into .venv (first time takes a minute or two)" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras}"
  echo "$want" > "$stamp"
fi

if ! bash scripts/sandbox.sh >/dev/null; then
  echo "setup: warning: the read-only sandbox for shell commands is inactive (reason above); the agent" \
    "works, but commands rated read-only will run unconfined. \`devops-agent doctor\` reports it." >&2
fi
