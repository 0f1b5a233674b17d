"""The NAB window-memory trial (benchmarks/nab_memory.py): the memory marks a new shape, not a
known one; it is causal; and the fusion's alarm step is the detector's own, so the trial's
"current" figures are the detector's."""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import pytest

from devops_agent.analysis.anomaly import score_series
from fixtures_bench import BENCHMARKS, load

bench = load("nab_memory")


def _square(n: int, start: int = 0) -> list[float]:
    """A square wave (period 64 points) with a little deterministic ripple: a repeated shape."""
    return [10.0 * ((i // 32) % 2) + 0.3 * math.sin(i * 1.7) for i in range(start, start + n)]


def test_a_new_shape_scores_above_every_repeat_of_the_known_one() -> None:
    flat = [5.0 + 0.3 * math.sin(i * 1.7) for i in range(3000, 3200)]  # the wave stops mid-way
    scores = bench.memory_scores(_square(3000) + flat, probation=750)
    learnt = scores[800:3000]
    assert max(learnt) < 0.5  # after probation the repeated shape is known: never novel
    assert max(scores[3000:]) > 0.5  # the flat stretch founds a new category
    assert max(scores[3000:]) > max(learnt)


def test_nothing_is_novel_during_probation() -> None:
    assert not any(bench.memory_scores([float(i % 7) for i in range(700)], probation=750))


def test_memory_score_at_t_ignores_later_points() -> None:
    base = _square(1600)
    changed = base[:1200] + [50.0 - v for v in base[1200:]]
    a = bench.memory_scores(base, probation=400)
    b = bench.memory_scores(changed, probation=400)
    assert a[:1200] == b[:1200]
    assert a[1200:] != b[1200:]  # the change after t is seen (the check above can fail)


def test_alarm_step_reproduces_the_detectors_scores() -> None:
    t0 = datetime(2024, 1, 1, tzinfo=UTC)
    values = [
        100 + 10 * math.sin(i / 20) + (60 if 900 <= i < 905 else 0) + (30 if i > 1400 else 0)
        for i in range(2000)
    ]
    points = score_series([t0 + timedelta(minutes=5 * i) for i in range(len(values))], values)
    fused = bench.alarm_scores([[p.value for p in points], [p.context for p in points]])
    assert fused == [p.score for p in points]
    assert max(fused) >= 0.5  # the series does alarm, so the damping and rate steps are exercised


@pytest.mark.skipif(importlib.util.find_spec("river") is not None, reason="river is installed here")
def test_river_peer_without_river_is_a_clear_error() -> None:
    run = subprocess.run(
        [sys.executable, str(BENCHMARKS / "nab_memory.py"), "--river", "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2
    assert "--river needs the river package (pip install river)" in run.stderr
