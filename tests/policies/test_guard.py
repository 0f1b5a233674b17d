"""The safety guard's outcomes through the session service, and the approval prompt."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.cli import approve as approve_cli
from devops_agent.config import Settings
from devops_agent.config.settings import SafetySettings
from devops_agent.events import ErrorEvent, RunEvent, RunFinished, ToolCall, ToolResultEvent
from devops_agent.policies.guard import evaluate_command
from devops_agent.store import Store


def model(*turns: dict[str, Any]) -> ScriptedModel:
    return ScriptedModel(Script.model_validate({"turns": list(turns)}))


def shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"tool": "shell_run", "args": {"command": command}}]}


def test_halt_pattern_stops_the_run(store_url: str) -> None:
    with Store(store_url) as store:
        service = SessionService(
            Settings(database_url=store_url, mode="agent"),
            store,
            model=model(shell(":(){ :|:& };:"), {"text": "x"}),
        )
        events, final = asyncio.run(service.run("stress test"))
        assert final.status == "failed"
        error = next(e for e in events if isinstance(e, ErrorEvent))
        assert error.error_type == "RunHaltedError"
        assert [a.outcome for a in store.list_audit(session_id=final.session_id)] == ["halted"]


def test_unparseable_command_is_rejected_with_a_corrected_form() -> None:
    verdict = evaluate_command("grep 'unterminated /var/log/syslog", "agent", SafetySettings())
    assert verdict.decision == "reject"
    assert "could not be parsed" in verdict.reason
    assert verdict.hint is not None
    assert "grep 'unterminated /var/log/syslog'" in verdict.hint


def test_allow_and_deny_patterns_apply(tmp_path: Path) -> None:
    safety = SafetySettings(allow_patterns=["systemctl restart nginx"], deny_patterns=["kubectl * -n prod*"])
    assert evaluate_command("systemctl restart nginx", "agent", safety).decision == "allow"
    assert evaluate_command("systemctl restart nginx", "ask", safety).decision == "reject"
    assert evaluate_command("kubectl get pods -n prod", "agent", safety).decision == "reject"
    assert evaluate_command("rm -rf /srv/data", "agent", safety).decision == "approve_detailed"


def _sleepers() -> list[psutil.Process]:
    # Only this test process's descendants: another run on the machine may have its own sleepers.
    found = []
    for p in psutil.Process().children(recursive=True):
        try:
            if p.cmdline() in (["sleep", "300"], ["sleep", "301"]):
                found.append(p)
        except psutil.NoSuchProcess:
            continue
    return found


def test_cancelling_a_run_kills_the_running_command_and_its_children(store_url: str) -> None:
    # A read-only pipeline (runs without approval in ask mode) under bash: three processes.
    turns = (shell("sleep 300 | sleep 301"), {"text": "never"})
    with Store(store_url) as store:
        service = SessionService(Settings(database_url=store_url), store, model=model(*turns))

        running: list[psutil.Process] = []

        async def go() -> list[RunEvent]:
            seen: list[RunEvent] = []
            async for event in service.stream("wait a while", mode="ask"):
                seen.append(event)
                if isinstance(event, ToolCall):
                    for _ in range(200):
                        if len(_sleepers()) == 2:
                            break
                        await asyncio.sleep(0.05)
                    running.extend(_sleepers())
                    assert len(running) == 2, "the command is running"
                    service.cancel(event.run_id)
            return seen

        events = asyncio.run(asyncio.wait_for(go(), 30))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.status == "cancelled"
    assert not any(isinstance(e, ToolResultEvent) for e in events)
    time.sleep(0.3)
    # The very processes seen running are gone (checked by pid: an escaped one would no longer
    # be this process's descendant).
    assert [p.pid for p in running if p.is_running() and p.status() != psutil.STATUS_ZOMBIE] == []


def test_destructive_prompt_needs_confirm_typed_out(monkeypatch: pytest.MonkeyPatch) -> None:
    pending = {
        "decision": "approve_detailed",
        "command": "rm -rf /srv/old",
        "classification": "destructive",
        "impact": {
            "what_changes": "deletes /srv/old",
            "what_could_be_lost": "everything in it",
            "how_to_undo": "restore from backup",
        },
    }
    answers = iter(["yes", "too risky"])
    monkeypatch.setattr("builtins.input", lambda _prompt="": next(answers))
    denied = approve_cli.prompt_one("c1", pending, "carol")
    assert denied.approved is False
    assert denied.reason == "too risky"
    monkeypatch.setattr("builtins.input", lambda _prompt="": "CONFIRM")
    assert approve_cli.prompt_one("c1", pending, "carol").approved is True
    simple = {"decision": "approve", "command": "systemctl restart nginx"}
    monkeypatch.setattr("builtins.input", lambda _prompt="": "y")
    assert approve_cli.prompt_one("c2", simple, "carol").approved is True
