"""The reasoning benchmark runs its three scenarios to completion and prints its figures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "benchmarks" / "reasoning_overhead.py"


def test_reasoning_benchmark_prints_its_figures_as_the_last_line() -> None:
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--runs", "1", "--delay", "0.3"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    assert set(figures) >= {
        "plain_ms",
        "planner_ms",
        "planner_added_ms",
        "delegated_ms",
        "delegations_serial_ms",
        "delegations_wall_ms",
        "delegation_speedup",
    }
    # Each delegation waits 0.3 s on its tool: serial is at least 0.6 s, and in parallel they overlap.
    assert figures["delegations_serial_ms"] >= 600
    assert figures["delegations_wall_ms"] < figures["delegations_serial_ms"]
