"""Commits against the moment the trouble began, through the real CLI: real log files, a real git
repository whose commits carry different author and commit times, ``investigate --logs --repo``
and ``investigate --alert``; and ``--repo`` that is not a repository."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from fixtures_cli import assert_one_line_error, cli
from fixtures_git import git_at
from fixtures_logs import zulu

pytestmark = pytest.mark.slow


def _commit(repo: Path, name: str, subject: str, authored: datetime, committed: datetime) -> None:
    (repo / name).write_text(subject + "\n")
    git_at(repo, "add", name)
    git_at(repo, "commit", "-qm", subject, when=committed)
    # the author time of a change written earlier and rebased onto the branch later
    git_at(repo, "commit", "-q", "--amend", "--no-edit", f"--date={authored.isoformat()}", when=committed)


def _incident(tmp_path: Path, onset: datetime) -> tuple[Path, Path]:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [
        f"{zulu(onset - timedelta(hours=2) + timedelta(minutes=2 * i))} INFO request ok id={i}"
        for i in range(70)
    ]
    lines += [
        f"{zulu(onset + timedelta(seconds=5 * i))} ERROR connection pool exhausted (size={20 + i}) for db billing"
        for i in range(25)
    ]
    (logs / "app.log").write_text("\n".join(sorted(lines)) + "\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    git_at(repo, "init", "-q")
    _commit(repo, "README", "initial", onset - timedelta(days=3), onset - timedelta(days=3))
    _commit(
        repo,
        "db.yaml",
        "lower the billing db pool size",
        onset - timedelta(days=2),
        onset - timedelta(minutes=12),
    )
    _commit(repo, "x.md", "docs tweak", onset + timedelta(minutes=20), onset + timedelta(minutes=20))
    return logs, repo


def _minute(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%MZ")


def _changes(proc_stdout: str) -> dict[str, Any]:
    report = json.loads(proc_stdout)["report"]
    (finding,) = [f for f in report["findings"] if f["source"].startswith("git_log (recent-changes")]
    return finding


def test_commits_are_lined_up_with_the_first_error_in_the_logs(tmp_path: Path) -> None:
    onset = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=40)
    logs, repo = _incident(tmp_path, onset)
    proc = cli(
        "investigate",
        "errors after the deploy",
        "--logs",
        str(logs),
        "--repo",
        str(repo),
        "--since",
        "3h",
        "--json",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    finding = _changes(proc.stdout)
    suspect = next(line for line in finding["evidence"] if "lower the billing db pool size" in line)
    # author time first (two days ago), then when it was committed, then where it sits against the errors
    sha, authored, *_rest = suspect.split(" ")
    assert authored == _minute(onset - timedelta(days=2))
    assert f"[committed {_minute(onset - timedelta(minutes=12))}]" in suspect
    assert suspect.endswith("— landed 12 min before the first error")
    marker = finding["evidence"].index(
        f"── {_minute(onset)} the first error: connection pool exhausted (size=<VAL>) for db billing ──"
    )
    assert "docs tweak" in finding["evidence"][marker - 1]
    assert "landed 20 min after the first error" in finding["evidence"][marker - 1]
    assert finding["evidence"][marker + 1] == suspect
    assert "1 in the 2 h before the first error" in finding["title"]
    assert finding["severity"] == "medium"


def test_commits_are_lined_up_with_the_alerts_start(tmp_path: Path) -> None:
    onset = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=40)
    _logs, repo = _incident(tmp_path, onset)
    alert = {
        "status": "firing",
        "labels": {"alertname": "BillingErrors", "severity": "critical", "job": "billing"},
        "startsAt": zulu(onset),
        "endsAt": "0001-01-01T00:00:00Z",
    }
    payload = tmp_path / "alert.json"
    payload.write_text(json.dumps({"version": "4", "status": "firing", "alerts": [alert]}))
    proc = cli("investigate", "--alert", str(payload), "--repo", str(repo), "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    finding = _changes(proc.stdout)
    assert any(line.endswith("— landed 12 min before the alert's start") for line in finding["evidence"])


def test_a_repo_that_is_not_a_git_repository_is_refused(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = cli("investigate", "what changed?", "--repo", str(plain), cwd=tmp_path)
    assert_one_line_error(proc, 2, f"--repo {plain}: not a git repository", "git checkout")
    assert proc.stdout == ""
