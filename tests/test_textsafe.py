"""Terminal escape injection: text from outside (a log line, a command, a session title, a tool's
output) is shown with its control characters written out, wherever the CLI prints it, on a
terminal and in a pipe; ``--json`` keeps the exact text (JSON escapes it itself)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from typer.testing import CliRunner

from devops_agent.cli.app import app
from devops_agent.cli.approve import describe_pending
from devops_agent.cli.context import err
from devops_agent.config import Settings
from devops_agent.store import Store, ToolCallRecord
from devops_agent.textsafe import visible

HOSTILE = "\x1b]0;pwned\x07 \x1b[2J\x1b[31mFAKE: all systems healthy"
"""Sets the window title, clears the screen and paints a fake all-clear in red."""
ATTACKS = ("\x1b]0;", "\x1b[2J", "\x1b[31m", "\x07")


def hostile_log(tmp_path: Path) -> Path:
    logs = tmp_path / "logs"
    logs.mkdir()
    now = datetime.now(UTC)
    lines = [
        f"{(now - timedelta(minutes=10 - i)):%Y-%m-%dT%H:%M:%SZ} ERROR payment failed {HOSTILE}\n"
        for i in range(5)
    ]
    (logs / "app.log").write_text("".join(lines))
    return logs


def assert_defused(text: str, *, whole: bool = True) -> None:
    for attack in ATTACKS:
        assert attack not in text, (attack, text)
    assert "␛[2J" in text
    if whole:  # (a table cell may fold it over lines)
        assert "FAKE: all systems healthy" in text  # shown, as what it is: text from the log


def strings(data: object) -> list[str]:
    """Every string in a JSON document."""
    if isinstance(data, str):
        return [data]
    if isinstance(data, dict):
        return [s for v in data.values() for s in strings(v)]
    if isinstance(data, list):
        return [s for v in data for s in strings(v)]
    return []


def test_visible_writes_out_every_control_character_and_keeps_lines() -> None:
    assert visible("plain text\n\tindented") == "plain text\n\tindented"
    assert visible(HOSTILE) == "␛]0;pwned␇ ␛[2J␛[31mFAKE: all systems healthy"
    assert visible("overwrite\rme") == "overwrite␍me"
    assert visible("windows line\r\nnext") == "windows line\nnext"  # a CR that ends a line moves nothing
    assert visible("csi \x9b2J del \x7f") == "csi \\x9b2J del ␡"
    assert visible("admin\u202e") == "admin\\u202e"  # bidi override: the "Trojan source" trick


def test_a_report_in_a_pipe_shows_the_log_line_s_escapes_and_json_keeps_them(tmp_path: Path) -> None:
    logs = hostile_log(tmp_path)
    shown = CliRunner().invoke(app, ["investigate", "errors in the app logs", "--logs", str(logs)])
    assert shown.exit_code == 0, shown.output
    assert_defused(shown.stdout)
    assert not [a for a in ATTACKS if a in shown.stderr]  # progress lines neither
    raw = CliRunner().invoke(app, ["investigate", "errors in the app logs", "--logs", str(logs), "--json"])
    assert raw.exit_code == 0, raw.output
    report = json.loads(raw.stdout)  # exact JSON: the log line as it was
    assert any(HOSTILE in text for text in strings(report["report"]))


def _run_in_terminal(args: list[str], cwd: Path) -> str:
    """The command's output as a terminal receives it (stdout and stderr on a pseudo-terminal)."""
    master, slave = os.openpty()
    env = dict(os.environ, COLUMNS="100", LINES="40", TERM="xterm-256color")
    proc = subprocess.Popen(
        [sys.executable, "-m", "devops_agent", *args],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        cwd=cwd,
        env=env,
    )
    os.close(slave)
    chunks: list[bytes] = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 120)
            if not ready:
                break
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the process closed the terminal
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        proc.wait(timeout=60)
    assert proc.returncode == 0, b"".join(chunks).decode(errors="replace")
    return b"".join(chunks).decode(errors="replace")


def test_a_report_on_a_terminal_is_rendered_with_the_escapes_shown(tmp_path: Path) -> None:
    logs = hostile_log(tmp_path)
    shown = _run_in_terminal(["investigate", "errors in the app logs", "--logs", str(logs)], tmp_path)
    for attack in ("\x1b]0;", "\x1b[2J", "\x07"):
        assert attack not in shown
    assert "␛[2J" in shown


def test_tables_sessions_and_kept_outputs_show_escapes(isolated_home: Path) -> None:
    with Store.from_settings(Settings()) as store:
        session = store.create_session(title=f"why {HOSTILE}", mode="ask", model=None)
        store.record_tool_call(
            ToolCallRecord(
                session.id, "r", "call-1", "shell_run", {}, "success", raw_output=f"out {HOSTILE}\n"
            )
        )
    runner = CliRunner()
    for args in (
        ["sessions", "list"],
        ["sessions", "show", session.id[:12]],
        ["sessions", "output", session.id[:12], "call-1"],
    ):
        shown = runner.invoke(app, args)
        assert shown.exit_code == 0, (args, shown.output)
        assert_defused(shown.stdout, whole=args[1] != "list")


def test_the_approval_prompt_shows_a_command_s_escapes() -> None:
    with err.capture() as captured:
        describe_pending("c1", {"tool": "shell_run", "decision": "approve", "command": f"echo {HOSTILE}"})
    assert_defused(captured.get())
