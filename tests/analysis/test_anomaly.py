"""Anomaly detector on synthetic series with known events, and the NAB scorer on hand-computed cases."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from datetime import datetime, timedelta

import pytest

from devops_agent.analysis.anomaly import DetectorConfig, StreamingDetector, detect, score_series
from devops_agent.analysis.baselines import ExcursionPeaks
from devops_agent.analysis.context import ContextDetector, RollingRange
from devops_agent.analysis.likelihood import AnomalyLikelihood, tail_log10
from fixtures_bench import load

T0 = datetime(2024, 1, 1)
N = 2000  # ~7 days of 5-minute points
TS = [T0 + timedelta(minutes=5 * i) for i in range(N)]
EVENT = 1500  # 2024-01-06 05:00


def seasonal(seed: int = 7, n: int = N) -> list[float]:
    rng = random.Random(seed)
    return [100 + 30 * math.sin(2 * math.pi * i / 288) + rng.gauss(0, 2) for i in range(n)]


def flat(seed: int = 3) -> list[float]:
    rng = random.Random(seed)
    return [100 + rng.gauss(0, 2) for _ in range(N)]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_clean_series_raise_no_alarm(seed: int) -> None:
    for values in (seasonal(seed), flat(seed)):
        result = detect(TS, values)
        assert result.anomalies == []
        assert len(result.scores) == N
        assert all(0.0 <= s <= 1.0 for s in result.scores)


def test_spike_found_at_its_time_with_ratio() -> None:
    values = flat()
    values[EVENT] = 420.0
    [a] = detect(TS, values, name="p99 latency").anomalies
    assert (a.start, a.kind) == (TS[EVENT], "spike")
    assert a.score > 0.9
    assert a.explanation.startswith("p99 latency spiked to 420, 4.2× its recent median")
    assert "2024-01-06 05:00" in a.explanation


def test_spike_on_seasonal_series_uses_same_hour_median() -> None:
    values = seasonal()
    values[EVENT] += 80
    [a] = detect(TS, values, name="rps").anomalies
    assert (a.start, a.kind) == (TS[EVENT], "spike")
    assert "same-hour median" in a.explanation


def test_weekly_baseline_counts_weeks_not_days() -> None:
    """With a weekly season the explanation counts the past weeks the median was taken over."""
    hours = 24 * 7 * 5  # five weeks, hourly
    ts = [T0 + timedelta(hours=i) for i in range(hours)]
    rng = random.Random(5)
    values = [100 + 30 * math.sin(2 * math.pi * i / (24 * 7)) + rng.gauss(0, 2) for i in range(hours)]
    event = 24 * 7 * 4 + 30  # four weeks and 30 hours in
    values[event] += 120
    [a] = detect(ts, values, name="rps", config=DetectorConfig(season="week")).anomalies
    assert a.start == ts[event]
    assert "4-week same-hour median" in a.explanation  # not the 7 of a day count (29 days)


def test_level_shift() -> None:
    values = [v + (40 if i >= EVENT else 0) for i, v in enumerate(flat())]
    [a] = detect(TS, values, name="error rate").anomalies
    assert (a.start, a.kind) == (TS[EVENT], "level_shift")
    assert a.end > TS[EVENT + 20]
    assert a.explanation.startswith("error rate shifted to ~140, 1.4× its recent median (")
    assert a.explanation.endswith("since 2024-01-06 05:00")


def _spiked_then_shifted(seed: int, n: int, spikes: list[tuple[int, int]], shift_at: int) -> list[float]:
    """Noise around 100 (sd 5), each (start, length) in ``spikes`` at 4x, and +60 from ``shift_at``."""
    rng = random.Random(seed)
    values = [100 + rng.gauss(0, 5) + (60 if i >= shift_at else 0) for i in range(n)]
    for start, length in spikes:
        for i in range(start, start + length):
            values[i] *= 4
    return values


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize(
    ("n", "spikes", "shift_at"),
    [
        (2016, [(576, 6)], 1728),  # a week at 5 minutes: a 30-minute 4x spike 4 days before the shift
        (2016, [(300, 6), (900, 6)], 1728),  # two such spikes
        (300, [(100, 6)], 250),  # the ~300 points of a Prometheus range
        (300, [(60, 20)], 250),  # a 20-point spike in them: one incident, however long
    ],
)
def test_a_level_shift_after_a_larger_spike_is_still_found(
    seed: int, n: int, spikes: list[tuple[int, int]], shift_at: int
) -> None:
    """A past spike must not set the bar for what counts as unusual: the +60 shift (12 robust
    standard deviations) is found as a level shift where it starts, and each spike where it starts."""
    ts = [T0 + timedelta(minutes=5 * i) for i in range(n)]
    found = detect(ts, _spiked_then_shifted(seed, n, spikes, shift_at), name="latency").anomalies
    assert [a.start for a in found] == [ts[start] for start, _length in spikes] + [ts[shift_at]], found
    assert found[-1].kind == "level_shift"
    level = float(found[-1].explanation.removeprefix("latency shifted to ~").split(",")[0])
    assert 150 < level < 170, found[-1].explanation


def test_only_excursions_that_recur_raise_the_bar() -> None:
    peaks = ExcursionPeaks(floor=3.0, gap=2, memory=1000, rank=2, points_per_rank=400)
    for z in [1.0] * 10 + [50.0, 60.0, 1.0, 55.0] + [1.0] * 3:  # one excursion (gap 1 < 2), then over
        peaks.push(z)
    assert peaks.bar() == 0.0  # one incident alone sets nothing
    for z in [9.0] + [1.0] * 3:
        peaks.push(z)
    assert peaks.bar() == 9.0  # the 2nd largest of two excursions
    for _ in range(800):  # 821 points remembered: rank 3, and only 2 excursions
        peaks.push(1.0)
    assert peaks.bar() == 0.0
    for _ in range(1000):  # both forgotten
        peaks.push(1.0)
    for z in [30.0, 1.0, 1.0, 1.0, 20.0, 1.0, 1.0, 1.0, 40.0] + [1.0] * 3:
        peaks.push(z)
    assert peaks.bar() == 20.0  # 1000 points remembered: rank 3 of the three new excursions


def test_trend() -> None:
    values = [v + 0.3 * max(0, i - EVENT) for i, v in enumerate(flat())]
    [a] = detect(TS, values, name="disk used").anomalies
    assert a.kind == "trend"
    assert TS[EVENT] < a.start < TS[EVENT + 60]  # a 0.3/point ramp clears noise (sd 2) in ~20-40 points
    assert a.explanation.startswith("disk used trending up from ~")


def test_seasonal_deviation() -> None:
    values = seasonal()
    rng = random.Random(11)
    for i in range(EVENT, EVENT + 60):  # night-time level at day time: normal overall, wrong for the hour
        values[i] = 100 - 30 * math.sin(2 * math.pi * i / 288) + rng.gauss(0, 2)
    [a] = detect(TS, values, name="checkout rps").anomalies
    assert (a.start, a.kind) == (TS[EVENT], "seasonal_deviation")
    assert "same-hour median" in a.explanation
    assert "since 2024-01-06 05:00" in a.explanation


def test_scores_are_causal() -> None:
    values = seasonal()
    values[EVENT] += 80
    full = detect(TS, values).scores
    for k in (100, 700, EVENT, EVENT + 1):
        assert detect(TS[:k], values[:k]).scores == full[:k]
    # changing the future leaves the past alone
    other = values[:EVENT] + [v * 3 for v in values[EVENT:]]
    assert detect(TS, other).scores[:EVENT] == full[:EVENT]


def test_streaming_matches_batch() -> None:
    values = seasonal()
    detector = StreamingDetector()
    online = [detector.update(t, v).score for t, v in zip(TS, values, strict=True)]
    assert online == [p.score for p in score_series(TS, values)]


def test_refractory_damps_repeat_alarms() -> None:
    values = flat()
    values[EVENT] = values[EVENT + 10] = 400.0
    scores = detect(TS, values, config=DetectorConfig()).scores
    assert scores[EVENT] > 0.9
    assert scores[EVENT + 10] <= DetectorConfig().refractory_damping


def test_alarm_rate_lowers_alarms_on_a_series_that_keeps_alarming() -> None:
    values = flat()
    spikes = [600 + 150 * k for k in range(6)]  # each past the refractory period, each an alarm
    for k, i in enumerate(spikes):
        values[i] = 300.0 + 100 * k
    values[1900] = 1000.0  # after a quiet spell longer than the window
    config = DetectorConfig(alarm_rate_window=400)
    step = config.alarm_rate_step
    on = score_series(TS, values, config)
    off = score_series(TS, values, replace(config, alarm_rate_step=0.0))
    # the calibration only scales the alarm score: what the detector learns is unchanged
    assert [p.value for p in on] == [p.value for p in off]
    gains = [on[i].score / off[i].score for i in spikes]
    # no alarm in the 400 points before the first spike, then 1, then 2 (the window holds two)
    assert gains == pytest.approx([1.0, 1 - step, 1 - 2 * step, 1 - 2 * step, 1 - 2 * step, 1 - 2 * step])
    assert on[1900].score == pytest.approx(off[1900].score)  # old alarms are forgotten
    floor = replace(config, alarm_rate_step=0.5, alarm_rate_floor=0.6)
    assert score_series(TS, values, floor)[spikes[2]].score == pytest.approx(0.6 * off[spikes[2]].score)


# --- context (pattern) detector and anomaly likelihood ---------------------------------------


def rhythm_change(seed: int) -> list[float]:
    """A 80-minute cycle that slows to 4 hours at EVENT: same values, same range, new shape."""
    rng = random.Random(seed)
    return [
        100 + 30 * math.sin(2 * math.pi * i / (16 if i < EVENT else 48)) + rng.gauss(0, 1) for i in range(N)
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_context_flags_a_pattern_change_the_value_detector_misses(seed: int) -> None:
    values = rhythm_change(seed)
    alarm = DetectorConfig().alarm_level
    points = score_series(TS, values)
    # the values stay in their usual range: neither value score comes near an alarm ...
    assert max(max(p.raw, p.value) for p in points[EVENT:]) < alarm
    assert detect(TS, values).anomalies == []
    # ... but the new rhythm is new context, flagged within ~an hour of the change
    fired = [i for i, p in enumerate(points) if p.score >= alarm]
    assert fired
    assert EVENT <= fired[0] <= EVENT + 12
    assert points[fired[0]].context >= alarm
    # and only there: the burst of novel contexts raises ONE alarm
    assert len([i for i in range(EVENT, N) if points[i].context >= alarm]) > 1
    assert fired == fired[:1]


def test_value_only_config_misses_the_pattern_change() -> None:
    values = rhythm_change(1)
    points = score_series(TS, values, DetectorConfig(context=False))
    assert all(p.context == 0.0 for p in points)
    assert max(p.score for p in points[EVENT:]) < DetectorConfig().alarm_level


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_drift_feature_flags_a_sustained_shift_that_bursty_noise_hides(seed: int) -> None:
    # Three-point bursts every 200 points keep the 5-point median's own record high, so a
    # sustained +5 sd shift is not news to the shift feature; the 12-point median ignores the
    # bursts and flags it.
    rng = random.Random(seed)
    n = 3000
    values = [100 + rng.gauss(0, 5) + (40 if i % 200 < 3 else 0) for i in range(n)]
    values += [125 + rng.gauss(0, 5) for _ in range(150)]
    ts = [datetime(2024, 1, 1) + timedelta(minutes=5 * i) for i in range(len(values))]
    level = DetectorConfig().alarm_level
    with_drift = score_series(ts, values, DetectorConfig(context=False))
    without = score_series(ts, values, DetectorConfig(context=False, drift_points=0))
    assert max(p.value for p in with_drift[n:]) >= level
    assert max(p.value for p in without[n:]) < level


def test_context_novelty_falls_as_a_pattern_repeats_and_rises_on_a_new_one() -> None:
    detector = ContextDetector(levels=4, order=3, min_history=0)
    cycle = [0.0, 1.0, 2.0, 3.0]
    novelty = [detector.update(v) for _ in range(50) for v in cycle]
    assert novelty[-20:] == [0.0] * 20
    assert detector.symbol(0.1) == 0
    assert detector.symbol(2.9) == 3
    assert detector.symbol(99.0) == 3  # above the recent range: the top bin
    fresh = [detector.update(v) for v in (2.0, 2.0)]  # the cycle never held a level
    # 2 is a known symbol, but 2-2 and 3-2-2 are new: weights (2 + 3) of (1 + 2 + 3)
    assert fresh[1] == pytest.approx(5 / 6)


def test_rolling_range_matches_brute_force() -> None:
    rng = random.Random(4)
    window = RollingRange(7)
    seen: list[float] = []
    for _ in range(300):
        v = rng.choice([rng.random(), 0.5])  # with ties
        window.push(v)
        seen.append(v)
        assert window.bounds() == (min(seen[-7:]), max(seen[-7:]))
    assert len(window) == 7


def test_likelihood_turns_a_burst_of_raw_scores_into_a_high_score_and_ignores_background() -> None:
    rng = random.Random(9)
    lik = AnomalyLikelihood(history=2000, short=1, learning=300)
    background = [lik.update(rng.uniform(0.0, 0.3)) for _ in range(3000)]
    assert background[:300] == [0.0] * 300  # still learning
    assert max(background) < 0.5  # the usual level of surprise is not news
    burst = [lik.update(0.95) for _ in range(5)]
    assert burst[0] > 0.5
    assert all(0.0 <= s < 1.0 for s in background + burst)


def test_likelihood_adapts_to_a_noisier_series() -> None:
    rng = random.Random(10)
    quiet = AnomalyLikelihood(history=2000, learning=300)
    noisy = AnomalyLikelihood(history=2000, learning=300)
    for _ in range(2000):
        quiet.update(rng.uniform(0.0, 0.1))
        noisy.update(rng.uniform(0.0, 0.9))
    assert quiet.update(0.8) > 0.5 > noisy.update(0.8)


def test_tail_is_continuous_and_increasing() -> None:
    zs = [0.5 * k for k in range(1, 100)]
    tails = [tail_log10(z) for z in zs]
    assert tails == sorted(tails)
    assert tail_log10(29.999) == pytest.approx(tail_log10(30.0), rel=1e-3)
    assert tail_log10(1.6448536) == pytest.approx(-math.log10(0.05), abs=1e-6)


# --- NAB scoring (benchmarks/nab_scoring.py) -------------------------------------------------


nab = load("nab_scoring")
STANDARD, LOW_FP, LOW_FN = nab.PROFILES
FILE_TS = [T0 + timedelta(minutes=5 * i) for i in range(100)]  # probation: first 15 rows
WINDOW = (FILE_TS[40], FILE_TS[49])  # 10 rows


def one_file() -> object:
    return nab.prepare("f.csv", FILE_TS, [WINDOW])


def fire_at(*rows: int) -> list[float]:
    return [1.0 if i in rows else 0.0 for i in range(100)]


def test_sigma_shape() -> None:
    assert nab.sigma(-1.0) == pytest.approx(0.98661, abs=1e-5)
    assert nab.sigma(0.0) == 0.0
    assert nab.sigma(3.5) == -1.0
    assert nab.probation_rows(100) == 15
    assert nab.probation_rows(100_000) == 750


def test_detection_at_window_start_earns_about_a_tp() -> None:
    raw, tp, fp = nab.file_score(one_file(), fire_at(40), 0.5, STANDARD)
    assert (tp, fp) == (1, 0)
    assert raw == pytest.approx(0.98661 * STANDARD.tp, abs=1e-5)


def test_only_the_earliest_detection_in_a_window_counts() -> None:
    raw, _, fp = nab.file_score(one_file(), fire_at(42, 45), 0.5, STANDARD)
    assert fp == 0
    assert raw == pytest.approx(nab.sigma(-0.8))  # row 42: -(49 - 42 + 1) / 10


def test_false_positive_far_from_windows_costs_a_fp() -> None:
    raw, tp, fp = nab.file_score(one_file(), fire_at(20, 40), 0.5, LOW_FP)
    assert (tp, fp) == (1, 1)
    assert raw == pytest.approx(0.98661 - 0.22, abs=1e-5)
    raw_late, _, _ = nab.file_score(one_file(), fire_at(40, 95), 0.5, STANDARD)
    assert raw_late == pytest.approx(0.98661 - 0.11, abs=1e-5)  # (95 - 49) / 9 > 3: full penalty


def test_detection_just_after_a_window_costs_little() -> None:
    raw, _, fp = nab.file_score(one_file(), fire_at(40, 50), 0.5, STANDARD)
    assert fp == 1
    penalty = raw - nab.sigma(-1.0)
    assert penalty == pytest.approx(0.11 * nab.sigma(1 / 9))  # row 50: (50 - 49) / (10 - 1)
    assert -0.11 < penalty < 0


def test_missing_a_window_costs_a_fn_and_probation_is_ignored() -> None:
    assert nab.file_score(one_file(), fire_at(), 0.5, STANDARD)[0] == -1.0
    assert nab.file_score(one_file(), fire_at(), 0.5, LOW_FN)[0] == -2.0
    assert nab.file_score(one_file(), fire_at(5), 0.5, STANDARD)[0] == -1.0  # inside probation


def test_sweep_picks_the_best_threshold() -> None:
    scores = [0.0] * 100
    scores[30] = 0.9  # a false positive scoring higher than the true one
    scores[41] = 0.6
    threshold, raw = nab.sweep([one_file()], [scores], STANDARD)
    assert threshold == 0.6
    assert raw == pytest.approx(nab.sigma(-0.9) - 0.11)
    scores[30] = 0.5  # now the FP can be left out
    threshold, raw = nab.sweep([one_file()], [scores], STANDARD)
    assert (threshold, raw) == (0.6, pytest.approx(nab.sigma(-0.9)))


def test_normalization_maps_null_to_0_and_perfect_to_100() -> None:
    files = [one_file(), one_file()]
    assert nab.score_corpus(files, [fire_at(), fire_at()], STANDARD)["score"] == 0.0
    assert nab.normalize(2 * STANDARD.tp, 2, STANDARD) == 100.0
    at_start = nab.score_corpus(files, [fire_at(40), fire_at(40)], LOW_FN)["score"]
    assert at_start == pytest.approx(100 * (0.98661 + 2) / 3, abs=1e-3)  # ~99.6: sigma(-1) < 1
