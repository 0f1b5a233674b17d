"""Arguments of the Prometheus tools: times, durations and steps; sample values as JSON.

This module only parses and formats: it must not make requests.
"""

from __future__ import annotations

import math
import re
import time as _time
from datetime import UTC, datetime

from devops_agent.analysis.timeparse import SINCE_FORMS, parse_since
from devops_agent.errors import UserError
from devops_agent.tools.prometheus.client import PROMETHEUS_MAX_POINTS, PromError

TARGET_POINTS = 300
"""Points per series an automatic step aims for: enough for a summary, cheap to fetch."""

# Steps people read easily; the automatic step is the smallest of these that fits.
_NICE_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}


def parse_time(value: str | float | None, now: float | None = None) -> float:
    """A Prometheus timestamp (unix seconds) from ``15m`` / ``2h ago`` / ISO 8601 / unix seconds.

    Relative values count back from ``now`` (unix seconds; default: the current time), which is
    also what ``None`` or an empty value means.
    """
    ref = _time.time() if now is None else now
    if value is None or (isinstance(value, str) and not value.strip()):
        return ref
    if isinstance(value, int | float):
        return float(value)
    text = value.strip()
    try:
        return float(text)  # unix seconds, as Prometheus itself accepts
    except ValueError:
        pass
    try:
        return parse_since(text, now=datetime.fromtimestamp(ref, UTC)).timestamp()
    except UserError as exc:
        raise PromError(exc.message, f"use {SINCE_FORMS}, or unix seconds") from None


def duration_seconds(text: str) -> float | None:
    """Seconds of ``30s``, ``5m``, ``1h``, ``30d`` or a plain number of seconds; None if not one."""
    m = _DURATION_RE.match(text)
    return None if m is None else float(m.group(1)) * _DURATION_UNITS[m.group(2) or "s"]


def parse_duration(value: str | float) -> float:
    """Seconds from a step such as ``30s``, ``5m``, ``1h`` or a plain number of seconds."""
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        parsed = duration_seconds(value)
        if parsed is None:
            raise PromError(f"cannot understand the step {value!r}", "use e.g. 15s, 1m, 5m or 1h")
        seconds = parsed
    if not math.isfinite(seconds) or seconds <= 0:
        raise PromError(f"step must be positive, got {value!r}", "use e.g. 15s, 1m, 5m or 1h")
    return seconds


def choose_step(range_s: float, step: float | None, max_points: int = PROMETHEUS_MAX_POINTS) -> float:
    """The step to use: the given one raised just enough to stay within ``max_points``, or a nice
    automatic one of about :data:`TARGET_POINTS` points (never below 1 s)."""
    floor = range_s / max(1, max_points - 1)  # points = range/step + 1
    if step is not None:
        return max(step, math.ceil(floor * 1000) / 1000)
    # A little slack so that "1h" split into 300 points is 12 s -> 15 s, not a hair over 15 s -> 30 s.
    wanted = max(range_s / TARGET_POINTS * 0.99, 1.0)
    for nice in _NICE_STEPS_S:
        if nice >= wanted and nice >= floor:
            return float(nice)
    return float(math.ceil(max(wanted, floor)))


def iso(ts: float) -> str:
    """Unix seconds as ISO 8601 in UTC with a ``Z`` (milliseconds only where there are some)."""
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    return text.replace(".000+00:00", "Z").replace("+00:00", "Z")


def num(value: str) -> float:
    """A sample value as Prometheus encodes it (a string) as a float."""
    # Prometheus encodes sample values as strings, including "NaN", "+Inf" and "-Inf".
    return float(value)


def rounded(value: float) -> float | str:
    """A value for JSON: six significant digits; NaN and infinities as text."""
    if math.isnan(value) or math.isinf(value):
        return str(value)  # JSON has no NaN/Inf; "nan"/"inf" stays readable
    return float(f"{value:.6g}")
