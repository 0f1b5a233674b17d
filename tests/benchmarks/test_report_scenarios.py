"""The report-correctness suite: every incident scenario through the real offline investigation.

Each scenario of ``benchmarks/report_scenarios.py`` is built as real files (logs in several
formats and zones, rotated and linked, Alertmanager payloads, git repositories made with git)
and investigated as the CLI does; the report must reach the expected verdict — never an
all-clear where the right answer is a problem or "I could not tell" — and hold the findings,
gaps and read counts the scenario names. The alert scenarios use the real Prometheus of the
test session. ``benchmarks/report_correctness.py`` runs the same scenarios as a benchmark.

A scenario whose expectation rests on a change still under way elsewhere (``depends_on``) keeps
its full expectation and is a strict xfail naming that change: it fails loudly once it passes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from fixtures_bench import load

rs = load("report_scenarios")


def _param(scenario: Any) -> Any:
    marks = [pytest.mark.slow]
    if scenario.depends_on:
        marks.append(pytest.mark.xfail(strict=True, reason=f"waits for {scenario.depends_on}"))
    return pytest.param(scenario, id=scenario.name, marks=marks)


def test_the_suite_is_broad_enough() -> None:
    """At least 30 scenarios, every verdict among the expectations, "I could not tell" included."""
    assert len(rs.SCENARIOS) >= 30
    assert len({s.name for s in rs.SCENARIOS}) == len(rs.SCENARIOS)
    expected = [s.verdict for s in rs.SCENARIOS]
    assert set(expected) == set(rs.VERDICTS)
    assert expected.count("inconclusive") >= 8
    assert {"prometheus", "git"} <= set().union(*(s.needs for s in rs.SCENARIOS))


@pytest.mark.parametrize("scenario", [_param(s) for s in rs.SCENARIOS])
def test_scenario(scenario: Any, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("prometheus_url") if "prometheus" in scenario.needs else None
    if not scenario.needs <= rs.available(url):
        pytest.skip(f"needs {sorted(scenario.needs - rs.available(url))}")
    report = rs.run(scenario, tmp_path / "scenario", url)
    outcome = rs.judge(scenario, report)
    where = f"{scenario.name}: {report.get('summary')}"
    assert outcome.error is None, outcome.error
    assert not outcome.false_all_clear, f"false all-clear — {where}"
    assert outcome.verdict == outcome.expected, where
    assert outcome.missed == [], f"{where}; gaps: {[g['reason'] for g in report.get('gaps', [])]}"


def test_the_benchmark_prints_its_figures_last(tmp_path: Path) -> None:
    import json
    import subprocess
    import sys

    from fixtures_bench import BENCHMARKS

    only = ["stale-log-after-oom", "healthy-json", "empty-file"]
    proc = subprocess.run(
        [sys.executable, str(BENCHMARKS / "report_correctness.py"), "--no-prometheus", "--only", *only],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    figures = json.loads(lines[-1])
    assert figures["scenarios"] == 3
    assert figures["false_all_clear"] == 0
    assert figures["missed_findings"] == 0
    assert "stale-log-after-oom: expected problems_found, got problems_found — ok" in lines
    assert "false_all_clear: 0" in lines
