"""The command line, run as a user runs it: real store, real host. Most tests run a command in
this process (``fixtures_cli.cli``); the ones marked ``slow`` are the subprocess smoke set that
proves the console script itself starts, exits and prints as it should."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devops_agent.cli import run
from devops_agent.cli.app import app
from devops_agent.cli.render import ProgressRenderer
from devops_agent.config import load_settings
from devops_agent.errors import ConfigError
from devops_agent.events import ErrorEvent, RunEvent, RunStarted, ToolResultEvent
from devops_agent.store import BreakerRecord, Store
from fixtures_cli import assert_one_line_error, cli, cli_process
from fixtures_cli import cli as run_cli
from fixtures_logs import write_app_log


@pytest.mark.slow
def test_investigate_offline_prints_a_real_host_report(tmp_path: Path) -> None:
    proc = cli_process("investigate", "Is this host healthy?", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for section in ("## Summary", "## Findings", "## Next steps", "## What could not be gathered"):
        assert section in proc.stdout
    assert "No model configured" in proc.stderr
    hostname = os.uname().nodename
    assert hostname in proc.stdout, "the report is about this machine"


def test_investigate_json_and_logs(tmp_path: Path) -> None:
    logs = write_app_log(tmp_path, lambda s: f"payment gateway timeout after {s}ms order={9000 + s}")
    proc = cli("investigate", "errors in the payment service", "--logs", str(logs), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["status"] == "completed"
    assert "log-errors" in data["report"]["runbooks"]
    texts = json.dumps(data["report"]["findings"])
    assert "payment gateway timeout" in texts
    assert "30" in texts  # the count of the group


def test_bad_input_gives_one_line_and_exit_2(tmp_path: Path) -> None:
    assert_one_line_error(cli("investigate", "x", "--logs", str(tmp_path / "missing")), 2, "does not exist")
    assert_one_line_error(cli("investigate", "x", "--bogus"), 2, "No such option")
    assert_one_line_error(cli("investigate", "x", "--since", "last tuesday-ish"), 2)
    assert_one_line_error(cli("sessions", "show", "deadbeefcafe"), 2, "sessions list")
    assert_one_line_error(cli("investigate", "x", "--mode", "yolo"), 2, "mode")
    assert_one_line_error(cli("runbooks", "show", "no-such-runbook"), 2, "runbooks list")


def test_unknown_runbook_is_refused_before_a_session_exists() -> None:
    for extra in ([], ["--json"]):
        proc = cli("investigate", "x", "--runbook", "host-health", "--runbook", "nope", *extra)
        assert_one_line_error(proc, 2, "unknown runbook 'nope'", "host-health", "runbooks list")
        if extra:  # a script reading stdout gets the error as JSON, and nothing else
            assert json.loads(proc.stdout)["error"] == "NotFoundError"
        else:
            assert proc.stdout == ""
    mixed = cli("investigate", "x", "--runbook", "triage", "--runbook", "host-health")
    assert_one_line_error(mixed, 2, "alone")
    assert json.loads(cli("sessions", "list", "--json").stdout) == []


def test_config_show_masks_secrets_and_names_sources(tmp_path: Path) -> None:
    (tmp_path / "devops-agent.toml").write_text('mode = "agent"\n')
    proc = cli(
        "config",
        "show",
        "--json",
        cwd=tmp_path,
        env={"DEVOPS_AGENT_MODEL__API_KEY": "sk-live-supersecret", "DEVOPS_AGENT_MODEL__NAME": "scripted"},
    )
    assert proc.returncode == 0, proc.stderr
    assert "supersecret" not in proc.stdout
    rows = {r["key"]: r for r in json.loads(proc.stdout)["settings"]}
    assert rows["model.api_key"]["value"] == "********"
    assert rows["model.api_key"]["source"] == "env:DEVOPS_AGENT_MODEL__API_KEY"
    assert rows["mode"]["source"].endswith("devops-agent.toml")
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "devops-agent.toml").write_text("tools = 3\n")
    assert_one_line_error(cli("config", "show", cwd=bad), 2, "invalid setting tools")


def test_scripted_model_ask_then_sessions(tmp_path: Path) -> None:
    proc = cli("--model", "scripted", "ask", "How is the disk?", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Scripted answer to: How is the disk?" in proc.stdout
    assert "system_disk_usage: success" in proc.stdout
    listed = json.loads(cli("sessions", "list", "--json").stdout)
    assert listed[0]["title"] == "How is the disk?"
    assert listed[0]["model"] == "scripted"
    shown = cli("sessions", "show", listed[0]["id"][:8], "--events")
    assert shown.returncode == 0, shown.stderr
    assert "tool_call" in shown.stdout
    assert "run_finished" in shown.stdout
    deleted = cli("sessions", "delete", listed[0]["id"])
    assert deleted.returncode == 0
    assert json.loads(cli("sessions", "list", "--json").stdout) == []


def test_chat_slash_commands_and_streaming(tmp_path: Path) -> None:
    stdin = "/help\n/mode agent\nfirst question\n/sessions\n/mode\n/exit\n"
    proc = cli("--model", "scripted", "chat", stdin=stdin, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mode is now agent" in proc.stderr
    assert "Scripted answer to: first question" in proc.stdout
    assert "first question" in proc.stderr, "/sessions lists the session"
    assert "resume with --session" in proc.stderr
    assert "/mode [ask|agent]" in proc.stderr, "the help's brackets are text, not console markup"


def test_tools_list_and_breaker_status(isolated_home: Path) -> None:
    listed = json.loads(cli("tools", "list", "--json").stdout)
    by_name = {t["tool"]: t for t in listed["tools"]}
    assert by_name["system_disk_usage"]["read_only"] is True
    assert {"files_read", "git_log", "logs_errors"} <= set(by_name)
    with Store(f"sqlite:///{isolated_home / 'data' / 'devops-agent.db'}") as store:
        now = datetime.now(UTC)
        store.save_breaker(
            BreakerRecord(
                tool="git_log", state="open", failures=3, opened_at=now, retry_after_s=30.0, updated_at=now
            )
        )
    status = json.loads(cli("tools", "status", "--json").stdout)
    row = next(r for r in status if r["tool"] == "git_log")
    assert row["state"] == "open"
    assert row["failures"] == 3
    assert 0 < row["retry_after_s"] <= 30


def test_runbooks_list_and_show() -> None:
    names = {r["name"] for r in json.loads(cli("runbooks", "list", "--json").stdout)}
    assert {"host-health", "log-errors", "recent-changes"} <= names
    shown = cli("runbooks", "show", "host-health")
    assert shown.returncode == 0
    assert "system_disk_usage" in shown.stdout


def test_runbooks_list_shows_every_keyword_whole() -> None:
    books = json.loads(cli("runbooks", "list", "--json").stdout)
    wide = cli("runbooks", "list")  # COLUMNS=200
    assert wide.returncode == 0, wide.stderr
    words = set(re.findall(r"[\w-]+", wide.stdout))
    for book in books:
        for keyword in book["keywords"]:
            assert set(keyword.split()) <= words, (book["name"], keyword)
    narrow = subprocess.run(
        [sys.executable, "-m", "devops_agent", "runbooks", "list"],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="80"),
        check=False,
    )
    assert narrow.returncode == 0, narrow.stderr
    assert "…" not in narrow.stdout  # a keyword wider than its column folds, never ellipsized


def test_help_paragraphs_are_wrapped_by_the_terminal_not_the_source() -> None:
    """A docstring's source line breaks do not cut a --help sentence in the middle."""
    shown = cli("metrics", "anomalies", "--help")  # COLUMNS=200
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "a header row is skipped; extra columns are ignored" in text  # a source line ends after "is"
    lines = [line.strip() for line in shown.stdout.splitlines()]
    assert not any(line.endswith(" a header row is") for line in lines)


