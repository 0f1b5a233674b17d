"""The TUI against a real service (``devops-agent serve``'s app under uvicorn on 127.0.0.1): the
remote client speaks the WebSocket and REST protocol of docs/api.md, the server's rules hold (a
viewer stays in ask mode; a destructive call needs CONFIRM and an admin), and a dropped connection
is resumed with every event delivered exactly once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from textual.widgets import Button, DataTable, Static

from api_harness import PROBE_TURNS, running_service, scripted
from devops_agent.errors import UserError
from devops_agent.events import RunEvent, RunFinished, ToolResultEvent
from devops_agent.tui.app import AgentTui
from devops_agent.tui.conversation import ToolPanel
from devops_agent.tui.dialogs import ApprovalDialog
from devops_agent.tui.remote import RemoteClient
from devops_agent.tui.screens import ChatScreen, SessionsScreen
from tui_harness import SIZE, ask, chat, finished, until

pytestmark = pytest.mark.slow

RESTART_TURNS = [
    {"tool_calls": [{"tool": "restart", "args": {"service": "checkout"}}]},
    {"text": "Restart done: {results}"},
]


def _url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'store.db'}"


def test_the_tui_runs_a_question_and_an_approval_through_a_server(tmp_path: Path) -> None:
    with running_service(_url(tmp_path), model=scripted(turns=RESTART_TURNS)) as svc:

        async def go() -> None:
            app = AgentTui(RemoteClient(svc.url, svc.tokens["alice"]), mode="agent")
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
                assert app.identity is not None
                assert (app.identity.user, app.identity.role) == ("alice", "operator")
                await pilot.press("n")
                await ask(pilot, "restart checkout")
                dialog = await until(pilot, lambda: isinstance(app.screen, ApprovalDialog) and app.screen)
                await pilot.pause()
                dialog.query_one("#approve", Button).press()
                final = await finished(pilot, "completed")
                assert final.output
                assert "restarted" in final.output
                panels = list(chat(app).view.query(ToolPanel))
                assert panels[-1].title.startswith("✓ restart(service='checkout')")
                await pilot.press("escape")
                table = app.screen.query_one("#sessions", DataTable)
                await until(pilot, lambda: table.row_count == 1)
                assert table.get_row_at(0)[:3] == [final.session_id[:12], "completed", "agent"]
            # the server's own record: the approval in alice's name
            with svc.client("alice") as c:
                audit = c.get("/v1/audit", params={"session": final.session_id}).json()
            assert any(a["tool"] == "restart" and a["actor"] == "alice" for a in audit), audit

        asyncio.run(go())


def test_a_viewer_stays_in_ask_mode_and_a_destructive_call_needs_confirm_at_the_server(
    tmp_path: Path,
) -> None:
    wipe = [{"tool_calls": [{"tool": "wipe", "args": {"path": "/srv"}}]}, {"text": "done: {results}"}]
    with running_service(_url(tmp_path), model=scripted(turns=wipe)) as svc:

        async def viewer() -> None:
            app = AgentTui(RemoteClient(svc.url, svc.tokens["vic"]), mode="agent")
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: isinstance(app.screen, SessionsScreen))
                assert app.default_mode == "ask", "a viewer's TUI starts in ask mode"
                await pilot.press("n")
                await pilot.press("ctrl+t")
                await until(pilot, lambda: any("ask mode only" in n.message for n in app._notifications))
                assert chat(app).mode == "ask"

        async def admin() -> None:
            client = RemoteClient(svc.url, svc.tokens["carol"])
            await client.connect()
            try:
                ref = await client.ask("wipe /srv", session_id=None, mode="agent")
                async for event in client.events(ref.run_id):
                    last = event
                assert isinstance(last, RunFinished)
                assert last.status == "paused"
                with pytest.raises(UserError, match="takes confirm=CONFIRM") as refused:
                    await client.answer(ref.session_id, approve=True)
                assert refused.value.fields["status"] == 400
                assert [c.tool for c in await client.pending(ref.session_id)] == ["wipe"]
                again = await client.answer(ref.session_id, approve=True, confirm="CONFIRM")
                results = [e async for e in client.events(again.run_id) if isinstance(e, ToolResultEvent)]
                assert [(r.tool, r.status) for r in results] == [("wipe", "success")]
            finally:
                await client.close()

        asyncio.run(viewer())
        asyncio.run(admin())


def test_a_dropped_connection_is_resumed_with_every_event_exactly_once(tmp_path: Path) -> None:
    turns = [PROBE_TURNS[0], {"tool_calls": [{"tool": "short_sleep"}]}, *PROBE_TURNS[1:]]
    with running_service(_url(tmp_path), model=scripted(turns=turns)) as svc:

        async def go() -> list[RunEvent]:
            client = RemoteClient(svc.url, svc.tokens["alice"])
            await client.connect()
            got: list[RunEvent] = []
            try:
                ref = await client.ask("probe twice", session_id=None, mode="ask")
                dropped = False
                async for event in client.events(ref.run_id):
                    got.append(event)
                    if event.type == "tool_call" and event.tool == "short_sleep" and not dropped:
                        dropped = True
                        client._ws.transport.abort()  # the network drops: no close handshake
            finally:
                await client.close()
            return got

        events = asyncio.run(go())
    seqs = [e.seq for e in events]
    assert seqs == list(range(1, len(seqs) + 1)), "no event lost or repeated"
    assert isinstance(events[-1], RunFinished)
    assert events[-1].status == "completed"
    assert [e.tool for e in events if isinstance(e, ToolResultEvent)] == ["probe", "short_sleep", "probe"]


def test_a_bad_token_ends_the_tui_with_the_servers_reason(tmp_path: Path) -> None:
    with running_service(_url(tmp_path), model=scripted(turns=PROBE_TURNS)) as svc:

        async def go() -> AgentTui:
            app = AgentTui(RemoteClient(svc.url, "dat_not-a-token"))
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause(0.5)
            return app

        app = asyncio.run(go())
    assert isinstance(app.failure, UserError)
    assert app.failure.fields["status"] == 401


def test_opening_a_running_session_follows_its_run_from_where_the_history_ends(tmp_path: Path) -> None:
    # three one-second steps: the TUI opens the session while its run is still going
    turns = [*[{"tool_calls": [{"tool": "short_sleep"}]}] * 3, PROBE_TURNS[-1]]
    with running_service(_url(tmp_path), model=scripted(turns=turns)) as svc:
        with svc.client("alice") as c:
            started = c.post("/v1/runs", json={"question": "sleep three times"}).json()

        async def go() -> None:
            client = RemoteClient(svc.url, svc.tokens["alice"])
            app = AgentTui(client, session_id=started["session_id"])
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: isinstance(app.screen, ChatScreen) and app.screen.running)
                final = await finished(pilot, "completed")
                assert final.run_id == started["run_id"]
                view = chat(app).view
                assert [p.title.split(" ")[0] for p in view.query(ToolPanel)] == ["✓"] * 3
                text = "\n".join(str(s.render()) for s in view.query(Static))
                assert text.count("› sleep three times") == 1, "history and the followed run overlap nowhere"

        asyncio.run(go())


def test_a_message_the_client_cannot_read_is_skipped_not_fatal() -> None:
    """One malformed message (or an event of a newer schema with a broken field) must not end the
    reader: the events after it still reach their run."""
    good = RunFinished(session_id="s" * 32, run_id="r" * 32, seq=1, status="completed").model_dump_json()

    async def messages() -> AsyncIterator[str]:
        for raw in ("{not json", '{"type": "token", "run_id": "x"}', good):
            yield raw

    async def go() -> RunEvent:
        client = RemoteClient("http://127.0.0.1:9", "t")
        await client._read(messages())
        queue = client._runs["r" * 32]
        event = queue.get_nowait()
        assert isinstance(event, RunFinished)
        return event

    assert asyncio.run(go()).status == "completed"
