"""``prom_slo``: error budget and multi-window, multi-burn-rate alerts for a request/error pair,
with how much of the SLO window the data covers (:mod:`.coverage`), and the check of its
arguments the CLI shares (:func:`check_slo_args`)."""

from __future__ import annotations

import math
import time as _time
from datetime import UTC, datetime, timedelta
from typing import Any

from devops_agent.analysis.slo import (
    DEFAULT_RULES,
    SloReport,
    evaluate_burn_rates,
    format_window,
    windows_needed,
)
from devops_agent.errors import UserError
from devops_agent.results import ToolResult
from devops_agent.tools.base import ToolsetBuilder
from devops_agent.tools.prometheus.client import NAME, PromError
from devops_agent.tools.prometheus.coverage import covered_seconds
from devops_agent.tools.prometheus.params import duration_seconds, num, rounded
from devops_agent.tools.prometheus.server import Server

SLO_MIN_WINDOW = max(r.long_window for r in DEFAULT_RULES)
"""The longest burn-rate rule window (3d): a shorter SLO window would spend its whole budget
inside one rule window, so the rules' thresholds would mean nothing."""
SLO_MAX_WINDOW = timedelta(days=366)
SLO_EXCESS_SLACK = 0.1
"""How far errors may exceed requests over a window (10% plus one event) and still be taken as
"all requests failed": ``increase()`` extrapolates each series on its own, and an error counter
bumped just before its request counter is scraped runs one event ahead."""


def _coverage_facts(report: SloReport) -> dict[str, Any] | None:
    """``coverage`` of the prom_slo result: how much of the SLO window, and of each window, has data."""
    if report.covered is None:
        return None
    return {
        "covered_s": round(report.covered.total_seconds()),
        "window": round(report.coverage(), 4),
        "windows": {format_window(w): round(report.coverage(w), 4) for w in sorted(report.burn_rates)},
        "budget_known": report.budget_remaining is not None,
    }


def _window_expr(expr: str, window: str) -> str:
    """The increase of ``expr`` over ``window``: a template with ``$window``, or a counter selector."""
    if "$window" in expr:
        return expr.replace("$window", window)
    return f"sum(increase({expr}[{window}]))"


def check_slo_args(
    objective: float, window: str, *, names: tuple[str, str] = ("objective", "window")
) -> timedelta:
    """The SLO window of ``window``, once both arguments make sense; nothing is queried here.

    ``names`` is how the caller calls the two arguments (the CLI passes its option names), so the
    message points at what to change.

    Raises:
        UserError: the objective is not a fraction strictly between 0 and 1, or the window is not a
            duration between :data:`SLO_MIN_WINDOW` (3d) and :data:`SLO_MAX_WINDOW`.
    """
    objective_name, window_name = names
    if not 0.0 < objective < 1.0:  # also false for NaN
        raise UserError(
            f"{objective_name} must be a fraction strictly between 0 and 1, got {objective:g}",
            hint="99.9% is 0.999; 1 would leave no error budget to burn",
        )
    usual = "SLO windows are usually 28d or 30d"
    seconds = duration_seconds(window)
    if seconds is None:
        raise UserError(f"{window_name} must be a duration such as 30d, got {window!r}", hint=usual)
    shortest, longest = format_window(SLO_MIN_WINDOW), format_window(SLO_MAX_WINDOW)
    if seconds < SLO_MIN_WINDOW.total_seconds():
        raise UserError(
            f"{window_name} {window} is shorter than {shortest}, the longest burn-rate rule window",
            hint=f"{usual}; under {shortest} the rules' thresholds mean nothing: the whole budget "
            "would burn inside one rule window",
        )
    if seconds > SLO_MAX_WINDOW.total_seconds():
        raise UserError(f"{window_name} {window} is longer than {longest}", hint=usual)
    return timedelta(seconds=round(seconds))


def _slo_count_problem(
    span: str, requests: float, errors: float, *, slack: float = SLO_EXCESS_SLACK
) -> UserError | None:
    """Why these totals over ``span`` cannot give a burn rate, or None when they can."""
    for which, value in (("request", requests), ("error", errors)):
        if not math.isfinite(value):
            shown = "NaN" if math.isnan(value) else f"{value:+}".replace("inf", "Inf")
            return UserError(
                f"the {which} query returned {shown} over {span}, not a count",
                hint="each query must give a finite number of events per window, e.g. "
                "sum(increase(x_total[$window])); NaN and Inf come from a division by zero or "
                "from non-finite samples",
            )
        if value < 0:
            return UserError(
                f"the {which} query returned a negative count over {span}: {value:g}",
                hint="counts cannot be negative: count with increase() over a counter, "
                "not with a difference of gauges",
            )
    if errors > requests * (1.0 + slack) + 1.0:
        return UserError(
            f"the error query returned more than the request query over {span}: {errors:g} > {requests:g}",
            hint="are the queries swapped or counting different things? The errors must be a "
            "subset of the requests",
        )
    return None


