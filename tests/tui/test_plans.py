"""Plans in the TUI, driven with Textual's Pilot over both clients (the session service in this
process, and a real server over REST and WebSocket), with the scripted model proposing them: the
plan dialog shows the steps; approve runs them (their statuses turn done); ask for changes brings
a revision; reject runs nothing; a plan left for later is decided with ctrl+l."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.widgets import Button, Input, Static

from api_harness import running_service
from api_harness import scripted as api_scripted
from devops_agent.events import EVENT_TYPES, PlanResolved
from devops_agent.tui.app import AgentTui
from devops_agent.tui.conversation import ToolPanel
from devops_agent.tui.dialogs import PlanDecisionDialog
from devops_agent.tui.remote import RemoteClient
from devops_agent.tui.screens import ChatScreen
from tui_harness import (
    SIZE,
    ask,
    chat,
    conversation_text,
    event_types,
    finished,
    local_client,
    scripted,
    snapshot_dir,
    svg_text,
    tui,
    until,
)

STEPS = [
    {"title": "Read probe a", "tools": ["probe"], "intent": "is a fine?"},
    {"title": "Read probe b", "tools": ["probe"], "expected_evidence": "b's state"},
]
READ = (
    {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]},
    {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]},
)
ANSWER = {"output": {"summary": "Both probes answer; nothing is wrong with them.", "findings": []}}


def plan_call(steps: list[dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "propose_plan", "args": {"goal": "are the probes fine", "steps": steps}}]}


async def _plan_dialog(pilot: Any, app: Any, revision: int = 1) -> PlanDecisionDialog:
    screen = await until(
        pilot,
        lambda: (
            isinstance(app.screen, PlanDecisionDialog) and app.screen.plan.revision == revision and app.screen
        ),
    )
    await pilot.pause()
    return screen  # type: ignore[no-any-return]


def _shown(dialog: PlanDecisionDialog) -> str:
    return "\n".join(str(s.render()) for s in dialog.query(Static))


def _probes(app: Any) -> list[ToolPanel]:
    """The probe panels of the chat (under a dialog, too)."""
    [screen] = [s for s in app.screen_stack if isinstance(s, ChatScreen)]
    return [p for p in screen.view.query(ToolPanel) if p.call.tool == "probe"]


def test_approving_a_plan_in_the_dialog_runs_its_steps(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(plan_call(STEPS), *READ, ANSWER))

    async def go() -> None:
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "are the probes fine?")
            dialog = await _plan_dialog(pilot, app)
            shown = _shown(dialog)
            assert "goal: are the probes fine" in shown
            assert "1. Read probe a [probe]" in shown
            assert "why: is a fine?" in shown
            assert "should show: b's state" in shown
            assert _probes(app) == [], "nothing runs before the decision"
            app.save_screenshot("tui-plan.svg", str(snapshot_dir(tmp_path)))  # docs/tui.md's, when updating
            snapshot = svg_text(snapshot_dir(tmp_path) / "tui-plan.svg")
            assert "Read probe a" in snapshot
            assert "Ask for changes" in snapshot
            dialog.query_one("#plan-approve", Button).press()
            final = await finished(pilot, "completed")
            view = chat(app).view
            assert view.plan is not None
            assert view.plan.statuses == ["done", "done"]
            assert not view.plan.awaiting
            text = conversation_text(view)
            assert "plan approved by tester" in text
            assert "✓ 1. Read probe a [done]" in text
            assert [p.title.split("(")[0] for p in _probes(app)] == ["✓ probe", "✓ probe"]
        events = await client.history(final.session_id)
        assert [(e.decision, e.approver) for e in events if isinstance(e, PlanResolved)] == [
            ("approved", "tester")
        ]

    asyncio.run(go())


def test_asking_for_changes_then_rejecting_runs_nothing(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(plan_call(STEPS[:1] * 2), plan_call(STEPS), *READ, ANSWER))

    async def go() -> None:
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "are the probes fine?")
            dialog = await _plan_dialog(pilot, app)
            dialog.query_one("#plan-edit", Button).press()  # no feedback: the dialog asks for it
            await pilot.pause()
            assert app.screen is dialog
            assert "say what should change" in str(dialog.query_one("#problem", Static).render())
            dialog.query_one("#plan-text", Input).value = "read probe b too"
            dialog.query_one("#plan-edit", Button).press()
            revised = await _plan_dialog(pilot, app, revision=2)
            assert "2. Read probe b [probe]" in _shown(revised)
            revised.query_one("#plan-text", Input).value = "not now"
            revised.query_one("#plan-reject", Button).press()
            final = await finished(pilot, "completed")
            assert "rejected by tester: not now" in (final.output or "")
            text = conversation_text(chat(app).view)
            assert "changes asked to the plan by tester (revision 1): read probe b too" in text
            assert "plan rejected by tester (revision 2): not now" in text
            assert _probes(app) == [], "a rejected plan runs nothing"

    asyncio.run(go())


def test_the_remote_tui_decides_a_plan_left_for_later_through_the_server(tmp_path: Path) -> None:
    # Every event type reaches the remote TUI (a hand list once dropped the plan's events).
    assert event_types() == EVENT_TYPES
    url = f"sqlite:///{tmp_path / 'store.db'}"
    with running_service(url, model=api_scripted(turns=[plan_call(STEPS), *READ, ANSWER])) as svc:

        async def go() -> None:
            app = AgentTui(RemoteClient(svc.url, svc.tokens["alice"]))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.press("n")
                await ask(pilot, "are the probes fine?")
                dialog = await _plan_dialog(pilot, app)
                await pilot.press("escape")  # later: the plan waits on the server
                await until(pilot, lambda: not isinstance(app.screen, PlanDecisionDialog))
                screen = chat(app)
                assert screen.view.plan is not None
                assert screen.view.plan.awaiting
                assert "ctrl+l decides it" in str(screen.query_one("#status", Static).render())
                await pilot.press("ctrl+l")
                dialog = await _plan_dialog(pilot, app)
                dialog.query_one("#plan-approve", Button).press()
                await finished(pilot, "completed")
                assert screen.view.plan.statuses == ["done", "done"]
                assert "plan approved by alice" in conversation_text(screen.view)

        asyncio.run(go())
        with svc.client("alice") as c:
            sessions = c.get("/v1/sessions").json()["items"]
            assert [s["status"] for s in sessions] == ["completed"]
            events = c.get(f"/v1/sessions/{sessions[0]['id']}/events").json()["events"]
        resolved = [(e["decision"], e["approver"]) for e in events if e["type"] == "plan_resolved"]
        assert resolved == [("approved", "alice")]
