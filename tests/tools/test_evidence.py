"""Evidence built from real tool outputs: templates of real log files, the first error and a burst,
commits of a real repository, a deployment's revisions."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.config.settings import FileSettings
from devops_agent.tools import git, logs
from devops_agent.tools.evidence import rollout_evidence
from fixtures_git import git_at

T0 = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)


def _log(path: Path) -> Path:
    lines = [f"{(T0 + timedelta(seconds=i)).isoformat()} INFO request ok id={i}" for i in range(120)]
    # errors begin at 14:05:00; a burst of 40 refusals from 14:10:30 (its time bucket begins earlier)
    lines += [
        f"{(T0 + timedelta(minutes=5, seconds=i)).isoformat()} ERROR disk full on /var/{i}" for i in range(3)
    ]
    lines += [
        f"{(T0 + timedelta(minutes=10, seconds=30 + i)).isoformat()} ERROR connect to 10.0.0.{i % 9}:5432 refused"
        for i in range(40)
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _tool(tmp_path: Path, name: str) -> Any:
    settings = Settings(files=FileSettings(roots=[tmp_path]))
    builder = git.build(settings) if name.startswith("git") else logs.build(settings)
    return builder.entries[name].function


def test_patterns_become_a_template_table_by_count(tmp_path: Path) -> None:
    log = _log(tmp_path / "app.log")
    r = _tool(tmp_path, "logs_patterns")(paths=[str(log)], max_templates=2)
    assert r.status == "success"
    table = r.evidence.templates
    assert table is not None
    assert table.total == r.data["templates_total"] == 3  # all counted, whatever max_templates shows
    assert [(row.count, row.template) for row in table.rows] == [
        (120, "request ok id=<*>"),
        (40, "connect to <*> refused"),
    ]
    assert table.lines == 163
    assert table.errors_only is False
    refused = table.rows[1]
    assert refused.first_seen == T0 + timedelta(minutes=10, seconds=30)
    assert refused.last_seen == T0 + timedelta(minutes=11, seconds=9)
    assert refused.sample.endswith("ERROR connect to 10.0.0.0:5432 refused")


def test_error_groups_date_the_first_error_and_the_burst(tmp_path: Path) -> None:
    log = _log(tmp_path / "app.log")
    r = _tool(tmp_path, "logs_errors")(paths=[str(log)])
    assert r.status == "success"
    ev = r.evidence
    assert ev.templates is not None
    assert ev.templates.errors_only
    assert [row.count for row in ev.templates.rows] == [40, 3]
    onset = ev.timeline[0]
    assert (onset.kind, onset.at) == ("error_onset", T0 + timedelta(minutes=5))
    assert onset.label.startswith("first error: disk full on")
    bursts = [e for e in ev.timeline if e.label.startswith("error burst:")]
    # at its first line, not at the start of its bucket: a burst never precedes the first error
    assert [b.at for b in bursts] == [T0 + timedelta(minutes=10, seconds=30)]
    assert "refused" in bursts[0].label


def test_no_errors_no_evidence(tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text(f"{T0.isoformat()} INFO fine\n")
    r = _tool(tmp_path, "logs_errors")(paths=[str(log)])
    assert r.status == "no_data"
    assert r.evidence is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_commits_are_timeline_entries_at_their_commit_time(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git_at(repo, "init", "-q")
    for i, subject in enumerate(("Add app", "Raise pool size")):
        (repo / f"f{i}").write_text(subject)
        git_at(repo, "add", f"f{i}")
        git_at(repo, "commit", "-q", "-m", subject, when=T0 + timedelta(hours=i))
    r = _tool(tmp_path, "git_log")(repo=str(repo), since="2026-11-01")
    assert r.status == "success", r
    entries = sorted(r.evidence.timeline, key=lambda e: e.at)
    assert [(e.kind, e.at) for e in entries] == [("commit", T0), ("commit", T0 + timedelta(hours=1))]
    short = r.data["commits"][0]["short_sha"]
    assert entries[1].label == f"{short} Raise pool size (Dana)"


def test_rollout_revisions_are_deploy_entries() -> None:
    # the revisions as k8s_rollout_history returns them (its tests drive it against the recorded API)
    revisions = [
        {"revision": 3, "images": ["app:1.3"], "created": "2026-11-27T14:02:00Z", "changeCause": "bump"},
        {"revision": 2, "images": ["app:1.2"], "created": "2026-11-26T09:00:00Z", "changeCause": None},
        {"revision": 1, "images": ["app:1.1"], "created": None},
    ]
    ev = rollout_evidence("web", revisions)
    assert [(e.kind, e.at, e.label) for e in ev.timeline] == [
        ("deploy", T0 + timedelta(minutes=2), "web revision 3: app:1.3 — bump"),
        ("deploy", datetime(2026, 11, 26, 9, tzinfo=UTC), "web revision 2: app:1.2"),
    ]
