"""Fixtures of the reasoning tests (a pytest plugin listed in ``conftest.pytest_plugins``).

``kit`` gives each test a :class:`ReasoningKit`: a small service toolset (real functions
registered through the plugin registry, with their own record of restarts and timed calls), the
package's scripted model (every agent of a reasoning run plays its part of one script), a session
service on the test's real SQLite store, and helpers to run and read event streams. ``canary``
gives a toolset whose outputs carry secrets and identifiers, for the privacy tests.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pytest

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import RunHandle, SessionService
from devops_agent.config import Settings
from devops_agent.events import RunEvent, RunFinished
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

E = TypeVar("E")

STATUS = "api: down since 14:05; restarts=7"
LOGS = "14:05:02 ERROR connection refused to db:5432\n14:05:09 ERROR connection refused to db:5432"
METRICS = "api_error_rate 0.93 at 14:06"

SPECIALISTS = [
    {
        "name": "logs",
        "description": "Reads the service's logs.",
        "instructions": "Find what the logs say.",
        "tools": ["svc_logs", "svc_restart"],  # the restart is named, yet the mode still decides
    },
    {
        "name": "metrics",
        "description": "Reads the service's metrics.",
        "instructions": "Find what the metrics say.",
        "tools": ["svc_metrics"],
    },
]


@dataclass
class ReasoningKit:
    """One test's service tools, scripted runs and event helpers."""

    restarted: list[str] = field(default_factory=list)
    """Services the restart tool restarted (it must not run unless approved)."""
    ran: list[tuple[str, float, float]] = field(default_factory=list)
    """(tool, start, end) of each call of the slow tools, to measure concurrency."""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _timed(self, name: str, seconds: float) -> None:
        start = time.monotonic()
        time.sleep(seconds)
        with self._lock:
            self.ran.append((name, start, time.monotonic()))

    def registry(self, delay: float = 0.0) -> ToolRegistry:
        """Service tools: status, logs and metrics read (logs and metrics take ``delay`` seconds);
        a restart changes things; traces always fail."""

        def build(settings: Settings) -> ToolsetBuilder:
            ts = ToolsetBuilder("svc", "a service's status, logs and metrics")

            @ts.tool(read_only=True)
            def svc_status(service: str) -> ToolResult:
                """The service's status."""
                return ToolResult.ok(STATUS.replace("api", service))

            @ts.tool(read_only=True)
            def svc_logs(service: str) -> ToolResult:
                """The service's recent log lines."""
                self._timed("svc_logs", delay)
                return ToolResult.ok(LOGS)

            @ts.tool(read_only=True)
            def svc_metrics(service: str) -> ToolResult:
                """The service's error rate."""
                self._timed("svc_metrics", delay)
                return ToolResult.ok(METRICS)

            @ts.tool(read_only=True)
            def svc_traces(service: str) -> ToolResult:
                """Traces (the tracing backend is down here)."""
                return ToolResult.fail("tracing backend unreachable", "try later")

            @ts.tool(read_only=False)
            def svc_restart(service: str) -> ToolResult:
                """Restart the service."""
                self.restarted.append(service)
                return ToolResult.ok(f"{service} restarted")

            return ts

        registry = ToolRegistry()
        registry.add_toolset("svc", build)
        return registry

    def registry_with_specialists(self, delay: float = 0.0) -> ToolRegistry:
        """:meth:`registry` with the ``logs`` and ``metrics`` specialists registered as data."""
        registry = self.registry(delay)
        for definition in SPECIALISTS:
            registry.add_specialist(definition)
        return registry

    @staticmethod
    def scripted(data: dict[str, Any], *, record: bool = False) -> ScriptedModel:
        return ScriptedModel(Script.model_validate(data), record=record)

    def service(
        self, store: Store, model: ScriptedModel, registry: ToolRegistry | None = None, **settings: Any
    ) -> SessionService:
        """A session service on ``store`` with ``model``; ``settings`` are :class:`Settings` fields."""
        return SessionService(
            Settings(**settings),
            store,
            registry=registry or self.registry(),
            model=model,
            use_configured_model=False,
        )

    @staticmethod
    def drain(service: SessionService, prompt: str | None, **kw: Any) -> list[RunEvent]:
        """Run ``prompt`` to its end; every event."""

        async def go() -> list[RunEvent]:
            return [e async for e in service.stream(prompt, **kw)]

        return asyncio.run(go())

    @staticmethod
    def follow(service: SessionService, start: Coroutine[Any, Any, RunHandle]) -> list[RunEvent]:
        """Start a run with ``start`` (``service.answer_plan(...)``, …) and collect its events."""

        async def go() -> list[RunEvent]:
            handle = await start
            return [e async for e in service.events(handle.run_id)]

        return asyncio.run(go())

    @staticmethod
    def of(events: Sequence[RunEvent], kind: type[E]) -> list[E]:
        return [e for e in events if isinstance(e, kind)]

    @staticmethod
    def final(events: Sequence[RunEvent]) -> RunFinished:
        last = events[-1]
        assert isinstance(last, RunFinished), last
        return last


@pytest.fixture
def kit() -> ReasoningKit:
    return ReasoningKit()


CANARY_KEY = "reasoning-canary-hmac-key"
CANARY_HOST = "ledger-db-3.prod.canary-corp.example"
CANARY_EMAIL = "db.owner@canary-corp.example"
CANARY_USER_TOKEN = "ghp_Q7wm3KzR8vT2xW9pN4sB6yH1cJ5dF0gA2eLp"
CANARY_TOOL_PASSWORD = "Tr0ub4dor-canary-Secret"
CANARY_AWS_KEY = "AKIAZ7QXR4TBLM2KWN8P"


@dataclass
class Canary:
    """A toolset whose output carries secrets and identifiers; what its tool received."""

    received: list[dict[str, Any]] = field(default_factory=list)
    key: str = CANARY_KEY
    host: str = CANARY_HOST
    email: str = CANARY_EMAIL
    user_token: str = CANARY_USER_TOKEN
    secrets: tuple[str, ...] = (CANARY_USER_TOKEN, CANARY_TOOL_PASSWORD, CANARY_AWS_KEY)
    identifiers: tuple[str, ...] = (CANARY_HOST, CANARY_EMAIL)

    def registry(self) -> ToolRegistry:
        def build(settings: Settings) -> ToolsetBuilder:
            ts = ToolsetBuilder("canary")

            @ts.tool(read_only=True)
            def deploy_status(host: str, owner_email: str) -> ToolResult:
                """Deployment status of a host."""
                self.received.append({"host": host, "owner_email": owner_email})
                return ToolResult.ok(
                    f"{host} degraded since 14:05; db password={CANARY_TOOL_PASSWORD}; "
                    f"aws_access_key_id={CANARY_AWS_KEY}; paged {owner_email}"
                )

            return ts

        registry = ToolRegistry()
        registry.add_toolset("canary", build)
        return registry


@pytest.fixture
def canary() -> Canary:
    return Canary()
