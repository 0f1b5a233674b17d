"""Large results from an MCP server reach the model digested, like ours, and stay askable.

The digest is a pipeline wrapper, so it must apply to every toolset the pipeline holds, foreign
ones included: a real MCP server process (tests/mcp_servers/ops_server.py) returns ~1.4 MB of
text, the model reads a summary with the way to the kept original, and ``query_result`` answers
a precise question from the original.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo

from devops_agent.agent.session import SessionService
from devops_agent.events import ToolResultEvent
from devops_agent.store import Store
from devops_agent.tools.mcp import pool_for
from devops_agent.tools.registry import default_registry
from fixtures_mcp import mcp_settings, ops
from fixtures_models import streaming

pytestmark = pytest.mark.slow

LINES = 20_000


def test_a_huge_mcp_result_is_digested_for_the_model_and_the_original_answers_questions(
    tmp_path: Path, pools: list[Any]
) -> None:
    seen: list[str] = []

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        last = messages[-1]
        assert isinstance(last, ModelRequest)
        returns = [p for p in last.parts if isinstance(p, ToolReturnPart)]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("ops_huge", {"lines": LINES}, tool_call_id="h1")])
        seen.append(json.dumps(returns[0].content))
        if returns[0].tool_name == "ops_huge":
            ask = {"call_id": "h1", "grep": f"line {LINES - 1}:"}
            return ModelResponse(parts=[ToolCallPart("query_result", ask, tool_call_id="q1")])
        return ModelResponse(parts=[TextPart("done")])

    settings = mcp_settings(tmp_path, {"ops": ops()}, model={"name": "test:m"}, privacy={"enabled": "off"})
    pool = pool_for(settings)
    assert pool is not None
    pools.append(pool)
    with Store.from_settings(settings) as store:
        service = SessionService(
            settings, store, registry=default_registry(), model=streaming(respond), mcp=pool, privacy=False
        )
        events, final = asyncio.run(service.run("what is the last line?", mode="ask"))
        kept = store.tool_output(final.session_id, "h1") or ""
    assert final.status == "completed", final
    digested, answered = seen
    assert len(digested) < settings.context.payloads.summary_chars + 2_000, "the model read a summary"
    assert '"digest":' in digested
    assert "query_result(call_id='h1'" in digested, "the summary says how to ask the original"
    assert len(kept) > 1_000_000, "the session keeps the whole original"
    answer = json.loads(answered)
    assert answer["status"] == "success", answer
    assert answer["data"]["matches"] == 1
    assert answer["data"]["hits"][0]["line"] == LINES
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert [r.tool for r in results] == ["ops_huge", "query_result"]
    assert results[0].summary, "the digest's headline is on the tool_result event"