def test_reflow_keeps_lists_and_indented_blocks() -> None:
    from devops_agent.cli.app import reflow

    text = "Title line.\n\nOne sentence\nthat goes on.\n\nSteps:\n- first\n- second\n\n    code a\n    code b"
    assert reflow(text) == (
        "Title line.\n\nOne sentence that goes on.\n\nSteps:\n- first\n- second\n\n    code a\n    code b"
    )


@pytest.mark.slow
def test_doctor_offline_is_healthy_and_unreachable_model_fails() -> None:
    ok = cli("doctor", "--json")
    assert ok.returncode == 0, ok.stderr
    checks = {c["name"]: c for c in json.loads(ok.stdout)}
    assert checks["store"]["level"] == "ok"
    assert checks["model"]["level"] == "ok"
    bad = cli_process(
        "--model",
        "openai-compatible:local",
        "doctor",
        env={"DEVOPS_AGENT_MODEL__BASE_URL": "http://127.0.0.1:9/v1"},
    )
    assert bad.returncode == 1
    assert "cannot reach" in bad.stdout


@pytest.mark.allow_model_requests
def test_unreachable_model_endpoint_is_one_line_and_exit_1(tmp_path: Path) -> None:
    proc = cli(
        "--model",
        "openai-compatible:local",
        "ask",
        "hello",
        cwd=tmp_path,
        env={
            "DEVOPS_AGENT_MODEL__BASE_URL": "http://127.0.0.1:9/v1",
            "DEVOPS_AGENT_ALLOW_MODEL_REQUESTS": "1",
        },
    )
    assert_one_line_error(proc, 1, "cannot reach the model endpoint at http://127.0.0.1:9/v1")


def _rm_script(tmp_path: Path, victim: Path) -> Path:
    script = tmp_path / "rm.yaml"
    script.write_text(
        json.dumps(
            {
                "turns": [
                    {"tool_calls": [{"tool": "shell_run", "args": {"command": f"rm -rf {victim}"}}]},
                    {"text": "done: {results}"},
                ]
            }
        )
    )
    return script


