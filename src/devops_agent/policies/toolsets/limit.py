"""Concurrency limits per integration as a wrapper: at most N calls to one integration at once.

A platform's Jenkins or Jira bears only so many concurrent API calls, and with several workers the
limit must hold across all of them ("at most 4 Jenkins calls cluster-wide"). The wrapper sits just
above the normalizer, so only calls that will really reach the tool take a slot (a refused or
deferred call never waits), and it holds the slot exactly as long as the call runs. The slots
themselves are the :class:`CallLimiter`'s business (PostgreSQL advisory locks, for workers).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool


class CallLimiter(Protocol):
    """Slots for calls to integrations; ``slot(name)`` waits for one when that one is limited."""

    def limited(self, integration: str) -> bool: ...

    def slot(self, integration: str) -> AbstractAsyncContextManager[None]: ...


def integration_of(tool: ToolsetTool[Any]) -> str | None:
    """The toolset (integration) a tool belongs to: ``jenkins`` for ``jenkins_build_log``."""
    toolset_id = getattr(tool.tool_def, "toolset_id", None)
    if toolset_id:
        return str(toolset_id)
    source = getattr(tool, "source_toolset", None) or tool.toolset
    return getattr(source, "id", None)


@dataclass
class LimitToolset(WrapperToolset[Any]):
    """Waits for a slot of the tool's integration before the call, when that one is limited."""

    limiter: CallLimiter | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        integration = integration_of(tool) if self.limiter is not None else None
        if self.limiter is None or integration is None or not self.limiter.limited(integration):
            return await super().call_tool(name, tool_args, ctx, tool)
        async with self.limiter.slot(integration):
            return await super().call_tool(name, tool_args, ctx, tool)
