"""MCP servers for tests: our own (``tests/mcp_servers/ops_server.py``) and the npm ones.

The npm servers (@modelcontextprotocol/server-filesystem, server-memory, server-everything) are
installed by ``scripts/mcp_servers.sh`` into its cache dir (``scripts/test.sh`` runs it and exports
``DEVOPS_AGENT_MCP_SERVERS_BIN``; otherwise the fixture runs it). Tests that need them skip where
npm is absent, unless ``DEVOPS_AGENT_REQUIRE_MCP_SERVERS=1`` (CI), where they fail.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings

REQUIRE_ENV = "DEVOPS_AGENT_REQUIRE_MCP_SERVERS"
BIN_ENV = "DEVOPS_AGENT_MCP_SERVERS_BIN"
ROOT = Path(__file__).resolve().parents[1]
OPS_SERVER = Path(__file__).parent / "mcp_servers" / "ops_server.py"


def ops(**over: Any) -> dict[str, Any]:
    """A ``[mcp.servers.NAME]`` table running our ops server."""
    return {"command": sys.executable, "args": [str(OPS_SERVER)], "timeout_s": 30.0, **over}


def hanging(timeout_s: float) -> dict[str, Any]:
    """A server that starts a process which never speaks MCP."""
    return {"command": sys.executable, "args": ["-c", "import time; time.sleep(120)"], "timeout_s": timeout_s}


def mcp_settings(tmp_path: Path, servers: dict[str, Any], **over: Any) -> Settings:
    """Settings with ``servers``, a store and data dir under ``tmp_path``, no .mcp.json read."""
    mcp = {"servers": servers, "project_file": False, **over.pop("mcp", {})}
    return Settings(
        data_dir=tmp_path / "data",
        database_url=f"sqlite:///{tmp_path / 'store.db'}",
        mcp=mcp,
        **over,
    )


@pytest.fixture(scope="session")
def npm_bin() -> Path:
    """The bin dir of the npm MCP servers (installed by scripts/mcp_servers.sh, cached)."""
    required = os.environ.get(REQUIRE_ENV) == "1"
    given = os.environ.get(BIN_ENV)
    if given:
        return Path(given)
    if shutil.which("npm") is None and not required:
        pytest.skip("npm is not installed: the npm MCP servers cannot run here")
    proc = subprocess.run(
        ["bash", str(ROOT / "scripts" / "mcp_servers.sh")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        message = f"scripts/mcp_servers.sh failed: {proc.stderr.strip()[-500:]}"
        if required:
            pytest.fail(message)
        pytest.skip(message)
    return Path(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def pools() -> Iterator[list[Any]]:
    """Pools a test makes; each is closed (its server processes stopped) at the end."""
    made: list[Any] = []
    yield made
    for pool in made:
        pool.close()
