"""Telemetry as a wrapper: one OpenTelemetry span and one structured log line per tool call.

The span ``tool <name>`` carries the tool, call id, read-only flag, risk, status and truncation;
an error result sets the span's status. With no tracer provider installed there is no span at all
(it would be dropped; this wrapper is on every call of every run). The result's ``duration_ms``
and ``source`` are stamped here, outermost, so they measure everything the call went through.
"""

from __future__ import annotations

import time
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Any

import structlog
from opentelemetry.trace import Status, StatusCode
from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.telemetry import active_tracer
from devops_agent.tools.base import ToolResult, spec_from_metadata

log = structlog.get_logger("devops_agent.tools")


@dataclass
class TelemetryToolset(WrapperToolset[Any]):
    """Traces and logs every call; stamps ``duration_ms`` and ``source`` on its result."""

    session_id: str | None = None
    run_id: str | None = None
    _log: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Bound once per run: an unbound logger is a proxy that binds anew on every call (2 µs,
        # even for a line the level filters out).
        self._log = log.bind(session_id=self.session_id, run_id=self.run_id)

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        t0 = time.perf_counter()
        tracer = active_tracer()
        spanning = tracer.start_as_current_span(f"tool {name}") if tracer is not None else nullcontext()
        with spanning as span:
            live = span if span is not None and span.is_recording() else None
            if live is not None:
                live.set_attribute("devops_agent.tool", name)
                live.set_attribute("devops_agent.tool_call_id", ctx.tool_call_id or "")
                spec = spec_from_metadata(tool.tool_def.metadata)
                if spec is not None:
                    live.set_attribute("devops_agent.read_only", spec.read_only)
                    live.set_attribute("devops_agent.risk", spec.risk)
            result: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
            duration_ms = round((time.perf_counter() - t0) * 1000, 2)
            result.metadata.setdefault("source", name)
            result.metadata["duration_ms"] = duration_ms
            truncated = bool(result.metadata.get("truncated"))
            if live is not None:
                live.set_attribute("devops_agent.status", result.status)
                live.set_attribute("devops_agent.truncated", truncated)
                if result.status == "error":
                    live.set_status(Status(StatusCode.ERROR, result.error or "error"))
        self._log.info(
            "tool_call", tool=name, status=result.status, duration_ms=duration_ms, truncated=truncated
        )
        return result
