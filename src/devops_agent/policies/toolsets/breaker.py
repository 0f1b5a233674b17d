"""Circuit breaking as a wrapper: an open breaker answers for the tool; failures are counted.

Which outcomes count against a tool's breaker: exceptions and timeouts (results the normalizer made,
which name the ``error_type``), and error results the tool marks ``transient=True`` in their
metadata (a 503 from a server). A tool that answers "no such file" is
working correctly and does not trip its breaker. The breakers themselves live in
:mod:`devops_agent.policies.breaker`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.errors import CircuitOpenError
from devops_agent.policies.breaker import BreakerBoard
from devops_agent.policies.toolsets.normalize import exception_result
from devops_agent.tools.base import ToolResult


def counts_as_failure(result: ToolResult) -> bool:
    """Whether ``result`` is a failure of the tool (not of the request) for its breaker."""
    if result.status != "error":
        return False
    meta = result.metadata
    return bool(meta.get("transient")) or "error_type" in meta


@dataclass
class BreakerToolset(WrapperToolset[Any]):
    """Refuses calls to a tool whose breaker is open; records every outcome on the board."""

    board: BreakerBoard | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        assert self.board is not None, "BreakerToolset needs a board"
        try:
            self.board.before_call(name)
        except CircuitOpenError as exc:
            return exception_result(name, exc, 0)
        result: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
        self.board.record(name, ok=not counts_as_failure(result))
        return result
