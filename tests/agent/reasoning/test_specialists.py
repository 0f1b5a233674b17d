"""Specialists with a scripted model: delegated in parallel (measured) with every event labelled,
usage rolled up, ask mode holding through delegation, and a council that disagrees and says so."""

from __future__ import annotations

from typing import Any

import pytest

from devops_agent.agent.reasoning.specialists import Specialist, load_specialists
from devops_agent.config import Settings
from devops_agent.errors import ConfigError
from devops_agent.events import CouncilResult, Delegation, ToolCall, ToolResultEvent
from devops_agent.store import Store
from devops_agent.tools.registry import ToolRegistry, build_catalog
from fixtures_reasoning import ReasoningKit

DELAY = 0.4


def specialist_turns(tool: str, title: str, quote: str, cause: str = "") -> dict[str, Any]:
    finding = {"severity": "high", "title": title, "evidence": [quote], "citations": [f"{{call:{tool}}}"]}
    return {
        "turns": [
            {"tool_calls": [{"tool": tool, "args": {"service": "api"}}]},
            {"output": {"summary": title, "findings": [finding], "likely_cause": cause}},
        ]
    }


LOGS = specialist_turns(
    "svc_logs",
    "connection refused to db:5432",
    "14:05:02 ERROR connection refused to db:5432",
    "the database is down",
)
METRICS = specialist_turns(
    "svc_metrics", "error rate 0.93 at 14:06", "api_error_rate 0.93 at 14:06", "a bad deploy"
)
DELEGATE = {
    "tool_calls": [
        {"tool": "ask_logs", "args": {"task": "what do api's logs say since 14:00?"}},
        {"tool": "ask_metrics", "args": {"task": "what does api's error rate do since 14:00?"}},
    ]
}
ANSWER = {
    "output": {
        "summary": "api fails since 14:05.",
        "findings": [
            {
                "severity": "high",
                "title": "connection refused to db:5432",
                "evidence": ["14:05:02 ERROR connection refused to db:5432"],
                "citations": ["{call:ask_logs}"],
            }
        ],
    }
}


def test_two_specialists_run_in_parallel_with_labelled_events(sqlite_store: Store, kit: ReasoningKit) -> None:
    model = kit.scripted(
        {"turns": [DELEGATE, ANSWER], "agents": {"logs": LOGS, "metrics": METRICS}}, record=True
    )
    svc = kit.service(sqlite_store, model, kit.registry_with_specialists(DELAY))
    events = kit.drain(svc, "why does api fail?", mode="ask", inputs={"plan": "never"})
    assert kit.final(events).status == "completed"

    spans = {}
    for d in kit.of(events, Delegation):
        assert d.agent == d.specialist
        spans.setdefault(d.specialist, {})[d.phase] = d
    assert set(spans) == {"logs", "metrics"}
    starts = [spans[s]["started"].ts for s in spans]
    ends = [spans[s]["finished"].ts for s in spans]
    assert max(starts) < min(ends), "each specialist started before the other finished"
    ran = {name: (start, end) for name, start, end in kit.ran}
    overlap = min(ran["svc_logs"][1], ran["svc_metrics"][1]) - max(ran["svc_logs"][0], ran["svc_metrics"][0])
    assert overlap > DELAY / 2, f"their {DELAY}s tools overlapped {overlap:.2f}s: not in parallel"
    wall = (max(ends) - min(starts)).total_seconds()
    serial = sum(spans[s]["finished"].duration_ms for s in spans) / 1000
    assert wall < serial, f"the delegations took {wall:.2f}s together, {serial:.2f}s one after the other"

    labelled = {(e.tool, e.agent) for e in kit.of(events, ToolCall)}
    assert {
        ("ask_logs", None),
        ("ask_metrics", None),
        ("svc_logs", "logs"),
        ("svc_metrics", "metrics"),
    } <= labelled
    assert all(r.agent == "logs" for r in kit.of(events, ToolResultEvent) if r.tool == "svc_logs")

    # Usage rolled up: the orchestrator's requests, each specialist's, the critic's.
    usage = kit.final(events).usage or {}
    per_specialist = sum(spans[s]["finished"].usage["requests"] for s in spans)
    assert per_specialist == 4
    assert usage["requests"] >= per_specialist + 2
    # Each specialist was offered its own tools only; the orchestrator delegates.
    assert model.offered["logs"] == {"svc_logs"}, "ask mode hides the restart the logs specialist names"
    assert model.offered["metrics"] == {"svc_metrics"}
    assert {"ask_logs", "ask_metrics", "svc_status"} <= model.offered["orchestrator"]
    report = kit.final(events).report
    assert report is not None
    assert report["findings"][0]["citations"] == [
        next(e.tool_call_id for e in kit.of(events, ToolCall) if e.tool == "ask_logs")
    ]
    assert {c["tool"] for c in report["checks"]} >= {"svc_logs", "svc_metrics", "ask_logs"}


