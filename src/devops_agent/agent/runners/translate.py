"""pydantic-ai's stream events as our :class:`~devops_agent.events.RunEvent` stream."""

from __future__ import annotations

from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    PartDeltaEvent,
    PartStartEvent,
    TextPart,
    TextPartDelta,
    ToolReturnPart,
)

from devops_agent.agent.model_errors import shorten_unknown_tool
from devops_agent.events import RunEvent, Token, ToolCall, ToolResultEvent
from devops_agent.secrets.scrubber import scrub


def translate(ev: AgentStreamEvent, ids: dict[str, str], *, scrub_errors: bool = False) -> list[RunEvent]:
    """Our events for one pydantic-ai stream event.

    With ``scrub_errors`` secrets are cut out of a tool's error text before the event is stored.
    Errors of our tools are already clean (the pipeline masks failed results), but a retry prompt,
    e.g. an MCP server's error raised as ``ModelRetry``, reaches the stream through neither.
    """
    if isinstance(ev, PartStartEvent) and isinstance(ev.part, TextPart) and ev.part.content:
        return [Token(**ids, text=ev.part.content)]
    if isinstance(ev, PartDeltaEvent) and isinstance(ev.delta, TextPartDelta) and ev.delta.content_delta:
        return [Token(**ids, text=ev.delta.content_delta)]
    if isinstance(ev, FunctionToolCallEvent):
        return [
            ToolCall(
                **ids, tool_call_id=ev.part.tool_call_id, tool=ev.part.tool_name, args=ev.part.args_as_dict()
            )
        ]
    if isinstance(ev, FunctionToolResultEvent):
        part = ev.part
        content = part.content if isinstance(part, ToolReturnPart) else None
        if isinstance(content, dict) and "status" in content:
            meta = content.get("metadata") or {}
            status, error = str(content["status"]), content.get("error")
            duration, truncated, keep = meta.get("duration_ms"), bool(meta.get("truncated")), None
            data = content.get("data")
            # A large result the model read as a digest: its headline says what it held.
            summary = data.get("headline") if meta.get("digest") and isinstance(data, dict) else None
        elif isinstance(part, ToolReturnPart) and part.outcome == "success":  # an agent's own tool
            status, error, duration, truncated, keep, summary = "success", None, None, False, None, None
        else:  # a retry prompt, a denial
            status, error = "error", shorten_unknown_tool(str(getattr(part, "content", "")))
            duration, truncated, keep, summary = None, False, 500, None
        if scrub_errors and error:
            error = scrub(str(error)).text
        if keep is not None and error:
            error = error[:keep]  # cut after scrubbing, so no token is cut in two and left readable
        return [
            ToolResultEvent(
                **ids,
                tool_call_id=part.tool_call_id,
                tool=part.tool_name or "",
                status=status,
                duration_ms=duration,
                truncated=truncated,
                error=error,
                summary=summary if isinstance(summary, str) else None,
            )
        ]
    return []
