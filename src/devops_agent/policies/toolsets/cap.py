"""The output cap as a wrapper: big results are cut (head and tail kept, the cut said) for the reader.

The full output behind a cut — or behind a summary the tool made itself (``ToolResult.raw``) —
rides along on the result's ``raw`` for the recorder, which keeps it in the session; with
``keep_raw`` the result tells the model where the user finds it. The cutting itself is
:func:`devops_agent.policies.limits.cap_result`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.policies.limits import as_text, cap_result
from devops_agent.tools.base import ToolResult


@dataclass
class CapToolset(WrapperToolset[Any]):
    """Caps each result at ``cap_chars`` and keeps what was cut on ``raw``."""

    cap_chars: int = 20_000
    keep_raw: bool = False
    session_id: str | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        result: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
        capped = cap_result(result, self.cap_chars)
        raw = result.raw
        if raw is None and capped is not result:
            raw = as_text(result.data)
        if raw is not None and self.keep_raw:
            capped.metadata["full_output"] = (
                f"the whole output is kept in the session; to read it, run "
                f"`devops-agent sessions output {self.session_id} {ctx.tool_call_id}`"
            )
        return capped.with_raw(raw)
