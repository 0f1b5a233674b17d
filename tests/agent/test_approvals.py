"""Issue 3 end to end: a destructive command pauses the run; another process answers.

The scripted model proposes `rm -rf` of a real directory through the real shell tool. The run
pauses durably (history and pending call in the store); a second Python process loads the
session, approves (or denies) it, and the run resumes there. The audit log shows who decided.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import yaml

from devops_agent.agent.scripted import Script, ScriptedModel
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import ApprovalRequested, RunEvent, RunFinished, ToolResultEvent
from devops_agent.store import Store


def _script(victim: Path) -> dict[str, Any]:
    return {
        "turns": [
            {"tool_calls": [{"tool": "shell_run", "args": {"command": f"rm -rf {victim}"}}]},
            {"text": "outcome: {results}"},
        ]
    }


def _first_run(store_url: str, victim: Path) -> list[RunEvent]:
    settings = Settings(database_url=store_url, mode="agent")
    with Store(store_url) as store:
        service = SessionService(settings, store, model=ScriptedModel(Script.model_validate(_script(victim))))

        async def go() -> list[RunEvent]:
            return [e async for e in service.stream("free some disk space")]

        return asyncio.run(go())


def _answer_elsewhere(
    store_url: str, script_file: Path, session_id: str, call_id: str, approved: bool
) -> dict[str, Any]:
    code = textwrap.dedent(
        f"""
        import asyncio, json
        from devops_agent.agent.approvals import ApprovalDecision
        from devops_agent.agent.session import SessionService
        from devops_agent.config import Settings
        from devops_agent.store import Store
        settings = Settings(database_url={store_url!r}, mode="agent", model={{"name": "scripted:{script_file}"}})
        with Store({store_url!r}) as store:
            service = SessionService(settings, store)
            answer = ApprovalDecision({approved!r}, reason="not during business hours", approver="alice")
            events, final = asyncio.run(service.run(None, session_id={session_id!r}, approvals={{{call_id!r}: answer}}))
            print(json.dumps({{"status": final.status, "output": final.output,
                              "types": [e.type for e in events]}}))
        """
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def test_destructive_command_pauses_and_is_approved_from_another_process(
    store_url: str, tmp_path: Path
) -> None:
    victim = tmp_path / "old-releases"
    victim.mkdir()
    (victim / "release-1.tar").write_text("x" * 1000)
    script_file = tmp_path / "script.yaml"
    script_file.write_text(yaml.safe_dump(_script(victim)))

    events = _first_run(store_url, victim)
    request = next(e for e in events if isinstance(e, ApprovalRequested))
    final = events[-1]
    assert isinstance(final, RunFinished)
    assert final.status == "paused"
    assert request.classification == "destructive"
    assert request.decision == "approve_detailed"
    assert request.impact is not None
    assert request.impact["how_to_undo"]
    assert victim.exists(), "nothing runs before the approval"
    with Store(store_url) as store:
        assert store.get_session(final.session_id).status == "paused"
        assert [a.outcome for a in store.list_audit(session_id=final.session_id)] == ["pending"]

    result = _answer_elsewhere(store_url, script_file, final.session_id, request.tool_call_id, approved=True)
    assert result["status"] == "completed"
    assert "approval_resolved" in result["types"]
    assert not victim.exists(), "approved: the command ran"
    assert "success" in result["output"]
    with Store(store_url) as store:
        audit = store.list_audit(session_id=final.session_id)
        executed = next(a for a in audit if a.outcome == "executed")
        assert executed.actor == "alice"
        assert executed.exit_status == 0
        assert executed.command == f"rm -rf {victim}"
        assert executed.classification == "destructive"
        assert store.get_session(final.session_id).context_state.get("pending_approvals") is None


def test_denied_command_is_not_run_and_the_model_gets_the_reason(store_url: str, tmp_path: Path) -> None:
    victim = tmp_path / "keep-me"
    victim.mkdir()
    script_file = tmp_path / "script.yaml"
    script_file.write_text(yaml.safe_dump(_script(victim)))

    events = _first_run(store_url, victim)
    request = next(e for e in events if isinstance(e, ApprovalRequested))
    result = _answer_elsewhere(
        store_url, script_file, events[-1].session_id, request.tool_call_id, approved=False
    )
    assert result["status"] == "completed"
    assert victim.exists()
    assert "alice denied this call: not during business hours" in result["output"]
    with Store(store_url) as store:
        denied = [a for a in store.list_audit(session_id=events[-1].session_id) if a.outcome == "denied"]
        assert len(denied) == 1
        assert denied[0].actor == "alice"


def test_ask_mode_runs_read_only_commands_and_refuses_the_rest(store_url: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello\n")
    turns = {
        "turns": [
            {"tool_calls": [{"tool": "shell_run", "args": {"command": f"cat {tmp_path}/notes.txt | wc -l"}}]},
            {"tool_calls": [{"tool": "shell_run", "args": {"command": f"rm {tmp_path}/notes.txt"}}]},
            {"text": "{results}"},
        ]
    }
    settings = Settings(database_url=store_url, mode="ask")
    with Store(store_url) as store:
        service = SessionService(settings, store, model=ScriptedModel(Script.model_validate(turns)))
        events, final = asyncio.run(service.run("count lines, then tidy up"))
        results = [e for e in events if isinstance(e, ToolResultEvent)]
        assert [r.status for r in results] == ["success", "error"]
        assert (tmp_path / "notes.txt").exists()
        assert final.status == "completed"
        outcomes = sorted(a.outcome for a in store.list_audit(session_id=final.session_id))
        assert outcomes == ["executed", "rejected"]
