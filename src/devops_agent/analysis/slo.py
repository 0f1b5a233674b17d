"""SLO error budgets and multi-window, multi-burn-rate alerts over request/error count series.

Burn rate over a window = (errors / requests in that window) / (1 - objective): 1 spends the
budget exactly over the SLO window, 14.4 spends a 30-day budget in ~2 days. An alert fires when
BOTH its long and its short window burn faster than its threshold: the long window makes it
significant, the short one makes it stop soon after the problem does.

Default rules (:data:`DEFAULT_RULES`) follow Google's *The Site Reliability Workbook*, chapter 5
"Alerting on SLOs", section "Multiwindow, Multi-Burn-Rate Alerts", whose table of recommended
parameters for a 99.9% SLO lists: page at 14.4x over 1h (short window 5m, 2% of the budget),
page at 6x over 6h (30m, 5%), ticket at 1x over 3 days (6h, 10%). We add the widely used
intermediate ticket at 3x over 24h (2h), as in Sloth and the Prometheus monitoring mixins; the
workbook's short windows are 1/12 of the long ones, and so is this one.

Inputs are per-interval counts (not cumulative counters); a sample at time ``t`` belongs to a
window ``(now - w, now]``. Time to exhaustion assumes the current burn rate continues and
ignores errors that will age out of the SLO window, so it is a conservative estimate. This module
is pure: it must not query metrics backends or import from policies, agent, cli or tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal

from devops_agent.analysis.changepoints import when
from devops_agent.errors import UserError

Severity = Literal["page", "ticket"]


@dataclass(frozen=True)
class BurnRule:
    """Fire ``severity`` when both windows burn faster than ``threshold``."""

    severity: Severity
    long_window: timedelta
    short_window: timedelta
    threshold: float


DEFAULT_RULES: tuple[BurnRule, ...] = (
    BurnRule("page", timedelta(hours=1), timedelta(minutes=5), 14.4),
    BurnRule("page", timedelta(hours=6), timedelta(minutes=30), 6.0),
    BurnRule("ticket", timedelta(hours=24), timedelta(hours=2), 3.0),
    BurnRule("ticket", timedelta(hours=72), timedelta(hours=6), 1.0),
)


@dataclass(frozen=True)
class BurnAlert:
    """A rule that fires; ``burn_rate`` is the lower of its two windows' rates."""

    severity: Severity
    long_window: timedelta
    short_window: timedelta
    burn_rate: float
    threshold: float


@dataclass(frozen=True)
class SloReport:
    """Error budget state at ``now`` and the burn-rate alerts that fire."""

    objective: float
    window: timedelta
    now: datetime
    budget_remaining: float  # fraction of the window's budget left; negative when overspent
    burn_rates: dict[timedelta, float] = field(default_factory=dict)
    alerts: list[BurnAlert] = field(default_factory=list)
    exhaustion_eta: datetime | None = None
    explanation: str = ""


def format_window(w: timedelta) -> str:
    """``timedelta(hours=6)`` -> ``"6h"``; days, hours or minutes, whichever divides evenly."""
    seconds = int(w.total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def burn_rate(
    timestamps: Sequence[datetime],
    total: Sequence[float],
    errors: Sequence[float],
    *,
    objective: float,
    window: timedelta,
    now: datetime,
) -> float:
    """Error ratio over ``(now - window, now]`` divided by the error budget ``1 - objective``."""
    start = now - window
    n = e = 0.0
    for t, tot, err in zip(timestamps, total, errors, strict=True):
        if start < t <= now:
            n += tot
            e += err
    return (e / n) / (1.0 - objective) if n > 0 else 0.0


def evaluate_slo(
    timestamps: Sequence[datetime],
    total: Sequence[float],
    errors: Sequence[float],
    *,
    objective: float,
    window: timedelta = timedelta(days=30),
    now: datetime | None = None,
    rules: Sequence[BurnRule] = DEFAULT_RULES,
    current: timedelta = timedelta(hours=1),
) -> SloReport:
    """Budget remaining, burn rate per rule window, firing alerts, and when the budget runs out.

    ``current`` is the window whose burn rate is projected forward for ``exhaustion_eta``
    (``now`` when the budget is already spent, None when nothing is burning).
    """
    if not 0.0 < objective < 1.0:
        raise UserError(f"objective must be a fraction in (0, 1), got {objective}", hint="99.9% is 0.999")
    if not len(timestamps) == len(total) == len(errors):
        raise UserError("timestamps, total and errors must have the same length")
    if now is None:
        if not timestamps:
            raise UserError("no samples and no 'now' given")
        now = max(timestamps)

    rates = {
        w: burn_rate(timestamps, total, errors, objective=objective, window=w, now=now)
        for w in windows_needed(window, rules, current)
    }
    return evaluate_burn_rates(
        rates, objective=objective, window=window, now=now, rules=rules, current=current
    )


def windows_needed(
    window: timedelta, rules: Sequence[BurnRule] = DEFAULT_RULES, current: timedelta = timedelta(hours=1)
) -> list[timedelta]:
    """Every window whose burn rate :func:`evaluate_burn_rates` needs, shortest first."""
    return sorted({w for r in rules for w in (r.long_window, r.short_window)} | {current, window})


def evaluate_burn_rates(
    rates: Mapping[timedelta, float],
    *,
    objective: float,
    window: timedelta = timedelta(days=30),
    now: datetime,
    rules: Sequence[BurnRule] = DEFAULT_RULES,
    current: timedelta = timedelta(hours=1),
) -> SloReport:
    """The same report from burn rates already known per window (e.g. computed by Prometheus).

    ``rates`` must hold every window of :func:`windows_needed`.
    """
    if not 0.0 < objective < 1.0:
        raise UserError(f"objective must be a fraction in (0, 1), got {objective}", hint="99.9% is 0.999")
    missing = [format_window(w) for w in windows_needed(window, rules, current) if w not in rates]
    if missing:
        raise UserError(f"burn rates missing for the windows {', '.join(missing)}")
    remaining = 1.0 - rates[window]
    rates = dict(rates)
    alerts = [
        BurnAlert(
            r.severity,
            r.long_window,
            r.short_window,
            min(rates[r.long_window], rates[r.short_window]),
            r.threshold,
        )
        for r in rules
        if rates[r.long_window] > r.threshold and rates[r.short_window] > r.threshold
    ]
    eta: datetime | None = None
    if remaining <= 0:
        eta = now
    elif rates[current] > 0:
        eta = now + window * (remaining / rates[current])
    report = SloReport(objective, window, now, remaining, rates, alerts, eta)
    return SloReport(objective, window, now, remaining, rates, alerts, eta, _explain(report, current))


def _explain(r: SloReport, current: timedelta) -> str:
    parts = [
        f"SLO {r.objective * 100:g}% over {format_window(r.window)}: "
        f"{max(r.budget_remaining, 0.0):.1%} of the error budget left"
        + (f" (overspent by {-r.budget_remaining:.1%})" if r.budget_remaining < 0 else "")
        + f"; burn rate {r.burn_rates[current]:.1f}x over the last {format_window(current)}."
    ]
    for a in r.alerts:
        parts.append(
            f"{a.severity.upper()}: burning {a.burn_rate:.1f}x over both {format_window(a.long_window)} and "
            f"{format_window(a.short_window)} (threshold {a.threshold:g}x)."
        )
    if r.exhaustion_eta is not None:
        verb = "ran out" if r.budget_remaining <= 0 else "runs out"
        parts.append(f"At this rate the budget {verb} at {when(r.exhaustion_eta)}.")
    return " ".join(parts)
