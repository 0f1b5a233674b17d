"""``devops-agent tui`` as a command: its help, its errors (missing extra, --server without a
token, a bad URL, a bad mode), and which client it builds (local over the session service, or
remote) with the options it was given."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main

from devops_agent.cli.app import app as cli_app
from devops_agent.tui.app import AgentTui
from devops_agent.tui.local import LocalClient
from devops_agent.tui.remote import RemoteClient


def run_cli(*args: str) -> int:
    code: int = typer.main.get_command(cli_app).main(list(args), standalone_mode=False)
    return code


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[AgentTui]:
    """The apps the command would run (not run: no terminal in a test)."""
    apps: list[AgentTui] = []

    def run(self: AgentTui, *args: Any, **kwargs: Any) -> None:
        apps.append(self)

    monkeypatch.setattr(AgentTui, "run", run)
    return apps


def test_the_tui_names_the_extra_to_install_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from devops_agent.cli import tui_cmd

    monkeypatch.setattr(tui_cmd, "missing_tui_modules", lambda: ["textual"])
    assert run_cli("tui") == 2
    err = capsys.readouterr().err
    assert "pip install 'devops-agent[tui]'" in err
    assert "textual" in err


def test_server_needs_a_token_and_a_usable_url(
    capsys: pytest.CaptureFixture[str], launched: list[AgentTui]
) -> None:
    assert run_cli("tui", "--server", "http://127.0.0.1:9") == 2
    assert "--server needs a token" in capsys.readouterr().err
    assert run_cli("tui", "--server", "ftp://x", "--token", "t") == 2
    assert "must start with http:// or https://" in capsys.readouterr().err
    assert run_cli("tui", "--mode", "god") == 2
    assert "not a mode" in capsys.readouterr().err
    assert launched == []


def test_the_command_builds_a_local_or_a_remote_client(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, launched: list[AgentTui]
) -> None:
    log = tmp_path / "app.log"
    log.write_text("ERROR x\n")
    assert run_cli("--model", "scripted", "tui", "--mode", "agent", "--logs", str(log)) == 0
    local = launched.pop()
    assert isinstance(local.client, LocalClient)
    assert local.client.service.model_name == "scripted"
    assert local.default_mode == "agent"
    assert local.inputs == {"logs": [str(log.resolve())]}
    assert log.parent.resolve() in local.client.service.settings.files.roots, "--logs may be read"

    monkeypatch.setenv("DEVOPS_AGENT_TOKEN", "dat_from_env")
    assert run_cli("tui", "--server", "http://127.0.0.1:8080/", "--session", "abcdef12") == 0
    remote = launched.pop()
    assert isinstance(remote.client, RemoteClient)
    assert remote.client.ws_url == "ws://127.0.0.1:8080/v1/ws"
    assert remote.client.token == "dat_from_env"
    assert remote.open_session == "abcdef12"
    assert remote.default_mode == "ask"


def test_help_lists_the_tui_without_loading_textual() -> None:
    code = (
        "import sys; from devops_agent.cli.app import main; sys.argv=['devops-agent','--help']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "assert 'textual' not in sys.modules, 'root --help loaded textual'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "tui" in proc.stdout
    helped = subprocess.run(
        [sys.executable, "-m", "devops_agent", "tui", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    )
    assert helped.returncode == 0, helped.stderr
    for key in ("Ctrl-C stops the run", "CONFIRM", "--server", "--token"):
        assert key in helped.stdout


@pytest.mark.slow
def test_the_tui_runs_in_a_real_terminal_and_quits_cleanly(tmp_path: Path) -> None:
    """``devops-agent --model scripted tui`` in a pseudo-terminal: a question is answered (the
    built-in demo script calls the host tools), Ctrl-C with no run leaves the TUI up, Ctrl-Q quits."""
    import os
    import pty
    import re
    import select
    import time

    env = {**os.environ, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"}
    env["DEVOPS_AGENT_HOME"] = str(tmp_path)
    pid, fd = pty.fork()
    if pid == 0:  # the child: the console script, as a person starts it
        os.execve(sys.executable, [sys.executable, "-m", "devops_agent", "--model", "scripted", "tui"], env)
    seen = b""
    reaped = False

    def until(word: str, wait_s: float = 60) -> None:
        nonlocal seen
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            if word in re.sub(r"\x1b\[[0-9;?>=$]*[A-Za-z~]", "", seen.decode("utf-8", "replace")):
                return
            if select.select([fd], [], [], 0.1)[0]:
                try:
                    seen += os.read(fd, 65536)
                except OSError:
                    break
        raise AssertionError(f"{word!r} never showed")

    try:
        until("New session")
        os.write(fd, b"n")
        until("Ask a question")
        os.write(fd, b"is the host healthy?\r")
        until("Scripted answer to")
        until("model requests")  # the run's last line: it finished
        os.write(fd, b"\x03")  # Ctrl-C with no run going
        until("no run is going")
        os.write(fd, b"\x11")  # Ctrl-Q
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                reaped = True
                break
            if select.select([fd], [], [], 0.1)[0]:
                with contextlib.suppress(OSError):
                    os.read(fd, 65536)
        else:
            raise AssertionError("the TUI did not quit on Ctrl-Q")
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        if not reaped:  # a failed step: stop the TUI we started
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
