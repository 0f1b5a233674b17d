"""Anomaly likelihood: turn a noisy stream of raw anomaly scores into sparse, calibrated alarms.

A raw score (novelty, surprise) has a base rate that differs per series: one series is quiet,
another is always a little surprising. Following the method Numenta describe for HTM on NAB
(Ahmad et al., "Unsupervised real-time anomaly detection for streaming data", Neurocomputing
2017, section "Computing anomaly likelihood"), written from that description:

* keep the mean and variance of the (short-averaged) raw scores over the last ``history``
  points;
* average the last ``short`` raw scores;
* the likelihood is how far in the Gaussian tail that average lies: ``1 - Q(z)`` with
  ``z = (short mean - long mean) / long sd``.

So a sustained burst of raw scores, rare for *this* series, gives one high value, while the
usual background of small surprises gives none. :class:`AnomalyLikelihood` reports the tail
on a log scale squashed into [0, 1): ``x / (1 + x)`` with ``x = -log10 Q(z) / 5``, so 0.5 is a
tail probability of 1e-5 (likelihood 0.99999, the level Numenta alarm at). Causal and pure.
"""

from __future__ import annotations

import math
from collections import deque

_SQRT2 = math.sqrt(2.0)


def tail_log10(z: float) -> float:
    """``-log10`` of the upper Gaussian tail ``Q(z)``; asymptotic where ``erfc`` underflows."""
    if z < 30.0:
        q = 0.5 * math.erfc(z / _SQRT2)
        if q > 0.0:
            return -math.log10(q)
    # Q(z) ~ phi(z) / z for large z
    return (z * z / 2.0 + math.log(z * math.sqrt(2.0 * math.pi))) / math.log(10.0)


class AnomalyLikelihood:
    """Rolling Gaussian tail probability of the recent average raw score."""

    def __init__(
        self, *, history: int = 4000, short: int = 1, learning: int = 300, min_sd: float = 0.1
    ) -> None:
        self.history = history
        self.short = short
        self.learning = learning
        self.min_sd = min_sd
        self._recent: deque[float] = deque(maxlen=short)
        self._recent_sum = 0.0
        self._past: deque[float] = deque()
        self._sum = 0.0
        self._sumsq = 0.0
        self.count = 0

    def update(self, raw: float) -> float:
        """Score the new raw score against the past ones, then remember it; in [0, 1)."""
        if len(self._recent) == self.short:
            self._recent_sum -= self._recent[0]
        self._recent.append(raw)
        self._recent_sum += raw
        avg = self._recent_sum / len(self._recent)
        out = 0.0
        n = len(self._past)
        if n >= self.learning:
            mean = self._sum / n
            var = max(0.0, self._sumsq / n - mean * mean)
            sd = max(math.sqrt(var), self.min_sd)
            z = (avg - mean) / sd
            if z > 0.0:
                x = tail_log10(z) / 5.0
                out = x / (1.0 + x)
        self._past.append(avg)
        self._sum += avg
        self._sumsq += avg * avg
        if n + 1 > self.history:
            old = self._past.popleft()
            self._sum -= old
            self._sumsq -= old * old
        self.count += 1
        if self.count % 10_000 == 0:  # refresh the running sums against float drift
            self._sum = math.fsum(self._past)
            self._sumsq = math.fsum(v * v for v in self._past)
        return out


__all__ = ["AnomalyLikelihood", "tail_log10"]
