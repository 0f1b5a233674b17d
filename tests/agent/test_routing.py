"""Fast/smart routing and validated structured output with two scripted models: which model did
what, the exact problems sent back, escalation, a clear failure, and the cost split."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from decimal import Decimal
from typing import Annotated, Any

import pytest
from pydantic import BaseModel, ConfigDict
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from devops_agent.agent.evidence import Evidence, InWindow, Ref, SafeCommand, check
from devops_agent.agent.routing import ModelRouter
from devops_agent.agent.structured import StructuredOutputError, parse, structured_call
from devops_agent.config import Settings

WINDOW = (datetime(2024, 5, 1, 10, tzinfo=UTC), datetime(2024, 5, 1, 12, tzinfo=UTC))
PRICES = {
    "t:fast": {"input_per_mtok": "0.15", "output_per_mtok": "0.60"},
    "t:smart": {"input_per_mtok": "3.00", "output_per_mtok": "15.00"},
}


class Pick(BaseModel):
    model_config = ConfigDict(extra="forbid")
    runbook: str
    call_id: Annotated[str, Ref("call_id")]
    command: Annotated[str, SafeCommand()] | None = None
    since: Annotated[datetime, InWindow()] | None = None


class Player:
    """A model that plays its answers in turn and keeps what it was asked."""

    def __init__(self, name: str, answers: list[str]) -> None:
        self.answers = answers
        self.asked: list[list[ModelMessage]] = []
        self.model = FunctionModel(self._respond, model_name=name)

    def _respond(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.asked.append(messages)
        turn = sum(1 for m in messages if isinstance(m, ModelResponse))
        return ModelResponse(parts=[TextPart(self.answers[min(turn, len(self.answers) - 1)])])

    def last_user_text(self) -> str:
        last = self.asked[-1][-1]
        assert isinstance(last, ModelRequest)
        return "\n".join(str(p.content) for p in last.parts if isinstance(p, UserPromptPart))


def router(fast: Player | None, smart: Player | None) -> ModelRouter:
    settings = Settings(model={"name": "t:smart", "fast": "t:fast" if fast else None, "profiles": PRICES})
    return ModelRouter.from_settings(
        settings.model, smart=smart.model if smart else None, fast=fast.model if fast else None
    )


def evidence() -> Evidence:
    return Evidence(window=WINDOW).add("call_id", ["call-1", "call-2"])


GOOD = json.dumps(
    {"runbook": "disk", "call_id": "call-2", "command": "df -h", "since": "2024-05-01T10:30:00Z"}
)


def ask(r: ModelRouter, retries: int = 2) -> Any:
    return asyncio.run(
        structured_call(r, "route", Pick, "Which runbook?", evidence=evidence(), retries=retries)
    )


def test_fast_tasks_go_to_the_fast_model_and_reasoning_to_the_smart_one() -> None:
    both = router(Player("t:fast", [GOOD]), Player("t:smart", [GOOD]))
    assert both.route("route").role == "fast"
    assert both.route("summarize").role == "fast"
    assert both.route("reason").role == "smart"
    smart_only = router(None, Player("t:smart", [GOOD]))
    assert smart_only.route("extract").role == "smart"
    assert smart_only.escalation(smart_only.route("extract")) is None


def test_a_clean_answer_is_taken_first_try_by_the_fast_model() -> None:
    fast, smart = Player("t:fast", [GOOD]), Player("t:smart", [GOOD])
    result = ask(router(fast, smart))
    assert result.outcome == "first_try"
    assert result.value.call_id == "call-2"
    assert smart.asked == []


def test_the_exact_problem_goes_back_and_the_fast_model_corrects_itself() -> None:
    bad = json.dumps({"runbook": "disk", "call_id": "call-7", "command": "rm -rf /var/log"})
    fast, smart = Player("t:fast", [bad, GOOD]), Player("t:smart", [GOOD])
    r = router(fast, smart)
    result = ask(r)
    assert result.outcome == "corrected"
    assert result.model == "t:fast"
    correction = fast.last_user_text()
    assert (
        "call_id: 'call-7' is not a call_id of this investigation; use one that is: call-1, call-2"
        in correction
    )
    assert "command: 'rm -rf /var/log' is rated destructive" in correction
    assert [(e.role, e.outcome) for e in r.ledger] == [("fast", "invalid"), ("fast", "ok")]
    assert smart.asked == []


def test_escalation_to_the_smart_model_and_the_cost_split() -> None:
    hallucinated = json.dumps({"runbook": "disk", "call_id": "call-99"})
    fast, smart = Player("t:fast", [hallucinated]), Player("t:smart", [GOOD])
    r = router(fast, smart)
    result = ask(r, retries=2)
    assert result.outcome == "escalated"
    assert result.model == "t:smart"
    assert [(e.role, e.outcome) for e in r.ledger] == [("fast", "invalid")] * 3 + [("smart", "ok")]
    assert "'call-99' is not a call_id" in smart.last_user_text(), "the smart model hears what went wrong"
    usage = r.usage()
    assert usage["tasks"][-1] == {"task": "route", "role": "smart", "model": "t:smart", "outcome": "ok"}
    by_role = usage["by_role"]
    for role, price_in, price_out in (("fast", "0.15", "0.60"), ("smart", "3.00", "15.00")):
        mine = [e.response for e in r.ledger if e.role == role and e.response is not None]
        tokens_in = sum(m.usage.input_tokens for m in mine)
        tokens_out = sum(m.usage.output_tokens for m in mine)
        expected = (tokens_in * Decimal(price_in) + tokens_out * Decimal(price_out)) / 10**6
        assert Decimal(str(by_role[role]["cost_usd"])) == expected
        assert by_role[role]["requests"] == len(mine)
    total = Decimal(str(by_role["fast"]["cost_usd"])) + Decimal(str(by_role["smart"]["cost_usd"]))
    assert Decimal(str(usage["cost_usd"])) == total
    assert set(usage["by_model"]) == {"t:fast", "t:smart"}


def test_when_no_model_gets_it_right_the_failure_is_clear_and_nothing_is_returned() -> None:
    outside = json.dumps({"runbook": "disk", "call_id": "call-1", "since": "2023-01-01T00:00:00Z"})
    fast, smart = (
        Player("t:fast", [outside]),
        Player("t:smart", ['{"runbook": "disk", "call_id": "call-1", "since": "yesterday"}']),
    )
    r = router(fast, smart)
    with pytest.raises(StructuredOutputError) as caught:
        ask(r, retries=1)
    message = caught.value.message
    assert "no valid Pick after 4 answers" in message
    assert "fast (t:fast)" in message
    assert "smart (t:smart)" in message
    assert "since" in message
    assert [a.stage for a in caught.value.attempts] == ["semantic", "semantic", "schema", "schema"]


def test_syntax_is_repaired_but_a_truncated_answer_is_never_completed() -> None:
    fenced = f"Sure!\n```json\n{GOOD[:-1]}, }}\n```"
    fast = Player("t:fast", [fenced])
    result = ask(router(fast, Player("t:smart", [GOOD])))
    assert result.outcome == "repaired"
    truncated = GOOD[:40]
    value, repaired, problems = parse(truncated)
    assert value is None
    assert repaired is False
    assert problems == ["the JSON was cut off before it ended; answer again, shorter, with the whole object"]
    fast = Player("t:fast", [truncated, GOOD])
    assert ask(router(fast, Player("t:smart", [GOOD]))).outcome == "corrected"


class Nested(BaseModel):
    items: list[Pick]
    namespaces: list[Annotated[str, Ref("namespace")]] = []
    fix: Annotated[str, SafeCommand("mutating")] | None = None
    at: Annotated[str, InWindow()] | None = None


def test_semantic_markers_are_checked_at_any_depth() -> None:
    ev = evidence().add("namespace", ["payments"])
    ok = Nested(
        items=[Pick(runbook="a", call_id="call-1")],
        namespaces=["payments"],
        fix="systemctl restart nginx",
        at="2024-05-01T11:00:00Z",
    )
    assert check(ok, ev) == []
    bad = Nested(
        items=[
            Pick(runbook="a", call_id="call-1"),
            Pick(runbook="b", call_id="call-3", command="kubectl delete ns payments"),
        ],
        namespaces=["payments", "kube-system"],
        fix="rm -rf /",
        at="2024-05-02T11:00:00Z",
    )
    problems = check(bad, ev)
    assert len(problems) == 5
    assert problems[0].startswith("items[1].call_id: 'call-3'")
    assert problems[1].startswith("items[1].command: 'kubectl delete ns payments' is rated destructive")
    assert problems[2].startswith("namespaces[1]: 'kube-system' is not a namespace")
    assert problems[3].startswith("fix: 'rm -rf /' is rated destructive")
    assert problems[4].startswith("at: 2024-05-02T11:00:00+00:00 lies outside the investigation window")


def test_evidence_comes_from_the_runs_tool_calls() -> None:
    messages: list[ModelMessage] = [
        ModelResponse(parts=[ToolCallPart("logs_tail", {"path": "/var/log/app.log"}, tool_call_id="a1")]),
        ModelResponse(parts=[ToolCallPart("k8s_pods", {"namespace": "payments"}, tool_call_id="a2")]),
    ]
    ev = Evidence.from_messages(messages, WINDOW)
    assert ev.refs["call_id"] == {"a1", "a2"}
    assert ev.refs["file"] == {"/var/log/app.log"}
    assert ev.refs["namespace"] == {"payments"}
    assert ev.refs["tool"] == {"logs_tail", "k8s_pods"}


def test_a_hosted_fast_model_turns_the_privacy_guard_on_for_a_local_loop() -> None:
    from devops_agent.privacy.guard import enabled_for

    local = {"name": "ollama:llama3.1", "base_url": "http://127.0.0.1:11434/v1"}
    assert enabled_for(Settings(model=local)) is False
    assert enabled_for(Settings(model=local | {"fast": "ollama:qwen2.5"})) is False
    assert enabled_for(Settings(model=local | {"fast": "openai:gpt-4o-mini"})) is True, (
        "it reads the summaries"
    )
    assert enabled_for(Settings(model={"name": "openai:gpt-4o", "smart": "openai:gpt-4o"})) is True
