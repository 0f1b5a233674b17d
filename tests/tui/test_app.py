"""The TUI's flows, driven headless with Textual's Pilot over the real session service (scripted
model, real SQLite store, real tools through the real pipeline): a question streams its answer and
its tool calls; approvals (mutating, destructive with CONFIRM, denial); Ctrl-C stops a run; the
mode switch; the plan and the report with its findings; saving a tool's output; the sessions list.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.widgets import Button, DataTable, Input, Static

from devops_agent.errors import UserError
from devops_agent.events import (
    ApprovalRequested,
    ApprovalResolved,
    ContextCompacted,
    CouncilResult,
    CriticReview,
    Delegation,
    ErrorEvent,
    LimitReached,
    NotificationSent,
    PlanDeviation,
    PlanProposed,
    PlanResolved,
    PlanStepEvent,
    Replan,
    RunEvent,
    RunFinished,
    RunResumed,
    RunStarted,
    Token,
    ToolCall,
    ToolResultEvent,
)
from devops_agent.evidence import Evidence, TemplateRow, make_series, template_table
from devops_agent.tui.conversation import RENDERERS, ConversationView, ToolPanel
from devops_agent.tui.dialogs import ApprovalDialog, PlanDialog, SaveOutputDialog
from devops_agent.tui.report_view import ReportScreen
from devops_agent.tui.screens import ChatScreen, SessionsScreen
from tui_harness import (
    PROBE_TURNS,
    SIZE,
    SLOW_STARTED,
    WIPE_TURNS,
    _write_log,
    ask,
    chat,
    conversation_text,
    event_types,
    finished,
    local_client,
    scripted,
    tui,
    until,
)

IDS = {"session_id": "s" * 32, "run_id": "r" * 32}


ONE_OF_EACH: list[RunEvent] = [
    RunStarted(**IDS, seq=1, prompt="why <b>[red]slow", mode="ask", path="model", model="scripted"),
    PlanProposed(**IDS, seq=2, steps=["look at the disk", "look at memory"]),
    ToolCall(**IDS, seq=3, tool_call_id="c1", tool="probe", args={"name": "[bold]x\x1b[31m"}),
    ToolResultEvent(
        **IDS,
        seq=4,
        tool_call_id="c1",
        tool="probe",
        status="success",
        duration_ms=12.0,
        summary="ok",
        evidence=Evidence(
            series=[make_series("p99", {"job": "api"}, [(1.0, 0.2), (2.0, 0.9), (3.0, 0.3)])],
            templates=template_table([TemplateRow(template="timeout after <*>", count=7)], total=1, lines=7),
        ),
    ),
    Token(**IDS, seq=5, text="The disk "),
    Token(**IDS, seq=6, text="is full."),
    ApprovalRequested(
        **IDS, seq=7, tool_call_id="c2", tool="wipe", args={"path": "/tmp"}, decision="approve_detailed"
    ),
    ApprovalResolved(**IDS, seq=8, tool_call_id="c2", approved=False, reason="not now", approver="ann"),
    ErrorEvent(**IDS, seq=9, message="the probe broke", hint="look at it"),
    PlanResolved(**IDS, seq=10, decision="approved", revision=1, approver="ann"),
    PlanStepEvent(**IDS, seq=11, index=1, title="look at memory", status="done", note="RSS at 98%"),
    PlanDeviation(**IDS, seq=12, kind="unplanned_call", detail="called git_log, which no step names"),
    Delegation(**IDS, seq=13, phase="started", specialist="metrics", task="check p99"),
    Delegation(**IDS, seq=14, phase="finished", specialist="metrics", task="check p99", status="completed"),
    CriticReview(
        **IDS,
        seq=15,
        stage="deterministic",
        round=1,
        issues=[{"finding": 0, "title": "disk full", "check": "quote_not_found", "detail": "not in c1"}],
        action="replan",
    ),
    Replan(**IDS, seq=16, number=1, budget=2, reason="a quotation is not in the cited output"),
    CouncilResult(
        **IDS,
        seq=17,
        members=["logs", "metrics"],
        disagreements=[
            {
                "topic": "whether anything is wrong",
                "positions": {"logs": "OOM", "metrics": "found no problem"},
            }
        ],
    ),
    ContextCompacted(
        **IDS,
        seq=18,
        request=2,
        tokens_before=90000,
        tokens_after=30000,
        limit=64000,
        window=128000,
        counter="t",
    ),
    LimitReached(**IDS, seq=19, scope="run", limit="tool_calls", used=20, ceiling=20),
    RunResumed(**IDS, seq=20, worker="worker-7", after_seq=12, completed_steps=3),
    NotificationSent(
        **IDS, seq=21, sink="slack-oncall", kind="report", ok=False, attempts=3, error="HTTP 500"
    ),
    RunFinished(**IDS, seq=22, status="completed", output="The disk is full."),
]


def test_every_event_type_is_rendered_by_the_tui() -> None:
    """A new event type in devops_agent.events fails here until the conversation draws it."""
    assert event_types() == set(RENDERERS), "RunEvent types and the TUI's renderers differ"
    assert {e.type for e in ONE_OF_EACH} == event_types()

    from textual.app import App, ComposeResult

    class One(App[None]):
        def compose(self) -> ComposeResult:
            yield ConversationView()

    async def go() -> None:
        app = One()
        async with app.run_test(size=SIZE) as pilot:
            view = app.query_one(ConversationView)
            for event in ONE_OF_EACH:
                before = len(view.children), conversation_text(view)
                view.apply(event)
                await pilot.pause()
                assert (len(view.children), conversation_text(view)) != before, f"{event.type} drew nothing"
            shown = conversation_text(view)
            assert "why <b>[red]slow" in shown  # a prompt is literal text, not markup
            assert "\x1b" not in shown
            assert "[bold]x" in shown
            assert "The disk is full." in shown
            assert "p99{job=api}" in shown  # the tool result's evidence: its chart and its table
            assert "log templates: 1 of 1 from 7 lines" in shown
            assert "CONFIRM" in shown
            assert "denied by ann: not now" in shown
            assert "the probe broke (look at it)" in shown
            assert "✓ 2. look at memory [done] — RSS at 98%" in shown
            assert "· 1. look at the disk [pending]" in shown
            assert "plan approved by ann" in shown
            assert "deviation from the plan: a call no step names" in shown
            assert "← [metrics] completed: check p99" in shown
            assert "[quote_not_found] disk full: not in c1" in shown
            assert "re-plan 1 of 2" in shown
            assert "disagree on whether anything is wrong" in shown
            assert "[metrics] found no problem" in shown
            assert "90000 → 30000 tokens" in shown
            assert "usage limit reached: tool_calls per run, 20 of 20" in shown
            assert "resumed by worker worker-7" in shown
            assert "could not send report to slack-oncall after 3 attempts: HTTP 500" in shown
            assert view.last_report is not None
            assert view.current is not None
            assert view.current.plan == ["look at the disk", "look at memory"]

    asyncio.run(go())


def _panels(screen: ChatScreen) -> list[ToolPanel]:
    return list(screen.view.query(ToolPanel))


def test_a_question_streams_its_answer_and_tool_panels_in_order(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(*PROBE_TURNS))

    async def go() -> None:
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
            await pilot.press("n")
            await until(pilot, lambda: isinstance(app.screen, ChatScreen))
            await ask(pilot, "are the probes fine?")
            final = await finished(pilot)
            assert final.status == "completed"
            screen = chat(app)
            titles = [p.title for p in _panels(screen)]
            assert len(titles) == 2
            assert titles[0].startswith("✓ probe(name='a')")
            assert titles[1].startswith("✓ probe(name='b')")
            shown = conversation_text(screen.view)
            assert "› are the probes fine?" in shown
            assert "Looked at 2 probes and found nothing wrong with them." in shown
            assert shown.index("probe(name='a')") < shown.index("probe(name='b')") < shown.index("Looked at")
            assert screen.session_id is not None
            # the answer came as tokens (streamed), several of them, drawn into one paragraph
            events = await client.history(screen.session_id)
            assert sum(isinstance(e, Token) for e in events) > 3

    asyncio.run(go())


RESTART_TURNS = (
    {"tool_calls": [{"tool": "restart", "args": {"service": "checkout"}}]},
    {"text": "Restart done: {results}"},
)


async def _dialog(pilot: object, app: object) -> ApprovalDialog:
    screen = await until(pilot, lambda: isinstance(app.screen, ApprovalDialog) and app.screen)  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    return screen  # type: ignore[no-any-return]


def test_a_mutating_call_waits_in_the_approval_dialog_and_runs_once_approved(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(*RESTART_TURNS))

    async def go() -> None:
        app = tui(client, mode="agent")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "restart checkout")
            dialog = await _dialog(pilot, app)
            shown = "\n".join(str(s.render()) for s in dialog.query(Static))
            assert 'restart({"service": "checkout"})' in shown
            assert not dialog.query("#confirm"), "a mutating call needs no CONFIRM"
            await pilot.click("#approve")
            final = await finished(pilot, "completed")
            screen = chat(app)
            assert final.output
            assert "restarted" in final.output
            titles = [p.title for p in _panels(screen)]
            assert titles[-1].startswith("✓ restart(service='checkout')")
            assert "approved by tester" in conversation_text(screen.view)
        audit = client.store.list_audit(session_id=final.session_id)
        outcomes = {(a.outcome, a.actor) for a in audit if a.tool == "restart"}
        assert ("executed", "tester") in outcomes, outcomes

    asyncio.run(go())


def test_a_destructive_call_is_refused_without_confirm_and_runs_with_it(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(*WIPE_TURNS))

    async def go() -> None:
        app = tui(client, mode="agent")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "wipe the cache")
            dialog = await _dialog(pilot, app)
            (waiting,) = chat_screen_below(app).view.query(ToolPanel)
            assert waiting.title.startswith("⏸ wipe(path='/srv/cache')")
            await pilot.click("#approve")  # no CONFIRM typed
            await pilot.pause()
            assert app.screen is dialog, "approving a destructive call without CONFIRM must not close"
            assert "takes CONFIRM" in str(dialog.query_one("#problem", Static).render())
            session_id = chat_session(app)
            assert (await client.pending(session_id))[0].tool == "wipe", "still pending, nothing ran"
            # the client holds the same rule on its own (what the dialog relies on)
            with pytest.raises(UserError, match="takes CONFIRM"):
                await client.answer(session_id, approve=True, confirm="confirm")
            dialog.query_one("#confirm", Input).value = "CONFIRM"
            dialog.query_one("#approve", Button).press()  # a second click this soon would be a double click
            final = await finished(pilot, "completed")
            assert final.output
            assert "wiped" in final.output

    asyncio.run(go())


def chat_screen_below(app: object) -> ChatScreen:
    """The chat under a dialog."""
    return next(s for s in reversed(app.screen_stack) if isinstance(s, ChatScreen))  # type: ignore[attr-defined]


def chat_session(app: object) -> str:
    for screen in app.screen_stack:  # type: ignore[attr-defined]
        if isinstance(screen, ChatScreen) and screen.session_id:
            return screen.session_id
    raise AssertionError("no chat with a session")


def test_a_denied_call_tells_the_model_why_and_is_not_run(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(*RESTART_TURNS))

    async def go() -> None:
        app = tui(client, mode="agent")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "restart checkout")
            dialog = await _dialog(pilot, app)
            dialog.query_one("#reason", Input).value = "not during business hours"
            await pilot.click("#deny")
            final = await finished(pilot, "completed")
            assert final.output
            assert "tester denied this call: not during business hours" in final.output
            assert "denied by tester: not during business hours" in conversation_text(chat(app).view)
            assert not [c for c in client.store.list_tool_calls(final.session_id) if c.tool == "restart"]

    asyncio.run(go())


def test_ctrl_c_stops_the_run_and_keeps_the_session(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted({"tool_calls": [{"tool": "slow"}]}, {"text": "never"}))

    async def go() -> None:
        SLOW_STARTED.clear()
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "take your time")
            await until(pilot, SLOW_STARTED.is_set)
            assert chat(app).running
            await pilot.press("ctrl+c")
            final = await finished(pilot, "cancelled", wait_s=10)
            assert "cancelled — stopped" in conversation_text(chat(app).view)
            (panel,) = _panels(chat(app))
            assert panel.title.startswith("✗ slow()"), "the call the cancel cut short is not left 'running'"
            assert app.is_running, "ctrl+c stops the run, not the TUI"
        assert client.store.get_session(final.session_id).status == "cancelled"

    asyncio.run(go())


def test_the_mode_switch_changes_the_session_and_its_next_run(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(*PROBE_TURNS))

    async def go() -> None:
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "probe")
            final = await finished(pilot)
            assert client.store.get_session(final.session_id).mode == "ask"
            await pilot.press("ctrl+t")
            await until(pilot, lambda: chat(app).mode == "agent")
            assert client.store.get_session(final.session_id).mode == "agent"
            assert "agent mode" in str(chat(app).query_one("#status", Static).render())
            await ask(pilot, "probe again")
            again = await until(
                pilot, lambda: (r := chat(app).view.current) and r.run_id != final.run_id and r.finished
            )
            assert again.status == "completed"
            started = [e for e in await client.history(final.session_id) if isinstance(e, RunStarted)]
            assert [e.mode for e in started] == ["ask", "agent"]

    asyncio.run(go())


def test_a_runbook_run_shows_its_plan_and_a_report_whose_findings_can_be_stepped_through(
    tmp_path: Path,
) -> None:
    log = _write_log(tmp_path / "app.log")
    client = local_client(tmp_path, None, builtin_tools=True, files={"roots": [str(tmp_path)]})

    async def go() -> None:
        app = tui(client, inputs={"logs": [str(log)], "since": "2026-11-27T09:00:00Z"})
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "what errors are in the logs?")
            final = await finished(pilot, "completed")
            assert final.report is not None
            findings = final.report["findings"]
            assert len(findings) >= 2, findings
            await pilot.press("ctrl+l")
            plan = await until(pilot, lambda: isinstance(app.screen, PlanDialog) and app.screen)
            (proposed,) = [e for e in await client.history(final.session_id) if isinstance(e, PlanProposed)]
            assert plan.steps == proposed.steps
            assert plan.done == len(plan.steps)
            assert plan.query_one("#stop", Button).disabled, "a finished run cannot be stopped"
            await pilot.press("escape")
            await pilot.press("ctrl+r")
            report = await until(pilot, lambda: isinstance(app.screen, ReportScreen) and app.screen)
            await pilot.pause()
            head = str(report.query_one("#head", Static).render())
            assert "verdict: problems found" in head
            assert report.shown.title == findings[0]["title"]
            assert findings[0]["title"] in str(report.query_one("#finding", Static).render())
            await pilot.press("n")
            assert report.shown.title == findings[1]["title"]
            detail = str(report.query_one("#finding", Static).render())
            assert findings[1]["title"] in detail
            assert "evidence" in detail
            await pilot.press("p")
            assert report.shown.title == findings[0]["title"]
            assert "checked" in str(report.query_one("#checks", Static).render())
            await pilot.press("escape")
            assert isinstance(app.screen, ChatScreen)

    asyncio.run(go())


def chat_screen(app: object) -> ChatScreen:
    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, ChatScreen)
    return screen


def test_a_tool_calls_full_output_is_saved_to_a_file_and_never_over_another(tmp_path: Path) -> None:
    # a small cap: the probes' outputs are cut for the model, and their full outputs kept
    client = local_client(tmp_path, scripted(*PROBE_TURNS), tools={"output_cap_chars": 300})
    out = tmp_path / "out"
    out.mkdir()

    async def go() -> None:
        app = tui(client, save_dir=out)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "probe")
            final = await finished(pilot)
            await pilot.press("ctrl+o")
            dialog = await until(pilot, lambda: isinstance(app.screen, SaveOutputDialog) and app.screen)
            await pilot.pause()
            path = dialog.query_one("#path", Input)
            second = list(client.store.kept_outputs(final.session_id))[1]
            assert path.value.endswith(f"probe-{second[0]}.txt"), "the last call is picked first"
            path.value = str(out / "b.txt")
            path.focus()
            await pilot.press("enter")
            await until(pilot, (out / "b.txt").exists)
            saved = (out / "b.txt").read_text()
            assert saved == client.store.tool_output(final.session_id, second[0])
            assert "b line 39" in saved, "the full output, not the model's summary"
            # again to the same file: refused, the file is left as it was
            (out / "b.txt").write_text("keep me")
            await pilot.press("ctrl+o")
            dialog = await until(pilot, lambda: isinstance(app.screen, SaveOutputDialog) and app.screen)
            await pilot.pause()
            dialog.query_one("#path", Input).value = str(out / "b.txt")
            dialog.query_one("#save", Button).press()
            await until(pilot, lambda: any("exists" in n.message for n in app._notifications))
            assert (out / "b.txt").read_text() == "keep me"

    asyncio.run(go())


def test_the_sessions_list_opens_a_past_session_with_its_history_and_a_paused_one_asks_again(
    tmp_path: Path,
) -> None:
    client = local_client(tmp_path, scripted(*RESTART_TURNS))

    async def go() -> None:
        app = tui(client, mode="agent")
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "restart checkout")
            dialog = await _dialog(pilot, app)
            await pilot.click("#later")  # leave it paused
            await until(pilot, lambda: isinstance(app.screen, ChatScreen) and not app.screen.running)
            session_id = chat_session(app)
            assert client.store.get_session(session_id).status == "paused"
            await pilot.press("escape")
            sessions = await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen)
            table = sessions.query_one("#sessions", DataTable)
            await until(pilot, lambda: table.row_count == 1)
            row = table.get_row_at(0)
            assert row[:4] == [session_id[:12], "paused", "agent", "1"]
            table.focus()
            await pilot.press("enter")
            dialog = await _dialog(pilot, app)  # reopening a paused session asks again
            dialog.query_one("#approve", Button).press()
            final = await finished(pilot, "completed")
            screen = chat_screen(app)
            assert screen.session_id == session_id
            shown = conversation_text(screen.view)
            assert shown.count("› restart checkout") == 1, "the history is drawn once"
            assert "approval needed" in shown
            assert "approved by tester" in shown
            assert final.output

    asyncio.run(go())


def test_quitting_stops_a_local_run_and_stores_it_cancelled(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted({"tool_calls": [{"tool": "slow"}]}, {"text": "never"}))

    async def go() -> str:
        SLOW_STARTED.clear()
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "take your time")
            await until(pilot, SLOW_STARTED.is_set)
            session_id = chat_session(app)
            await pilot.press("ctrl+q")
        return session_id

    session_id = asyncio.run(go())
    assert client.store.get_session(session_id).status == "cancelled"
    (run,) = client.store.list_runs(session_id)
    assert run.status == "cancelled"
    assert client.store.run_events(run.id)[-1].type == "run_finished"


def test_with_the_privacy_guard_the_answer_ends_restored_not_with_placeholders(tmp_path: Path) -> None:
    model = scripted({"text": "Answer to: {prompt}"})
    client = local_client(tmp_path, model, privacy={"enabled": "on", "ner": "off"})

    async def go() -> None:
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("n")
            await ask(pilot, "why does alice@example.com get errors?")
            final = await finished(pilot, "completed")
            await pilot.pause()
            streamed = [e.text for e in await client.history(final.session_id) if isinstance(e, Token)]
            assert any("<<EMAIL_" in t for t in streamed), "the tokens carry the placeholder"
            shown = conversation_text(chat(app).view)
            assert "Answer to: why does alice@example.com get errors?" in shown
            assert "<<EMAIL_" not in shown

    asyncio.run(go())


def test_the_sessions_list_filters_by_words_of_title_id_status_or_mode(tmp_path: Path) -> None:
    client = local_client(tmp_path, scripted(*PROBE_TURNS))

    async def go() -> None:
        for question, mode in (("why is the disk full?", "ask"), ("memory keeps growing", "agent")):
            ref = await client.ask(question, session_id=None, mode=mode)
            _ = [e async for e in client.events(ref.run_id)]
        app = tui(client)
        async with app.run_test(size=SIZE) as pilot:
            sessions = await until(pilot, lambda: isinstance(app.screen, SessionsScreen) and app.screen)
            table = sessions.query_one("#sessions", DataTable)
            await until(pilot, lambda: table.row_count == 2)
            await pilot.press("slash")
            for key in "disk":
                await pilot.press(key)
            assert table.row_count == 1
            assert "why is the disk full?" in str(table.get_row_at(0)[-1])
            sessions.query_one("#filter", Input).value = "agent memory"
            await pilot.pause()
            assert [str(table.get_row_at(0)[-1])] == ["memory keeps growing"]
            await pilot.press("escape")
            assert table.row_count == 2
            assert isinstance(app.screen, SessionsScreen), "escape clears the filter; it does not leave"

    asyncio.run(go())
