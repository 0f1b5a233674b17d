"""Plain ``ask`` and ``chat`` with the privacy guard on, run as a user runs them: the answer on
stdout is the restored one, never the model's placeholders, and it carries the fail-closed note
when the vault cannot be read. Real subprocesses, a real SQLite store, the scripted model."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from fixtures_cli import cli

pytestmark = pytest.mark.slow

TICKET = "OPS-4242"
EMAIL = "ops.lead@acme-corp.com"
QUESTION = f"ticket {TICKET}, mail {EMAIL}"
PLACEHOLDER = re.compile(r"<<[A-Z][A-Z0-9_]*_[0-9a-f]{8}>>")
NOTE = "the privacy vault could not be read"


def guarded_project(tmp_path: Path) -> Path:
    """A working directory whose config runs the scripted model with the guard on. The script
    answers with the prompt it received, i.e. with placeholders for the ticket and the address."""
    (tmp_path / "script.yaml").write_text('turns:\n  - text: "Answer: {prompt}"\n')
    (tmp_path / "devops-agent.toml").write_text(
        '[model]\nname = "scripted:script.yaml"\n\n[privacy]\nenabled = "on"\nner = "off"\n'
    )
    return tmp_path


def test_plain_ask_prints_the_restored_answer(tmp_path: Path) -> None:
    proc = cli("ask", QUESTION, cwd=guarded_project(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"Answer: ticket {TICKET}, mail {EMAIL}" in proc.stdout
    assert not PLACEHOLDER.search(proc.stdout), proc.stdout
    assert NOTE not in proc.stdout


def test_chat_prints_the_restored_answer(tmp_path: Path) -> None:
    proc = cli("chat", stdin=f"{QUESTION}\n/exit\n", cwd=guarded_project(tmp_path))
    assert proc.returncode == 0, proc.stderr
    assert f"Answer: ticket {TICKET}, mail {EMAIL}" in proc.stdout
    assert not PLACEHOLDER.search(proc.stdout), proc.stdout


def test_unreadable_vault_gives_masked_answer_with_note_in_plain_output(
    tmp_path: Path, isolated_home: Path
) -> None:
    work = guarded_project(tmp_path)
    assert cli("sessions", "list", cwd=work).returncode == 0  # creates and migrates the store
    with sqlite3.connect(isolated_home / "data" / "devops-agent.db") as db:
        db.execute("ALTER TABLE vault RENAME TO vault_lost")

    proc = cli("ask", QUESTION, cwd=work)
    assert proc.returncode == 0, (proc.stdout, proc.stderr)  # purging at start is housekeeping
    assert "vault_purge_failed" in proc.stderr
    assert NOTE in proc.stdout
    assert re.search(r"Answer: ticket <<JIRA_KEY_[0-9a-f]{8}>>, mail <<EMAIL_[0-9a-f]{8}>>", proc.stdout)
    assert TICKET not in proc.stdout
    assert EMAIL not in proc.stdout

    as_json = json.loads(cli("ask", QUESTION, "--json", cwd=work).stdout)
    assert as_json["status"] == "completed"
    assert NOTE in as_json["output"]
    assert EMAIL not in as_json["output"]
