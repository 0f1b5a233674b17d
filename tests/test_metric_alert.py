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
    lines += [
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
    assert proc.returncode == 1, proc.stderr
    data = json.loads(proc.stdout)
    assert data["burn_rates"]["1h"] == 100.0
    assert data["counts"]["1h"] == {"requests": 600, "errors": 60}
    assert {a["severity"] for a in data["alerts"]} == {"page", "ticket"}
    assert data["budget_remaining"] < 0
    table = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert table.returncode == 1
    assert "100.00x" in table.stdout
    assert "PAGE: burning" in table.stdout