def add_slo_tools(ts: ToolsetBuilder, server: Server) -> None:
    """Declare ``prom_slo`` on ``ts``."""
    prom, meta = server.prom, server.meta

    def _instant_total(query: str, now: float, warnings_out: list[str], unmatched: set[str]) -> float:
        """The sum of every series of an instant query at ``now`` (0 when none match; the query
        is then added to ``unmatched``)."""
        data, warnings = prom.get("query", {"query": query, "time": f"{now:.3f}"}, form=True)
        warnings_out += warnings
        kind = data.get("resultType")
        if kind == "scalar":
            return num(data["result"][1])
        if kind != "vector":
            raise PromError(
                f"{query!r} returns a {kind}, not a number",
                "give a counter selector, or an expression such as sum(increase(x_total[$window]))",
            )
        if not data.get("result"):
            unmatched.add(query)
        # sum, not fsum: fsum raises on inf + -inf, and the caller reports non-finite totals
        return sum((num(s["value"][1]) for s in data.get("result") or []), 0.0)

    def _slo_coverage(
        requests: str, window: timedelta, now: float, warnings_out: list[str]
    ) -> timedelta | None:
        """How much of ``window`` the request data covers; None (and a warning) when it cannot be told."""

        def largest(query: str) -> float:
            data, warnings = prom.get("query", {"query": query, "time": f"{now:.3f}"}, form=True)
            warnings_out.extend(warnings)
            return max(
                (num(s["value"][1]) for s in data.get("result") or [] if isinstance(s, dict)), default=0.0
            )

        try:
            return timedelta(seconds=covered_seconds(requests, window.total_seconds(), largest))
        except (PromError, KeyError, TypeError, IndexError) as exc:
            reason = exc.message if isinstance(exc, PromError) else "an unexpected answer"
            warnings_out.append(
                f"how much of the window has data could not be measured ({reason}); assumed all"
            )
            return None

    @ts.tool(category="metrics", read_only=True)
    def prom_slo(requests: str, errors: str, objective: float = 0.999, window: str = "30d") -> ToolResult:
        """Error budget and multi-window, multi-burn-rate SLO alerts (SRE Workbook) for a request/error pair.

        Burn rate = error ratio / (1 - objective) over 5m, 30m, 1h, 2h, 6h, 24h and 3d: a page fires
        at 14.4x over 1h and 5m or 6x over 6h and 30m, a ticket at 3x over 24h and 2h or 1x over 3d
        and 6h. Also: the budget left over `window` and when it runs out at the current rate.

        Args:
            requests: counter selector of all requests, e.g. 'http_requests_total{job="api"}', or an
                expression with `$window` in it (e.g. 'sum(increase(x_total[$window]))').
            errors: counter selector of failed requests, e.g. 'http_requests_total{job="api",code=~"5.."}'.
            objective: the SLO as a fraction: 0.999 for 99.9%.
            window: the SLO window, 3d to 366d, e.g. 30d or 28d.

        Counts that cannot be (NaN or Inf, negative, more errors than requests) are errors.
        """
        try:
            slo_window = check_slo_args(objective, window)
        except UserError as exc:
            return ToolResult.fail(exc.message, exc.hint, source=NAME)
        now = _time.time()
        rates: dict[timedelta, float] = {}
        counts: dict[str, dict[str, Any]] = {}
        all_warnings: list[str] = []
        unmatched: set[str] = set()
        try:
            for w in windows_needed(slo_window):
                span = format_window(w)
                n, e = (
                    _instant_total(_window_expr(expr, span), now, all_warnings, unmatched)
                    for expr in (requests, errors)
                )
                problem = _slo_count_problem(span, n, e)
                if problem is not None:
                    return ToolResult.fail(problem.message, problem.hint, source=NAME)
                if e > n:  # within the slack: every request failed
                    all_warnings.append(f"over {span} errors exceed requests ({e:g} > {n:g}); taken as equal")
                    e = n
                counts[span] = {"requests": rounded(n), "errors": rounded(e)}
                rates[w] = (e / n) / (1.0 - objective) if n > 0 else 0.0
        except PromError as exc:
            return exc.result()
        covered = _slo_coverage(requests, slo_window, now, all_warnings)
        report = evaluate_burn_rates(
            rates,
            objective=objective,
            window=slo_window,
            now=datetime.fromtimestamp(now, UTC),
            covered=covered,
        )
        span = format_window(slo_window)
        if _window_expr(errors, span) in unmatched and counts[span]["requests"] > 0:
            # an error counter often has no series until the first error, but a misspelt selector
            # looks the same: counted as no errors, the budget would read as untouched
            all_warnings.append(
                f"the error query {errors!r} matched no series over {span}, so no errors were counted: "
                "fine if the error counter has not been created yet (no error so far), but check the "
                "selector for a typo"
            )
        if counts[span]["requests"] == 0:
            if "$window" in requests:
                check = f"check what it returns with $window = {span}"
            else:
                check = f"check that it matches counter series: count({requests}) should be above 0"
            return ToolResult.empty(
                f"no requests counted by {requests!r} over {span}: {check}", **meta(all_warnings)
            )
        out = {
            "objective": objective,
            "window": format_window(slo_window),
            "budget_remaining": None
            if report.budget_remaining is None
            else round(report.budget_remaining, 4),
            "coverage": _coverage_facts(report),
            "burn_rates": {format_window(w): round(r, 3) for w, r in sorted(report.burn_rates.items())},
            "counts": counts,
            "alerts": [
                {
                    "severity": a.severity,
                    "long_window": format_window(a.long_window),
                    "short_window": format_window(a.short_window),
                    "burn_rate": round(a.burn_rate, 2),
                    "threshold": a.threshold,
                }
                for a in report.alerts
            ],
            "exhaustion_eta": report.exhaustion_eta.isoformat() if report.exhaustion_eta else None,
            "explanation": report.explanation,
        }
        return ToolResult.ok(out, **meta(all_warnings))
