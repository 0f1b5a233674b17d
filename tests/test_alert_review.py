"""Alertmanager intake and the metric-alert runbook on awkward payloads: the zero start time, a
truncated group, a group of thousands of alerts, alert text that names host resources, and
correlation sources that were read with nothing in them, could not be read, or were cut short.

Real files, real git repositories, the real CLI; a real Prometheus where the metric matters.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from devops_agent.analysis.alert_intake import describe_payload, parse_webhook, to_question
from devops_agent.errors import UserError
from devops_agent.runbooks import load_runbooks
from devops_agent.runbooks.loader import select_runbooks
from test_metric_alert import _git, _investigate, _stamp


def _alert(name: str, starts: datetime | str, expr: str | None = None, **extra: Any) -> dict[str, Any]:
    alert: dict[str, Any] = {
        "status": "firing",
        "labels": {"alertname": name, "severity": "critical", "job": "billing", "instance": "db-1:9100"},
        "annotations": {"summary": f"{name} on billing"},
        "startsAt": starts if isinstance(starts, str) else _stamp(starts),
        "endsAt": "0001-01-01T00:00:00Z",
    }
    if expr is not None:
        alert["generatorURL"] = f"http://prometheus:9090/graph?g0.expr={quote(expr, safe='')}&g0.tab=1"
    return {**alert, **extra}


def _payload(*alerts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"version": "4", "status": "firing", "receiver": "devops-agent", "alerts": list(alerts), **extra}


def _commit(repo: Path, name: str, subject: str, when: datetime) -> None:
    (repo / name).write_text(subject + "\n")
    _git(repo, "add", name)
    _git(repo, "commit", "-qm", subject, when=when)


def test_a_zero_start_time_is_refused_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    payload = _payload(_alert("DiskFull", "0001-01-01T00:00:00Z", "x < 1"))
    with pytest.raises(UserError, match="startsAt"):
        parse_webhook(payload)
    (tmp_path / "zero.json").write_text(json.dumps(payload))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "devops_agent",
            "investigate",
            "--alert",
            str(tmp_path / "zero.json"),
            "--json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "startsAt" in proc.stderr


def test_a_start_time_in_the_future_is_flagged_and_investigated_from_now(
    prometheus_url: str, tmp_path: Path
) -> None:
    """A startsAt in 2030 was taken as the onset, silently: every window before it was empty. The
    alert fires, so it is investigated from now, and the report and stderr say why; a few minutes
    of clock skew are taken as they are."""
    now = datetime(2026, 11, 25, 19, 0, tzinfo=UTC)
    (skewed,) = parse_webhook(_payload(_alert("HighLatency", now + timedelta(minutes=3), "y > 2")), now=now)
    assert skewed.onset == skewed.starts_at == now + timedelta(minutes=3)
    assert skewed.future_start is None
    payload = _payload(_alert("DiskFull", "2030-01-01T00:00:00Z", "x < 1"))
    (future,) = parse_webhook(payload, now=now)
    assert future.starts_at == datetime(2030, 1, 1, tzinfo=UTC)
    assert future.onset == now
    assert future.history_since == now - timedelta(hours=2)
    inputs = future.investigation_inputs()
    assert inputs["onset"] == "2026-11-25T19:00:00Z"
    assert inputs["future_start"] == (
        "the alert's startsAt (2030-01-01T00:00:00Z) is 1132 days in the future of this machine's clock "
        "(2026-11-25T19:00:00Z): its start was taken as now, and nothing can be lined up with the time "
        "the payload gives"
    )
    assert "firing, its startsAt 2030-01-01 00:00 UTC in the future of this machine's clock" in to_question(
        future, now=now
    )

    proc, report = _investigate(tmp_path, payload, prometheus_url=prometheus_url)
    assert "warning: DiskFull: the alert's startsAt (2030-01-01T00:00:00Z) is " in proc.stderr
    (gap,) = [g for g in report["gaps"] if g["step"] == "metric-alert/onset"]
    assert "in the future of this machine's clock" in gap["reason"]
    assert "clocks" in gap["hint"]
    assert not str(report["summary"]).startswith("No problems found")


def test_alerts_left_out_of_a_truncated_payload_are_mentioned() -> None:
    now = datetime(2026, 11, 25, 19, 0, tzinfo=UTC)
    (alert,) = parse_webhook(
        _payload(_alert("HighLatency", now - timedelta(minutes=5), "y > 2"), truncatedAlerts=7), now=now
    )
    question = to_question(alert, now=now)
    assert "left 7 more alert(s) of this group out of the payload" in question
    (whole,) = parse_webhook(_payload(_alert("HighLatency", now - timedelta(minutes=5), "y > 2")), now=now)
    assert "left" not in to_question(whole, now=now)


def test_a_group_of_thousands_of_alerts_does_not_flood_the_question() -> None:
    now = datetime(2026, 11, 25, 19, 0, tzinfo=UTC)
    alerts = [
        _alert(
            "HighLatency",
            now - timedelta(minutes=5),
            "y > 2",
            labels={"alertname": "HighLatency", "pod": f"api-{i}"},
        )
        for i in range(3000)
    ]
    alerts[2500]["status"] = "resolved"
    alerts[2500]["endsAt"] = _stamp(now)
    parsed = parse_webhook(_payload(*alerts), now=now)
    text = describe_payload(parsed, 2500)
    assert len(text) < 2000, len(text)
    assert text.startswith("The payload held 3000 alerts: #1 HighLatency on pod=api-0 (firing)")
    assert "#2501 HighLatency on pod=api-2500 (resolved, investigated here)" in text
    assert text.endswith("and 2989 more (2989 firing, 0 resolved).")
    # a small payload is still listed in full
    assert "more" not in describe_payload(parsed[:10], 0)


def test_an_alert_about_memory_and_disk_does_not_inspect_this_machine() -> None:
    """An alert's text is about the host it fires on; the host-health runbook would check the
    machine devops-agent runs on and report its memory and disk as fine: a false all-clear."""
    now = datetime(2026, 11, 25, 19, 0, tzinfo=UTC)
    alert = _alert(
        "NodeMemoryHigh",
        now - timedelta(minutes=5),
        "node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes < 0.1",
        annotations={"summary": "Memory almost full on host db-1; disk swapping"},
    )
    (request,) = parse_webhook(_payload(alert), now=now)
    inputs = {**request.investigation_inputs(), "logs": ["/var/log/app.log"]}
    question = inputs.pop("question")
    chosen = [r.name for r in select_runbooks(question, inputs, load_runbooks())]
    assert chosen == ["metric-alert", "log-errors"]
    # without an alert the same words still pick host-health
    assert "host-health" in [r.name for r in select_runbooks(question, {}, load_runbooks())]


def _quiet_logs(logs: Path, start: datetime, end: datetime) -> None:
    """Info lines every minute and an error logged every 3 minutes all along: nothing new."""
    lines = []
    t = start
    while t < end:
        lines.append(f"{t.isoformat()} INFO request ok")
        if int((t - start).total_seconds()) % 180 == 0:
            lines.append(f"{t.isoformat()} ERROR retrying upstream call to ledger")
        t += timedelta(minutes=1)
    logs.mkdir()
    (logs / "app.log").write_text("\n".join(lines) + "\n")


def test_when_nothing_lines_up_the_finding_says_so_and_names_a_source_it_could_not_read(
    prometheus_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    onset = now - timedelta(minutes=10)
    expr = f"(vector(time()) > bool {onset.timestamp():.0f}) * 90 + 10 > 50"
    _quiet_logs(tmp_path / "logs", onset - timedelta(hours=3), now)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _commit(repo, "a.yaml", "three days before", onset - timedelta(days=3))
    payload = _payload(_alert("BillingLatency", onset + timedelta(minutes=1), expr))

    def level_shift_finding(repo: Path) -> dict[str, Any]:
        _proc, report = _investigate(
            tmp_path,
            payload,
            "--logs",
            str(tmp_path / "logs"),
            "--repo",
            str(repo),
            prometheus_url=prometheus_url,
        )
        return next(f for f in report["findings"] if "shifted level" in f["title"])

    finding = level_shift_finding(repo)
    assert "No log template was new or spiked within 0:15:00 of it" in finding["detail"]
    assert "no commit landed in the 2:00:00 before" in finding["detail"]
    assert "retrying upstream call" not in "\n".join(finding["evidence"])

    # a checkout whose objects are gone: git is there but `git log` fails (a directory that is
    # not a repository at all is refused up front, exit 2)
    broken = tmp_path / "broken-repo"
    broken.mkdir()
    _git(broken, "init", "-q")
    _commit(broken, "a.yaml", "lost", onset - timedelta(days=1))
    for objects in (broken / ".git" / "objects").glob("??"):
        shutil.rmtree(objects)
    finding = level_shift_finding(broken)
    assert "the commits could not be read" in finding["detail"]
    assert "no commit landed" not in finding["detail"]


def test_a_git_log_cut_at_its_limit_by_commits_after_the_onset_is_not_an_all_clear(tmp_path: Path) -> None:
    """A busy repository: more commits after the alert started than git_log lists (50), so the
    deploy 10 minutes before the onset is not among them. The report must say the list was cut."""
    now = datetime.now(UTC).replace(microsecond=0)
    onset = now - timedelta(minutes=40)
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _commit(repo, "pool.yaml", "lower the billing db pool size", onset - timedelta(minutes=10))
    for i in range(55):
        _commit(repo, f"doc{i}.md", f"docs tweak {i}", onset + timedelta(minutes=6, seconds=30 * i))

    _proc, report = _investigate(tmp_path, _payload(_alert("BillingLatency", onset)), "--repo", str(repo))
    missing = next(f for f in report["findings"] if "could not be analysed" in f["title"])
    assert "git_log stopped at its commit limit, reaching back only to" in missing["detail"]
    assert "older commits in that window were not seen" in missing["detail"]
