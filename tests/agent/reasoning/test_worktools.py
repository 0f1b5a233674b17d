"""The runbooks and analyzers as tools of a model run: the model orchestrates, the analyzers
compute. A mixed run (the model calling ``analyze_logs`` on a real log folder) cites the
analyzer's call, its inner calls are labelled with the runbook, and its report has the shape and
rendering of the offline runbook's report on the same logs."""

from __future__ import annotations

import re
from pathlib import Path

from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import ToolCall
from devops_agent.store import Store
from devops_agent.tools.registry import default_registry
from fixtures_reasoning import ReasoningKit

LINES = [
    "2026-11-27T14:04:58Z INFO api started, pool size 20",
    "2026-11-27T14:05:02Z ERROR connection refused to db:5432",
    "2026-11-27T14:05:09Z ERROR connection refused to db:5432",
    "2026-11-27T14:05:15Z ERROR connection refused to db:5432",
]


def headings(markdown: str) -> list[str]:
    return re.findall(r"^## (.+)$", markdown, flags=re.M)


def test_a_model_run_uses_the_log_analyzer_as_a_tool_and_reports_like_the_runbook(
    sqlite_store: Store, kit: ReasoningKit, tmp_path: Path
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "api.log").write_text("\n".join(LINES) + "\n")
    settings = Settings(files={"roots": [str(tmp_path)]})
    finding = {
        "severity": "high",
        "title": "connection refused to db:5432",
        "evidence": ["ERROR connection refused to db:5432"],
        "citations": ["{call:analyze_logs}"],
    }
    model = kit.scripted(
        {
            "turns": [
                {"tool_calls": [{"tool": "analyze_logs", "args": {"paths": [str(logs)]}}]},
                {"output": {"summary": "api cannot reach its database.", "findings": [finding]}},
            ]
        }
    )
    mixed = SessionService(
        settings, sqlite_store, registry=default_registry(), model=model, use_configured_model=False
    )
    events = kit.drain(mixed, "why does api fail?", mode="ask", inputs={"plan": "never"})
    done = kit.final(events)
    assert done.status == "completed", [e for e in events if e.type == "error"]
    calls = kit.of(events, ToolCall)
    [analyze] = [c for c in calls if c.tool == "analyze_logs"]
    assert analyze.agent is None, "the orchestrator called the analyzer"
    inner = [c for c in calls if c.agent == "runbook:log-errors"]
    assert inner, "the runbook's own calls are labelled with it"
    assert {c.tool for c in inner} == {"logs_errors"}
    report = done.report or {}
    assert report["findings"][0]["citations"] == [analyze.tool_call_id]
    assert report["critic"]["changes"] == [], "its quotation is in the analyzer's output"
    assert report["verdict"] == "problems_found"

    offline = SessionService(settings, sqlite_store, registry=default_registry(), use_configured_model=False)
    runbook = kit.final(
        kit.drain(offline, "errors in the api logs", inputs={"logs": [str(logs)], "runbooks": ["log-errors"]})
    )
    assert runbook.report is not None
    assert runbook.report["verdict"] == "problems_found"
    # One report shape, one renderer: the model's report has the runbook's sections, and more.
    model_sections, runbook_sections = headings(done.output or ""), headings(runbook.output or "")
    assert {"Summary", "Findings", "What was read"} <= set(runbook_sections)
    assert [h for h in model_sections if h in runbook_sections] == [
        h for h in runbook_sections if h in model_sections
    ], "same order"
    assert set(runbook_sections) <= set(model_sections)
    assert "What the critic changed" in model_sections
    assert set(report) == set(runbook.report), "the same Report fields, filled or empty"
