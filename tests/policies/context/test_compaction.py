"""Compaction of one request: what is kept, summarized or cut, in order, and never a tool call
without its result (or a result without its call)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from devops_agent.policies.context.compaction import (
    PINS_TAG,
    SIGNAL,
    SUMMARY_TAG,
    WORDS,
    Pins,
    compact,
    summary_block,
)
from devops_agent.policies.context.tokens import EstimateCounter, count_messages

COUNTER = EstimateCounter()


def result(i: int, size: int, error: bool = False) -> dict[str, Any]:
    if error:
        return {"status": "error", "error": f"step {i}: ledger-db refused", "hint": "retry"}
    return {
        "status": "success",
        "data": {
            "kind": "logs",
            "headline": f"step {i}: {i} error records; top: disk full on node-{i}",
            "blob": "x " * size,
        },
    }


def history(
    steps: int, size: int = 400, *, calls_per_step: int = 1, note: bool = False
) -> list[ModelMessage]:
    msgs: list[ModelMessage] = [
        ModelRequest(
            parts=[SystemPromptPart("You are an SRE agent."), UserPromptPart("Why do payments fail?")]
        )
    ]
    for i in range(1, steps + 1):
        parts: list[Any] = [TextPart(f"Finding: step {i - 1} noted")] if note and i > 1 else []
        ids = [f"c{i}-{k}" for k in range(calls_per_step)]
        parts += [
            ToolCallPart("logs_fetch", {"step": i, "k": k}, tool_call_id=cid) for k, cid in enumerate(ids)
        ]
        msgs.append(ModelResponse(parts=parts))
        msgs.append(
            ModelRequest(
                parts=[
                    ToolReturnPart("logs_fetch", result(i, size, error=i % 5 == 0), tool_call_id=cid)
                    for cid in ids
                ]
            )
        )
    return msgs


def paired(messages: list[ModelMessage]) -> None:
    """Every tool call is answered in the very next request, and every result follows its call."""
    for i, m in enumerate(messages):
        if isinstance(m, ModelResponse):
            calls = {p.tool_call_id for p in m.parts if isinstance(p, ToolCallPart)}
            if not calls:
                continue
            nxt = messages[i + 1]
            assert isinstance(nxt, ModelRequest)
            returned = {p.tool_call_id for p in nxt.parts if isinstance(p, ToolReturnPart)}
            assert calls == returned
        else:
            returns = {p.tool_call_id for p in m.parts if isinstance(p, ToolReturnPart)}
            if returns:
                prev = messages[i - 1]
                assert isinstance(prev, ModelResponse)
                assert returns == {p.tool_call_id for p in prev.parts if isinstance(p, ToolCallPart)}


def text_of(messages: list[ModelMessage]) -> str:
    return json.dumps([str(getattr(p, "content", "")) for m in messages for p in m.parts])


def test_a_request_that_fits_is_sent_as_it_is() -> None:
    msgs = history(3)
    out = compact(msgs, counter=COUNTER, fixed_tokens=100, limit=10_000)
    assert out.messages == msgs
    assert out.tiers == []


def test_older_results_become_summaries_with_a_pointer_and_the_latest_stay_whole() -> None:
    msgs = history(8, size=600)
    total = 100 + count_messages(COUNTER, msgs)
    out = compact(msgs, counter=COUNTER, fixed_tokens=100, limit=total - 500, keep_turns=3, session_id="s1")
    assert out.tiers == ["summarize_old_results"]
    assert out.tokens_after <= total - 500 < out.tokens_before
    assert out.replaced == [f"c{i}-0" for i in range(1, 6)]
    returns = [
        p
        for m in out.messages
        if isinstance(m, ModelRequest)
        for p in m.parts
        if isinstance(p, ToolReturnPart)
    ]
    for p in returns[:5]:
        assert set(p.content) == {"status", "summary", "compacted"}
        assert f"query_result(call_id='{p.tool_call_id}')" in p.content["compacted"]
        assert f"devops-agent sessions output s1 {p.tool_call_id}" in p.content["compacted"]
    assert returns[2].content["summary"].startswith("step 3: 3 error records")
    assert returns[4].content["summary"] == "error: step 5: ledger-db refused"
    assert [p.content for p in returns[5:]] == [result(i, 600) for i in (6, 7, 8)]
    paired(out.messages)


def test_older_turns_fold_into_one_summary_and_calls_stay_with_results() -> None:
    msgs = history(30, size=300, calls_per_step=2, note=True)
    limit = 3000
    out = compact(msgs, counter=COUNTER, fixed_tokens=200, limit=limit, keep_turns=3, session_id="s1")
    assert "fold_old_turns" in out.tiers
    assert out.tokens_after <= limit
    first = out.messages[0]
    assert isinstance(first, ModelRequest)
    assert first.parts[0].content == "You are an SRE agent."
    block = next(p.content for p in first.parts if isinstance(p, UserPromptPart) and SUMMARY_TAG in p.content)
    assert "Finding: step 1 noted" in block, "the model's own words outlive tool lines"
    errors = [cid for cid in out.folded if int(cid[1:].split("-")[0]) % 5 == 0]
    assert errors
    assert all(f"[{cid}] → error" in block for cid in errors), "tool lines that showed an error stay"
    assert "more earlier lines left out" in block, "quiet tool lines gave way first"
    paired(out.messages)
    assert out.messages[-1] == msgs[-1], "the request being answered is never touched"


def test_the_current_question_survives_when_its_turn_is_folded() -> None:
    msgs = history(4)
    msgs.append(ModelResponse(parts=[TextPart("Answer one.")]))
    msgs.append(ModelRequest(parts=[UserPromptPart("And what about checkout?")]))
    for i in range(5, 25):
        msgs.append(ModelResponse(parts=[ToolCallPart("logs_fetch", {"step": i}, tool_call_id=f"d{i}")]))
        msgs.append(ModelRequest(parts=[ToolReturnPart("logs_fetch", result(i, 300), tool_call_id=f"d{i}")]))
    out = compact(msgs, counter=COUNTER, fixed_tokens=100, limit=1800, keep_turns=2)
    assert out.messages
    first = out.messages[0]
    assert isinstance(first, ModelRequest)
    assert any(p.content == "And what about checkout?" for p in first.parts if isinstance(p, UserPromptPart))
    paired(out.messages)


def test_plan_and_findings_are_pinned_in_every_request() -> None:
    pins = Pins(plan=["read the logs", "check the database"], findings=["ledger-db-3 refused connections"])
    small = compact(history(2), counter=COUNTER, fixed_tokens=10, limit=50_000, pins=pins)
    big = compact(history(30, 400), counter=COUNTER, fixed_tokens=10, limit=3000, pins=pins)
    for out in (small, big):
        head = out.messages[0]
        assert isinstance(head, ModelRequest)
        pinned = [
            p.content for p in head.parts if isinstance(p, UserPromptPart) and PINS_TAG in str(p.content)
        ]
        assert pinned
        assert "ledger-db-3 refused connections" in pinned[0]
        assert "2. check the database" in pinned[0]


@pytest.mark.parametrize("seed", range(12))
def test_any_history_any_limit_fits_or_says_it_cannot(seed: int) -> None:
    rng = random.Random(seed)
    msgs = history(
        rng.randint(1, 40),
        size=rng.randint(20, 3000),
        calls_per_step=rng.randint(1, 3),
        note=rng.random() < 0.5,
    )
    limit = rng.randint(300, 20_000)
    out = compact(
        msgs, counter=COUNTER, fixed_tokens=150, limit=limit, keep_turns=rng.randint(1, 4), session_id="s"
    )
    if out.messages:
        assert 150 + count_messages(COUNTER, out.messages) == out.tokens_after <= limit
        paired(out.messages)
        assert out.messages[-1] == msgs[-1] or "cut_latest_results" in out.tiers
    else:
        assert out.tokens_after > limit


def test_latest_results_are_cut_as_a_last_resort_with_the_pointer() -> None:
    msgs = history(2, size=8000)
    out = compact(msgs, counter=COUNTER, fixed_tokens=100, limit=1500, keep_turns=3, session_id="s")
    assert out.tiers[-1] == "cut_latest_results"
    assert out.cut == ["c2-0"]
    last = out.messages[-1]
    assert isinstance(last, ModelRequest)
    part = last.parts[0]
    assert isinstance(part, ToolReturnPart)
    assert "characters cut" in part.content["cut_to_fit"]
    assert "query_result(call_id='c2-0')" in part.content["compacted"]


def test_an_impossible_request_is_reported_not_sent() -> None:
    msgs = [ModelRequest(parts=[UserPromptPart("why? " * 2000)])]
    out = compact(msgs, counter=COUNTER, fixed_tokens=5000, limit=1000)
    assert out.messages == []
    assert out.tokens_after > 1000


def test_summary_lines_give_way_lowest_priority_first() -> None:
    lines = [(f"logs_tail() [q{i}] → nothing wrong here at all, {i}", 0) for i in range(30)]
    lines += [(f"logs_errors() [e{i}] → error: disk full on node-{i}", SIGNAL) for i in range(10)]
    lines += [(f"model: Finding {i}: the ledger database refused connections", WORDS) for i in range(10)]
    block = summary_block(lines, 40, "s", budget_chars=1400)
    assert len(block) <= 1400
    assert all(f"Finding {i}:" in block for i in range(10))
    assert "[q0]" not in block, "the oldest quiet line goes first"
    assert "more earlier lines left out" in block
    tight = summary_block(lines, 40, "s", budget_chars=600)
    assert "Finding 9:" in tight
    assert "Finding 0:" not in tight, "the oldest words go last, and first among them"