def test_paused_run_is_approved_later_with_the_approve_command(tmp_path: Path) -> None:
    victim = tmp_path / "scratch"
    victim.mkdir()
    model = f"scripted:{_rm_script(tmp_path, victim)}"
    paused = cli(
        "--model", model, "ask", "clean scratch", "--mode", "agent", "--approvals", "pause", cwd=tmp_path
    )
    assert paused.returncode == 0, paused.stderr
    assert "devops-agent approve" in paused.stderr
    assert victim.exists()
    session = json.loads(cli("sessions", "list", "--json").stdout)[0]
    assert session["status"] == "paused"
    refused = cli("--model", model, "approve", session["id"][:10])
    assert refused.returncode == 2, "a destructive call needs --yes without a terminal"
    assert "CONFIRM" in refused.stderr
    # --yes alone shows the impact but does not run a destructive call: it takes the word too.
    unconfirmed = cli("approve", session["id"][:10], "--yes")
    assert_one_line_error(unconfirmed, 2, "--yes --confirm CONFIRM")
    assert "no trash can" in unconfirmed.stderr  # the impact analysis (safety.impact) was shown
    assert victim.exists()
    # From another shell, without --model: the paused session knows its model.
    approved = cli("approve", session["id"][:10], "--yes", "--confirm", "CONFIRM", "--approver", "bob")
    assert approved.returncode == 0, approved.stderr
    assert "Traceback" not in approved.stderr
    assert not victim.exists()
    audit = json.loads(cli("audit", "--session", session["id"][:10], "--json").stdout)
    assert [(a["outcome"], a["actor"]) for a in audit] == [("executed", "bob"), ("pending", "policy")]
    table = cli("audit")
    assert "rm -rf" in table.stdout


def test_non_interactive_run_denies_what_needs_approval(tmp_path: Path) -> None:
    victim = tmp_path / "precious"
    victim.mkdir()
    model = f"scripted:{_rm_script(tmp_path, victim)}"
    proc = cli("--model", model, "ask", "clean up", "--mode", "agent", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "no approver" in proc.stderr
    assert victim.exists()
    assert "denied this call" in proc.stdout
    denied = json.loads(cli("audit", "--outcome", "denied", "--json").stdout)
    assert len(denied) == 1


def test_sessions_output_prints_a_kept_tool_output(isolated_home: Path) -> None:
    from devops_agent.config import Settings
    from devops_agent.store import ToolCallRecord

    log = "".join(f"step {i} ok\n" for i in range(3000))
    with Store.from_settings(Settings()) as store:
        session = store.create_session(title="kept", mode="ask", model=None)
        store.record_tool_call(
            ToolCallRecord(session.id, "r", "call-7", "jenkins_console", {}, "success", raw_output=log)
        )
    listed = cli("sessions", "output", session.id[:8], "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [
        {"tool_call_id": "call-7", "tool": "jenkins_console", "chars": len(log)}
    ]
    shown = cli("sessions", "output", session.id[:8], "call-7")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout == log
    assert_one_line_error(cli("sessions", "output", session.id[:8], "call-8"), 2, "sessions output")


def test_the_cli_starts_without_the_agent_runtime() -> None:
    """Importing the agent runtime (pydantic-ai) costs most of a second; commands that do not run
    the agent (search, logs, metrics, privacy mask, --help) must not pay for it at start-up."""
    code = (
        "import sys, devops_agent.cli.app, devops_agent.tools.registry\n"
        "print(sorted(m for m in sys.modules if m == 'pydantic_ai' or m.startswith('pydantic_ai.')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]", proc.stdout


SECRET = "sk-review-0123456789abcdef"


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def cli80(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd, env={"COLUMNS": "80", **(env or {})})


def data_store(home: Path) -> Store:
    return Store(f"sqlite:///{home / 'data' / 'devops-agent.db'}")


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


def test_config_show_keeps_whole_keys_sources_and_bracketed_values_at_80_columns(tmp_path: Path) -> None:
    proc = cli80(
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
            PYTHONFAULTHANDLER="1",  # SIGABRT on a missed exit prints where every thread is
        )
        # Ctrl-C as a terminal delivers it: a suite started in the background of a
        # non-interactive shell ignores SIGINT, and a child would inherit that (then it never
        # sees the signal), so the CLI is exec'd with SIGINT at its default.
        cli = [sys.executable, "-m", "devops_agent", "investigate", "p99 is up", "--query", "up"]
        exec_with_default_sigint = (
            "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
            "os.execv(sys.argv[1], sys.argv[1:])"
        )
        proc = subprocess.Popen(
            [sys.executable, "-c", exec_with_default_sigint, *cli],
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
        try:
            stdout, stderr = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:  # say where it hangs, and leave no process behind
            proc.send_signal(signal.SIGABRT)
            try:
                stdout, stderr = proc.communicate(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                stdout, stderr = proc.communicate()
            raise AssertionError(f"no exit 30 s after Ctrl-C: {(seen + stderr).decode()[-8000:]}") from None
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
