"""Verification before answering, with a scripted model: the deterministic critic catches a
fabricated quotation, a wrong number and a citation to a failed call, and sends the orchestrator
back once (a re-plan) to fix them; the re-plan budget holds; the model critic downgrades what it
finds unsupported and asks for missing evidence."""

from __future__ import annotations

from typing import Any

from devops_agent.agent.reasoning.answer import ModelAnswer
from devops_agent.agent.reasoning.critic import apply_issues, check_answer
from devops_agent.agent.reasoning.ledger import Ledger
from devops_agent.events import CriticReview, Replan, ToolCall
from devops_agent.report import Finding
from devops_agent.store import Store
from fixtures_reasoning import ReasoningKit

GATHER = {
    "tool_calls": [
        {"tool": "svc_status", "args": {"service": "api"}},
        {"tool": "svc_logs", "args": {"service": "api"}},
        {"tool": "svc_traces", "args": {"service": "api"}},
    ]
}
GOOD = {
    "severity": "high",
    "title": "api down since 14:05",
    "evidence": ["api: down since 14:05"],
    "citations": ["{call:svc_status}"],
}
FABRICATED = {
    "severity": "high",
    "title": "the database connection is refused",
    "evidence": ["FATAL: out of memory, killing process 4242"],
    "citations": ["{call:svc_logs}"],
}
WRONG_NUMBER = {
    "severity": "medium",
    "title": "api restarted 12 times",
    "evidence": ["restarts=7"],
    "citations": ["{call:svc_status}"],
}
FAILED_ONLY = {
    "severity": "medium",
    "title": "traces show timeouts",
    "citations": ["{call:svc_traces}"],
}
BAD = {"output": {"summary": "api is down.", "findings": [GOOD, FABRICATED, WRONG_NUMBER, FAILED_ONLY]}}
FIXED = {
    "output": {
        "summary": "api is down since 14:05: its database refuses connections.",
        "findings": [
            GOOD,
            {**FABRICATED, "evidence": ["14:05:02 ERROR connection refused to db:5432"]},
            {**WRONG_NUMBER, "title": "api restarted 7 times"},
            {
                "severity": "high",
                "title": "error rate 0.93 at 14:06",
                "evidence": ["api_error_rate 0.93 at 14:06"],
                "citations": ["{call:svc_metrics}"],
            },
        ],
        "gaps": ["traces: the tracing backend was unreachable"],
    }
}


def checks(issues: list[dict[str, Any]]) -> list[str]:
    return sorted(i["check"] for i in issues)


