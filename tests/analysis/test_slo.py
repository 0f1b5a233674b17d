"""SLO burn-rate math on hand-made request/error counts (5-minute buckets, 1000 requests each)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from devops_agent.analysis.slo import burn_rate, evaluate_slo, format_window
from devops_agent.errors import UserError

NOW = datetime(2024, 3, 31, 12, 0)
STEP = timedelta(minutes=5)
N = 30 * 288  # 30 days of 5-minute buckets
TS = [NOW - STEP * (N - 1 - i) for i in range(N)]
TOTAL = [1000.0] * N


def errors_last(window: timedelta, ratio: float, base: float = 0.0) -> list[float]:
    """Error counts: ``ratio`` of requests in the last ``window``, ``base`` before it."""
    return [1000.0 * (ratio if t > NOW - window else base) for t in TS]


def test_clean_service_has_full_budget_and_no_alerts() -> None:
    r = evaluate_slo(TS, TOTAL, [0.0] * N, objective=0.999)
    assert r.budget_remaining == 1.0
    assert r.alerts == []
    assert r.exhaustion_eta is None
    assert set(r.burn_rates.values()) == {0.0}
    assert r.now == NOW


def test_steady_half_budget_burn_projects_exhaustion() -> None:
    r = evaluate_slo(TS, TOTAL, [0.5] * N, objective=0.999)  # 0.05% errors = burn rate 0.5
    assert r.burn_rates[timedelta(hours=1)] == pytest.approx(0.5)
    assert r.budget_remaining == pytest.approx(0.5)
    assert r.alerts == []
    assert r.exhaustion_eta == NOW + timedelta(days=30)  # 0.5 budget / 0.5 per 30 days


def test_fast_burn_pages_on_1h_and_5m_only() -> None:
    errs = errors_last(timedelta(hours=1), 0.02)  # 2% errors = 20x burn for the last hour
    r = evaluate_slo(TS, TOTAL, errs, objective=0.999)
    assert r.burn_rates[timedelta(hours=1)] == pytest.approx(20.0)
    assert r.burn_rates[timedelta(hours=6)] == pytest.approx(20.0 / 6)
    assert [(a.severity, a.long_window, a.short_window, a.threshold) for a in r.alerts] == [
        ("page", timedelta(hours=1), timedelta(minutes=5), 14.4)
    ]
    # 240 bad of 8.64M requests against a 0.1% budget
    assert r.budget_remaining == pytest.approx(1 - 240 / 8640)
    assert r.exhaustion_eta is not None
    days = (r.exhaustion_eta - NOW).total_seconds() / 86400
    assert days == pytest.approx(30 * (1 - 240 / 8640) / 20)
    assert "PAGE" in r.explanation
    assert "14.4x" in r.explanation


def test_short_window_resets_the_page_once_errors_stop() -> None:
    errs = errors_last(timedelta(hours=1), 0.02)
    for i in range(N - 1, N - 2, -1):  # the last 5-minute bucket is clean again
        errs[i] = 0.0
    r = evaluate_slo(TS, TOTAL, errs, objective=0.999)
    assert r.burn_rates[timedelta(hours=1)] > 14.4
    assert r.burn_rates[timedelta(minutes=5)] == 0.0
    assert r.alerts == []


def test_slow_burn_opens_tickets_not_pages() -> None:
    errs = errors_last(timedelta(hours=24), 0.004)  # 4x burn for a day
    r = evaluate_slo(TS, TOTAL, errs, objective=0.999)
    fired = {(a.severity, format_window(a.long_window), a.threshold) for a in r.alerts}
    # 72h window: 4 * 24 / 72 = 1.33x > 1x
    assert fired == {("ticket", "1d", 3.0), ("ticket", "3d", 1.0)}


def test_overspent_budget_is_negative_and_exhausted_now() -> None:
    r = evaluate_slo(TS, TOTAL, [2.0] * N, objective=0.999)  # burn 2x for the whole window
    assert r.budget_remaining == pytest.approx(-1.0)
    assert r.exhaustion_eta == NOW
    assert "overspent" in r.explanation


def test_now_limits_the_windows() -> None:
    errs = errors_last(timedelta(hours=1), 0.02)
    earlier = NOW - timedelta(hours=2)
    assert burn_rate(TS, TOTAL, errs, objective=0.999, window=timedelta(hours=1), now=earlier) == 0.0
    assert evaluate_slo(TS, TOTAL, errs, objective=0.999, now=earlier).alerts == []


def test_bad_input_is_a_user_error() -> None:
    with pytest.raises(UserError):
        evaluate_slo(TS, TOTAL, [0.0] * N, objective=99.9)
    with pytest.raises(UserError):
        evaluate_slo(TS, TOTAL, [0.0], objective=0.999)


def test_format_window() -> None:
    assert [format_window(w) for w in (timedelta(days=3), timedelta(hours=6), timedelta(minutes=5))] == [
        "3d",
        "6h",
        "5m",
    ]


def test_a_window_the_data_barely_covers_gives_no_budget_figure() -> None:
    from devops_agent.analysis.slo import evaluate_burn_rates, windows_needed

    window = timedelta(days=30)
    rates = dict.fromkeys(windows_needed(window), 0.0)
    five = evaluate_burn_rates(rates, objective=0.999, window=window, now=NOW, covered=timedelta(minutes=5))
    assert five.budget_remaining is None  # 5 minutes cannot say what is left of 30 days
    assert five.exhaustion_eta is None
    assert five.coverage() == pytest.approx(300 / (30 * 86400))
    assert five.coverage(timedelta(minutes=5)) == 1.0
    assert (
        "the data covers only 5m of the window (under 0.1%), so the error budget left is not known"
        in five.explanation
    )
    assert "100.0% of the error budget left" not in five.explanation
    assert (
        "The data begins 5m ago: the 30m, 1h, 2h, 6h, 1d and 3d windows hold only that." in five.explanation
    )

    most = evaluate_burn_rates(rates, objective=0.999, window=window, now=NOW, covered=timedelta(days=28))
    assert most.budget_remaining == 1.0  # 93% of the window: given, and said over what
    assert (
        "100.0% of the error budget left, over the 28d the data covers (93% of the window)"
        in most.explanation
    )

    whole = evaluate_burn_rates(rates, objective=0.999, window=window, now=NOW, covered=window)
    assert whole.explanation.startswith("SLO 99.9% over 30d: 100.0% of the error budget left; burn rate")
    assert "data" not in whole.explanation

    paging = {**rates, timedelta(hours=1): 20.0, timedelta(minutes=5): 20.0}
    alert = evaluate_burn_rates(paging, objective=0.999, window=window, now=NOW, covered=timedelta(minutes=5))
    assert "PAGE: burning 20.0x over both 1h and 5m (threshold 14.4x; the 1h window holds 5m of data)." in (
        alert.explanation
    )
