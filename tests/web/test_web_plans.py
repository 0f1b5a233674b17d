"""Plans on the web page, in the real Chromium against the real service (scripted model): a plan
that waits shows its numbered steps with approve / ask for changes / reject; approving runs it
and its steps turn done; asking for changes brings a revision; rejecting runs nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .web_helpers import ask, axe_violations, screenshot, session_id, sign_in, wait_run, web_service

STEPS = [
    {"title": "Read probe a", "tools": ["probe"], "intent": "is a fine?"},
    {"title": "Read probe b", "tools": ["probe"]},
]
READ = [
    {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]},
    {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]},
]
ANSWER = {"output": {"summary": "Both probes answer; nothing is wrong with them.", "findings": []}}


def plan_call(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "propose_plan", "args": {"goal": "are the probes fine", "steps": steps}}]}


def _statuses(page: Any, nth: int = 0) -> list[str]:
    return list(
        page.evaluate(
            "(n) => [...document.querySelectorAll('.msg.plan')[n].querySelectorAll('ol.plan-steps > li')]"
            ".map(li => li.dataset.status)",
            nth,
        )
    )


def test_approving_a_plan_runs_its_steps(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=[plan_call(STEPS), *READ, ANSWER]) as svc:
        sign_in(page, svc, "alice")
        ask(page, "are the probes fine?")
        wait_run(page, "paused")
        plan = page.locator(".msg.plan").first
        plan.locator(".plan-approve").wait_for()
        assert plan.locator("ol.plan-steps > li").all_inner_texts()[0].startswith("pending")
        assert "Read probe a" in plan.inner_text()
        assert "Goal: are the probes fine" in plan.inner_text()
        assert _statuses(page) == ["pending", "pending"]
        assert page.locator("article.run details.tool").count() == 1  # only the proposal itself
        assert "the plan waits for your decision" in page.inner_text("article.run footer")
        assert axe_violations(page) == [], "a plan waiting for a decision"
        screenshot(page, "web-plan")

        plan.locator(".plan-approve").click()
        wait_run(page, "completed", nth=1)
        page.wait_for_function(
            "() => [...document.querySelectorAll('.msg.plan ol.plan-steps > li')]"
            ".every(li => li.dataset.status === 'done')"
        )
        assert _statuses(page) == ["done", "done"]
        assert plan.locator(".plan-actions").count() == 0, "a decided plan offers no decision"
        text = page.inner_text("#conversation")
        assert "Plan approved by alice" in text
        cards = page.locator("details.tool[data-tool=probe]")
        assert cards.count() == 2
        assert [c.get_attribute("data-status") for c in cards.all()] == ["success", "success"]
        # What the service recorded agrees with the page.
        with svc.client("alice") as c:
            assert c.get(f"/v1/sessions/{session_id(page)}/plan").status_code == 409


def test_asking_for_changes_then_rejecting_runs_nothing(page: Any, tmp_path: Path) -> None:
    with web_service(tmp_path, turns=[plan_call(STEPS[:1] * 2), plan_call(STEPS), *READ, ANSWER]) as svc:
        sign_in(page, svc, "alice")
        ask(page, "are the probes fine?")
        wait_run(page, "paused")
        first = page.locator(".msg.plan").first
        first.locator(".plan-edit").click()  # no feedback yet: the page asks for it, sends nothing
        assert "Say what should change" in first.locator(".plan-note").inner_text()
        first.locator("textarea.plan-text").fill("read probe b too")
        first.locator(".plan-edit").click()
        page.locator(".msg.plan").nth(1).locator(".plan-reject").wait_for()
        revised = page.locator(".msg.plan").nth(1)
        assert "Plan (revision 2)" in revised.inner_text()
        assert "Revised after: read probe b too" in revised.inner_text()
        assert first.locator(".plan-actions").count() == 0

        revised.locator("textarea.plan-text").fill("not now")
        revised.locator(".plan-reject").click()
        page.wait_for_function(
            "() => document.querySelector('#conversation').innerText.includes('Plan rejected')"
        )
        wait_run(page, "completed")
        text = page.inner_text("#conversation")
        assert "Plan rejected by alice" in text
        assert "rejected by alice: not now" in text
        assert page.locator("details.tool[data-tool=probe]").count() == 0, "a rejected plan runs nothing"
        assert _statuses(page, 1) == ["pending", "pending"]
