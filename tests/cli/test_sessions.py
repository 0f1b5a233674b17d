"""What the session commands print: answers whole (placeholders such as ``<NUM>`` kept, code blocks
wrapped, not cut), messages as JSON objects with ``--json``, a kept tool output as text, and a
resumed chat in the session's own mode."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from devops_agent.agent.messages import dump_message
from devops_agent.cli.app import app
from devops_agent.config import Settings
from devops_agent.store import Store, ToolCallRecord

ANSWER = (
    "The template is: ERROR timeout after <DUR> on host <IP> [req <NUM>]\n\n"
    "```\n"
    "kubectl -n payments get pods -o wide --sort-by=.status.startTime | tail -n 20 && echo END-OF-THE-LONG-LINE\n"
    "```\n"
)


def session_with_answer(answer: str = ANSWER, *, mode: str = "ask") -> str:
    from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, UserPromptPart

    with Store.from_settings(Settings()) as store:
        rec = store.create_session(title="which template?", mode=mode, model="scripted")
        messages = (
            ModelRequest(parts=[UserPromptPart("which template?")]),
            ModelResponse(parts=[TextPart(answer)]),
        )
        store.append_messages(rec.id, "r1", [dump_message(m) for m in messages])
        return rec.id


def test_sessions_show_keeps_placeholders_and_whole_code_lines_in_a_pipe(isolated_home: Path) -> None:
    session = session_with_answer()
    shown = CliRunner().invoke(app, ["sessions", "show", session[:12]])
    assert shown.exit_code == 0, shown.output
    assert "after <DUR> on host <IP> [req <NUM>]" in shown.stdout
    assert "END-OF-THE-LONG-LINE" in shown.stdout


def test_sessions_show_on_a_terminal_wraps_a_long_code_line_instead_of_cutting_it(
    isolated_home: Path,
) -> None:
    session = session_with_answer()
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "devops_agent", "sessions", "show", session[:12]],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        env=dict(os.environ, COLUMNS="80", LINES="40", TERM="xterm"),
    )
    os.close(slave)
    chunks = []
    while select.select([master], [], [], 60)[0]:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.wait(timeout=60) == 0
    shown = b"".join(chunks).decode(errors="replace")
    assert "END-OF-THE-LONG-LINE" in shown
    assert "<DUR>" in shown
    assert "<NUM>" in shown


def test_sessions_show_json_gives_the_messages_themselves(isolated_home: Path) -> None:
    session = session_with_answer()
    shown = CliRunner().invoke(app, ["sessions", "show", session[:12], "--json"])
    assert shown.exit_code == 0, shown.output
    request, response = json.loads(shown.stdout)["messages"]
    assert request["kind"] == "request"
    assert request["parts"][0] == request["parts"][0] | {
        "part_kind": "user-prompt",
        "content": "which template?",
    }
    assert response["kind"] == "response"
    assert response["parts"][0]["content"] == ANSWER


def test_sessions_output_prints_a_structured_output_as_text_and_json_as_stored(isolated_home: Path) -> None:
    stored = json.dumps(
        {"command": "journalctl -u api", "exit_code": 0, "stdout": "line one\nline two\n"}, indent=1
    )
    with Store.from_settings(Settings()) as store:
        rec = store.create_session(title="kept", mode="ask", model=None)
        store.record_tool_call(
            ToolCallRecord(rec.id, "r", "call-1", "shell_run", {}, "success", raw_output=stored)
        )
    shown = CliRunner().invoke(app, ["sessions", "output", rec.id[:12], "call-1"])
    assert shown.exit_code == 0, shown.output
    assert shown.stdout == "command: journalctl -u api\nexit_code: 0\nstdout:\nline one\nline two\n"
    exact = CliRunner().invoke(app, ["sessions", "output", rec.id[:12], "call-1", "--json"])
    assert json.loads(exact.stdout)["output"] == stored


def test_a_resumed_chat_keeps_the_session_s_agent_mode_and_says_so(isolated_home: Path) -> None:
    session = session_with_answer(mode="agent")
    result = CliRunner().invoke(
        app, ["--model", "scripted", "chat", "--session", session[:12]], input="what now?\n/exit\n"
    )
    assert result.exit_code == 0, result.output
    assert f"resuming session {session[:12]} in agent mode" in result.stderr
    assert "agent>" in result.stdout  # the prompt
    with Store.from_settings(Settings()) as store:
        assert store.get_session(session).mode == "agent"
    switched = CliRunner().invoke(app, ["chat", "--session", session[:12], "--mode", "ask"], input="/exit\n")
    assert f"resuming session {session[:12]} switched to ask mode" in switched.stderr
