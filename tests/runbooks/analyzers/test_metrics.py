"""The metric-alert runbook end to end: real Prometheus, real log files, a real git repository.

The metric is real PromQL evaluated by the real Prometheus the suite starts: a series that
steps from 10 to 100 at a known moment T. The logs get a new error template at T and an old,
unrelated one 18 minutes earlier; the repository gets a commit 10 minutes before T.

Then the Alertmanager intake and the runbook on awkward payloads: the zero start time, a truncated
group, a group of thousands of alerts, alert text that names host resources, and correlation
sources that were read with nothing in them, could not be read, or were cut short.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from devops_agent.agent.session import SessionService
from devops_agent.analysis.alert_intake import describe_payload, parse_webhook, to_question
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.runbooks import load_runbooks
from devops_agent.runbooks.loader import select_runbooks
from devops_agent.store import Store
from fixtures_git import git_at
from fixtures_logs import zulu


def _incident(tmp_path: Path, logs: Path, lines: list[str], onset: datetime) -> Path:
    """Write ``lines`` plus the incident's new error (from ``onset``) as ``logs/app.log``, and a
    repository whose one commit lands 10 minutes before ``onset``; return the repository."""
    lines = lines + [
        f"{zulu(onset + timedelta(seconds=10 + 5 * i))} ERROR connection pool exhausted (size={20 + i}) for db billing"
        for i in range(25)
    ]
    (logs / "app.log").write_text("\n".join(sorted(lines)) + "\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    git_at(repo, "init", "-q")
    (repo / "db.yaml").write_text("pool_size: 20\n")
    git_at(repo, "add", ".")
    git_at(repo, "commit", "-qm", "lower the billing db pool size", when=onset - timedelta(minutes=10))
    return repo


def test_metric_alert_names_the_series_the_onset_and_what_lines_up(
    prometheus_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    onset = now - timedelta(minutes=4)
    query = f"(time() > bool {onset.timestamp():.0f}) * 90 + 10"

    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [
        f"{zulu(now - timedelta(minutes=20) + timedelta(seconds=20 * i))} INFO request ok id={i}"
        for i in range(60)
    ]
    old = now - timedelta(minutes=22)
    lines += [f"{zulu(old + timedelta(seconds=i))} ERROR cache miss storm on shard {i}" for i in range(6)]
    repo = _incident(tmp_path, logs, lines, onset)

    url = f"sqlite:///{tmp_path / 'store.db'}"
    settings = Settings(database_url=url, prometheus={"url": prometheus_url}, files={"roots": [tmp_path]})
    inputs = {"query": query, "logs": [str(logs)], "repo": str(repo), "since": "20m"}
    with Store(url) as store:
        service = SessionService(settings, store)
        _events, final = asyncio.run(service.run("billing latency alert", inputs=inputs))
    assert final.status == "completed"
    assert final.report is not None
    assert final.report["runbooks"][0] == "metric-alert"
    finding = next(
        f for f in final.report["findings"] if "shifted level" in f["title"] or query[:20] in f["title"]
    )
    assert finding["severity"] == "high"
    # When it started: within one scrape step or two of the real onset.
    assert (
        onset.strftime("%H:%M") in finding["title"]
        or (onset + timedelta(minutes=1)).strftime("%H:%M") in finding["title"]
    )
    evidence = "\n".join(finding["evidence"])
    assert "connection pool exhausted" in evidence
    assert "cache miss storm" not in evidence, "an older, unrelated error is not correlated"
    assert "lower the billing db pool size" in evidence
    assert "## What could not be gathered" in (final.output or "")


def test_metrics_anomalies_command_from_prometheus_and_csv(prometheus_url: str, tmp_path: Path) -> None:
    import json
    import math
    import sys

    onset = datetime.now(UTC) - timedelta(minutes=3)
    env = dict(os.environ, DEVOPS_AGENT_PROMETHEUS__URL=prometheus_url)
    query = f"(time() > bool {onset.timestamp():.0f}) * 50 + 5"
    cmd = [sys.executable, "-m", "devops_agent", "metrics", "anomalies", query, "--since", "15m", "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)["anomalies"]
    assert found
    assert found[0]["kind"] == "level_shift"

    # NaN (0/0) and Inf (x/0) samples, as real exporters produce: gaps, not a spike with a NaN score
    gappy = f"({query}) / (time() % 180 > bool 15)"
    proc = subprocess.run(
        [*cmd[:5], gappy, *cmd[6:]], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert proc.returncode == 0, proc.stderr
    with_gaps = json.loads(proc.stdout)["anomalies"]
    assert [a["kind"] for a in with_gaps] == ["level_shift"]
    assert all(math.isfinite(a["score"]) for a in with_gaps)

    rows = ["ts,value"] + [
        f"{1_763_800_000 + 60 * i},{100 + 10 * math.sin(i / 10) + (80 if 150 <= i < 170 else 0)}"
        for i in range(240)
    ]
    (tmp_path / "s.csv").write_text("\n".join(rows) + "\n")
    csv_cmd = [
        sys.executable,
        "-m",
        "devops_agent",
        "metrics",
        "anomalies",
        "--file",
        str(tmp_path / "s.csv"),
        "--json",
    ]
    from_csv = json.loads(
        subprocess.run(csv_cmd, capture_output=True, text=True, timeout=120, check=True).stdout
    )
    assert [a["start"][:16] for a in from_csv["anomalies"]][0] == "2025-11-22T10:56"


def test_metrics_slo_command_exits_1_on_a_page(prometheus_url: str) -> None:
    import json
    import sys

    env = dict(os.environ, DEVOPS_AGENT_PROMETHEUS__URL=prometheus_url)
    # Expressions with $window: 10 requests and 1 error a minute, whatever the window (10% errors).
    cmd = [
        sys.executable,
        "-m",
        "devops_agent",
        "metrics",
        "slo",
        "--requests",
        "sum_over_time(vector(10)[$window:1m])",
        "--errors",
        "sum_over_time(vector(1)[$window:1m])",
        "--objective",
        "0.999",
        "--window",
        "7d",
    ]
    proc = subprocess.run([*cmd, "--json"], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 3, proc.stderr  # a page fires: neither a failure (1) nor a bad request (2)
    data = json.loads(proc.stdout)
    assert data["burn_rates"]["1h"] == 100.0
    assert data["counts"]["1h"] == {"requests": 600, "errors": 60}
    assert {a["severity"] for a in data["alerts"]} == {"page", "ticket"}
    assert data["budget_remaining"] < 0
    table = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert table.returncode == 3
    assert "100.00x" in table.stdout
    assert "PAGE: burning" in table.stdout


# --- investigate --alert: Alertmanager webhook payloads, as a user feeds them to the CLI ---


def _alert(name: str, starts: datetime, expr: str | None, **extra: object) -> dict[str, object]:
    from urllib.parse import quote

    alert: dict[str, object] = {
        "status": "firing",
        "labels": {"alertname": name, "severity": "critical", "job": "billing", "instance": "db-1:9187"},
        "annotations": {"summary": f"{name} on billing"},
        "startsAt": zulu(starts),
        "endsAt": "0001-01-01T00:00:00Z",
        "fingerprint": name.lower(),
    }
    if expr is not None:
        alert["generatorURL"] = f"http://prometheus:9090/graph?g0.expr={quote(expr)}&g0.tab=1"
    return {**alert, **extra}


def _investigate(
    tmp_path: Path,
    alerts: list[dict[str, object]] | dict[str, object],
    *args: str,
    prometheus_url: str | None = None,
    stdin: bool = False,
) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
    """Run ``devops-agent investigate --alert payload.json --json ARGS`` as a user would (or
    ``--alert -`` with the payload on stdin); ``alerts`` is the payload's alerts, or a whole payload."""
    import json
    import sys

    whole = alerts if isinstance(alerts, dict) else None
    payload = json.dumps(
        whole or {"version": "4", "status": "firing", "receiver": "devops-agent", "alerts": alerts}
    )
    (tmp_path / "payload.json").write_text(payload)
    env = dict(os.environ, COLUMNS="200")
    if prometheus_url:
        env["DEVOPS_AGENT_PROMETHEUS__URL"] = prometheus_url
    source = "-" if stdin else str(tmp_path / "payload.json")
    cmd = [sys.executable, "-m", "devops_agent", "investigate", "--alert", source]
    proc = subprocess.run(
        [*cmd, "--json", *args],
        input=payload if stdin else None,
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)["report"]
    return proc, report


