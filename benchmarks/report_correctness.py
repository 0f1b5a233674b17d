"""Report correctness: does the offline investigation reach the right verdict on real incidents?

Runs every scenario of ``benchmarks/report_scenarios.py`` — logs in several formats and time
zones, rotated and linked, Alertmanager payloads, git repositories, each built as real files at
run time — through the real offline investigation (the session service as the CLI builds it, or
``python -m devops_agent investigate --json``), and compares each report with what a trustworthy
one must say: the verdict (``problems_found``, ``all_clear``, or ``inconclusive`` when it could
not tell) and the findings and gaps that must appear.

Figures: ``scenarios`` (run), ``false_all_clear`` (an all-clear where the right answer is
something else: must be 0), ``missed_findings`` (expected findings, gaps or read counts absent),
``wrong_verdicts``, ``passed``, ``skipped`` (they need Prometheus or git and neither is here).
Alert scenarios need a Prometheus: ``--prometheus URL``, or one is started with
``scripts/prometheus.sh`` when its binaries are installed (``--no-prometheus`` skips them).

There is no peer program to run in the same run: the baseline is this project before the
verdict was derived from the evidence, measured with this same script (see docs/benchmarks.md).
``--data`` is accepted for the common benchmark interface and unused: nothing is read from
benchmark data.

    .venv/bin/python benchmarks/report_correctness.py [--only NAME ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

from devops_agent.telemetry import configure_logging

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import report_scenarios as rs  # noqa: E402 - a script beside this one, not a package


def _prometheus(workdir: Path) -> tuple[str | None, Path | None]:
    """Start a throwaway Prometheus with the test suite's helper; ``(None, None)`` when it cannot."""
    if shutil.which("prometheus") is None:
        return None, None
    sys.path.insert(0, str(ROOT / "tests"))
    from fixtures_prometheus import free_port, start_prometheus, stop_processes, wait_until_scraping

    where = workdir / "prometheus"
    try:
        url = start_prometheus(where, {"prometheus": free_port(), "node": free_port()})
        wait_until_scraping(url)
    except RuntimeError as exc:
        print(f"prometheus: not started ({exc}); its scenarios are skipped", file=sys.stderr)
        stop_processes(where)
        return None, None
    return url, where


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=None, help="unused: every scenario is generated")
    ap.add_argument("--only", nargs="*", default=None, help="run only these scenarios")
    ap.add_argument("--prometheus", default=None, help="URL of a Prometheus for the alert scenarios")
    ap.add_argument("--no-prometheus", action="store_true", help="skip the scenarios that need Prometheus")
    ap.add_argument("--keep", type=Path, default=None, help="build the scenarios here and keep them")
    args = ap.parse_args(argv)
    configure_logging("warning")  # as the CLI does
    workdir = args.keep or Path(tempfile.mkdtemp(prefix="report-correctness-"))
    url, started = args.prometheus, None
    if url is None and not args.no_prometheus:
        url, started = _prometheus(workdir)
    have = rs.available(url)
    outcomes: list[rs.Outcome] = []
    skipped: list[str] = []
    began = time.perf_counter()
    try:
        for scenario in rs.SCENARIOS:
            if args.only and scenario.name not in args.only:
                continue
            if not scenario.needs <= have:
                skipped.append(scenario.name)
                print(f"{scenario.name}: skipped (needs {', '.join(sorted(scenario.needs - have))})")
                continue
            outcome = rs.judge(scenario, rs.run(scenario, workdir / scenario.name, url))
            outcomes.append(outcome)
            mark = "ok" if outcome.ok else "FALSE ALL-CLEAR" if outcome.false_all_clear else "FAIL"
            note = f"; missed {outcome.missed}" if outcome.missed else ""
            note += f"; error {outcome.error}" if outcome.error else ""
            note += f"; depends on {scenario.depends_on}" if scenario.depends_on and not outcome.ok else ""
            print(f"{scenario.name}: expected {outcome.expected}, got {outcome.verdict} — {mark}{note}")
    finally:
        if started is not None:
            from fixtures_prometheus import stop_processes

            stop_processes(started)
        if args.keep is None:
            shutil.rmtree(workdir, ignore_errors=True)
    figures = {
        "scenarios": len(outcomes),
        "false_all_clear": sum(o.false_all_clear for o in outcomes),
        "missed_findings": sum(len(o.missed) for o in outcomes),
        "wrong_verdicts": sum(o.verdict != o.expected for o in outcomes),
        "errors": sum(o.error is not None for o in outcomes),
        "passed": sum(o.ok for o in outcomes),
        "skipped": len(skipped),
        "inconclusive_expected": sum(o.expected == "inconclusive" for o in outcomes),
        "seconds": round(time.perf_counter() - began, 1),
    }
    for key, value in figures.items():
        print(f"{key}: {value}")
    print(json.dumps(figures))
    return 0 if figures["false_all_clear"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
