"""Shared pieces of the reasoning tests: a small service toolset, scripted runs, event helpers.

The tools are real functions registered through the plugin registry; the model is the package's
scripted model (every agent of a reasoning run plays its part of one script); the store is a
real SQLite file.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from typing import Any, TypeVar

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import RunEvent, RunFinished
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

E = TypeVar("E")

STATUS = "api: down since 14:05; restarts=7"
LOGS = "14:05:02 ERROR connection refused to db:5432\n14:05:09 ERROR connection refused to db:5432"
METRICS = "api_error_rate 0.93 at 14:06"

RESTARTED: list[str] = []
RAN: list[tuple[str, float, float]] = []
"""(tool, start, end) of each call of the slow tools, to measure concurrency."""
_LOCK = threading.Lock()


def _timed(name: str, seconds: float) -> None:
    start = time.monotonic()
    time.sleep(seconds)
    with _LOCK:
        RAN.append((name, start, time.monotonic()))


def kit_registry(delay: float = 0.0) -> ToolRegistry:
    """Service tools: status, logs and metrics read; a restart changes things; one always fails."""

    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("svc", "a service's status, logs and metrics")

        @ts.tool(read_only=True)
        def svc_status(service: str) -> ToolResult:
            """The service's status."""
            return ToolResult.ok(STATUS.replace("api", service))

        @ts.tool(read_only=True)
        def svc_logs(service: str) -> ToolResult:
            """The service's recent log lines."""
            _timed("svc_logs", delay)
            return ToolResult.ok(LOGS)

        @ts.tool(read_only=True)
        def svc_metrics(service: str) -> ToolResult:
            """The service's error rate."""
            _timed("svc_metrics", delay)
            return ToolResult.ok(METRICS)

        @ts.tool(read_only=True)
        def svc_traces(service: str) -> ToolResult:
            """Traces (the tracing backend is down here)."""
            return ToolResult.fail("tracing backend unreachable", "try later")

        @ts.tool(read_only=False)
        def svc_restart(service: str) -> ToolResult:
            """Restart the service."""
            RESTARTED.append(service)
            return ToolResult.ok(f"{service} restarted")

        return ts

    registry = ToolRegistry()
    registry.add_toolset("svc", build)
    return registry


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


def registry_with_specialists(delay: float = 0.0) -> ToolRegistry:
    registry = kit_registry(delay)
    for definition in SPECIALISTS:
        registry.add_specialist(definition)
    return registry


def scripted(data: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(Script.model_validate(data))


def settings_for(**kw: Any) -> Settings:
    return Settings(**kw)


def service(
    store: Store, model: ScriptedModel, registry: ToolRegistry | None = None, **kw: Any
) -> SessionService:
    return SessionService(
        settings_for(**kw),
        store,
        registry=registry or kit_registry(),
        model=model,
        use_configured_model=False,
    )


def drain(service: SessionService, prompt: str | None, **kw: Any) -> list[RunEvent]:
    async def go() -> list[RunEvent]:
        return [e async for e in service.stream(prompt, **kw)]

    return asyncio.run(go())


def follow(service: SessionService, handle_coro: Any) -> list[RunEvent]:
    """Start a run with ``handle_coro`` (``service.answer_plan(...)``, …) and collect its events."""

    async def go() -> list[RunEvent]:
        handle = await handle_coro
        return [e async for e in service.events(handle.run_id)]

    return asyncio.run(go())


def of(events: Sequence[RunEvent], kind: type[E]) -> list[E]:
    return [e for e in events if isinstance(e, kind)]


def final(events: Sequence[RunEvent]) -> RunFinished:
    last = events[-1]
    assert isinstance(last, RunFinished), last
    return last
