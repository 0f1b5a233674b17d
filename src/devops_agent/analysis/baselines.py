"""Causal robust baselines for metric series: rolling median/IQR windows and seasonal medians.

Each structure is updated one point at a time and answers questions about the points it has
seen, never about later ones, so detectors built on them stay online (a point's score depends
only on its past). Pure Python, O(window) memory; no numpy needed. This module must not import
from policies, agent, cli or tools.
"""

from __future__ import annotations

import bisect
from collections import deque
from datetime import datetime

IQR_TO_SIGMA = 1.349  # IQR of a normal distribution in standard deviations


class RollingRobust:
    """Median and robust scale (IQR / 1.349) of the last ``size`` values."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._fifo: deque[float] = deque()
        self._sorted: list[float] = []

    def __len__(self) -> int:
        return len(self._fifo)

    def push(self, value: float) -> None:
        """Add a value, dropping the oldest once the window is full."""
        self._fifo.append(value)
        bisect.insort(self._sorted, value)
        if len(self._fifo) > self.size:
            old = self._fifo.popleft()
            del self._sorted[bisect.bisect_left(self._sorted, old)]

    def quantile(self, q: float) -> float:
        """Nearest-rank-interpolated quantile of the window (window must not be empty)."""
        s = self._sorted
        pos = q * (len(s) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)

    def median(self) -> float:
        """Median of the window."""
        return self.quantile(0.5)

    def scale(self) -> float:
        """Robust standard deviation: interquartile range / 1.349."""
        return (self.quantile(0.75) - self.quantile(0.25)) / IQR_TO_SIGMA


class SeasonalProfile:
    """Same-slot medians: the last ``depth`` values seen at each slot of a daily or weekly cycle.

    A slot is ``slot_minutes`` wide; with ``weekly`` the cycle is a week (same hour of week),
    otherwise a day (same hour of day). ``expected`` answers from past cycles only.
    """

    def __init__(self, *, slot_minutes: int = 60, weekly: bool = False, depth: int = 84) -> None:
        self.slot_minutes = slot_minutes
        self.weekly = weekly
        self.depth = depth
        self._slots: dict[int, RollingRobust] = {}
        self.first: datetime | None = None

    def slot(self, ts: datetime) -> int:
        """Index of the slot ``ts`` falls in."""
        minute = ts.hour * 60 + ts.minute
        if self.weekly:
            minute += ts.weekday() * 1440
        return minute // self.slot_minutes

    def cycles_seen(self, ts: datetime) -> float:
        """How many full cycles of history lie before ``ts``."""
        if self.first is None:
            return 0.0
        period = 7 * 86400 if self.weekly else 86400
        return (ts - self.first).total_seconds() / period

    def expected(self, ts: datetime) -> float | None:
        """Median of past values in ``ts``'s slot, or None when that slot has no history."""
        window = self._slots.get(self.slot(ts))
        return window.median() if window is not None and len(window) else None

    def push(self, ts: datetime, value: float) -> None:
        """Record a value at its slot."""
        if self.first is None:
            self.first = ts
        self._slots.setdefault(self.slot(ts), RollingRobust(self.depth)).push(value)


class ExcursionPeaks:
    """A robust "largest surprise of the recent past": the k-th largest recent excursion peak.

    An excursion is a run of scores at or above ``floor``; up to ``gap`` scores below it in a row
    do not end it. Once it ends, its peak is remembered for ``memory`` scores. :meth:`bar` is the
    ``rank``-th largest remembered peak, one rank more for every ``points_per_rank`` scores
    remembered. A running maximum would let one incident (a 4x spike) set the bar for days, so
    that a later, smaller but real change (a level shift) reads as ordinary; here an incident,
    however long or large, is one excursion, and only excursions that recur set the bar.
    """

    def __init__(self, *, floor: float, gap: int, memory: int, rank: int, points_per_rank: int) -> None:
        self.floor = floor
        self.gap = gap
        self.memory = memory
        self.rank = rank
        self.points_per_rank = points_per_rank
        self._peaks: deque[tuple[int, float]] = deque()  # (index where it ended, peak), oldest first
        self._sorted: list[float] = []
        self._open = 0.0  # peak of the excursion under way, 0 when none
        self._below = 0  # scores below the floor since its last one at or above it
        self._n = 0

    def bar(self) -> float:
        """The rank-th largest remembered peak; 0 when fewer excursions are remembered."""
        k = max(self.rank, -(-min(self._n, self.memory) // self.points_per_rank))
        return self._sorted[-k] if k <= len(self._sorted) else 0.0

    def push(self, score: float) -> None:
        """Add the next score (after reading :meth:`bar` for it)."""
        self._n += 1
        if score >= self.floor:
            self._open = max(self._open, score)
            self._below = 0
        elif self._open:
            self._below += 1
            if self._below > self.gap:
                self._peaks.append((self._n, self._open))
                bisect.insort(self._sorted, self._open)
                self._open = 0.0
        while self._peaks and self._peaks[0][0] <= self._n - self.memory:
            _end, old = self._peaks.popleft()
            del self._sorted[bisect.bisect_left(self._sorted, old)]
