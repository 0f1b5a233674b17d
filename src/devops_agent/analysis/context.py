"""Contextual (sequence) novelty for metric series: is the recent *pattern* new, not the value?

A value detector misses a series that stays inside its normal range but changes shape (a
periodic job that stops, a saw-tooth turned flat, a new rhythm). :class:`ContextDetector` learns
the short sequences a series produces and scores each point by how novel its recent context is,
in the spirit of the contextual detector on Numenta's NAB scoreboard (CAD OSE), written from its
published description, not from its code:

1. each value is quantized to ``levels`` equal-width bins between the smallest and largest of
   the previous ``window`` values (values outside fall in the end bins);
2. the context of a point is the last ``order`` symbols ending at it; for every suffix length
   k = 1..order the detector keeps a count of that k-gram that halves every ``halflife`` points;
3. a point's novelty is the weighted share (weight k) of its k-grams whose count is below
   ``known``: 0 is a well-known context, 1 a never-seen one.

Novelty is a raw score with a series-dependent base rate (a noisy series is full of new long
contexts); :mod:`.likelihood` turns it into a calibrated alarm. Causal: a point's score uses it
and earlier points only. Pure Python; must not import from policies, agent, cli or tools.
"""

from __future__ import annotations

import math
from collections import deque


class RollingRange:
    """Smallest and largest of the last ``size`` values (monotonic queues, O(1) amortized)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._t = 0
        self._min: deque[tuple[int, float]] = deque()
        self._max: deque[tuple[int, float]] = deque()

    def __len__(self) -> int:
        return min(self._t, self.size)

    def bounds(self) -> tuple[float, float]:
        """(min, max) of the window; (0, 0) when empty."""
        if not self._min:
            return 0.0, 0.0
        return self._min[0][1], self._max[0][1]

    def push(self, value: float) -> None:
        """Add a value, dropping the oldest once the window is full."""
        t = self._t
        while self._min and self._min[-1][1] >= value:
            self._min.pop()
        while self._max and self._max[-1][1] <= value:
            self._max.pop()
        self._min.append((t, value))
        self._max.append((t, value))
        oldest = t - self.size + 1
        if self._min[0][0] < oldest:
            self._min.popleft()
        if self._max[0][0] < oldest:
            self._max.popleft()
        self._t = t + 1


class ContextDetector:
    """Online novelty of each point's recent sub-sequence of quantized values."""

    def __init__(
        self,
        *,
        levels: int = 4,
        order: int = 4,
        window: int = 8000,
        halflife: int = 2000,
        known: float = 0.5,
        min_history: int = 48,
    ) -> None:
        self.levels = levels
        self.order = order
        self.known = known
        self.min_history = min_history
        self._range = RollingRange(window)
        self._symbols: deque[int] = deque(maxlen=order)
        self._counts: dict[tuple[int, ...], tuple[float, int]] = {}
        self._decay = 0.5 ** (1.0 / halflife)
        self._weight_sum = order * (order + 1) / 2.0
        self.count = 0

    def symbol(self, value: float) -> int:
        """The value's bin among the recent range (before ``value`` is added)."""
        lo, hi = self._range.bounds()
        if hi <= lo:
            return 0
        return max(0, min(self.levels - 1, int((value - lo) / (hi - lo) * self.levels)))

    def update(self, value: float) -> float:
        """Novelty of the context ending at ``value`` (0 known ... 1 never seen), then learn it.

        A non-finite value (Prometheus exports NaN for 0/0) is a missing sample: novelty 0 and
        nothing learnt, so it can neither break the quantization nor poison the range.
        """
        if not math.isfinite(value):
            return 0.0
        sym = self.symbol(value)
        self._range.push(value)
        self._symbols.append(sym)
        seq = tuple(self._symbols)
        t = self.count
        self.count += 1
        counts = self._counts
        n = len(seq)
        novelty = 0.0
        for k in range(1, n + 1):
            key = seq[n - k :]
            seen = counts.get(key)
            eff = seen[0] * self._decay ** (t - seen[1]) if seen is not None else 0.0
            if eff < self.known:
                novelty += k
            counts[key] = (eff + 1.0, t)
        if len(counts) > 100_000:
            self._prune(t)
        if t < self.min_history or n < self.order:
            return 0.0
        return novelty / self._weight_sum

    def _prune(self, t: int) -> None:
        """Forget contexts whose count decayed far below ``known`` (bounds memory)."""
        floor = 0.01 * self.known
        decay = self._decay
        self._counts = {k: v for k, v in self._counts.items() if v[0] * decay ** (t - v[1]) >= floor}


__all__ = ["ContextDetector", "RollingRange"]
