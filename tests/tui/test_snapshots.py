"""SVG snapshots of the TUI's main screens (sessions, conversation, a destructive approval, the
report), taken headless from real runs. Each is checked for what the screen must show; with
``DEVOPS_AGENT_UPDATE_TUI_SNAPSHOTS=1`` they are written into docs/ for docs/tui.md."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable, Input

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.tui.dialogs import ApprovalDialog
from devops_agent.tui.report_view import ReportScreen
from devops_agent.tui.screens import SessionsScreen
from tui_harness import (
    PROBE_TURNS,
    SIZE,
    WIPE_TURNS,
    _write_log,
    ask,
    finished,
    local_client,
    snapshot_dir,
    svg_text,
    tui,
    until,
)


def test_snapshots_of_the_main_screens(tmp_path: Path) -> None:
    where = snapshot_dir(tmp_path)
    log = _write_log(tmp_path / "app.log")
    runs = {"runs": [list(PROBE_TURNS), list(WIPE_TURNS)]}  # one script per question of the session
    model_client = local_client(tmp_path / "m", ScriptedModel(Script.model_validate(runs)))
    runbook_client = local_client(tmp_path / "r", None, builtin_tools=True, files={"roots": [str(tmp_path)]})

    async def model_screens() -> None:
        app = tui(model_client, mode="agent")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "are the probes healthy?")
            await finished(pilot, "completed")
            app.save_screenshot("tui-conversation.svg", str(where))
            await ask(pilot, "wipe the cache")
            dialog = await until(pilot, lambda: isinstance(app.screen, ApprovalDialog) and app.screen)
            await pilot.pause()
            dialog.query_one("#reason", Input).focus()
            await pilot.pause()
            app.save_screenshot("tui-approval.svg", str(where))
            await pilot.press("escape")  # later
            await pilot.pause()
            await pilot.press("escape")  # back to the sessions
            sessions = await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen)
            await until(pilot, lambda: sessions.query_one("#sessions", DataTable).row_count == 1)
            # Drawn, not only filled: on a loaded machine the row was in the table before the
            # screen showed it.
            await until(pilot, lambda: "are the probes healthy?" in svg_text(app.export_screenshot()))
            app.save_screenshot("tui-sessions.svg", str(where))

    async def report_screen() -> None:
        app = tui(runbook_client, inputs={"logs": [str(log)], "since": "2026-11-27T09:00:00Z"})
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "what errors are in the logs?")
            await finished(pilot, "completed")
            await pilot.press("ctrl+r")
            await until(pilot, lambda: isinstance(app.screen, ReportScreen))
            await pilot.press("n")
            await pilot.pause()
            app.save_screenshot("tui-report.svg", str(where))

    asyncio.run(model_screens())
    asyncio.run(report_screen())
    conversation = svg_text(where / "tui-conversation.svg")
    assert "› are the probes healthy?" in conversation
    assert "✓ probe(name='a')" in conversation
    assert "Looked at 2 probes" in conversation
    approval = svg_text(where / "tui-approval.svg")
    assert "could lose" in approval
    assert "type CONFIRM to approve" in approval
    sessions = svg_text(where / "tui-sessions.svg")
    assert "paused" in sessions
    assert "are the probes healthy?" in sessions  # a session is titled by its first question
    report = svg_text(where / "tui-report.svg")
    assert "verdict: problems found" in report
    assert "evidence" in report