@pytest.mark.parametrize("mode", ["ask", "agent"])
def test_a_specialist_never_gains_a_tool_its_runs_mode_forbids(
    sqlite_store: Store, mode: str, kit: ReasoningKit
) -> None:
    sneaky = {
        "turns": [
            {"tool_calls": [{"tool": "svc_restart", "args": {"service": "api"}}]},
            {"output": {"summary": "tried"}},
        ]
    }
    model = kit.scripted(
        {
            "turns": [
                {"tool_calls": [{"tool": "ask_logs", "args": {"task": "restart api"}}]},
                {"output": {"summary": "done"}},
            ],
            "agents": {"logs": sneaky},
        },
        record=True,
    )
    events = kit.drain(
        kit.service(sqlite_store, model, kit.registry_with_specialists()),
        "fix api",
        mode=mode,
        inputs={"plan": "never"},
    )
    assert kit.final(events).status == "completed"
    assert kit.restarted == [], f"{mode} mode: the restart never ran"
    if mode == "ask":
        assert "svc_restart" not in model.offered["logs"]
    else:  # offered, since the mode allows it, but a specialist cannot wait for approval: refused
        [result] = [r for r in kit.of(events, ToolResultEvent) if r.tool == "svc_restart"]
        assert result.status == "error"
        assert result.agent == "logs"


def test_council_that_disagrees_says_so(sqlite_store: Store, kit: ReasoningKit) -> None:
    # The synthesizer smooths the conflict over; the deterministic comparison still surfaces it.
    synthesis = {
        "summary": "api fails since 14:05.",
        "findings": [
            {
                "severity": "high",
                "title": "connection refused to db:5432",
                "evidence": ["14:05:02 ERROR connection refused to db:5432"],
                "citations": ["{call:logs/svc_logs}"],
            }
        ],
    }
    model = kit.scripted(
        {"agents": {"logs": LOGS, "metrics": METRICS, "synthesizer": {"turns": [{"output": synthesis}]}}}
    )
    events = kit.drain(
        kit.service(sqlite_store, model, kit.registry_with_specialists()),
        "why does api fail?",
        mode="ask",
        inputs={"council": ["logs", "metrics"]},
    )
    assert kit.final(events).status == "completed", [e for e in events if e.type == "error"]
    [council] = kit.of(events, CouncilResult)
    assert council.members == ["logs", "metrics"]
    [cause] = [d for d in council.disagreements if d["topic"] == "the likely cause"]
    assert cause["positions"] == {"logs": "the database is down", "metrics": "a bad deploy"}
    assert "not reconciled" in cause["resolution"]
    output = kit.final(events).output or ""
    assert "## Disagreements" in output
    assert "a bad deploy" in output
    assert [d.specialist for d in kit.of(events, Delegation) if d.phase == "finished"][-1] == "synthesizer"
    report = kit.final(events).report
    assert report is not None
    logs_call = next(e.tool_call_id for e in kit.of(events, ToolCall) if e.tool == "svc_logs")
    assert [f["citations"] for f in report["findings"]] == [[logs_call]], (
        "the synthesis cites the member's call"
    )
    assert report["critic"]["changes"] == []


def test_specialists_as_data(tmp_path: Any, kit: ReasoningKit) -> None:
    settings = Settings(agent={"specialist_dirs": [str(tmp_path)]})
    (tmp_path / "db.yaml").write_text(
        "name: db\ndescription: Reads the database.\ninstructions: Look.\ntools: [svc_*]\n"
    )
    registry = kit.registry_with_specialists()
    found = load_specialists(settings, registry)
    assert {"logs", "metrics", "kubernetes", "changes", "knowledge", "db"} <= set(found)
    assert found["logs"].source == "plugin:logs", "a plugin's definition replaces the shipped one"
    catalog = build_catalog(settings, registry)
    assert found["db"].tool_names(catalog) == ["svc_status", "svc_logs", "svc_metrics", "svc_traces"], (
        "a glob names read-only tools only"
    )
    assert found["kubernetes"].tool_names(catalog) == [], "its toolsets are not in this catalog"
    (tmp_path / "bad.yaml").write_text("name: Bad Name\ndescription: x\ninstructions: y\n")
    with pytest.raises(ConfigError, match="bad.yaml"):
        load_specialists(settings, ToolRegistry())
    assert Specialist(name="x", description="d", instructions="i").delegate_tool == "ask_x"
