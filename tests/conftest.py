"""Test-wide guards: no real model requests, no writes outside tmp dirs."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pydantic_ai.models
import pytest
import structlog
from pydantic_ai import FunctionToolset, Tool

from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.modes import Mode
from devops_agent.policies.pipeline import RunPolicy, ToolCaller, build_pipeline
from devops_agent.telemetry import configure_logging
from devops_agent.tools.base import SPEC_KEY, ToolResult, ToolSpec

# Support modules: fixtures and the helpers test modules may import (``from fixtures_cli import
# cli``). A test module never imports another test module (tests/test_suite_layout.py checks).
pytest_plugins = [
    # First what the others import, so pytest rewrites their asserts too.
    "fixtures_replay",
    "replay.triage",
    "api_harness",
    "tui_harness",
    "fixtures_bench",
    "fixtures_canary",
    "fixtures_cli",
    "fixtures_db",
    "fixtures_git",
    "fixtures_knowledge",
    "fixtures_kubernetes",
    "fixtures_logs",
    "fixtures_mcp",
    "fixtures_models",
    "fixtures_openai",
    "fixtures_prometheus",
    "fixtures_reasoning",
    "fixtures_sandbox",
    "fixtures_workers",
]

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
    "DEVOPS_AGENT_REQUIRE_MCP_SERVERS",
    "DEVOPS_AGENT_MCP_SERVERS_BIN",
}


@pytest.fixture(autouse=True)
def _block_model_requests(request: pytest.FixtureRequest) -> Iterator[None]:
    """Real model requests fail unless a test is marked ``allow_model_requests``."""
    allow = request.node.get_closest_marker("allow_model_requests") is not None
    with pydantic_ai.models.override_allow_model_requests(allow):
        yield


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    """A CLI command run in process (``eval`` logs errors only) reconfigures structlog for the
    whole process; later tests that capture warnings would see nothing."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


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


PipelineCall = Callable[..., ToolResult]


@pytest.fixture
def through_pipeline() -> PipelineCall:
    """``call(name, fn, args=None, *, settings=None, board=None, spec=None, recorder=None,
    session_id=None, mode="agent", deps=None)``: run ``fn`` as tool ``name`` through the real tool
    pipeline (as a runbook calls it) and return the ``ToolResult`` the reader gets. ``spec``
    defaults to a read-only tool, so the gate lets it run; a tool taking ``ctx`` gets ``deps``
    (default: ``ToolDeps(settings, session_id=session_id)``)."""

    def call(
        name: str,
        fn: Callable[..., Any],
        args: dict[str, Any] | None = None,
        *,
        settings: Settings | None = None,
        board: BreakerBoard | None = None,
        spec: ToolSpec | None = None,
        recorder: Callable[[Any], None] | None = None,
        session_id: str | None = None,
        mode: Mode = "agent",
        deps: ToolDeps | None = None,
    ) -> ToolResult:
        settings = settings or Settings()
        spec = spec or ToolSpec(category="test", read_only=True)
        toolset = FunctionToolset([Tool(fn, name=name, metadata={SPEC_KEY: spec.model_dump()})])
        policy = RunPolicy(
            mode=mode,
            approvals="deny",
            breakers=board or BreakerBoard(settings.tools.breaker),
            recorder=recorder,
            session_id=session_id,
        )
        deps = deps or ToolDeps(settings, session_id=session_id)
        caller = ToolCaller(build_pipeline([toolset], settings, policy), deps=deps)
        return asyncio.run(caller(name, dict(args or {})))

    return call
