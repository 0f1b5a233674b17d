"""Recording as a wrapper: after every call the run's recorder gets what happened.

It is the outermost call wrapper, so the result it records carries what telemetry stamped
(``duration_ms``, ``source``). The recorder (the session's journal, in practice) receives a
:class:`ToolCallInfo`: the call id, tool, arguments, spec, final result as the reader sees it,
start time, and the full output behind a cut or summary. Calls that pause or stop the run
(approvals, halts) are not tool calls yet and are not recorded here; the gate audits them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.tools.base import ToolResult, ToolSpec, spec_from_metadata


@dataclass(frozen=True)
class ToolCallInfo:
    """What the recorder receives after every call."""

    tool_call_id: str
    tool: str
    args: dict[str, Any]
    spec: ToolSpec | None
    result: ToolResult
    started_at: datetime
    raw: str | None = None
    """The full output behind a summarized or capped ``result`` (``None``: the reader saw it all)."""


Recorder = Callable[[ToolCallInfo], None]


@dataclass
class RecordToolset(WrapperToolset[Any]):
    """Hands every finished call to ``recorder``."""

    recorder: Recorder | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        started_at = datetime.now(UTC)
        result: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
        if self.recorder is not None:
            spec = spec_from_metadata(tool.tool_def.metadata)
            info = ToolCallInfo(ctx.tool_call_id or "", name, tool_args, spec, result, started_at, result.raw)
            self.recorder(info)
        return result
