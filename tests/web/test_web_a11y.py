"""The web page's accessibility (axe-core, vendored, in the same Chromium), its phone layout, and
its coverage of the event stream: every ``RunEvent`` type is rendered."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

from api_harness import PROBE_TURNS
from devops_agent.events import RunEvent

from .web_helpers import PHONE, ask, axe_violations, screenshot, sign_in, wait_run, web_service

WIPE_RUNS = [[{"tool_calls": [{"tool": "wipe", "args": {"path": "/tmp/x"}}]}, {"text": "{results}"}]] * 2


def test_no_serious_accessibility_violations_on_the_main_views(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, runs=[PROBE_TURNS, *WIPE_RUNS]) as svc:
        page.goto(svc.url + "/")
        page.wait_for_selector("#signin:not([hidden])")
        assert axe_violations(page) == [], "sign-in"

        sign_in(page, svc, "carol")
        assert axe_violations(page) == [], "empty conversation"
        ask(page, "are the probes fine?")
        run = wait_run(page, "completed")
        run.locator("details.tool").first.locator("summary").click()
        assert axe_violations(page) == [], "conversation with tool cards"

        ask(page, "wipe it", mode="agent")
        wait_run(page, "paused")
        page.locator("#confirm-input").wait_for()
        assert axe_violations(page) == [], "destructive approval"

        page.click("#show-help")
        assert axe_violations(page) == [], "keyboard help"
        page.keyboard.press("Escape")


def test_keyboard_shortcuts(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=PROBE_TURNS) as svc:
        sign_in(page, svc, "alice")
        ask(page, "are the probes fine?")
        wait_run(page, "completed")
        page.locator("#session-title").click()  # focus out of the question box
        page.keyboard.press("/")
        assert page.evaluate("document.activeElement.id") == "search"
        page.keyboard.press("Escape")
        page.locator("#session-title").click()
        page.keyboard.press("n")
        assert page.inner_text("#session-title") == "New investigation"
        assert page.locator("article.run").count() == 0
        assert page.evaluate("document.activeElement.id") == "question"
        page.locator("#session-title").click()
        page.keyboard.press("?")
        assert page.locator("#help").is_visible()
        page.keyboard.press("Escape")
        assert not page.locator("#help").is_visible()


def test_phone_width_layout(browser: Any, tmp_path: Path) -> None:
    context = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        with web_service(tmp_path, turns=PROBE_TURNS) as svc:
            sign_in(page, svc, "alice")
            ask(page, "are the probes fine?")
            wait_run(page, "completed")
            assert page.evaluate("document.scrollingElement.scrollWidth") <= PHONE["width"]
            sidebar_x = "document.getElementById('sidebar').getBoundingClientRect().right"
            assert page.evaluate(sidebar_x) <= 0  # slid away
            assert page.locator("#toggle-sidebar").is_visible()
            screenshot(page, "web-phone")
            page.click("#toggle-sidebar")
            left = "document.getElementById('sidebar').getBoundingClientRect().left"
            page.wait_for_function(f"() => {left} >= 0")  # slid in
            assert page.get_attribute("#toggle-sidebar", "aria-expanded") == "true"
            screenshot(page, "web-phone-sessions")
            assert axe_violations(page) == []
            page.locator("#sessions li button.open").first.click()
            page.wait_for_function(f"() => {sidebar_x} <= 0")
            assert page.locator("article.run").count() == 1
            assert axe_violations(page) == []
    finally:
        context.close()


def _event_types() -> set[str]:
    members = typing.get_args(typing.get_args(RunEvent)[0])
    return {m.model_fields["type"].default for m in members}


SAMPLES: dict[str, dict[str, Any]] = {
    "run_started": {"prompt": "why?", "mode": "ask", "path": "model", "model": "scripted"},
    "token": {"text": "Because "},
    "plan_proposed": {
        "steps": ["look at the logs", "check the metrics"],
        "plan": {
            "goal": "find why checkout fails",
            "steps": [
                {"title": "look at the logs", "intent": "errors since the deploy", "specialist": "logs"},
                {"title": "check the metrics", "tools": ["query_prometheus"], "mutating": False},
            ],
        },
        "revision": 1,
        # Not waiting: its decision buttons (tests/web/test_web_plans.py) would go with plan_resolved.
        "awaiting_decision": False,
    },
    "plan_resolved": {"decision": "approved", "revision": 1, "approver": "alice"},
    "plan_step": {"index": 1, "title": "check the metrics", "status": "done", "note": "p99 doubled"},
    "plan_deviation": {"kind": "unplanned_call", "detail": "called git_log, which no step names"},
    "delegation": {
        "phase": "finished",
        "specialist": "metrics",
        "task": "check the p99 latency",
        "status": "completed",
        "duration_ms": 1200.0,
    },
    "critic_review": {
        "stage": "deterministic",
        "round": 1,
        "issues": [{"finding": 0, "title": "disk full", "check": "quote_not_found", "detail": "not in c1"}],
        "action": "replan",
    },
    "replan": {"number": 1, "budget": 2, "reason": "a quotation is not in the cited output"},
    "council": {
        "members": ["logs", "metrics"],
        "disagreements": [
            {
                "topic": "whether anything is wrong",
                "positions": {"logs": "problems found: OOM", "metrics": "found no problem"},
                "resolution": "not reconciled",
            }
        ],
    },
    "tool_call": {"tool_call_id": "c1", "tool": "probe", "args": {"name": "a"}},
    "tool_result": {
        "tool_call_id": "c1",
        "tool": "probe",
        "status": "success",
        "duration_ms": 3.5,
        "evidence": {
            "series": [
                {
                    "name": "p99",
                    "labels": {"job": "api"},
                    "points": [[1795820000, 0.2], [1795820060, 0.9], [1795820120, 0.3]],
                    "points_total": 3,
                    "anomalies": [
                        {"start": "2026-11-27T10:00:00Z", "end": "2026-11-27T10:01:00Z", "score": 2.5}
                    ],
                }
            ],
            "templates": {
                "rows": [{"template": "timeout after <*>", "count": 7, "sample": "timeout after 30s"}],
                "total": 1,
                "lines": 7,
            },
        },
    },
    "approval_requested": {
        "tool_call_id": "c2",
        "tool": "restart",
        "args": {"service": "api"},
        "reason": "mutating",
    },
    "approval_resolved": {"tool_call_id": "c2", "approved": False, "reason": "not now", "approver": "alice"},
    "error": {"message": "the model failed", "hint": "retry"},
    # Types of the engine's context work (issue 26), rendered before they reach this branch's union.
    "context_compacted": {
        "request": 2,
        "tokens_before": 90000,
        "tokens_after": 30000,
        "limit": 64000,
        "window": 128000,
        "counter": "tiktoken",
        "replaced": ["c1"],
    },
    "limit_reached": {"scope": "run", "limit": "tool_calls", "used": 20, "ceiling": 20},
    "run_resumed": {"worker": "worker-7", "after_seq": 12, "completed_steps": 3},
    "notification": {
        "sink": "slack-oncall",
        "kind": "report",
        "ok": False,
        "attempts": 3,
        "error": "HTTP 500",
    },
    "run_finished": {
        "status": "completed",
        "output": "done",
        "report": {
            "title": "Report",
            "verdict": "problems_found",
            "findings": [{"severity": "high", "title": "errors", "evidence": ["E1"], "source": "probe"}],
            "timeline": [
                {
                    "at": "2026-11-27T09:58:00Z",
                    "kind": "deploy",
                    "label": "api revision 7",
                    "tool_call_id": "c1",
                }
            ],
        },
    },
}


def test_every_event_type_is_rendered(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path) as svc:
        page.goto(svc.url + "/")
        page.wait_for_selector("#signin:not([hidden])")
        handled = set(page.evaluate("[...window.__devopsAgent.handledEventTypes]"))
        # A new RunEvent type fails here until the page renders it (and a sample is added below).
        types = _event_types()
        assert types - handled == set()
        assert types - set(SAMPLES) == set()
        assert set(SAMPLES) <= handled
        for seq, (kind, fields) in enumerate(SAMPLES.items(), start=1):
            event = {
                "v": 1,
                "type": kind,
                "session_id": "s1",
                "run_id": "r1",
                "seq": seq,
                "ts": "2026-11-27T10:00:00Z",
            }
            before = page.evaluate("document.getElementById('conversation').innerText.length")
            applied = page.evaluate(
                "(ev) => window.__devopsAgent.conversation.apply(ev)", {**event, **fields}
            )
            assert applied, kind
            after = page.evaluate("document.getElementById('conversation').innerText.length")
            assert after > before or kind == "run_started", f"{kind} rendered nothing"
        text = page.evaluate("document.getElementById('conversation').textContent")
        assert "unrecognised event" not in text
        assert page.locator("svg.chart rect.anomaly").count() == 1  # the tool result's evidence
        # The plan is a numbered list whose steps carry their status, updated by plan_step.
        statuses = page.evaluate(
            "[...document.querySelectorAll('.msg.plan ol.plan-steps > li')].map(li => li.dataset.status)"
        )
        assert statuses == ["pending", "done"]
        for shown in (
            "why?",
            "look at the logs",
            "Because",
            "Denied by alice",
            "the model failed",
            "90000 → 30000 tokens",
            "Usage limit reached",
            "Goal: find why checkout fails",
            "Plan approved by alice",
            "p99 doubled",
            "Deviation from the plan",
            "metrics finished: check the p99 latency",
            "quote_not_found",
            "Re-plan 1 of 2",
            "whether anything is wrong",
            "found no problem",
            "Resumed by worker worker-7",
            "Could not send report to slack-oncall after 3 attempts: HTTP 500",
            "errors",
            "E1",
            "timeout after <*>",
            "api revision 7",
        ):
            assert shown in text
        # An event the page does not know is still shown, never dropped; a replayed seq is skipped.
        unknown = {
            "v": 1,
            "type": "brand_new",
            "session_id": "s1",
            "run_id": "r1",
            "seq": 99,
            "ts": "2026-11-27T10:00:00Z",
        }
        assert page.evaluate("(ev) => window.__devopsAgent.conversation.apply(ev)", unknown)
        assert "unrecognised event brand_new" in page.evaluate(
            "document.getElementById('conversation').textContent"
        )
        assert not page.evaluate("(ev) => window.__devopsAgent.conversation.apply(ev)", {**unknown, "seq": 3})
