"""Anomaly detection for operational metric series (latency, error rate, traffic, saturation).

:class:`StreamingDetector` scores one point at a time and is **causal**: a point's score uses
only that point and the points before it, so scores never change when later points arrive, and
the same code runs online (NAB's rules) and over a stored series. Each point is compared with:

* a robust baseline: rolling median and IQR over ``window`` points or, once a few daily (or
  weekly) cycles are seen and that model fits better, the median of the same hour of day (week)
  over past cycles; where the local model fits better, a point must ALSO be unusual for its hour
  (so what recurs daily is not news);
* a short median (level shifts) and the previous point (rate of change).

The largest of these robust z-scores is divided by how unusual the series' recent excursions
were (:class:`~.baselines.ExcursionPeaks`: the third-largest peak of the runs of points above
``z_floor`` over the last ``window`` points, one rank more per ``surprise_points``), so scores in
[0, 1] mean the same on quiet and noisy series: 0.5 is "as unusual as what keeps recurring
here", higher is new (``PointScore.raw``, what :func:`detect` opens events on). A running
maximum would let one incident set that bar: after a 4x spike a +60 level shift read as
ordinary for days. Excursions that recur (a noisy series) still raise it.

The streaming alarm score (``PointScore.score``, what NAB thresholds) adds two things: the
deviation, the level-shift and a slower drift feature (the median of the last ``drift_points``
against the local median) are each calibrated against their OWN recent maximum (``value``: a
sustained shift is news even where single-point spikes or short bursts are larger), and the
novelty of the recent sub-sequence (:mod:`.context`), turned into a per-series tail
probability by :mod:`.likelihood` (``context``: a change of pattern inside the normal range).
``score`` is the larger of the two, lowered by a share for each alarm the detector raised over
the last ``alarm_rate_window`` points (a series that keeps breaking its own records is noisy,
so each new record says less); after it reaches ``alarm_level``, scores are damped for
``refractory`` points so one incident raises one alarm.

:func:`detect` runs the detector over a series, groups alarmed points into :class:`Anomaly`
events, names their kind (spike, level shift, trend, seasonal deviation; see
:mod:`.changepoints`) from the points up to the event's end, and explains each in words. This
module is pure: it must not read files, fetch metrics, or import from policies, agent, cli or
tools.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Literal

from devops_agent.analysis.baselines import ExcursionPeaks, RollingRobust, SeasonalProfile
from devops_agent.analysis.changepoints import Kind, classify_segment, describe
from devops_agent.analysis.context import ContextDetector
from devops_agent.analysis.likelihood import AnomalyLikelihood

AnomalyKind = Kind


@dataclass(frozen=True)
class DetectorConfig:
    """Detector settings; the defaults are the single configuration used on NAB."""

    window: int = 4000  # points in the local baseline (about two weeks at 5-minute sampling)
    min_history: int = 48  # points seen before anything is scored
    season: Literal["day", "week", "none"] = "day"  # used only where it fits better than local
    slot_minutes: int = 60
    seasonal_min_cycles: float = 3.0  # cycles of history before the seasonal baseline is used
    seasonal_depth: int = 7  # past cycles per slot (times samples per slot)
    seasonal_fit: float = 0.7  # seasonal baseline replaces local when its error is below this share
    shift_points: int = 5  # short median for level shifts
    shift_weight: float = 1.0  # weight of the short-median (level shift) z-score
    # a slower shift: the median of the last drift_points against the local median (a move too
    # gradual for the 5-point median to stand out); 0 turns it off
    drift_points: int = 12
    drift_weight: float = 0.5
    rate_weight: float = 0.5  # weight of the rate-of-change z-score
    memory_halflife: int = 2000  # points over which a value feature's largest past z is forgotten
    # detect()'s bar: the surprise_rank-th largest peak of the excursions of the last `window`
    # points (one rank more per surprise_points points), so no single incident sets it
    surprise_rank: int = 3
    surprise_points: int = 1000
    z_floor: float = 3.0  # z-scores below this are never more than half-alarming
    refractory: int = 100  # points after an alarm during which scores are damped
    refractory_damping: float = 0.5
    # alarm-rate calibration: each alarm raised over the last alarm_rate_window points lowers
    # the alarm score by alarm_rate_step (down to alarm_rate_floor); 0 turns it off
    alarm_rate_window: int = 3000
    alarm_rate_step: float = 0.02
    alarm_rate_floor: float = 0.5
    alarm_level: float = 0.5  # score that starts a refractory period (the detector "fired")
    report_z: float = 6.0  # detect() reports an alarm only if its deviation reaches this z
    # the streaming alarm score (PointScore.score, what NAB thresholds): each value feature is
    # calibrated against its own recent maximum, and a context (pattern) novelty joins them
    feature_z_floor: float = 2.0  # floor of each feature's own running maximum
    context: bool = True  # add the contextual (sequence) detector, see analysis/context.py
    context_levels: int = 4
    context_order: int = 4
    context_window: int = 8000  # points whose range defines the quantization bins
    context_halflife: int = 2000  # points over which a learnt context is half forgotten
    context_weight: float = 0.9  # context alarms count slightly less than value alarms
    likelihood_history: int = 4000  # points of novelty history the likelihood compares against
    likelihood_short: int = 1  # novelty scores averaged before the comparison
    likelihood_min_sd: float = 0.1  # floor of the novelty spread: a clean series needs a real burst


@dataclass(frozen=True)
class PointScore:
    """The score of one point and what it was compared with."""

    score: float  # after refractory damping: what a streaming consumer thresholds
    z: float  # robust z-score of the strongest feature
    expected: float  # that feature's reference value
    feature: Literal["local", "seasonal", "shift", "rate"]
    raw: float = 0.0  # value-based score before damping (what detect() opens events on)
    baseline: float = 0.0  # the expected level: seasonal median where in use, else local median
    z_plain: float = 0.0  # z-score against the local median, ignoring time of day
    seasonal: bool = False  # whether ``baseline`` is the seasonal median
    value: float = 0.0  # value features, each calibrated on its own (before damping)
    context: float = 0.0  # likelihood of the context novelty, weighted (before damping)


@dataclass(frozen=True)
class Anomaly:
    """One anomalous event: consecutive alarmed points."""

    start: datetime
    end: datetime
    kind: AnomalyKind
    score: float
    explanation: str


@dataclass
class AnomalyResult:
    """Per-point scores (same length as the input) and the events found."""

    scores: list[float] = field(default_factory=list)
    anomalies: list[Anomaly] = field(default_factory=list)


def _scale_floor(center: float) -> float:
    return max(1e-9, 1e-4 * abs(center))


def _squash(ratio: float) -> float:
    """Map a ratio to the recent maximum into [0, 1]: 1 -> 0.5."""
    square = ratio * ratio
    if math.isinf(square):  # a ratio above ~1e154 (values near the float limit): inf / inf is NaN
        return 1.0
    return square / (1.0 + square)


class StreamingDetector:
    """Online anomaly scorer; feed points in time order with :meth:`update`."""

    def __init__(self, config: DetectorConfig | None = None) -> None:
        self.config = c = config or DetectorConfig()
        self._local = RollingRobust(c.window)
        self._diffs = RollingRobust(c.window)
        self._seasonal_res = RollingRobust(c.window)
        self._short: deque[float] = deque(maxlen=c.shift_points)
        self._drift: deque[float] = deque(maxlen=max(1, c.drift_points))
        self._profile: SeasonalProfile | None = None
        self._err_local = 0.0
        self._err_seasonal = 0.0
        self._prev: float | None = None
        self._surprises = ExcursionPeaks(
            floor=c.z_floor,
            gap=c.shift_points,
            memory=c.window,
            rank=c.surprise_rank,
            points_per_rank=c.surprise_points,
        )
        self._decay = 0.5 ** (1.0 / c.memory_halflife)
        self._since_alarm = c.refractory + 1
        self._alarms: deque[int] = deque()  # indexes of the recent alarms (refractory onsets)
        self._feature_peaks = [0.0, 0.0, 0.0]  # local (or seasonal) deviation, shift, drift
        self._context: ContextDetector | None = None
        self._likelihood = AnomalyLikelihood(
            history=c.likelihood_history, short=c.likelihood_short, min_sd=c.likelihood_min_sd
        )
        if c.context:
            self._context = ContextDetector(
                levels=c.context_levels,
                order=c.context_order,
                window=c.context_window,
                halflife=c.context_halflife,
                min_history=c.min_history,
            )
        self.count = 0

    def _seasonal(self, ts: datetime, step_s: float) -> SeasonalProfile | None:
        c = self.config
        if self._profile is None and c.season != "none":
            per_slot = max(1, round(c.slot_minutes * 60 / step_s)) if step_s > 0 else 1
            weekly = c.season == "week"
            self._profile = SeasonalProfile(
                slot_minutes=c.slot_minutes, weekly=weekly, depth=c.seasonal_depth * per_slot
            )
        return self._profile

    def update(self, ts: datetime, value: float, step_s: float = 300.0) -> PointScore:
        """Score ``value`` at ``ts`` against the past, then add it to the past.

        ``step_s`` is the sampling interval, used once to size the seasonal slots' memory.
        """
        c = self.config
        result = PointScore(0.0, 0.0, value, "local")
        profile = self._seasonal(ts, step_s)
        self._short.append(value)
        self._drift.append(value)
        if len(self._local) >= c.min_history:
            result = self._score(ts, value, profile)
        context = 0.0
        if self._context is not None:
            context = c.context_weight * self._likelihood.update(self._context.update(value))
        alarm = max(result.value, context) * self._rate_gain()
        score = alarm
        if self._since_alarm <= c.refractory:
            score *= c.refractory_damping
        elif alarm >= c.alarm_level:
            self._since_alarm = 0
            self._alarms.append(self.count)
        self._learn(ts, value, profile)
        return replace(result, score=score, context=context)

    def _rate_gain(self) -> float:
        """Share of the alarm score kept given this detector's own recent alarm rate.

        Calibrates per series without labels or look-ahead: on a noisy series new records (what
        the value score reports) keep coming, so the bar rises with each one; on a quiet series
        the first alarm passes unchanged. Counts from the first point (on NAB, probation included).
        """
        c = self.config
        alarms = self._alarms
        while alarms and alarms[0] < self.count - c.alarm_rate_window:
            alarms.popleft()
        return max(c.alarm_rate_floor, 1.0 - c.alarm_rate_step * len(alarms))

    def _score(self, ts: datetime, value: float, profile: SeasonalProfile | None) -> PointScore:
        c = self.config
        med = self._local.median()
        scale = max(self._local.scale(), _scale_floor(med))
        z_local = abs(value - med) / scale
        short = sorted(self._short)[len(self._short) // 2]
        candidates: list[tuple[float, float, Literal["local", "seasonal", "shift", "rate"]]] = [
            (z_local, med, "local"),
            (c.shift_weight * abs(short - med) / scale, med, "shift"),
        ]
        if self._prev is not None and len(self._diffs) >= c.min_history:
            d_scale = max(self._diffs.scale(), _scale_floor(med))
            candidates.append((c.rate_weight * abs(value - self._prev) / d_scale, self._prev, "rate"))
        expected = profile.expected(ts) if profile is not None else None
        seasonal_ready = (
            expected is not None
            and profile is not None
            and profile.cycles_seen(ts) >= c.seasonal_min_cycles
            and len(self._seasonal_res) >= c.min_history
        )
        use_seasonal = seasonal_ready and self._err_seasonal < c.seasonal_fit * self._err_local
        if use_seasonal and expected is not None:
            s_scale = max(self._seasonal_res.scale(), _scale_floor(expected))
            z_seasonal = abs(value - expected) / s_scale
            # the seasonal model explains this series better: it replaces the local deviation
            candidates[0] = (z_seasonal, expected, "seasonal")
            candidates[1] = (min(candidates[1][0], z_seasonal), med, "shift")
        elif seasonal_ready and expected is not None:
            # the local model fits better, but what recurs at this hour is not news: a point
            # must be unusual both for the series and for its time of day
            s_scale = max(self._seasonal_res.scale(), _scale_floor(expected))
            candidates[0] = (min(z_local, abs(value - expected) / s_scale), med, "local")
        z, base, feature = max(candidates, key=lambda t: t[0])
        raw = _squash(z / max(self._surprises.bar(), c.z_floor))
        self._surprises.push(z)
        # each feature against its own recent maximum: a sustained shift is news even on a
        # series whose single-point spikes are larger
        features = [candidates[0][0], candidates[1][0]]
        if c.drift_points:
            drift = sorted(self._drift)[len(self._drift) // 2]
            features.append(c.drift_weight * abs(drift - med) / scale)
        value_score = 0.0
        for k, fz in enumerate(features):
            value_score = max(value_score, _squash(fz / max(self._feature_peaks[k], c.feature_z_floor)))
            self._feature_peaks[k] = max(self._feature_peaks[k] * self._decay, fz)
        level = expected if use_seasonal and expected is not None else med
        seasonal = use_seasonal and expected is not None
        return PointScore(raw, z, base, feature, raw, level, z_local, seasonal, value=value_score)

    def _learn(self, ts: datetime, value: float, profile: SeasonalProfile | None) -> None:
        a = 0.01
        if len(self._local):
            self._err_local += a * (abs(value - self._local.median()) - self._err_local)
        if profile is not None:
            expected = profile.expected(ts)
            if expected is not None:
                self._err_seasonal += a * (abs(value - expected) - self._err_seasonal)
                self._seasonal_res.push(value - expected)
            else:
                self._err_seasonal += a * (self._err_local * 2 - self._err_seasonal)
            profile.push(ts, value)
        if self._prev is not None:
            self._diffs.push(value - self._prev)
        self._local.push(value)
        self._prev = value
        self._since_alarm += 1
        self.count += 1


def _step_seconds(timestamps: Sequence[datetime]) -> float:
    gaps = sorted((b - a).total_seconds() for a, b in zip(timestamps[:50], timestamps[1:51], strict=False))
    return gaps[len(gaps) // 2] if gaps else 300.0


def score_series(
    timestamps: Sequence[datetime], values: Sequence[float], config: DetectorConfig | None = None
) -> list[PointScore]:
    """Causal per-point scores of a whole series (what :func:`detect` builds events from)."""
    detector = StreamingDetector(config)
    step = _step_seconds(timestamps)
    return [detector.update(t, float(v), step) for t, v in zip(timestamps, values, strict=True)]


def detect(
    timestamps: Sequence[datetime],
    values: Sequence[float],
    *,
    name: str = "series",
    config: DetectorConfig | None = None,
) -> AnomalyResult:
    """Score every point causally and report anomalous events with their kind and explanation.

    An event starts where the undamped score reaches ``alarm_level``, lasts while the deviation
    stays above ``z_floor`` robust standard deviations (gaps up to ``shift_points``), and is
    reported when its deviation reaches ``report_z``. Scores are causal; an event's kind and
    wording use the points up to its end.
    """
    c = config or DetectorConfig()
    points = score_series(timestamps, values, c)
    anomalies: list[Anomaly] = []
    i = 0
    while i < len(points):
        if points[i].raw < c.alarm_level:
            i += 1
            continue
        end = _event_end(points, i, c)
        if max(p.z for p in points[i : end + 1]) >= c.report_z:
            anomalies.append(_event(timestamps, values, points, i, end, name, c))
        i = end + 1
    return AnomalyResult([p.score for p in points], anomalies)


def _event_end(points: Sequence[PointScore], onset: int, c: DetectorConfig) -> int:
    end = onset
    k = onset + 1
    while k < len(points) and k - end <= c.shift_points:
        if points[k].z >= c.z_floor:
            end = k
        k += 1
    return end


def _event(
    timestamps: Sequence[datetime],
    values: Sequence[float],
    points: Sequence[PointScore],
    onset: int,
    end: int,
    name: str,
    c: DetectorConfig,
) -> Anomaly:
    p = points[onset]
    residuals = [float(values[k]) - points[k].baseline for k in range(onset, end + 1)]
    kind = classify_segment(residuals, spike_max=2 * c.shift_points)
    seasonal = p.seasonal
    if seasonal and kind != "trend" and p.z_plain < c.z_floor:
        # off for this time of day, yet unremarkable for the series as a whole
        kind = "seasonal_deviation"
    base = p.baseline
    if seasonal:
        cycle, cycle_days = ("week", 7) if c.season == "week" else ("day", 1)
        cycles = min(c.seasonal_depth, (timestamps[onset] - timestamps[0]).days // cycle_days)
        baseline = f"{cycles}-{cycle} same-hour median"
    else:
        baseline = "recent median"
    text = describe(kind, name, values[onset : end + 1], base, timestamps[onset], baseline=baseline)
    score = max(q.raw for q in points[onset : end + 1])
    return Anomaly(timestamps[onset], timestamps[end], kind, score, text)


ANOMALY_MIN_POINTS = DetectorConfig().min_history + 1
"""Finite points a series needs before the default detector scores any of them."""

__all__ = [
    "ANOMALY_MIN_POINTS",
    "Anomaly",
    "AnomalyKind",
    "AnomalyResult",
    "DetectorConfig",
    "PointScore",
    "StreamingDetector",
    "detect",
    "score_series",
]