def test_critic_catches_three_claims_and_one_replan_fixes_them(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    model = kit.scripted(
        {
            "runs": [
                [GATHER, BAD],
                [{"tool_calls": [{"tool": "svc_metrics", "args": {"service": "api"}}]}, FIXED],
            ]
        }
    )
    events = kit.drain(
        kit.service(sqlite_store, model), "why is api down?", mode="ask", inputs={"plan": "never"}
    )
    reviews = kit.of(events, CriticReview)
    first = reviews[0]
    assert (first.stage, first.action) == ("deterministic", "replan")
    assert checks(first.issues) == ["failed_call_only", "number_mismatch", "quote_not_found"]
    by_check = {i["check"]: i for i in first.issues}
    assert "FATAL: out of memory" in by_check["quote_not_found"]["detail"]
    assert "12" in by_check["number_mismatch"]["detail"]
    [replan] = kit.of(events, Replan)
    assert (replan.number, replan.budget) == (1, 2)
    assert events.index(replan) < events.index(
        next(e for e in kit.of(events, ToolCall) if e.tool == "svc_metrics")
    )
    assert [(r.stage, r.action) for r in reviews[1:]] == [
        ("deterministic", "accepted"),
        ("model", "accepted"),
    ]

    report = kit.final(events).report
    assert report is not None
    critic = report["critic"]
    assert critic["replans"] == 1
    assert critic["changes"] == []
    assert len(critic["issues_fixed_by_replan"]) == 3
    assert [f["title"] for f in report["findings"]] == [
        "api down since 14:05",
        "the database connection is refused",
        "api restarted 7 times",
        "error rate 0.93 at 14:06",
    ]
    assert any(g["tool"] == "svc_traces" for g in report["gaps"]), "the failed call is a gap"
    assert "Fixed by a re-plan" in (kit.final(events).output or "")


def test_replan_budget_is_respected_and_what_remains_is_removed_or_downgraded(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    model = kit.scripted({"runs": [[GATHER, BAD], [BAD], [BAD], [BAD]]})
    svc = kit.service(sqlite_store, model, agent={"max_replans": 1})
    events = kit.drain(svc, "why is api down?", mode="ask", inputs={"plan": "never"})
    assert [r.number for r in kit.of(events, Replan)] == [1]
    assert [(r.stage, r.action) for r in kit.of(events, CriticReview)] == [
        ("deterministic", "replan"),
        ("deterministic", "applied"),
        ("model", "accepted"),
    ]
    report = kit.final(events).report
    assert report is not None
    assert [f["title"] for f in report["findings"]] == ["api down since 14:05"]
    changes = {(c["title"], c["action"]) for c in report["critic"]["changes"]}
    assert changes == {
        ("the database connection is refused", "quote_removed"),
        ("the database connection is refused", "downgraded"),
        ("api restarted 12 times", "downgraded"),
        ("traces show timeouts", "removed"),
    }
    assert {h["statement"] for h in report["hypotheses"]} == {
        "the database connection is refused",
        "api restarted 12 times",
    }
    assert all(h["confidence"] == "low" for h in report["hypotheses"])
    assert any("removed as unsupported" in g["reason"] for g in report["gaps"])
    assert report["critic"]["replans"] == 1
    assert report["critic"]["max_replans"] == 1


def test_model_critic_downgrades_and_asks_for_missing_evidence(
    sqlite_store: Store, kit: ReasoningKit
) -> None:
    good_two = {
        "output": {
            "summary": "api is down.",
            "findings": [GOOD, {**WRONG_NUMBER, "title": "api restarted 7 times"}],
        }
    }
    critic = {
        "runs": [
            [{"output": {"missing_evidence": ["the error rate since 14:00"]}}],
            [
                {
                    "output": {
                        "assessments": [
                            {"finding": 2, "supported": False, "reason": "restarts do not show a crash loop"}
                        ]
                    }
                }
            ],
        ]
    }
    model = kit.scripted(
        {
            "runs": [
                [GATHER, good_two],
                [{"tool_calls": [{"tool": "svc_metrics", "args": {"service": "api"}}]}, good_two],
            ],
            "agents": {"critic": critic},
        }
    )
    events = kit.drain(
        kit.service(sqlite_store, model), "why is api down?", mode="ask", inputs={"plan": "never"}
    )
    model_reviews = [r for r in kit.of(events, CriticReview) if r.stage == "model"]
    assert [(r.action, r.missing_evidence) for r in model_reviews] == [
        ("replan", ["the error rate since 14:00"]),
        ("applied", []),
    ]
    assert [r.reason for r in kit.of(events, Replan)] == ["the model critic asked for more evidence"]
    report = kit.final(events).report
    assert report is not None
    assert [f["title"] for f in report["findings"]] == ["api down since 14:05"]
    assert report["critic"]["model_critic"] is True
    assert report["critic"]["changes"][0]["action"] == "downgraded"


def test_deterministic_checks_on_their_own() -> None:
    from pydantic_ai.messages import ModelRequest, ToolReturnPart

    ledger = Ledger()
    ledger.add_messages(
        [
            ModelRequest(
                parts=[
                    ToolReturnPart(
                        "svc_status",
                        {"status": "success", "data": "disk at 97.3% since 2026-11-27 14:05:09"},
                        tool_call_id="a",
                    ),
                    ToolReturnPart(
                        "svc_logs",
                        {"status": "success", "data": {"count": 1204, "line": 'level="error" msg="boom"'}},
                        tool_call_id="b",
                    ),
                    ToolReturnPart("svc_traces", "tool exploded", tool_call_id="c", outcome="failed"),
                    ToolReturnPart(
                        "svc_status",
                        {
                            "status": "success",
                            "data": "restarts=7",
                            "metadata": {"duration_ms": 12.41, "source": "svc", "truncated": 30},
                        },
                        tool_call_id="d",
                    ),
                ]
            )
        ]
    )

    def one(**kw: Any) -> list[str]:
        finding = Finding(severity="high", title=kw.pop("title", "x"), **kw)
        return sorted(i.check for i in check_answer(ModelAnswer(findings=[finding]), ledger, "since 2h"))

    assert one(title="disk at 97% since 14:05", citations=["a"]) == [], (
        "a rounded percentage and a time it shows"
    )
    assert one(title="disk at 98% since 14:05", citations=["a"]) == ["number_mismatch"]
    assert one(title="disk full since 15:05", citations=["a"]) == ["time_mismatch"]
    assert one(title="1,204 errors", evidence=['level="error" msg="boom"'], citations=["b"]) == [], (
        "JSON quoting and thousands"
    )
    assert one(title="3 errors in the last 2h", citations=["b"]) == [], (
        "small counts and the question's numbers"
    )
    assert one(title="x", citations=["zzz"]) == ["unknown_citation"]
    assert one(title="x", citations=["c"]) == ["failed_call_only"]
    assert one(title="x", citations=["c", "a"]) == [], "one failed call beside a good one is fine"
    assert one(title="x") == ["no_citation"]
    assert one(title="api restarted 12 times", citations=["d"]) == ["number_mismatch"], (
        "how long the call took (12.41 ms) is no evidence about the system"
    )
    assert one(title="30 lines cut", citations=["d"]) == [], "other metadata the model read still counts"
    answer = ModelAnswer(findings=[Finding(severity="high", title="x", citations=["zzz", "a"])])
    fixed, changes = apply_issues(answer, check_answer(answer, ledger), ledger)
    assert fixed.findings[0].citations == ["a"]
    assert [c.action for c in changes] == ["citation_removed"]
