"""The console script on the model path, over real HTTP to the fake OpenAI-compatible server.

What a person sees: one error line with a hint (never a traceback), ``--json`` that says why a run
failed, the model's usage, each tool call's arguments with control characters made visible, what an
automatic denial refused, ``--approvals pause`` kept across ``devops-agent approve``, and
``sessions show`` with the identifiers restored (secrets never).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from fixtures_cli import cli
from fixtures_openai import FakeOpenAI, text, tool_calls

# The fake server on 127.0.0.1 is the model; the commands run in this process.
pytestmark = pytest.mark.allow_model_requests


def model_env(srv: FakeOpenAI, **extra: str) -> dict[str, str]:
    """The CLI pointed at the fake server; model requests allowed (it is on 127.0.0.1)."""
    return {
        "DEVOPS_AGENT_ALLOW_MODEL_REQUESTS": "1",
        "DEVOPS_AGENT_MODEL__NAME": "openai-compatible:fake-model",
        "DEVOPS_AGENT_MODEL__BASE_URL": srv.url,
        "DEVOPS_AGENT_MODEL__REQUEST_TIMEOUT_S": "10",
        **extra,
    }


def test_a_model_failure_is_one_line_and_json_says_why(tmp_path: Path) -> None:
    bad = [tool_calls(("system_memroy", {})), tool_calls(("system_memroy", {}))]
    with FakeOpenAI(bad + bad) as srv:
        started = time.monotonic()
        proc = cli("ask", "How is memory?", env=model_env(srv), cwd=tmp_path)
        took = time.monotonic() - started
        as_json = cli("ask", "How is memory?", "--json", env=model_env(srv), cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
    assert len(proc.stderr) < 3_000, "no dump of the run's local variables"
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("error:")]
    assert "called a tool it was not offered, 'system_memroy', 2 times" in line
    assert "closest offered tools: system_memory" in line
    assert took < 60
    assert as_json.returncode == 1
    data = json.loads(as_json.stdout)
    assert data["status"] == "failed"
    assert data["error"]["type"] == "ModelError"
    assert "'system_memroy', 2 times" in data["error"]["message"]
    assert "system_memory" in data["error"]["hint"]


def test_usage_arguments_and_no_deprecation_warning(tmp_path: Path) -> None:
    replies = [
        # A short path: the progress line shortens long arguments, and tmp_path's length varies
        # (an xdist worker's has a folder more).
        tool_calls(("files_read", {"path": "/x\x1b[2Jy.log", "max_lines": 5})),
        text("No such log."),
        text("Fine."),
    ]
    with FakeOpenAI(replies) as srv:
        proc = cli("ask", "read that log", env=model_env(srv), cwd=tmp_path)
        as_json = cli("ask", "and now?", "--json", env=model_env(srv), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "\x1b[2J" not in proc.stderr, "a control character from the model reaches the terminal"
    assert "files_read(path='/x\\x1b[2Jy.log', max_lines=5)" in proc.stderr
    assert "2 model requests · 62 tokens in, 14 out" in proc.stderr
    assert "eprecat" not in proc.stderr
    usage = json.loads(as_json.stdout)["usage"]
    assert usage.pop("context")["requests"] == 1  # what the token budget saw (timings vary)
    assert usage == {
        "requests": 1,
        "input_tokens": 31,
        "output_tokens": 7,
        "total_tokens": 38,
        "cache_read_tokens": 0,
        "cache_write_tokens": 0,
        "tool_calls": 0,
        "cost_usd": None,
        "price_source": None,
    }
    session = json.loads(cli("sessions", "list", "--json").stdout)[-1]
    shown = cli("sessions", "show", session["id"][:12])
    assert "2 model requests · 62 tokens in, 14 out" in shown.stdout


def test_approvals_pause_is_kept_when_approve_resumes_the_run(tmp_path: Path) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    replies = [
        tool_calls(("shell_run", {"command": f"rm -rf {first}"})),
        tool_calls(("shell_run", {"command": f"rm -rf {second}"})),
        text("Both removed."),
    ]
    with FakeOpenAI(replies) as srv:
        env = model_env(srv)
        paused = cli("ask", "clean up", "--mode", "agent", "--approvals", "pause", env=env, cwd=tmp_path)
        assert paused.returncode == 0, paused.stderr
        sid = json.loads(cli("sessions", "list", "--json").stdout)[0]["id"]
        again = cli("approve", sid[:12], "--yes", "--confirm", "CONFIRM", env=env, cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert not first.exists()
        assert second.exists(), "the second call was neither denied nor run: it waits"
        assert f"devops-agent approve {sid[:12]}" in again.stderr
        state = json.loads(cli("sessions", "list", "--json").stdout)[0]
        assert state["status"] == "paused"
        (pending,) = state["context_state"]["pending_approvals"].values()
        assert pending["command"] == f"rm -rf {second}"
        done = cli("approve", sid[:12], "--yes", "--confirm", "CONFIRM", env=env, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert not second.exists()
    assert "Both removed." in done.stdout


def test_an_automatic_denial_says_what_it_denied(tmp_path: Path) -> None:
    victim = tmp_path / "precious"
    victim.mkdir()
    replies = [tool_calls(("shell_run", {"command": f"rm -rf {victim}\x1b[1A"})), text("Not allowed.")]
    with FakeOpenAI(replies) as srv:
        proc = cli("ask", "clean up", "--mode", "agent", env=model_env(srv), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert victim.exists()
    assert f"denied: rm -rf {victim}\\x1b[1A" in proc.stderr
    assert "\x1b[1A" not in proc.stderr


DB_HOST = "billing-db-7.prod.canary-corp.example"
TOKEN = "ghp_R8kq2LmZ7vT1xW9pN4sB6yH3cJ5dF0gA2eUo"


def test_sessions_show_restores_identifiers_but_never_secrets(tmp_path: Path) -> None:
    def answer(request: dict[str, Any]) -> str:
        asked = json.dumps(request["messages"])
        host = re.findall(r"<<HOST_[0-9a-f]{8}>>", asked)[0]
        return f"The slow host is {host}; the token you pasted was [REDACTED_SECRET]."

    env_privacy = {"DEVOPS_AGENT_PRIVACY__ENABLED": "on", "DEVOPS_AGENT_PRIVACY__HMAC_KEY": "cli-key"}
    with FakeOpenAI([text(answer)]) as srv:
        proc = cli(
            "ask",
            f"Why is {DB_HOST} slow? my token is {TOKEN}",
            env=model_env(srv, **env_privacy),
            cwd=tmp_path,
        )
        sent = srv.sent()
    assert proc.returncode == 0, proc.stderr
    assert DB_HOST not in sent
    assert TOKEN not in sent
    assert f"The slow host is {DB_HOST}" in proc.stdout
    sid = json.loads(cli("sessions", "list", "--json").stdout)[0]["id"]
    shown = cli("sessions", "show", sid[:12], env=env_privacy)
    assert shown.returncode == 0, shown.stderr
    assert f"The slow host is {DB_HOST}" in shown.stdout
    assert "<<HOST_" not in shown.stdout
    assert TOKEN not in shown.stdout
    masked = cli(
        "sessions", "show", sid[:12], env={**env_privacy, "DEVOPS_AGENT_PRIVACY__RESTORE_OUTPUT": "false"}
    )
    assert f"The slow host is {DB_HOST}" not in masked.stdout, "restore_output = false keeps it masked"
    assert "The slow host is <<HOST_" in masked.stdout
