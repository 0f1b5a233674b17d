"""Test-wide guards: no real model requests, no writes outside tmp dirs."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pydantic_ai.models
import pytest

from devops_agent.telemetry import configure_logging

pytest_plugins = ["fixtures_db", "fixtures_prometheus", "fixtures_sandbox"]

# Subprocesses (CLI tests) inherit this: resolve_model then blocks real model requests too.
os.environ["DEVOPS_AGENT_ALLOW_MODEL_REQUESTS"] = "0"
configure_logging("warning")

_KEEP = {
    "DEVOPS_AGENT_HOME",
    "DEVOPS_AGENT_ALLOW_MODEL_REQUESTS",
    "DEVOPS_AGENT_TEST_POSTGRES_URL",
    "DEVOPS_AGENT_REQUIRE_POSTGRES",
    "DEVOPS_AGENT_REQUIRE_PROMETHEUS",
    "DEVOPS_AGENT_REQUIRE_SANDBOX",
}


@pytest.fixture(autouse=True)
def _block_model_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Real model requests fail unless a test is marked ``allow_model_requests``."""
    allow = request.node.get_closest_marker("allow_model_requests") is not None
    with pydantic_ai.models.override_allow_model_requests(allow):
        yield


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test gets its own data and config dirs, so the user's store is never touched."""
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("DEVOPS_AGENT_HOME", str(home / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / "config"))
    for key in list(os.environ):
        if key.startswith("DEVOPS_AGENT_") and key not in _KEEP:
            monkeypatch.delenv(key)
    return home
