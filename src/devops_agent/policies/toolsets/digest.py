"""Large results summarized by type for a model, as a wrapper: the model reads the digest, the
session keeps the raw result, and the ``query_result`` tool answers precise questions of it.

A successful result above ``context.payloads.max_chars`` (as JSON) or ``max_items`` (list items,
text lines) becomes :func:`~devops_agent.policies.context.payloads.digest` of its data, cut to
``summary_chars``. The raw data rides on ``ToolResult.raw`` to the recorder, which stores it
(secrets scrubbed) for ``devops-agent sessions output`` and ``query_result``; the result's hint
says how to reach it. Only the model path gives it thresholds (offline analyzers need the data
itself: elsewhere it passes results through). It sits inside the privacy wrapper, so the raw
result kept is the real one and the digest is masked like any output.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import WrapperToolset
from pydantic_ai.tools import RunContext
from pydantic_ai.toolsets import ToolsetTool

from devops_agent.config.context import PayloadSettings
from devops_agent.policies.context.payloads import digest, fit, items_of
from devops_agent.policies.limits import as_text, size_of
from devops_agent.tools.base import ToolResult

QUERY_TOOL = "query_result"


def query_hint(call_id: str) -> str:
    return (
        f"this is a summary of a large result; the whole result is kept: ask precise questions of it "
        f"with {QUERY_TOOL}(call_id={call_id!r}, jq=… | grep=… | python=…)"
    )


@dataclass
class DigestToolset(WrapperToolset[Any]):
    """Summarizes results above the thresholds of ``payloads``; passes them through without."""

    payloads: PayloadSettings | None = None

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> ToolResult:
        result: ToolResult = await super().call_tool(name, tool_args, ctx, tool)
        if self.payloads is None:
            return result
        if name == QUERY_TOOL or result.status != "success" or result.data is None:
            return result  # an answer to a precise question is what the model asked for
        data = result.data
        chars, items = size_of(data), items_of(data)
        if chars <= self.payloads.max_chars and items <= self.payloads.max_items:
            return result
        summary = fit(digest(data), self.payloads.summary_chars)
        hint = query_hint(ctx.tool_call_id or "")
        digested = ToolResult(
            status="success",
            data=summary,
            hint=f"{result.hint}; {hint}" if result.hint else hint,
            metadata=result.metadata
            | {
                "digest": summary.get("kind"),
                "truncated": True,
                "original_chars": chars,
                "original_items": items,
            },
        )
        raw = result.raw if result.raw is not None else as_text(data)
        return digested.with_raw(raw).with_evidence(result.evidence)
