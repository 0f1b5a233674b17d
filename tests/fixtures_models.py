"""Models for tests beside the package's scripted one: :func:`streaming` makes a pydantic-ai
``FunctionModel`` that also streams, as the model runner asks every request to."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from pydantic_ai.messages import (
    ModelMessage,
    TextPart,
    ToolCallPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel


def streaming(respond: Any) -> FunctionModel:
    """A function model that also streams (the model runner streams every request)."""

    async def stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
        response = respond(messages, info)
        calls = [p for p in response.parts if isinstance(p, ToolCallPart)]
        if calls:
            yield {
                i: DeltaToolCall(name=c.tool_name, json_args=json.dumps(c.args), tool_call_id=c.tool_call_id)
                for i, c in enumerate(calls)
            }
        else:
            yield "".join(p.content for p in response.parts if isinstance(p, TextPart))

    return FunctionModel(respond, stream_function=stream)
