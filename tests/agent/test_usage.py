"""Usage and cost per run, and usage limits per run, session and day: a limit hit ends the run
with a partial report that says so; the cost of a scripted run is the price table's, exactly."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from pydantic_ai.messages import ModelResponse

from devops_agent.agent.messages import load_message
from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import LimitReached, RunFinished
from devops_agent.store import Store
from devops_agent.store.run_usage import run_usage_of
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

PRICES = {"input_per_mtok": "3.00", "output_per_mtok": "15.00"}
TURNS = [
    {"tool_calls": [{"tool": "read_probe", "args": {"name": "disk"}}]},
    {
        "tool_calls": [
            {"tool": "read_probe", "args": {"name": "memory"}},
            {"tool": "read_probe", "args": {"name": "cpu"}},
        ]
    },
    {"text": "Disk, memory and cpu look fine: {results}"},
]


def registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("kit", "probes")

        @ts.tool(read_only=True)
        def read_probe(name: str) -> ToolResult:
            """Read a named probe."""
            return ToolResult.ok({"probe": name, "value": 42})

        return ts

    reg = ToolRegistry()
    reg.add_toolset("kit", build)
    return reg


def settings_for(tmp_path: Path, url: str | None = None, **kw: Any) -> Settings:
    model = {"name": "scripted", "profiles": {"scripted": PRICES}} | kw.pop("model", {})
    # The plain tool loop: the ceilings below are sized to its requests (the planner's first
    # request, with its plan and delegation tools, is larger; tests/test_reasoning_limits.py).
    agent = kw.pop("agent", {"reasoning": False})
    return Settings(
        database_url=url or f"sqlite:///{tmp_path / 'agent.db'}",
        data_dir=tmp_path,
        model=model,
        agent=agent,
        **kw,
    )


def run(
    settings: Settings, *runs: list[dict[str, Any]], session_id: str | None = None
) -> tuple[list[Any], RunFinished]:
    model = ScriptedModel(Script.model_validate({"runs": list(runs)}))
    with Store(settings.resolved_database_url()) as store:
        service = SessionService(settings, store, registry=registry(), model=model, privacy=False)
        return asyncio.run(service.run("How is the host?", mode="ask", session_id=session_id))


def test_cost_matches_the_price_table_exactly(tmp_path: Path) -> None:
    settings = settings_for(tmp_path)
    _, final = run(settings, TURNS)
    assert final.status == "completed"
    usage = final.usage or {}
    with Store(settings.resolved_database_url()) as store:
        responses = [
            m
            for m in (load_message(p) for p in store.load_messages(final.session_id))
            if isinstance(m, ModelResponse)
        ]
        stored = run_usage_of(store, final.run_id)
    assert len(responses) == usage["requests"] == 3
    tokens_in = sum(r.usage.input_tokens for r in responses)
    tokens_out = sum(r.usage.output_tokens for r in responses)
    assert (usage["input_tokens"], usage["output_tokens"]) == (tokens_in, tokens_out)
    expected = (Decimal(tokens_in) * Decimal("3.00") + Decimal(tokens_out) * Decimal("15.00")) / 10**6
    assert Decimal(str(usage["cost_usd"])) == expected
    assert usage["price_source"] == "table"
    assert usage["tool_calls"] == 3
    assert stored == usage, "the run's usage is kept on its row for limits and the service"


def test_a_scripted_model_without_a_price_costs_nothing_it_is_local(tmp_path: Path) -> None:
    settings = Settings(
        database_url=f"sqlite:///{tmp_path / 'a.db'}", data_dir=tmp_path, model={"name": "scripted"}
    )
    _, final = run(settings, TURNS)
    assert (final.usage or {})["cost_usd"] == 0


@pytest.mark.parametrize(
    ("limit", "ceiling", "done_calls"),
    [("requests", 2, 3), ("tool_calls", 2, 1), ("tokens", 400, None), ("cost_usd", "0.0012", None)],
)
def test_each_run_limit_ends_the_run_with_a_partial_report(
    tmp_path: Path, limit: str, ceiling: Any, done_calls: int | None
) -> None:
    settings = settings_for(tmp_path, limits={"run": {limit: ceiling}})
    events, final = run(settings, TURNS)
    assert final.status == "completed"
    hit = [e for e in events if isinstance(e, LimitReached)]
    assert len(hit) == 1
    assert (hit[0].scope, hit[0].limit) == ("run", limit)
    assert hit[0].used > hit[0].ceiling == float(Decimal(str(ceiling)))
    assert final.output is not None
    assert final.output.startswith("# Partial report (stopped by a usage limit)")
    assert "the run limit of" in final.output
    assert "Disk, memory and cpu look fine" not in final.output, "the run did not get to its answer"
    report = final.report or {}
    assert report["stats"]["stopped_by"]["limit"] == limit
    assert report["verdict"] == "inconclusive"
    assert report["gaps"][0]["tool"] == "limits"
    usage = final.usage or {}
    if limit == "requests":
        assert usage["requests"] == ceiling
    if limit == "tool_calls":
        assert usage["tool_calls"] >= ceiling  # asked for; only the first ran
    if done_calls is not None:
        assert len(report["checks"]) == done_calls
    if limit == "tokens":
        assert usage["total_tokens"] <= ceiling, "a request that would cross the ceiling is not sent"
    if limit == "cost_usd":
        assert Decimal(str(usage["cost_usd"])) <= Decimal(ceiling)


def test_the_session_limit_counts_the_sessions_earlier_runs(tmp_path: Path, store_url: str) -> None:
    settings = settings_for(tmp_path, store_url, limits={"session": {"requests": 4}})
    script = [TURNS, [{"tool_calls": [{"tool": "read_probe", "args": {"name": "io"}}]}, {"text": "ok"}]]
    model = ScriptedModel(Script.model_validate({"runs": script}))
    with Store(settings.resolved_database_url()) as store:
        service = SessionService(settings, store, registry=registry(), model=model, privacy=False)
        _, first = asyncio.run(service.run("How is the host?", mode="ask"))
        events, second = asyncio.run(service.run("And io?", mode="ask", session_id=first.session_id))
    assert (first.usage or {})["requests"] == 3
    assert second.status == "completed"
    assert (second.report or {})["stats"]["stopped_by"] == {
        "scope": "session",
        "limit": "requests",
        "used": 5.0,
        "ceiling": 4.0,
    }
    assert [e.scope for e in events if isinstance(e, LimitReached)] == ["session"]
    assert (second.usage or {})["requests"] == 1


def test_the_daily_limit_counts_every_session(tmp_path: Path, store_url: str) -> None:
    settings = settings_for(tmp_path, store_url, limits={"day": {"tool_calls": 4}})
    _, first = run(settings, TURNS)
    events, other = run(settings, TURNS)
    assert other.session_id != first.session_id
    assert (first.usage or {})["tool_calls"] == 3
    assert "the day limit of 4 tool calls was reached" in (other.output or "")
    assert [e.limit for e in events if isinstance(e, LimitReached)] == ["tool_calls"]


def test_limits_are_validated_in_config() -> None:
    with pytest.raises(ValueError, match="greater than"):
        Settings(limits={"run": {"cost_usd": 0}})
    with pytest.raises(ValueError, match="extra|not permitted"):
        Settings(limits={"week": {"requests": 3}})
