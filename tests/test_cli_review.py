"""A new user's first day with the CLI: config errors, config show, doctor, sessions, Ctrl-C.

Each test pins a defect found by using the commands as a platform engineer would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devops_agent.cli import run
from devops_agent.cli.app import app
from devops_agent.cli.render import ProgressRenderer
from devops_agent.config import load_settings
from devops_agent.errors import ConfigError
from devops_agent.events import ErrorEvent, RunEvent, RunStarted, ToolResultEvent
from devops_agent.store import Store
from fixtures_cli import cli as run_cli

SECRET = "sk-review-0123456789abcdef"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def cli(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env={"COLUMNS": "80", **(env or {})})


def data_store(home: Path) -> Store:
    return Store(f"sqlite:///{home / 'data' / 'devops-agent.db'}")


# --- configuration errors -------------------------------------------------------------------


def test_a_table_variable_that_is_not_json_is_named_without_its_secret_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEVOPS_AGENT_MODEL", f'{{"name": "openai:gpt-4o", "api_key": "{SECRET}"')
    monkeypatch.setenv("DEVOPS_AGENT_MODEL__API_KEY", SECRET)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    line = caught.value.one_line()
    assert SECRET not in line
    assert "DEVOPS_AGENT_MODEL " in line
    assert "must be JSON" in line


def test_a_list_variable_that_is_not_json_still_shows_its_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEVOPS_AGENT_TOOLS__DISABLED", "shell")
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "DEVOPS_AGENT_TOOLS__DISABLED='shell'" in caught.value.message


def test_a_table_given_as_json_is_credited_to_the_variable_that_was_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEVOPS_AGENT_MODEL", '{"base_url": "http://127.0.0.1:1/v1"}')
    monkeypatch.setenv("DEVOPS_AGENT_TOOLS__TIMEOUT_S", "5")
    origins = load_settings().origins
    assert origins["model.base_url"] == "env:DEVOPS_AGENT_MODEL"
    assert origins["tools.timeout_s"] == "env:DEVOPS_AGENT_TOOLS__TIMEOUT_S"


def test_config_naming_a_directory_says_it_is_not_a_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load_settings(config_file=tmp_path)
    assert "is not a file" in caught.value.message
    assert "does not exist" not in caught.value.message


def test_an_invalid_value_does_not_send_the_user_to_a_command_that_fails_the_same_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "devops-agent.toml").write_text('mode = "agnet"\n')
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as caught:
        load_settings()
    assert "mode" in caught.value.message
    shown = CliRunner().invoke(app, ["config", "show"])
    assert shown.exit_code == 2  # `config show` fails on the same setting, in one line
    assert "mode" in shown.stderr
    assert "config show" not in (caught.value.hint or "")


# --- config show and doctor -----------------------------------------------------------------


def test_config_show_keeps_whole_keys_sources_and_bracketed_values_at_80_columns(tmp_path: Path) -> None:
    proc = cli(
        "config",
        "show",
        env={
            "DEVOPS_AGENT_TOOLS__BREAKER__FAILURE_THRESHOLD": "4",
            "DEVOPS_AGENT_SAFETY__DENY_PATTERNS": '["[/srv]*"]',
        },
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "…" not in proc.stdout
    assert "tools.breaker.failure_threshold" in proc.stdout
    assert "[/srv]*" in proc.stdout
    # The source folds over lines; joined again it names the whole variable.
    cells = "".join(line.split("│")[3].strip() for line in proc.stdout.splitlines() if line.count("│") == 4)
    assert "env:DEVOPS_AGENT_TOOLS__BREAKER__FAILURE_THRESHOLD" in cells


def test_doctor_reports_an_invalid_config_as_a_failed_check_also_in_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "devops-agent.toml").write_text('mode = "agnet"\n')
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = invoke("doctor", "--json")
    assert code == 1
    checks = json.loads(stdout)
    assert [(c["name"], c["level"]) for c in checks] == [("config", "fail")]
    assert "mode" in checks[0]["detail"]
    code, stdout, _ = invoke("doctor")
    assert code == 1
    assert "FAIL config" in stdout


# --- sessions -------------------------------------------------------------------------------


def test_sessions_list_and_show_print_a_bracketed_question_literally(isolated_home: Path) -> None:
    title = "why is [/var/log] full of [error] lines"
    with data_store(isolated_home) as store:
        rec = store.create_session(title=title, mode="ask", model=None)
    code, stdout, _ = invoke("sessions", "list")
    assert code == 0, stdout
    assert "[/var/log]" in stdout
    assert "[error]" in stdout
    code, stdout, _ = invoke("sessions", "show", rec.id[:12])
    assert code == 0, stdout
    assert title in stdout


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_sessions_list_refuses_a_limit_below_one(limit: str, isolated_home: Path) -> None:
    with data_store(isolated_home) as store:
        for n in range(3):
            store.create_session(title=f"s{n}", mode="ask", model=None)
    code, stdout, _ = invoke("sessions", "list", "--limit", limit, "--json")
    assert code == 2, stdout


@pytest.mark.parametrize("command", ["ask", "investigate"])
def test_a_blank_question_is_refused_before_any_session_is_made(command: str, isolated_home: Path) -> None:
    code, _, _ = invoke(command, "   ")
    assert code == 2
    with data_store(isolated_home) as store:
        assert store.list_sessions() == []


# --- progress rendering -----------------------------------------------------------------------


def test_progress_prints_errors_that_quote_bracketed_paths(capsys: pytest.CaptureFixture[str]) -> None:
    ids = {"session_id": "s" * 32, "run_id": "r"}
    renderer = ProgressRenderer(stream_tokens=False)
    renderer.handle(
        ToolResultEvent(**ids, tool_call_id="c", tool="logs_tail", status="error", error="no [/x]")
    )
    renderer.handle(ErrorEvent(**ids, message="bad [/api/v1] answer", hint="see [/docs]"))
    printed = capsys.readouterr().err
    assert "no [/x]" in printed
    assert "bad [/api/v1] answer (see [/docs])" in printed


# --- Ctrl-C -----------------------------------------------------------------------------------


def test_ctrl_c_during_a_run_names_the_session_it_keeps() -> None:
    async def events() -> AsyncIterator[RunEvent]:
        yield RunStarted(session_id="abcdef" * 6, run_id="r", prompt="p", mode="ask", path="runbook")
        raise KeyboardInterrupt

    with pytest.raises(run.RunInterrupted) as caught:
        run._drive(events(), ProgressRenderer(stream_tokens=False, quiet=True))
    assert caught.value.session_id == "abcdef" * 6
    assert "abcdefabcdef" in caught.value.one_line()


def test_ctrl_c_in_chat_stops_the_answer_not_the_chat(monkeypatch: pytest.MonkeyPatch) -> None:
    lines = iter(["first question"])

    def fake_input(prompt: str) -> str:
        try:
            return next(lines)
        except StopIteration:
            raise KeyboardInterrupt from None  # Ctrl-C at the prompt leaves the chat

    def interrupted(*args: object, **kwargs: object) -> None:
        raise run.RunInterrupted("f" * 32)

    monkeypatch.setattr("builtins.input", fake_input)
    monkeypatch.setattr(run, "execute", interrupted)
    code, _, stderr = invoke("chat")
    assert code == 0, stderr
    assert "interrupted: session ffffffffffff" in stderr
    assert "resume with --session ffffffffffff" in stderr


def test_ctrl_c_during_a_blocked_tool_call_exits_at_once_and_keeps_the_session(isolated_home: Path) -> None:
    with socket.socket() as server:  # accepts connections and never answers: the query hangs
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        env = dict(
            os.environ,
            DEVOPS_AGENT_PROMETHEUS__URL=f"http://127.0.0.1:{server.getsockname()[1]}",
            DEVOPS_AGENT_PROMETHEUS__TIMEOUT_S="60",
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "devops_agent", "investigate", "p99 is up", "--query", "up"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stderr is not None
        seen = b""
        deadline = time.monotonic() + 30
        while b"session " not in seen and time.monotonic() < deadline:
            seen += os.read(proc.stderr.fileno(), 4096)
        time.sleep(0.5)  # the metric query is waiting on the silent server
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        stdout, stderr = proc.communicate(timeout=30)
        waited = time.monotonic() - sent
    text = (seen + stderr).decode()
    assert proc.returncode == 130, text
    assert waited < 10, f"exit took {waited:.1f}s: it waited for the blocked tool call"
    assert "Traceback" not in text
    with data_store(isolated_home) as store:
        (session,) = store.list_sessions()
    assert session.status == "cancelled"
    assert f"interrupted: session {session.id[:12]}" in text
    assert stdout == b""
