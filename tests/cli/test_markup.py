"""Stored and user-supplied text printed literally by the rest of the CLI (approvals, the audit log,
metric anomalies), and a session id prefix too short to be looked up.

Rich reads "[/x]" in a printed string as a closing tag (MarkupError) and "[error]" as a style
(the text vanishes); each test puts such a value where a user, a model or a file can put it.
"""

from __future__ import annotations

import random
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from devops_agent.cli.app import app
from devops_agent.cli.approve import describe_pending
from devops_agent.errors import NotFoundError
from devops_agent.store import Store
from devops_agent.store.records import AuditRecord


@pytest.fixture(autouse=True)
def _wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wide enough that no table cell wraps, so what is printed can be looked for on one line."""
    monkeypatch.setenv("COLUMNS", "200")


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def data_store(home: Path) -> Store:
    return Store(f"sqlite:///{home / 'data' / 'devops-agent.db'}")


# --- approvals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call_id", "pending"),
    [
        ("call_[/x]", {"tool": "shell", "command": "ls", "decision": "approve"}),  # a model's call id
        ("c1", {"tool": "shell", "command": "ls", "classification": "[error]", "decision": "approve"}),
    ],
)
def test_an_approval_prompt_prints_the_call_id_and_level_literally(
    call_id: str, pending: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    describe_pending(call_id, pending)
    printed = capsys.readouterr().err
    assert f"Approval needed ({call_id})" in printed
    assert f"— {pending.get('classification', 'approve')}" in printed


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("command", "test -f [/var/log/app.log] && echo [error]"),
        ("actor", "[bold]alice"),
        ("tool", "mcp_[/x]"),
        ("classification", "[error]"),
    ],
)
def test_audit_prints_commands_and_approvers_literally(field: str, value: str, isolated_home: Path) -> None:
    entry = {"tool": "shell", "mode": "agent", "decision": "approve", "outcome": "executed", field: value}
    with data_store(isolated_home) as store:
        store.record_audit(AuditRecord(**entry))
    code, stdout, stderr = invoke("audit")
    assert code == 0, stderr
    assert value in stdout


# --- metric anomalies -------------------------------------------------------------------------


def test_metrics_anomalies_prints_a_bracketed_series_name_literally(tmp_path: Path) -> None:
    rng = random.Random(7)
    start = datetime(2026, 11, 25, 8, 0, tzinfo=UTC)
    rows = [
        f"{(start + timedelta(minutes=i)).isoformat()},{400 if i == 80 else round(rng.gauss(100, 2), 2)}"
        for i in range(120)
    ]
    csv = tmp_path / "[error] latency.csv"  # the series is named after the file
    csv.write_text("timestamp,value\n" + "\n".join(rows) + "\n")
    code, stdout, stderr = invoke("metrics", "anomalies", "--file", str(csv))
    assert code == 0, stderr
    assert "spike" in stdout
    # once in the series column, once in the explanation ("[error] latency spiked to 400, …")
    assert stdout.count("[error] latency") == 2


# --- session id prefixes ----------------------------------------------------------------------


def test_a_session_prefix_too_short_says_how_long_it_must_be(isolated_home: Path) -> None:
    with data_store(isolated_home) as store:
        rec = store.create_session(title="t", mode="ask", model=None)
        short = rec.id[:4]
        with pytest.raises(NotFoundError) as caught:
            store.get_session(short)
        assert "too short" in caught.value.message
        assert "at least 6 characters" in caught.value.message
        assert store.get_session(rec.id[:6]) == rec  # six is enough
        with pytest.raises(NotFoundError) as unknown:  # long enough, but no such session
            store.get_session("zzzzzz")
        assert "too short" not in unknown.value.message
    proc = subprocess.run(
        [sys.executable, "-m", "devops_agent", "sessions", "show", short],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert f"no session '{short}'" in proc.stderr
    assert "a prefix must be at least 6 characters long (this one has 4)" in proc.stderr
