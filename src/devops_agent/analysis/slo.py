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
window ``(now - w, now]``. When the data covers only part of the SLO window (a new service, a
server that keeps 15 days of a 30-day window), :func:`evaluate_burn_rates` takes how much it
covers (``covered``): below :data:`MIN_COVERAGE` of the window the budget left is not known and
not given; the explanation says how much each window holds. Time to exhaustion assumes the
current burn rate continues and ignores errors that will age out of the SLO window, so it is a
conservative estimate. This module is pure: it must not query metrics backends or import from
policies, agent, cli or tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Literal

from devops_agent.analysis.changepoints import when
from devops_agent.errors import UserError

Severity = Literal["page", "ticket"]

MIN_COVERAGE = 0.9
"""Below this share of the SLO window covered by data, the budget left is not given: the
errors of the missing part are unknown, and the part that was seen cannot stand for the whole."""
FULL_COVERAGE = 0.99
"""At or above this share the window counts as covered; between the two the budget is given
"over the part the data covers"."""


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
    # fraction of the window's budget left; negative when overspent; None when the data covers
    # too little of the window to say (see ``covered``)
    budget_remaining: float | None
    burn_rates: dict[timedelta, float] = field(default_factory=dict)
    alerts: list[BurnAlert] = field(default_factory=list)
    exhaustion_eta: datetime | None = None
    explanation: str = ""
    covered: timedelta | None = None  # how much of the window has data; None: not measured (all)

    def coverage(self, window: timedelta | None = None) -> float:
        """Share of ``window`` (default the SLO window) that the data covers, counting the covered
        time as the most recent: 1.0 when not measured."""
        span = window or self.window
        if self.covered is None or span <= timedelta(0):
            return 1.0
        return min(1.0, self.covered / span)


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
    covered: timedelta | None = None,
) -> SloReport:
    """The same report from burn rates already known per window (e.g. computed by Prometheus).

    ``rates`` must hold every window of :func:`windows_needed`. ``covered`` is how much of the
    SLO window the data covers (None: all of it); under :data:`MIN_COVERAGE` of the window the
    budget left and its exhaustion time are None.
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
    report = SloReport(objective, window, now, remaining, rates, alerts, eta, covered=covered)
    if report.coverage() < MIN_COVERAGE:
        report = replace(report, budget_remaining=None, exhaustion_eta=None)
    return replace(report, explanation=_explain(report, current))


def _explain(r: SloReport, current: timedelta) -> str:
    head = f"SLO {r.objective * 100:g}% over {format_window(r.window)}: "
    share = r.coverage()
    covered = covered_text(r.covered) if r.covered is not None else ""
    if r.budget_remaining is None:
        head += (
            f"the data covers only {covered} of the window ({share_text(share)}), so the error budget left "
            "is not known"
        )
    else:
        head += f"{max(r.budget_remaining, 0.0):.1%} of the error budget left"
        if r.budget_remaining < 0:
            head += f" (overspent by {-r.budget_remaining:.1%})"
        if share < FULL_COVERAGE:
            head += f", over the {covered} the data covers ({share_text(share)} of the window)"
    parts = [head + f"; burn rate {r.burn_rates[current]:.1f}x over the last {format_window(current)}."]
    short = [w for w in sorted(r.burn_rates) if w != r.window and r.coverage(w) < FULL_COVERAGE]
    if short and r.covered is not None:
        names = [format_window(w) for w in short]
        listed = ", ".join(names[:-1]) + f" and {names[-1]}" if len(names) > 1 else names[0]
        verb = "windows hold" if len(names) > 1 else "window holds"
        parts.append(f"The data begins {covered} ago: the {listed} {verb} only that.")
    for a in r.alerts:
        held = r.coverage(a.long_window)
        note = (
            f"; the {format_window(a.long_window)} window holds {covered} of data"
            if held < FULL_COVERAGE
            else ""
        )
        parts.append(
            f"{a.severity.upper()}: burning {a.burn_rate:.1f}x over both {format_window(a.long_window)} and "
            f"{format_window(a.short_window)} (threshold {a.threshold:g}x{note})."
        )
    if r.exhaustion_eta is not None and r.budget_remaining is not None:
        verb = "ran out" if r.budget_remaining <= 0 else "runs out"
        parts.append(f"At this rate the budget {verb} at {when(r.exhaustion_eta)}.")
    return " ".join(parts)


def share_text(fraction: float) -> str:
    """``93%``, ``1.2%``, or ``under 0.1%`` (5 minutes of 30 days is not "0.0%")."""
    if fraction >= 0.1:
        return f"{fraction:.0%}"
    return f"{fraction:.1%}" if fraction >= 0.001 else "under 0.1%"


def covered_text(span: timedelta) -> str:
    """``2h`` or ``5m`` as the windows are written, or ``a few seconds`` (a series that just began)."""
    minutes = round(span.total_seconds() / 60)
    return format_window(timedelta(minutes=minutes)) if minutes else "a few seconds"
