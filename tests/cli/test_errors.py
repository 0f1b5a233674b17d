"""How the CLI fails: one line with a hint and a meaningful exit code, a JSON error object with
``--json``, never a traceback with local variables; configuration mistakes named where they are.

In process through Typer's runner (the root group handles errors, so the runner sees what a user
sees); in a subprocess where the behaviour is the interpreter's (SIGTERM, the first-run banner).
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import structlog
from typer.testing import CliRunner

from devops_agent.cli.app import app
from devops_agent.config import Settings, load_settings
from devops_agent.store import Store
from devops_agent.telemetry import configure_logging


def invoke(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


# --- unknown model provider -------------------------------------------------------------------


def test_an_unknown_model_provider_is_a_one_line_config_error_with_json(tmp_path: Path) -> None:
    code, stdout, stderr = invoke("--model", "bogus:x", "ask", "hi")
    assert code == 2
    line = one_line(stderr)
    assert "unknown provider 'bogus'" in line
    assert "openai:gpt-4o" in line  # the hint shows the form that works
    assert stdout == ""

    code, stdout, stderr = invoke("--model", "bogus:x", "investigate", "disk", "--json")
    assert code == 2
    assert json.loads(stdout) == {
        "error": "ConfigError",
        "message": "cannot use model 'bogus:x': unknown provider 'bogus'",
        "hint": json.loads(stdout)["hint"],
    }
    assert "scripted" in json.loads(stdout)["hint"]


def test_doctor_fails_the_model_check_of_an_unknown_provider() -> None:
    code, stdout, stderr = invoke("--model", "bogus:x", "doctor", "--json")
    assert code == 1, stderr
    checks = {c["name"]: c for c in json.loads(stdout)}
    assert checks["model"]["level"] == "fail"
    assert "unknown provider 'bogus'" in checks["model"]["detail"]
    assert "Traceback" not in stderr


# --- usage errors -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["investigate"], "say what to investigate"),
        (["investigate", "x", "--mode", "both"], "'both' is not a mode"),
        (["--bogus"], "No such option: --bogus"),
        (["sessions", "show"], "Missing argument"),
    ],
)
def test_a_usage_error_is_one_line_with_where_to_look_and_exit_2(args: list[str], needle: str) -> None:
    code, stdout, stderr = invoke(*args)
    assert code == 2
    line = one_line(stderr)
    assert needle in line
    assert "--help" in line
    assert "╭" not in stderr  # not Typer's five-line box
    code, stdout, _ = invoke(*args, "--json")
    assert code == 2
    assert json.loads(stdout)["error"] == "UsageError"


def test_no_arguments_still_prints_the_help() -> None:
    code, stdout, stderr = invoke("sessions")
    assert "List, show and delete saved sessions" in stdout + stderr
    assert "error" not in (stdout + stderr).lower()


# --- unexpected errors --------------------------------------------------------------------------


def _crash_on_list_sessions(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "hunter2-local-variable"

    def broken(self: Store, limit: int = 20) -> list[object]:
        password = secret  # a local that a traceback with locals would print
        raise RuntimeError(f"store exploded ({len(password)})")

    monkeypatch.setattr(Store, "list_sessions", broken)


def test_an_unexpected_error_is_one_line_naming_it_and_debug_adds_a_traceback_without_locals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _crash_on_list_sessions(monkeypatch)
    code, stdout, stderr = invoke("sessions", "list")
    assert code == 1
    line = one_line(stderr)
    assert "unexpected RuntimeError: store exploded" in line
    assert "--debug" in line
    assert "hunter2" not in stderr

    code, stdout, stderr = invoke("--debug", "sessions", "list", "--json")
    assert code == 1
    assert "Traceback" in stderr
    assert "in broken" in stderr
    assert "hunter2" not in stderr + stdout  # locals are never shown, not even with --debug
    assert json.loads(stdout)["error"] == "RuntimeError"


def test_a_run_that_fails_unexpectedly_logs_one_line_not_a_traceback_with_locals(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The session service logs a run's unexpected exception (structlog); structlog's default
    # rich traceback printed every local of every frame: settings, the store, the question.
    from devops_agent.agent.runners.runbooks import RunbookRunner

    async def broken(*args: object, **kwargs: object) -> None:
        token = "sk-canary-in-a-local"
        raise RuntimeError(f"analyzer blew up after {len(token)} characters")

    monkeypatch.setattr(RunbookRunner, "run", broken)
    saved = structlog.get_config()
    process_stderr = io.StringIO()
    monkeypatch.setattr(sys, "stderr", process_stderr)
    configure_logging("warning")  # as the console script does, onto the process's stderr
    try:
        code, stdout, stderr = invoke("investigate", "disk full?")
    finally:
        structlog.configure(**saved)
    assert code == 1
    assert "RuntimeError: analyzer blew up" in stderr  # the run's error event
    logged = process_stderr.getvalue()
    assert "run_failed" in logged
    assert "RuntimeError: analyzer blew up after 20 characters (rerun with --debug" in logged
    assert "sk-canary" not in logged + stderr
    assert "locals" not in logged
    assert "Traceback" not in logged


# --- configuration --------------------------------------------------------------------------------


def test_a_config_file_that_is_not_utf8_is_named_with_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "devops-agent.toml"
    config.write_bytes('[model]\nname = "caf\xe9"\n'.encode("latin-1"))
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = invoke("config", "show")
    assert code == 2
    line = one_line(stderr)
    assert str(config) in line
    assert "UTF-8" in line


def test_a_misspelt_disabled_toolset_is_an_error_and_doctor_fails_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "devops-agent.toml").write_text('[tools]\ndisabled = ["shel"]\n')
    monkeypatch.chdir(tmp_path)
    code, stdout, stderr = invoke("tools", "list")
    assert code == 2
    line = one_line(stderr)
    assert "did you mean 'shell'" in line
    assert "system" in line  # the known toolsets are named
    code, stdout, stderr = invoke("doctor", "--json")
    assert code == 1
    failed = [c for c in json.loads(stdout) if c["level"] == "fail"]
    assert [c["name"] for c in failed] == ["toolsets"]
    # A correct name still disables the toolset.
    (tmp_path / "devops-agent.toml").write_text('[tools]\ndisabled = ["shell"]\n')
    code, stdout, _ = invoke("tools", "list", "--json")
    assert code == 0
    assert "shell_run" not in {t["tool"] for t in json.loads(stdout)["tools"]}


def test_an_empty_data_dir_variable_is_unset_not_the_current_directory(
    isolated_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DEVOPS_AGENT_DATA_DIR", "")
    assert load_settings().settings.data_dir == isolated_home / "data"
    code, _, stderr = invoke("sessions", "list")
    assert code == 0, stderr
    assert not (tmp_path / "devops-agent.db").exists()
    assert (isolated_home / "data" / "devops-agent.db").exists()


# --- the process ----------------------------------------------------------------------------------


def _clean_env(**extra: str) -> dict[str, str]:
    # The banner hides itself under pytest and in CI; a coding agent's variable brings it back.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTEST_VERSION", "CI", "PYTEST_CURRENT_TEST")}
    return {**env, **extra}


def test_pydantic_ai_s_first_run_banner_is_not_printed(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "--model", "scripted", "ask", "hello"],
        capture_output=True,
        text=True,
        env=_clean_env(AI_AGENT="1"),
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "logfire" not in proc.stderr.lower()
    assert "observability" not in proc.stderr


def test_sigterm_stores_the_run_as_cancelled_and_kills_the_command(
    isolated_home: Path, tmp_path: Path
) -> None:
    marker = f"sleep {int(time.time()) % 1000 + 1000}"  # a command line only this test runs
    script = tmp_path / "sleep.json"
    script.write_text(
        json.dumps({"turns": [{"tool_calls": [{"tool": "shell_run", "args": {"command": marker}}]}]})
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "devops_agent", "--model", f"scripted:{script}", "ask", "wait"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not _pids_of(marker):
            time.sleep(0.2)
        assert _pids_of(marker), "the command never started"
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=60)
        assert proc.returncode == 143, stderr
        assert "cancelled" in stderr
        assert "Traceback" not in stderr
        time.sleep(0.5)
        assert _pids_of(marker) == [], "the command's process group was left running"
    finally:
        proc.kill()
        for pid in _pids_of(marker):  # a failed run must not leave the command behind
            os.kill(pid, signal.SIGKILL)
    with Store.from_settings(Settings()) as store:
        (session,) = store.list_sessions()
    assert session.status == "cancelled"


def _pids_of(command: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", f"^{command}$"], capture_output=True, text=True, check=False)
    return [int(p) for p in found.stdout.split()]


def test_sigterm_at_the_chat_prompt_ends_the_chat(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "devops_agent", "chat"],
        stdin=subprocess.PIPE,  # kept open: the chat waits at its prompt
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert proc.stderr is not None
        assert "chat" in proc.stderr.readline()  # the banner: the prompt is next
        time.sleep(0.5)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        assert proc.returncode == 143
    finally:
        proc.kill()
        proc.communicate()
