"""Session modes: ``ask`` exposes and runs read-only tools only; ``agent`` exposes everything.

Decided from each tool's :class:`ToolSpec`, never from its name. A tool without a spec (an MCP
or third-party tool that did not declare one) counts as not read-only. The guard is applied
twice: tools the mode forbids are not offered to the model, and a call that names one anyway
(a model hallucinating a hidden tool, a replayed history) is refused with a message the model
can act on. This is the first of the safety layers; approvals build on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.tools.base import ToolResult, ToolSpec, spec_from_metadata

Mode = Literal["ask", "agent"]
MODES: tuple[Mode, ...] = ("ask", "agent")


def allowed(mode: Mode, spec: ToolSpec | None) -> bool:
    """Whether ``mode`` lets a tool with ``spec`` run."""
    if mode == "agent":
        return True
    return spec is not None and spec.read_only


def refusal(mode: Mode, tool: str) -> ToolResult:
    return ToolResult.fail(
        f"{tool} is not available in {mode} mode: this session may only read, not change anything",
        "use a read-only tool to gather evidence, or ask the user to switch the session to agent mode",
        refused_by="mode",
    )


@dataclass
class ModeGuardToolset(WrapperToolset[Any]):
    """Hides and refuses tools the session's mode does not allow."""

    mode: Mode = "ask"

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        return {n: t for n, t in tools.items() if allowed(self.mode, spec_from_metadata(t.tool_def.metadata))}

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> Any:
        if not allowed(self.mode, spec_from_metadata(tool.tool_def.metadata)):
            return refusal(self.mode, name).model_dump(mode="json", exclude_none=True)
        return await super().call_tool(name, tool_args, ctx, tool)
