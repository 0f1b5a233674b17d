"""End to end through the session service with the shipped scripted model.

The model loop is real pydantic-ai; the tools are a small test toolset registered through the
same registry API plugins use; the store is real (SQLite and PostgreSQL).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import (
    ApprovalRequested,
    RunEvent,
    RunFinished,
    RunStarted,
    Token,
    ToolCall,
    ToolResultEvent,
    event_from_json,
)
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.registry import ToolRegistry

WIPED: list[str] = []
SLOW_STARTED = threading.Event()


def kit_registry() -> ToolRegistry:
    def build(settings: Settings) -> ToolsetBuilder:
        ts = ToolsetBuilder("testkit", "tools for tests")

        @ts.tool(read_only=True)
        def read_probe(name: str) -> ToolResult:
            """Read a named probe."""
            return ToolResult.ok({"probe": name, "value": 42})

        @ts.tool(read_only=True)
        def big_dump() -> str:
            """Return a lot of text."""
            return "line\n" * 20_000

        @ts.tool(read_only=False, risk="destructive")
        def wipe_disk(device: str) -> str:
            """Erase a device."""
            WIPED.append(device)
            return f"wiped {device}"

        @ts.tool(read_only=True)
        async def slow_probe() -> str:
            """Take a long time."""
            SLOW_STARTED.set()
            await asyncio.sleep(30)
            return "done"

        return ts

    registry = ToolRegistry()
    registry.add_toolset("testkit", build)
    return registry


def script(*runs: list[dict[str, Any]]) -> ScriptedModel:
    return ScriptedModel(Script.model_validate({"runs": list(runs)}))


def settings_for(store_url: str, **kw: Any) -> Settings:
    return Settings(database_url=store_url, tools={"output_cap_chars": 2_000}, **kw)


TWO_TOOLS = [
    {"tool_calls": [{"tool": "read_probe", "args": {"name": "disk"}}]},
    {"tool_calls": [{"tool": "big_dump"}]},
    {"text": "Findings for {prompt}: {tool_count} tool results."},
]


def collect(service: SessionService, prompt: str, **kw: Any) -> list[RunEvent]:
    async def go() -> list[RunEvent]:
        return [e async for e in service.stream(prompt, **kw)]

    return asyncio.run(go())


def test_model_loop_streams_persists_and_resumes_in_a_new_process(store_url: str, tmp_path: Path) -> None:
    settings = settings_for(store_url)
    with Store(store_url) as store:
        service = SessionService(settings, store, registry=kit_registry(), model=script(TWO_TOOLS))
        events = collect(service, "why is the disk full?", mode="ask")

        # Events: in order, numbered, starting and finishing the run.
        assert isinstance(events[0], RunStarted)
        assert events[0].path == "model"
        assert isinstance(events[-1], RunFinished)
        assert events[-1].status == "completed"
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        calls = [e for e in events if isinstance(e, ToolCall)]
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [c.tool for c in calls] == ["read_probe", "big_dump"]
        assert [r.tool for r in results] == ["read_probe", "big_dump"]
        for call, result in zip(calls, results, strict=True):
            assert events.index(call) < events.index(result)
            assert call.tool_call_id == result.tool_call_id
        assert results[1].truncated is True, "middleware caps the 100 kB dump"
        assert all(r.status == "success" for r in results)
        text = "".join(e.text for e in events if isinstance(e, Token))
        assert text == "Findings for why is the disk full?: 2 tool results."
        assert events[-1].output == text

        # Persisted as they happened: events, tool calls and the whole history.
        session_id = events[0].session_id
        stored = [event_from_json(e.payload) for e in store.list_events(session_id)]
        assert [e.type for e in stored] == [e.type for e in events]
        recorded = store.list_tool_calls(session_id)
        assert sorted(r.tool for r in recorded) == ["big_dump", "read_probe"]
        assert any(r.truncated for r in recorded if r.tool == "big_dump")
        history = service.history(session_id)
        assert len(history) == 6  # prompt, call, return, call, return, answer
        assert store.get_session(session_id).status == "completed"

    # Resume in another process: the history comes back from the store intact.
    script_file = tmp_path / "resume.yaml"
    script_file.write_text(
        yaml.safe_dump({"runs": [TWO_TOOLS, [{"text": "Earlier you asked: {previous_prompts}"}]]})
    )
    code = textwrap.dedent(
        f"""
        import asyncio, json
        from devops_agent.agent.session import SessionService
        from devops_agent.config import Settings
        from devops_agent.store import Store
        settings = Settings(database_url={store_url!r}, model={{"name": "scripted:{script_file}"}})
        with Store({store_url!r}) as store:
            service = SessionService(settings, store)
            before = len(service.history({session_id!r}))
            events, final = asyncio.run(service.run("and what changed since?", session_id={session_id[:8]!r}))
            print(json.dumps({{"before": before, "after": len(service.history({session_id!r})),
                              "output": final.output, "session": final.session_id}}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["session"] == session_id
    assert result["before"] == 6
    assert result["after"] == 8
    assert result["output"] == "Earlier you asked: why is the disk full?"


def test_ask_mode_cannot_call_a_mutating_tool_even_when_the_model_asks(store_url: str) -> None:
    WIPED.clear()
    turns = [{"tool_calls": [{"tool": "wipe_disk", "args": {"device": "/dev/sda"}}]}, {"text": "tried"}]
    with Store(store_url) as store:
        service = SessionService(settings_for(store_url), store, registry=kit_registry(), model=script(turns))
        events = collect(service, "clean up the disk", mode="ask")
        assert WIPED == []
        result = next(e for e in events if isinstance(e, ToolResultEvent))
        assert result.tool == "wipe_disk"
        assert result.status == "error"
        assert isinstance(events[-1], RunFinished)
        assert events[-1].status == "completed"

        # In agent mode the tool is offered, and the run pauses for a person's approval instead.
        service = SessionService(settings_for(store_url), store, registry=kit_registry(), model=script(turns))
        events = collect(service, "clean up the disk", mode="agent")
        assert WIPED == []
        request = next(e for e in events if isinstance(e, ApprovalRequested))
        assert request.tool == "wipe_disk"
        assert request.decision == "approve_detailed"
        assert isinstance(events[-1], RunFinished)
        assert events[-1].status == "paused"


def test_cancel_ends_the_run_and_marks_the_session(store_url: str) -> None:
    SLOW_STARTED.clear()
    turns = [{"tool_calls": [{"tool": "slow_probe"}]}, {"text": "never"}]
    with Store(store_url) as store:
        service = SessionService(settings_for(store_url), store, registry=kit_registry(), model=script(turns))

        async def go() -> list[RunEvent]:
            seen: list[RunEvent] = []
            async for event in service.stream("hang", mode="ask"):
                seen.append(event)
                if isinstance(event, ToolCall):
                    assert await asyncio.to_thread(SLOW_STARTED.wait, 10)
                    assert service.cancel(event.run_id)
            return seen

        events = asyncio.run(asyncio.wait_for(go(), timeout=20))
        final = events[-1]
        assert isinstance(final, RunFinished)
        assert final.status == "cancelled"
        assert store.get_session(final.session_id).status == "cancelled"
        assert service.cancel(final.run_id) is False


def test_unknown_session_is_a_user_error(store_url: str) -> None:
    from devops_agent.errors import NotFoundError

    with Store(store_url) as store:
        service = SessionService(
            settings_for(store_url), store, registry=kit_registry(), model=script(TWO_TOOLS)
        )
        with pytest.raises(NotFoundError):
            collect(service, "hi", session_id="doesnotexist")
