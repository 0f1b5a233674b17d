"""How much of an SLO window the request data covers, asked of Prometheus in two instant queries.

A burn rate over 30 days computed from 5 minutes of data is the 5-minute rate, and "100% of the
error budget left" from it is a claim the data cannot support. :func:`covered_seconds` counts, over
the window, the steps of a subquery at which the request expression has data (``count_over_time``
of a presence probe, about :data:`STEPS` steps), times the step; when that is a step or two, it
counts again at a finer step over the last few coarse steps, so a series that began 5 minutes ago
reads as 5 minutes, not as one step of an hour. Gaps in the data are counted out; where they lie
is not known, so the caller treats the covered time as the most recent.

This module only builds queries and reads their numbers: the caller runs them (``query``), so it
must not hold a client, read settings, or import from policies, agent or interfaces.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

from devops_agent.analysis.slo import format_window

STEPS = 720
"""Subquery steps over the whole window: an hour for 30 days, six minutes for 3 days."""
FINEST_S = 60.0
"""The finest step asked for: a scrape interval is at most about this long."""


def presence_expr(requests: str, step: str) -> str:
    """An expression with a value at a time exactly when the request data has some in the ``step``
    before it: a counter selector's newest sample there, or the ``$window`` template over ``step``."""
    if "$window" in requests:
        return requests.replace("$window", step)
    return f"count(last_over_time({requests}[{step}]))"


def _span(seconds: float) -> str:
    return format_window(timedelta(seconds=round(seconds)))


def covered_seconds(requests: str, window_s: float, query: Callable[[str], float]) -> float:
    """Seconds of the last ``window_s`` at which ``requests`` has data; ``query`` runs an instant
    query at now and returns its largest value (0 when it returns nothing)."""
    step = max(FINEST_S, window_s / STEPS)
    span = window_s
    coarse = 0.0
    while True:
        probe = presence_expr(requests, _span(step))
        # the newline ends a PromQL comment the template may hold (``vector(1) # $window``)
        steps = query(f"count_over_time(({probe}\n)[{_span(span)}:{_span(step)}])")
        covered = min(steps * step, window_s)
        if coarse and not covered:
            return coarse  # the few coarse steps with data are older than the last ones
        if steps > 2 or step <= FINEST_S:
            return covered
        coarse = covered
        span, step = 3 * step, max(FINEST_S, step / 60)