def test_alert_expression_threshold_is_taken_off_and_old_log_templates_are_not_news(
    prometheus_url: str, tmp_path: Path
) -> None:
    """A real rule's expression carries its threshold: analysing it as is only sees the points
    where the alert fires. The range must also reach back far enough that an error logged every
    few minutes for hours is seen as old, not as news at the onset."""
    now = datetime.now(UTC).replace(microsecond=0)
    onset = now - timedelta(minutes=10)
    expr = f"(vector(time()) > bool {onset.timestamp():.0f}) * 90 + 10 > 50"

    logs = tmp_path / "logs"
    logs.mkdir()
    start = onset - timedelta(hours=3)
    minutes = int((now - start).total_seconds() // 60)
    lines = [f"{zulu(start + timedelta(minutes=m))} INFO request ok id={m}" for m in range(minutes)]
    lines += [
        f"{zulu(start + timedelta(minutes=m, seconds=30))} ERROR cache miss storm on shard {m}"
        for m in range(0, minutes, 7)
    ]
    repo = _incident(tmp_path, logs, lines, onset)

    alert = _alert("BillingLatency", onset + timedelta(minutes=1), expr)  # `for: 1m`
    _proc, report = _investigate(
        tmp_path, [alert], "--logs", str(logs), "--repo", str(repo), prometheus_url=prometheus_url
    )
    findings = report["findings"]
    assert isinstance(findings, list)
    finding = next(f for f in findings if "shifted level" in f["title"])
    # The onset, within a step (30 s over this range) or two.
    assert any((onset + timedelta(minutes=k)).strftime("%H:%M") in finding["title"] for k in (0, 1)), finding[
        "title"
    ]
    assert "> 50" not in finding["title"], "the series is analysed without the threshold"
    assert "The alert fires when" in finding["detail"]
    assert finding["detail"].rstrip().count("> 50") == 1
    evidence = "\n".join(finding["evidence"])
    assert "connection pool exhausted" in evidence
    assert "cache miss storm" not in evidence, "a template logged every 7 minutes for hours is not new"
    assert "lower the billing db pool size" in evidence
    # History before the alert: the detector's range starts hours before startsAt.
    window = str(report["window"])
    assert window.startswith("since ")
    since = datetime.fromisoformat(window.removeprefix("since ").replace("Z", "+00:00"))
    assert onset - since >= timedelta(hours=1, minutes=59)
    assert str(report["title"]).startswith("Metric alert: BillingLatency (critical) on job=billing")


def test_alert_without_expression_still_reads_logs_and_says_why_the_metric_is_missing(
    tmp_path: Path,
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    onset = now - timedelta(minutes=5)
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [f"{zulu(now - timedelta(minutes=30 - m))} INFO request ok id={m}" for m in range(30)]
    lines += [
        f"{zulu(onset + timedelta(seconds=5 * i))} ERROR disk quota exceeded on /data" for i in range(12)
    ]
    (logs / "app.log").write_text("\n".join(sorted(lines)) + "\n")

    proc, report = _investigate(tmp_path, [_alert("DiskQuota", onset, None)], "--logs", str(logs))
    title = str(report["title"]).split(" · ")[0]  # --logs also selects the log-errors runbook
    assert title == "Metric alert: DiskQuota (critical) on job=billing, instance=db-1:9187"
    assert "carries no PromQL expression" in proc.stderr
    findings = report["findings"]
    assert isinstance(findings, list)
    missing = next(f for f in findings if "could not be analysed" in f["title"])
    assert "carries no expression" in missing["title"]
    assert "--query" in missing["detail"]
    assert "disk quota exceeded" in "\n".join(missing["evidence"]), "lined up with the alert's start"
    gaps = report["gaps"]
    assert isinstance(gaps, list)
    assert [g["step"] for g in gaps if "query" in g["reason"]] == ["metric-alert/metric"]
    assert all(g["step"] != "metric-alert/errors" for g in gaps), "the logs step ran"


def test_alert_payload_with_two_alerts_names_both_and_bounds_a_resolved_one(
    prometheus_url: str, tmp_path: Path
) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    resolved = _alert(
        "DiskFull",
        now - timedelta(minutes=30),
        "node_filesystem_avail_bytes < 1e9",
        status="resolved",
        endsAt=zulu(now - timedelta(minutes=20)),
    )
    firing = _alert("HighLatency", now - timedelta(minutes=5), "vector(1) > 0")
    _proc, report = _investigate(tmp_path, [resolved, firing], prometheus_url=prometheus_url)
    question = str(report["question"])
    assert question.startswith("Alert HighLatency (critical) firing"), "firing alerts first"
    assert "The payload held 2 alerts: #1 DiskFull" in question
    assert (
        "#2 HighLatency (critical) on job=billing, instance=db-1:9187 (firing, investigated here)" in question
    )

    _proc, report = _investigate(
        tmp_path, [resolved, firing], "--alert-index", "1", prometheus_url=prometheus_url, stdin=True
    )
    assert "#1 DiskFull (critical) on job=billing, instance=db-1:9187 (resolved, investigated here)" in str(
        report["question"]
    )
    assert str(report["window"]).endswith(f"until {zulu(now - timedelta(minutes=20))}"), report["window"]
    assert str(report["title"]).endswith("node_filesystem_avail_bytes")


def test_only_templates_that_start_or_spike_near_the_onset_are_correlated() -> None:
    from devops_agent.runbooks.analyzers.metrics import correlated_groups

    read_from = datetime(2026, 11, 25, 18, 14, tzinfo=UTC)  # where the lines read begin
    onset = datetime(2026, 11, 25, 18, 29, tzinfo=UTC)
    window = timedelta(minutes=15)

    def group(shape: str, first: str, last: str, count: int, spike: str | None = None) -> dict[str, object]:
        return {
            "shape": shape,
            "first_seen": f"2026-11-25T{first}Z",
            "last_seen": f"2026-11-25T{last}Z",
            "count": count,
            "spike": spike is not None,
            "spike_start": f"2026-11-25T{spike}Z" if spike else None,
        }

    groups = [
        group("every 30 minutes, caught between two lines", "18:30:32", "19:30:32", 3),
        group("a burst that starts at the onset", "18:29:40", "18:31:40", 25),
        group("logged all along, bursting at the onset", "18:14:05", "19:00:00", 300, spike="18:30:00"),
        group("a lone line at the onset, right after the logs begin", "18:29:00", "18:29:00", 1),
        group("new, but 40 minutes after the onset", "19:09:00", "19:30:00", 40),
    ]
    found = [g["shape"] for g in correlated_groups(groups, onset, window, read_from)]
    assert found == ["a burst that starts at the onset", "logged all along, bursting at the onset"]
    assert len(correlated_groups(groups, onset, window)) == 4, "without a known start every first line is new"


def test_a_query_matching_no_series_is_a_gap_not_an_all_clear(prometheus_url: str, tmp_path: Path) -> None:
    """No data is not "no problem": it used to be one INFO "No data for …" and "No problems found"."""
    url = f"sqlite:///{tmp_path / 'store.db'}"
    settings = Settings(database_url=url, prometheus={"url": prometheus_url}, files={"roots": [tmp_path]})
    inputs = {"query": "no_such_metric_anywhere_total", "since": "20m"}
    with Store(url) as store:
        _events, final = asyncio.run(SessionService(settings, store).run("latency alert", inputs=inputs))
    assert final.status == "completed"
    assert final.report is not None
    assert final.report["verdict"] == "inconclusive"
    assert not final.report["summary"].startswith("No problems found"), final.report["summary"]
    (gap,) = [g for g in final.report["gaps"] if g["tool"] == "prom_anomalies"]
    assert "no_such_metric_anywhere_total returned no data between" in gap["reason"]
    assert "the selector may not match" in gap["reason"]


def _webhook_alert(
    name: str, starts: datetime | str, expr: str | None = None, **extra: Any
) -> dict[str, Any]:
    alert: dict[str, Any] = {
        "status": "firing",
        "labels": {"alertname": name, "severity": "critical", "job": "billing", "instance": "db-1:9100"},
        "annotations": {"summary": f"{name} on billing"},
        "startsAt": starts if isinstance(starts, str) else zulu(starts),
        "endsAt": "0001-01-01T00:00:00Z",
    }
    if expr is not None:
        alert["generatorURL"] = f"http://prometheus:9090/graph?g0.expr={quote(expr, safe='')}&g0.tab=1"
    return {**alert, **extra}


def _payload(*alerts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"version": "4", "status": "firing", "receiver": "devops-agent", "alerts": list(alerts), **extra}


def _commit(repo: Path, name: str, subject: str, when: datetime) -> None:
    (repo / name).write_text(subject + "\n")
    git_at(repo, "add", name)
    git_at(repo, "commit", "-qm", subject, when=when)


def test_a_zero_start_time_is_refused_with_a_message_not_a_traceback(tmp_path: Path) -> None:
    payload = _payload(_webhook_alert("DiskFull", "0001-01-01T00:00:00Z", "x < 1"))
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
    (skewed,) = parse_webhook(
        _payload(_webhook_alert("HighLatency", now + timedelta(minutes=3), "y > 2")), now=now
    )
    assert skewed.onset == skewed.starts_at == now + timedelta(minutes=3)
    assert skewed.future_start is None
    payload = _payload(_webhook_alert("DiskFull", "2030-01-01T00:00:00Z", "x < 1"))
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
        _payload(_webhook_alert("HighLatency", now - timedelta(minutes=5), "y > 2"), truncatedAlerts=7),
        now=now,
    )
    question = to_question(alert, now=now)
    assert "left 7 more alert(s) of this group out of the payload" in question
    (whole,) = parse_webhook(
        _payload(_webhook_alert("HighLatency", now - timedelta(minutes=5), "y > 2")), now=now
    )
    assert "left" not in to_question(whole, now=now)


def test_a_group_of_thousands_of_alerts_does_not_flood_the_question() -> None:
    now = datetime(2026, 11, 25, 19, 0, tzinfo=UTC)
    alerts = [
        _webhook_alert(
            "HighLatency",
            now - timedelta(minutes=5),
            "y > 2",
            labels={"alertname": "HighLatency", "pod": f"api-{i}"},
        )
        for i in range(3000)
    ]
    alerts[2500]["status"] = "resolved"
    alerts[2500]["endsAt"] = zulu(now)
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
    alert = _webhook_alert(
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
    git_at(repo, "init", "-q")
    _commit(repo, "a.yaml", "three days before", onset - timedelta(days=3))
    payload = _payload(_webhook_alert("BillingLatency", onset + timedelta(minutes=1), expr))

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
    git_at(broken, "init", "-q")
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
    git_at(repo, "init", "-q")
    _commit(repo, "pool.yaml", "lower the billing db pool size", onset - timedelta(minutes=10))
    for i in range(55):
        _commit(repo, f"doc{i}.md", f"docs tweak {i}", onset + timedelta(minutes=6, seconds=30 * i))

    _proc, report = _investigate(
        tmp_path, _payload(_webhook_alert("BillingLatency", onset)), "--repo", str(repo)
    )
    missing = next(f for f in report["findings"] if "could not be analysed" in f["title"])
    assert "git_log stopped at its commit limit, reaching back only to" in missing["detail"]
    assert "older commits in that window were not seen" in missing["detail"]
