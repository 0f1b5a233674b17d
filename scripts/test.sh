#!/usr/bin/env bash
# Lint, type-check and run the whole test suite with coverage, the same way CI does.
# Needs scripts/setup.sh --dev first. PostgreSQL tests use DEVOPS_AGENT_TEST_POSTGRES_URL, or a
# server that scripts/postgres.sh starts; with DEVOPS_AGENT_REQUIRE_POSTGRES=1 they may not skip.
# Sandbox tests need bubblewrap (scripts/sandbox.sh installs it); with DEVOPS_AGENT_REQUIRE_SANDBOX=1
# they may not skip. Browser tests of the web page need chromium (scripts/chromium.sh installs it);
# with DEVOPS_AGENT_REQUIRE_BROWSER=1 they may not skip. MCP tests run the npm MCP servers that
# scripts/mcp_servers.sh installs into its cache dir (keep it between CI runs); with
# DEVOPS_AGENT_REQUIRE_MCP_SERVERS=1 they may not skip.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/.venv/bin:$PATH"

if [ -z "${DEVOPS_AGENT_TEST_POSTGRES_URL:-}" ]; then
  if url=$(bash scripts/postgres.sh | tail -n 1) && [ -n "$url" ]; then
    export DEVOPS_AGENT_TEST_POSTGRES_URL="$url"
  elif [ "${DEVOPS_AGENT_REQUIRE_POSTGRES:-0}" = "1" ]; then
    echo "test: PostgreSQL is required (DEVOPS_AGENT_REQUIRE_POSTGRES=1) but scripts/postgres.sh failed" >&2
    exit 1
  else
    echo "test: no PostgreSQL; PostgreSQL tests will be skipped" >&2
  fi
fi

if ! bash scripts/sandbox.sh >/dev/null; then
  if [ "${DEVOPS_AGENT_REQUIRE_SANDBOX:-0}" = "1" ]; then
    echo "test: the sandbox is required (DEVOPS_AGENT_REQUIRE_SANDBOX=1) but scripts/sandbox.sh failed" >&2
    exit 1
  fi
  echo "test: no working bubblewrap; sandbox tests will be skipped" >&2
fi

# The web page's browser tests: Debian's chromium (screenshots go to build/web-screenshots).
if ! bash scripts/chromium.sh >/dev/null; then
  if [ "${DEVOPS_AGENT_REQUIRE_BROWSER:-0}" = "1" ]; then
    echo "test: a browser is required (DEVOPS_AGENT_REQUIRE_BROWSER=1) but scripts/chromium.sh failed" >&2
    exit 1
  fi
  echo "test: no working chromium; the web page's browser tests will be skipped" >&2
fi

if bin=$(bash scripts/mcp_servers.sh | tail -n 1) && [ -n "$bin" ]; then
  export DEVOPS_AGENT_MCP_SERVERS_BIN="$bin"
elif [ "${DEVOPS_AGENT_REQUIRE_MCP_SERVERS:-0}" = "1" ]; then
  echo "test: the npm MCP servers are required (DEVOPS_AGENT_REQUIRE_MCP_SERVERS=1) but scripts/mcp_servers.sh failed" >&2
  exit 1
else
  echo "test: no npm MCP servers (node/npm missing?); tests that run them will be skipped" >&2
fi

echo "== ruff" >&2
ruff check src tests benchmarks scripts
ruff format --check src tests benchmarks
echo "== mypy (strict, src/)" >&2
mypy
echo "== import-linter (layers contract in pyproject.toml)" >&2
lint-imports --no-cache
echo "== pytest" >&2
set +e
# One worker per core (CI machines have two); DEVOPS_AGENT_TEST_WORKERS=0 runs in this process.
# Each worker is its own session: its own PostgreSQL database, its own Prometheus.
python -m pytest -n "${DEVOPS_AGENT_TEST_WORKERS:-auto}" --dist worksteal --cov --cov-report=term "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
  echo "test: pytest collected no tests; that is a failure here" >&2
  exit 1
fi
exit "$rc"
