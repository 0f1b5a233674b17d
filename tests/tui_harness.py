"""The TUI under test: the real session service on a real SQLite store, the scripted model, and
tools of every kind the gate tells apart; helpers to drive the app with Textual's Pilot."""

from __future__ import annotations

import asyncio
import html
import os
import re
import time
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Static

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import RunEvent
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry
from devops_agent.tui.app import AgentTui
from devops_agent.tui.conversation import ConversationView, ToolPanel
from devops_agent.tui.local import LocalClient
from devops_agent.tui.screens import ChatScreen

SIZE = (120, 40)
SLOW_STARTED = asyncio.Event()


def registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("tui", "tools for the TUI tests")

        @ts.tool(read_only=True)
        def probe(name: str) -> ToolResult:
            """Read a probe."""
            return ToolResult.ok({"probe": name, "lines": [f"{name} line {i}" for i in range(40)]})

        @ts.tool(read_only=True)
        async def slow() -> ToolResult:
            """A step that takes long enough to be stopped."""
            SLOW_STARTED.set()
            await asyncio.sleep(30)
            return ToolResult.ok("slept")

        @ts.tool(read_only=False, risk="sensitive")
        def restart(service: str) -> ToolResult:
            """Restart a service (mutating: needs approval)."""
            return ToolResult.ok({"restarted": service})

        @ts.tool(read_only=False, risk="destructive")
        def wipe(path: str) -> ToolResult:
            """Delete a path (destructive: needs CONFIRM)."""
            return ToolResult.ok({"wiped": path})

        return ts

    reg = ToolRegistry()
    reg.add_toolset("tui", build)
    return reg


def scripted(*turns: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(Script.model_validate({"turns": list(turns)}))


PROBE_TURNS = (
    {"tool_calls": [{"tool": "probe", "args": {"name": "a"}}]},
    {"tool_calls": [{"tool": "probe", "args": {"name": "b"}}]},
    {"text": "Looked at {tool_count} probes and found nothing wrong with them."},
)


def local_client(
    directory: Path, model: ScriptedModel | None, *, builtin_tools: bool = False, **settings: Any
) -> LocalClient:
    """``builtin_tools``: the package's own toolsets (what runbooks call) instead of the test's."""
    url = f"sqlite:///{directory / 'store.db'}"
    store = Store(url)
    service = SessionService(
        Settings(database_url=url, **settings),
        store,
        registry=None if builtin_tools else registry(),
        model=model,
        use_configured_model=False,
    )
    return LocalClient(service, user="tester")


def tui(client: Any, **kwargs: Any) -> AgentTui:
    return AgentTui(client, **kwargs)


async def until(pilot: Pilot[Any], check: Callable[[], Any], wait_s: float = 20.0) -> Any:
    """Let the app run until ``check()`` is truthy; its value."""
    deadline = time.monotonic() + wait_s
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {check}")
        await pilot.pause(0.05)


def chat(app: AgentTui) -> ChatScreen:
    screen = app.screen
    assert isinstance(screen, ChatScreen), type(screen)
    return screen


async def ask(pilot: Pilot[Any], question: str) -> None:
    """Type a question into the chat's box and send it."""
    app = pilot.app
    assert isinstance(app, AgentTui)
    box = chat(app).query_one("#question")
    box.focus()
    await pilot.pause()
    box.value = question  # type: ignore[attr-defined]
    await pilot.press("enter")


async def finished(pilot: Pilot[Any], status: str | None = None, wait_s: float = 20.0) -> Any:
    """Wait until the chat's current run finished (with ``status`` when given); its final event."""
    app = pilot.app
    assert isinstance(app, AgentTui)

    def done() -> Any:
        screen = app.screen
        if not isinstance(screen, ChatScreen) or screen.running:
            return None
        run = screen.view.current
        if run is None or run.finished is None:
            return None
        return run.finished if status is None or run.finished.status == status else None

    return await until(pilot, done, wait_s)


WIPE_TURNS = (
    {"tool_calls": [{"tool": "wipe", "args": {"path": "/srv/cache"}}]},
    {"text": "After the wipe: {results}"},
)


def _write_log(path: Path) -> Path:
    lines = []
    for i in range(30):
        lines.append(f"2026-11-27T10:{i:02d}:00Z INFO request served in {i} ms")
        lines.append(f"2026-11-27T10:{i:02d}:01Z ERROR database connection refused: db-{i % 2}:5432")
        if i % 3 == 0:
            lines.append(f"2026-11-27T10:{i:02d}:02Z ERROR payment gateway timeout after 30s order={i}")
    path.write_text("\n".join(lines) + "\n")
    return path


DOCS = Path(__file__).resolve().parent.parent / "docs"
UPDATE = os.environ.get("DEVOPS_AGENT_UPDATE_TUI_SNAPSHOTS") == "1"
"""Read at import: the test-wide fixture clears DEVOPS_AGENT_* variables before each test."""


def event_types() -> set[str]:
    """Every ``type`` the ``RunEvent`` union can carry."""
    union = typing.get_args(RunEvent)[0]
    return {typing.get_args(cls.model_fields["type"].annotation)[0] for cls in typing.get_args(union)}


def conversation_text(view: ConversationView) -> str:
    """Everything the conversation shows, as plain text (panel titles included)."""
    parts: list[str] = []
    for widget in view.query("*"):
        if isinstance(widget, ToolPanel):
            parts.append(widget.title)
        if isinstance(widget, Static):
            parts.append(str(widget.render()))
    return "\n".join(parts)


def snapshot_dir(tmp_path: Path) -> Path:
    return DOCS if UPDATE else tmp_path


def svg_text(svg: Path | str) -> str:
    """The text an SVG screenshot (a file, or the SVG itself) shows, spaces restored."""
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text() if isinstance(svg, Path) else svg)
    return html.unescape("".join(texts)).replace("\xa0", " ")
