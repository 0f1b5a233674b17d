"""The metric-alert runbook end to end: real Prometheus, real log files, a real git repository.

The metric is real PromQL evaluated by the real Prometheus the suite starts: a series that
steps from 10 to 100 at a known moment T. The logs get a new error template at T and an old,
unrelated one 18 minutes earlier; the repository gets a commit 10 minutes before T.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.store import Store


def _git(repo: Path, *args: str, when: datetime | None = None) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Dana",
        GIT_AUTHOR_EMAIL="dana@example.com",
        GIT_COMMITTER_NAME="Dana",
        GIT_COMMITTER_EMAIL="dana@example.com",
    )
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = when.isoformat()
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env)


def _stamp(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _incident(tmp_path: Path, logs: Path, lines: list[str], onset: datetime) -> Path:
    """Write ``lines`` plus the incident's new error (from ``onset``) as ``logs/app.log``, and a
    repository whose one commit lands 10 minutes before ``onset``; return the repository."""
    lines = lines + [
        f"{_stamp(onset + timedelta(seconds=10 + 5 * i))} ERROR connection pool exhausted (size={20 + i}) for db billing"
        for i in range(25)
    ]
    (logs / "app.log").write_text("\n".join(sorted(lines)) + "\n")
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "db.yaml").write_text("pool_size: 20\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "lower the billing db pool size", when=onset - timedelta(minutes=10))
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
        f"{_stamp(now - timedelta(minutes=20) + timedelta(seconds=20 * i))} INFO request ok id={i}"
        for i in range(60)
    ]
    old = now - timedelta(minutes=22)
    lines += [f"{_stamp(old + timedelta(seconds=i))} ERROR cache miss storm on shard {i}" for i in range(6)]
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
        "startsAt": _stamp(starts),
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
    lines = [f"{_stamp(start + timedelta(minutes=m))} INFO request ok id={m}" for m in range(minutes)]
    lines += [
        f"{_stamp(start + timedelta(minutes=m, seconds=30))} ERROR cache miss storm on shard {m}"
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
    lines = [f"{_stamp(now - timedelta(minutes=30 - m))} INFO request ok id={m}" for m in range(30)]
    lines += [
        f"{_stamp(onset + timedelta(seconds=5 * i))} ERROR disk quota exceeded on /data" for i in range(12)
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
        endsAt=_stamp(now - timedelta(minutes=20)),
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
    assert str(report["window"]).endswith(f"until {_stamp(now - timedelta(minutes=20))}"), report["window"]
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
