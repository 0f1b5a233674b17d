"""Naming and explaining an anomalous segment of a metric series: spike, level shift or trend.

Given where an alarm started and how long the deviation lasted, :func:`classify_segment` tells a
short excursion (spike) from a step to a new level (level shift) and a gradual drift (trend),
and :func:`describe` writes one sentence a person can act on. Both look only at the baseline
before the onset and the points up to the segment's end (never later points). Pure functions:
this module must not import from policies, agent, cli or tools.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

Kind = Literal["spike", "level_shift", "trend", "seasonal_deviation"]


def classify_segment(residuals: Sequence[float], *, spike_max: int) -> Kind:
    """Kind of a deviation, given each point's difference from its expected value.

    Short excursions are spikes; a deviation that starts small and grows is a trend; one that
    appears at once and holds is a level shift. (Seasonal deviations are decided by the caller,
    which knows whether the value is unusual only for its time of day.)
    """
    if len(residuals) <= spike_max:
        return "spike"
    quarter = max(1, len(residuals) // 4)
    head = statistics.median(residuals[:quarter])
    tail = statistics.median(residuals[-quarter:])
    if tail and abs(head) < 0.5 * abs(tail) and abs(tail - head) > 0.5 * abs(tail):
        return "trend"
    return "level_shift"


def _ratio(value: float, base: float) -> str:
    if base != 0 and value / base > 0:
        r = value / base
        if r >= 1000 or r < 0.001:  # fixed point would print hundreds of digits (or 0.00×)
            return f"{r:.3g}×"
        return f"{r:.1f}×" if r >= 1 else f"{r:.2f}×"
    return f"{value - base:+.3g} from"


def when(ts: datetime) -> str:
    """``2024-01-06 05:00 UTC``; another offset is written out (``+02:00``), a naive time is left bare."""
    offset = ts.utcoffset()
    if offset is None:
        return ts.strftime("%Y-%m-%d %H:%M")
    zone = "UTC" if not offset else ts.isoformat()[-6:]
    return f"{ts:%Y-%m-%d %H:%M} {zone}"


def describe(
    kind: Kind, name: str, segment: Sequence[float], base: float, start: datetime, *, baseline: str
) -> str:
    """One sentence about ``segment`` (the event's values): what, how big against ``base``, since when."""
    since = when(start)
    if kind == "spike":
        peak = max(segment, key=lambda v: abs(v - base))
        return f"{name} spiked to {peak:.4g}, {_ratio(peak, base)} its {baseline} ({base:.4g}), at {since}"
    level = statistics.median(segment)
    if kind == "trend":
        direction = "up" if segment[-1] > base else "down"
        return f"{name} trending {direction} from ~{base:.4g} to {segment[-1]:.4g} since {since}"
    if kind == "level_shift":
        ratio = _ratio(level, base)
        return f"{name} shifted to ~{level:.4g}, {ratio} its {baseline} ({base:.4g}), since {since}"
    return f"{name} {_ratio(level, base)} its {baseline} ({base:.4g}) since {since}"
