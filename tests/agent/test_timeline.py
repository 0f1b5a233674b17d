"""The report's timeline on the paths that are not runbooks: filled from the run's events before
``run_finished`` (a model's plan here, with a scripted model), and built from events directly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from devops_agent.agent.timeline import call_moments, with_timeline
from devops_agent.events import RunFinished, ToolCall, ToolResultEvent
from devops_agent.evidence import Evidence, entry
from devops_agent.store import Store
from fixtures_reasoning import ReasoningKit

T0 = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)
IDS = {"session_id": "s", "run_id": "r"}


def test_a_model_report_gets_the_calls_and_its_findings_on_a_timeline(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    gather = {"tool_calls": [{"tool": "svc_status", "args": {"service": "api"}}]}
    answer = {
        "output": {
            "summary": "api is down.",
            "findings": [
                {
                    "severity": "high",
                    "title": "api down since 14:05",
                    "evidence": ["api: down since 14:05"],
                    "citations": ["{call:svc_status}"],
                }
            ],
        }
    }
    model = kit.scripted({"turns": [gather, answer]})
    events = kit.drain(
        kit.service(sqlite_store, model), "why is api down?", mode="ask", inputs={"plan": "never"}
    )
    report = kit.final(events).report
    assert report is not None
    timeline = report["timeline"]
    (call,) = kit.of(events, ToolCall)
    (result,) = [e for e in kit.of(events, ToolResultEvent) if e.tool_call_id == call.tool_call_id]
    assert [(e["kind"], e["tool_call_id"]) for e in timeline] == [
        ("tool_call", call.tool_call_id),
        ("finding", call.tool_call_id),
    ]
    assert timeline[0]["at"] == call.ts.isoformat().replace("+00:00", "Z")
    assert timeline[1]["at"] == result.ts.isoformat().replace("+00:00", "Z")
    assert timeline[1]["label"] == "[HIGH] api down since 14:05"
    # the runner fills it before rendering: the answer's Markdown shows the same timeline
    assert "## Timeline" in (kit.final(events).output or "")
    assert "finding: [HIGH] api down since 14:05" in (kit.final(events).output or "")


def test_events_give_each_call_its_start_end_and_evidence_and_the_alert_its_start() -> None:
    onset = entry(T0 + timedelta(minutes=5), "error_onset", "first error: refused")
    events = [
        ToolCall(**IDS, tool_call_id="a", tool="logs_errors", ts=T0 + timedelta(minutes=20)),
        ToolCall(**IDS, tool_call_id="b", tool="git_log", ts=T0 + timedelta(minutes=21)),
        ToolResultEvent(
            **IDS, tool_call_id="b", tool="git_log", status="success", ts=T0 + timedelta(minutes=22)
        ),
        ToolResultEvent(
            **IDS,
            tool_call_id="a",
            tool="logs_errors",
            status="success",
            ts=T0 + timedelta(minutes=23),
            evidence=Evidence(timeline=[onset]),
        ),
        RunFinished(**IDS, status="completed"),
    ]
    moments = call_moments(events)
    assert [(m.tool_call_id, m.started_at.minute, m.ended_at.minute) for m in moments] == [
        ("a", 20, 23),
        ("b", 21, 22),
    ]
    report = with_timeline(
        {"title": "t", "findings": []}, events, {"onset": "2026-11-27T14:03:00Z", "alert_title": "HighErrors"}
    )
    assert report is not None
    assert [(e["kind"], e["label"], e["tool_call_id"]) for e in report["timeline"]] == [
        ("alert_start", "HighErrors", None),
        ("error_onset", "first error: refused", "a"),
        ("tool_call", "logs_errors: success", "a"),
        ("tool_call", "git_log: success", "b"),
    ]
    kept = {"title": "t", "timeline": [{"at": "2026-01-01T00:00:00Z", "kind": "commit", "label": "x"}]}
    assert with_timeline(kept, events, {}) is kept  # a runbook's own timeline stays
    assert with_timeline(None, events, {}) is None
