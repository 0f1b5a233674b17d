"""The ``prometheus`` toolset: PromQL queries, series, labels, targets, alerts and rules over the HTTP API.

Every tool is a read-only GET/POST against ``/api/v1/...`` of the configured server
(``settings.prometheus.url``; ``http://127.0.0.1:9090`` when that setting does not exist yet). Range
queries are summarized here before they reach the model: per series min/max/mean/last and a few
points (first, last, extremes), never thousands of raw samples; the step is chosen so a query
stays under Prometheus's 11,000 points per series. Failures become :class:`ToolResult` errors with
a hint: a URL without ``http(s)://`` (before any request), connection refused (wrong URL or
server down), a PromQL parse error (the parser's text), and 5xx or timeouts, which carry
``transient=True`` so a retry policy may try again.

This module must not call any endpoint that changes the server (admin APIs, lifecycle, remote
write) and must not return unbounded raw data: everything it returns is capped or summarized.
"""

from __future__ import annotations

import math
import re
import time as _time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from devops_agent.analysis.anomaly import ANOMALY_MIN_POINTS, detect
from devops_agent.analysis.slo import (
    DEFAULT_RULES,
    SloReport,
    evaluate_burn_rates,
    format_window,
    windows_needed,
)
from devops_agent.analysis.timeparse import SINCE_FORMS, parse_since
from devops_agent.config import Settings
from devops_agent.config.settings import PrometheusSettings
from devops_agent.errors import UserError
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.prometheus_coverage import covered_seconds
from devops_agent.tools.registry import ToolRegistry

NAME = "prometheus"
DESCRIPTION = (
    "Query Prometheus: PromQL (instant and summarized range), series, labels, targets, alerts, rules"
)

DEFAULT_URL = "http://127.0.0.1:9090"
DEFAULT_TIMEOUT_S = 15.0
PROMETHEUS_MAX_POINTS = 11_000
"""Prometheus refuses range queries with more points than this per series."""
TARGET_POINTS = 300
"""Points per series an automatic step aims for: enough for a summary, cheap to fetch."""
MAX_LIST = 1000

# Steps people read easily; the automatic step is the smallest of these that fits.
_NICE_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)
_DURATION_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$")
_DURATION_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0}
_SETTING_HINT = "set prometheus.url (DEVOPS_AGENT_PROMETHEUS__URL) to the server's base URL"
_SCHEME_RE = re.compile(r"^https?://[^/\s]", re.IGNORECASE)
DOCTOR_TIMEOUT_S = 3.0

SLO_MIN_WINDOW = max(r.long_window for r in DEFAULT_RULES)
"""The longest burn-rate rule window (3d): a shorter SLO window would spend its whole budget
inside one rule window, so the rules' thresholds would mean nothing."""
SLO_MAX_WINDOW = timedelta(days=366)
SLO_EXCESS_SLACK = 0.1
"""How far errors may exceed requests over a window (10% plus one event) and still be taken as
"all requests failed": ``increase()`` extrapolates each series on its own, and an error counter
bumped just before its request counter is scraped runs one event ahead."""
LOOKBACK_S = 300
"""Prometheus's default lookback delta: a selector at time t sees samples of (t - 5m, t]."""
MAX_EVENTS = 5  # anomalies listed per series (the latest); anomalies_total counts all


@dataclass(frozen=True)
class PromConfig:
    """What the tools need from settings, read defensively so older settings still work."""

    url: str = DEFAULT_URL
    timeout_s: float = DEFAULT_TIMEOUT_S
    max_points: int = PROMETHEUS_MAX_POINTS

    @classmethod
    def from_settings(cls, settings: Settings | Any) -> PromConfig:
        """Take ``settings.prometheus`` (url, timeout_s, max_points) where present, else defaults."""
        section = getattr(settings, "prometheus", None)
        url = getattr(section, "url", None) or DEFAULT_URL
        timeout = getattr(section, "timeout_s", None) or DEFAULT_TIMEOUT_S
        max_points = getattr(section, "max_points", None) or PROMETHEUS_MAX_POINTS
        return cls(str(url).rstrip("/"), float(timeout), min(int(max_points), PROMETHEUS_MAX_POINTS))


class PromError(Exception):
    """A request failed; carries what the tool result needs. Never leaves this module.

    ``runtime``: the environment failed (Prometheus unreachable, slow or failing), not the
    request (bad PromQL, bad arguments, a wrong URL setting); ``transient`` ones may be retried.
    Both reach the result's metadata, so a CLI can exit 1 for the first kind and 2 for the other.
    """

    def __init__(
        self, message: str, hint: str | None = None, *, transient: bool = False, runtime: bool = False
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.transient = transient
        self.runtime = runtime or transient

    def result(self) -> ToolResult:
        if self.transient:
            return ToolResult.fail(self.message, self.hint, transient=True, runtime=True, source=NAME)
        if self.runtime:
            return ToolResult.fail(self.message, self.hint, runtime=True, source=NAME)
        return ToolResult.fail(self.message, self.hint, source=NAME)


# --- time and duration parsing -----------------------------------------------------------------


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


def _duration_seconds(text: str) -> float | None:
    """Seconds of ``30s``, ``5m``, ``1h``, ``30d`` or a plain number of seconds; None if not one."""
    m = _DURATION_RE.match(text)
    return None if m is None else float(m.group(1)) * _DURATION_UNITS[m.group(2) or "s"]


def parse_duration(value: str | float) -> float:
    """Seconds from a step such as ``30s``, ``5m``, ``1h`` or a plain number of seconds."""
    if isinstance(value, int | float):
        seconds = float(value)
    else:
        parsed = _duration_seconds(value)
        if parsed is None:
            raise PromError(f"cannot understand the step {value!r}", "use e.g. 15s, 1m, 5m or 1h")
        seconds = parsed
    if not math.isfinite(seconds) or seconds <= 0:
        raise PromError(f"step must be positive, got {value!r}", "use e.g. 15s, 1m, 5m or 1h")
    return seconds


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
    seconds = _duration_seconds(window)
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


def _iso(ts: float) -> str:
    text = datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds")
    return text.replace(".000+00:00", "Z").replace("+00:00", "Z")


def _num(value: str) -> float:
    # Prometheus encodes sample values as strings, including "NaN", "+Inf" and "-Inf".
    return float(value)


def _round(value: float) -> float | str:
    if math.isnan(value) or math.isinf(value):
        return str(value)  # JSON has no NaN/Inf; "nan"/"inf" stays readable
    return float(f"{value:.6g}")


# --- summaries ----------------------------------------------------------------------------------


def _each(points: list[int]) -> str:
    """``[300, 300]`` -> "300 points each"; ``[12, 300]`` -> "12-300 points"."""
    lo, hi = min(points), max(points)
    return f"{lo} point{'s' if lo != 1 else ''} each" if lo == hi else f"{lo}-{hi} points"


def _labels(metric: dict[str, str]) -> dict[str, str]:
    return dict(metric)


def summarize_series(metric: dict[str, str], values: list[list[Any]]) -> dict[str, Any]:
    """Per-series statistics and a handful of points (first, min, max, last) instead of raw samples."""
    points = [(float(t), _num(v)) for t, v in values]
    finite = [(t, v) for t, v in points if math.isfinite(v)]
    out: dict[str, Any] = {"labels": _labels(metric), "points": len(points)}
    if len(finite) < len(points):
        out["non_finite_points"] = len(points) - len(finite)
    if not finite:
        out["last"] = _round(points[-1][1]) if points else None
        return out
    vals = [v for _, v in finite]
    lo = min(finite, key=lambda p: p[1])
    hi = max(finite, key=lambda p: p[1])
    out.update(
        min=_round(lo[1]),
        max=_round(hi[1]),
        mean=_round(math.fsum(vals) / len(vals)),
        last=_round(finite[-1][1]),
        first_at=_iso(points[0][0]),
        last_at=_iso(points[-1][0]),
    )
    keep = {points[0], lo, hi, points[-1]}
    out["samples"] = [{"t": _iso(t), "v": _round(v)} for t, v in sorted(keep)]
    return out


def _sort_key(summary: dict[str, Any]) -> float:
    value = summary.get("max")
    return -value if isinstance(value, float) else math.inf


def summarize_matrix(result: list[dict[str, Any]], max_series: int) -> dict[str, Any]:
    """Summaries of a matrix result, highest peaks first, at most ``max_series`` of them."""
    summaries = [summarize_series(s.get("metric", {}), s.get("values", [])) for s in result]
    summaries.sort(key=_sort_key)
    return {
        "series": summaries[:max_series],
        "series_total": len(summaries),
        "series_truncated": len(summaries) > max_series,
        "points_returned": sum(s["points"] for s in summaries),
    }


# --- HTTP ---------------------------------------------------------------------------------------


def _api_error(response: httpx.Response, url: str) -> PromError:
    """Map a non-2xx answer to a :class:`PromError` with a hint."""
    body: dict[str, Any] = {}
    try:
        parsed = response.json()
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    text = str(body.get("error") or response.text.strip()[:300] or response.reason_phrase)
    kind = body.get("errorType")
    code = response.status_code
    if code == 400 and kind == "bad_data":
        hint = "fix the PromQL (or the argument named in the message); prom_metrics lists metric names"
        if "parse error" in text:
            hint = "the PromQL does not parse: fix the syntax at the position given (line:column)"
        return PromError(f"Prometheus rejected the request: {text}", hint)
    if code == 422:
        return PromError(
            f"Prometheus could not execute the query: {text}",
            "make the query cheaper: a narrower selector, a shorter range, a larger step, or aggregate",
        )
    if code == 404:
        return PromError(
            f"{url} has no Prometheus HTTP API at {response.request.url.path} (404)", _SETTING_HINT
        )
    if code in (401, 403):
        return PromError(
            f"Prometheus at {url} refused access ({code}): {text}", "check the URL and credentials"
        )
    if code >= 500:
        return PromError(
            f"Prometheus at {url} failed ({code} {kind or response.reason_phrase}): {text}",
            "a server-side error, often temporary (overload, timeout, restart); retry shortly or "
            "make the query cheaper",
            transient=True,
        )
    return PromError(f"Prometheus at {url} answered {code}: {text}")


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be a Prometheus base URL, or None. Caught before any request is made:
    httpx would call ``127.0.0.1:9090`` an unsupported protocol, which reads like a network error."""
    if _SCHEME_RE.match(url):
        return None
    return f"prometheus.url must start with http:// or https://, got {url!r}"


class PromClient:
    """A thin, synchronous view of the Prometheus HTTP API.

    Each call opens and closes its own ``httpx.Client``: tools may run in parallel threads and
    nothing has to be closed when a toolset is dropped.
    """

    def __init__(self, config: PromConfig, transport: httpx.BaseTransport | None = None) -> None:
        self.config = config
        self._transport = transport
        self._url_problem = url_problem(config.url)

    @contextmanager
    def _client(self) -> Iterator[httpx.Client]:
        with httpx.Client(
            base_url=self.config.url,
            timeout=self.config.timeout_s,
            transport=self._transport,
            headers={"Accept": "application/json"},
        ) as client:
            yield client

    def get(self, path: str, params: Any = None, *, form: bool = False) -> tuple[Any, list[str]]:
        """The ``data`` and ``warnings`` of an API answer. ``form=True`` POSTs the parameters.

        POST is what the Prometheus API accepts for queries too long for a URL.

        Raises:
            PromError: the request failed; message and hint are ready for the model.
        """
        url = self.config.url
        if self._url_problem is not None:
            raise PromError(self._url_problem, _SETTING_HINT)
        try:
            with self._client() as client:
                if form:
                    response = client.post(f"/api/v1/{path}", data=params)
                else:
                    response = client.get(f"/api/v1/{path}", params=params)
        except httpx.ConnectError as exc:
            raise PromError(
                f"cannot connect to Prometheus at {url}: {exc}",
                f"is Prometheus running at {url}? {_SETTING_HINT}",
                runtime=True,
            ) from None
        except httpx.TimeoutException:
            raise PromError(
                f"Prometheus at {url} did not answer within {self.config.timeout_s:g}s",
                "the server may be overloaded or the query too expensive; retry, or narrow the query",
                transient=True,
            ) from None
        except httpx.InvalidURL as exc:
            raise PromError(f"invalid Prometheus URL {url!r}: {exc}", _SETTING_HINT) from None
        except httpx.HTTPError as exc:
            raise PromError(
                f"request to Prometheus at {url} failed: {type(exc).__name__}: {exc}",
                "a network error; retry shortly",
                transient=True,
            ) from None
        if not response.is_success:
            raise _api_error(response, url)
        try:
            body = response.json()
        except ValueError:
            raise PromError(
                f"{url} did not answer with JSON: is it a Prometheus server?", _SETTING_HINT
            ) from None
        if not isinstance(body, dict) or body.get("status") != "success":
            raise PromError(f"unexpected answer from {url}: {str(body)[:200]}", _SETTING_HINT)
        return body.get("data"), [str(w) for w in body.get("warnings") or []]


def _matchers(match: str | list[str] | None) -> list[str]:
    if match is None:
        return []
    return [match] if isinstance(match, str) else [m for m in match if m]


def _capped(items: list[Any], limit: int) -> dict[str, Any]:
    return {"total": len(items), "truncated": len(items) > limit}


def _time_params(start: str | None, end: str | None) -> dict[str, str]:
    params: dict[str, str] = {}
    now = _time.time()
    if start:
        params["start"] = f"{parse_time(start, now):.3f}"
    if end:
        params["end"] = f"{parse_time(end, now):.3f}"
    return params


def build(settings: Settings) -> ToolsetBuilder:
    """The prometheus toolset for the server at ``settings.prometheus.url``."""
    return build_for(PromConfig.from_settings(settings))


def build_for(config: PromConfig, transport: httpx.BaseTransport | None = None) -> ToolsetBuilder:
    """The prometheus toolset for ``config``; ``transport`` replaces the network (tests, proxies)."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)
    prom = PromClient(config, transport)

    def meta(warnings: list[str] | None = None, **extra: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"source": NAME, "url": config.url}
        if warnings:
            out["warnings"] = warnings[:5]
        out.update(extra)
        return out

    def _instant_total(query: str, now: float, warnings_out: list[str], unmatched: set[str]) -> float:
        """The sum of every series of an instant query at ``now`` (0 when none match; the query
        is then added to ``unmatched``)."""
        data, warnings = prom.get("query", {"query": query, "time": f"{now:.3f}"}, form=True)
        warnings_out += warnings
        kind = data.get("resultType")
        if kind == "scalar":
            return _num(data["result"][1])
        if kind != "vector":
            raise PromError(
                f"{query!r} returns a {kind}, not a number",
                "give a counter selector, or an expression such as sum(increase(x_total[$window]))",
            )
        if not data.get("result"):
            unmatched.add(query)
        # sum, not fsum: fsum raises on inf + -inf, and the caller reports non-finite totals
        return sum((_num(s["value"][1]) for s in data.get("result") or []), 0.0)

    def _slo_coverage(
        requests: str, window: timedelta, now: float, warnings_out: list[str]
    ) -> timedelta | None:
        """How much of ``window`` the request data covers; None (and a warning) when it cannot be told."""

        def largest(query: str) -> float:
            data, warnings = prom.get("query", {"query": query, "time": f"{now:.3f}"}, form=True)
            warnings_out.extend(warnings)
            return max(
                (_num(s["value"][1]) for s in data.get("result") or [] if isinstance(s, dict)), default=0.0
            )

        try:
            return timedelta(seconds=covered_seconds(requests, window.total_seconds(), largest))
        except (PromError, KeyError, TypeError, IndexError) as exc:
            reason = exc.message if isinstance(exc, PromError) else "an unexpected answer"
            warnings_out.append(
                f"how much of the window has data could not be measured ({reason}); assumed all"
            )
            return None

    def fetch_range(
        query: str, start: str, end: str | None, step: str | None
    ) -> tuple[dict[str, Any], list[str], dict[str, Any]]:
        """Run a range query: (data, warnings, range facts); the step keeps within max_points."""
        now = _time.time()
        start_ts, end_ts = parse_time(start, now), parse_time(end, now)
        if end_ts <= start_ts:
            raise PromError(
                f"the range is empty: end ({_iso(end_ts)}) is not after start ({_iso(start_ts)})",
                "start is the earlier bound, e.g. start='2h', end='1h'",
            )
        asked = parse_duration(step) if step is not None else None
        step_s = choose_step(end_ts - start_ts, asked, config.max_points)
        params = {"query": query, "start": f"{start_ts:.3f}", "end": f"{end_ts:.3f}", "step": f"{step_s:g}"}
        data, warnings = prom.get("query_range", params, form=True)
        adjusted = asked is not None and step_s != asked
        range_info = {
            "start": _iso(start_ts),
            "end": _iso(end_ts),
            "step_s": step_s,
            "step_adjusted": adjusted,
        }
        if adjusted:  # said, not silently done: a coarser step can hide a short spike
            warnings = [
                *warnings,
                f"step raised from {asked:g}s to {step_s:g}s to stay within {config.max_points} points "
                "per series; narrow the range to keep the finer step",
            ]
        return data, warnings, range_info

    @ts.tool(category="metrics", read_only=True)
    def prom_query(query: str, time: str | None = None, limit: int = 100) -> ToolResult:
        """Evaluate a PromQL expression at one instant and return the current value of each series.

        Use it for "what is the value now" questions (e.g. `up == 0`, `sum by (job) (rate(x[5m]))`).
        For how a value evolved over time use prom_query_range instead.

        Args:
            query: the PromQL expression.
            time: evaluation time: "15m" (ago), an ISO 8601 date-time or unix seconds; default now.
            limit: most series to return (1-1000); `series_truncated` says when more matched.
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            params = {"query": query, "time": f"{parse_time(time):.3f}"}
            data, warnings = prom.get("query", params, form=True)
        except PromError as exc:
            return exc.result()
        kind = data.get("resultType")
        result = data.get("result")
        if kind in ("scalar", "string"):
            t, v = result
            value: Any = _round(_num(v)) if kind == "scalar" else v
            return ToolResult.ok(
                {"result_type": kind, "value": value, "at": _iso(float(t))}, **meta(warnings)
            )
        if not result:
            return ToolResult.empty(
                f"no series match {query!r} at that time; check names with prom_metrics and "
                "prom_label_values, or whether the series stopped (try prom_query_range)",
                **meta(warnings),
            )
        if kind == "matrix":  # a range selector such as x[5m] evaluated at one instant
            out = summarize_matrix(result, limit)
            return ToolResult.ok({"result_type": kind, **out}, **meta(warnings))
        series = [
            {
                "labels": _labels(s.get("metric", {})),
                "value": _round(_num(s["value"][1])),
                "at": _iso(s["value"][0]),
            }
            for s in result[:limit]
        ]
        data_out = {
            "result_type": kind,
            "series": series,
            "series_total": len(result),
            "series_truncated": len(result) > limit,
        }
        return ToolResult.ok(data_out, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_query_range(
        query: str, start: str = "1h", end: str | None = None, step: str | None = None, max_series: int = 20
    ) -> ToolResult:
        """Evaluate PromQL over a time range and summarize each series (min, max, mean, last, extremes).

        Raw samples are not returned: each series comes back as statistics plus its first, last,
        lowest and highest points, ordered by peak value (highest first). Aggregate (sum by, topk)
        when many series match.

        Args:
            query: the PromQL expression, e.g. "rate(http_requests_total{code=~'5..'}[5m])".
            start: range start: "1h" (ago), "30m", an ISO 8601 date-time or unix seconds.
            end: range end, same forms; default now.
            step: resolution such as "15s", "1m" or "5m"; default: chosen for about 300 points per series.
                It is raised when needed to stay within Prometheus's 11,000 points per series.
            max_series: most series to summarize (1-200); `series_truncated` says when more matched.
        """
        max_series = max(1, min(max_series, 200))
        try:
            data, warnings, range_info = fetch_range(query, start, end, step)
        except PromError as exc:
            return exc.result()
        result = data.get("result") or []
        if not result:
            return ToolResult.empty(
                f"no series match {query!r} between {range_info['start']} and {range_info['end']}; "
                "check names with prom_metrics / prom_label_values or widen the range",
                **meta(warnings, **range_info),
            )
        out = summarize_matrix(result, max_series)
        return ToolResult.ok(
            {"query": query, **range_info, **out}, **meta(warnings, points_returned=out["points_returned"])
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_anomalies(
        query: str, start: str = "6h", end: str | None = None, step: str | None = None, max_series: int = 10
    ) -> ToolResult:
        """Find anomalies in PromQL series: spikes, level shifts, trends and seasonal deviations.

        Runs a causal anomaly detector over every series of the range query and explains each
        event in words ("p99 … 4.2x its recent median since 14:05"). Use it to tell when a
        metric went wrong and how; series without anomalies are only counted.

        Args:
            query: the PromQL expression, e.g. "histogram_quantile(0.99, sum by (le) (rate(x_bucket[5m])))".
            start: range start: "6h" (ago), an ISO 8601 date-time or unix seconds; give the detector
                history before the suspected start.
            end: range end; default now.
            step: resolution such as "30s" or "1m"; default: about 300 points per series.
            max_series: most series to analyze (1-50), highest peak first.

        Not an anomaly-free result: no series matching (no_data, series_total 0), or series with
        fewer points than the detector needs (`too_short`; no_data when every analyzed one is).
        """
        max_series = max(1, min(max_series, 50))
        try:
            data, warnings, range_info = fetch_range(query, start, end, step)
        except PromError as exc:
            return exc.result()
        result = sorted(
            data.get("result") or [],
            key=lambda r: -max((x for v in r["values"] if math.isfinite(x := _num(v[1]))), default=0),
        )
        between = f"between {range_info['start']} and {range_info['end']}"
        step_s = range_info["step_s"]
        step_text = format_window(timedelta(seconds=step_s)) if step_s == int(step_s) else f"{step_s:g}s"
        facts: dict[str, Any] = {
            "query": query,
            "start": range_info["start"],
            "end": range_info["end"],
            "step_s": range_info["step_s"],
            "step_adjusted": range_info["step_adjusted"],
            "series_total": len(result),
            "series_analyzed": min(len(result), max_series),
        }
        if not result:
            check = "check the metric name and labels, and that its targets were scraped in that range"
            if step_s > LOOKBACK_S:
                check = (
                    f"at a step of {step_text} a selector sees only the {LOOKBACK_S // 60}m before each "
                    f"step, so a shorter range or a finer step may find data; else {check}"
                )
            return ToolResult.empty(
                f"no series match {query!r} {between}: {check}", **meta(warnings, **facts)
            )
        anomalous: list[dict[str, Any]] = []
        too_short: list[dict[str, Any]] = []
        points: list[int] = []  # finite points of each analyzed series
        non_finite = 0  # NaN / ±Inf samples left out of the analyzed series
        for series in result[:max_series]:
            labels = _labels(series.get("metric", {}))
            name = labels.pop("__name__", None) or query
            label_text = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
            title = f"{name}{{{label_text}}}" if label_text else name
            # NaN (0/0) and ±Inf (x/0) samples are gaps, not values: the detector's baselines
            # would turn them into spikes with a NaN score
            finite = [(float(t), x) for t, v in series["values"] if math.isfinite(x := _num(v))]
            points.append(len(finite))
            non_finite += len(series["values"]) - len(finite)
            if len(finite) < ANOMALY_MIN_POINTS:
                too_short.append({"series": title, "points": len(finite)})
                continue
            times = [datetime.fromtimestamp(t, UTC) for t, _x in finite]
            values = [x for _t, x in finite]
            found = detect(times, values, name=title).anomalies
            if found:
                anomalous.append(
                    {
                        "series": title,
                        "labels": labels,
                        "points": len(values),
                        **(
                            {"non_finite_points": gaps}
                            if (gaps := len(series["values"]) - len(values))
                            else {}
                        ),
                        "anomalies": [
                            {
                                "start": a.start.isoformat(),
                                "end": a.end.isoformat(),
                                "kind": a.kind,
                                "score": round(a.score, 3),
                                "explanation": a.explanation,
                            }
                            for a in found[-MAX_EVENTS:]
                        ],
                        "anomalies_total": len(found),
                    }
                )
        facts.update(points_min=min(points), points_max=max(points), series_too_short=len(too_short))
        notes = []
        if len(result) > max_series:
            notes.append(
                f"only the {max_series} series with the highest peaks of {len(result)} were analyzed"
            )
        if too_short:
            notes.append(
                f"{len(too_short)} series had too few points to judge (fewest {min(points)}, "
                f"the detector needs {ANOMALY_MIN_POINTS})"
            )
        if any(s["anomalies_total"] > MAX_EVENTS for s in anomalous):
            notes.append(
                f"only the last {MAX_EVENTS} anomalies of a series are listed (anomalies_total has all)"
            )
        if notes:
            facts["note"] = "; ".join(notes)
        if too_short:
            facts["too_short"] = too_short
        if len(too_short) == facts["series_analyzed"]:
            # samples that came back but are NaN or Inf (x/0) are not cured by a finer step
            why, advice = "", "use a finer step, or a longer range if the server keeps that much history"
            if non_finite:
                why = f" ({non_finite} NaN or Inf sample(s) left out: a division by zero in the query?)"
                advice = "guard the division (e.g. x / (y > 0)) or query numerator and denominator apart"
            return ToolResult.empty(
                f"too few points to judge {query!r} {between}: {_each(points)} at a step of {step_text}"
                f"{why}, the detector needs {ANOMALY_MIN_POINTS}; {advice}",
                **meta(warnings, **facts),
            )
        if not anomalous:
            judged = [n for n in points if n >= ANOMALY_MIN_POINTS]
            return ToolResult.empty(
                f"no anomalies in {len(judged)} series of {query!r} {between} ({_each(judged)})",
                **meta(warnings, **facts),
            )
        return ToolResult.ok({**facts, "anomalous": anomalous}, **meta(warnings))

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
                counts[span] = {"requests": _round(n), "errors": _round(e)}
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

    @ts.tool(category="metrics", read_only=True)
    def prom_series(
        match: str | list[str], start: str = "1h", end: str | None = None, limit: int = 100
    ) -> ToolResult:
        """List the label sets of the series that match selectors in a time range.

        Use it to see which jobs, instances or pods report a metric before querying it.

        Args:
            match: one or more series selectors, e.g. 'up' or '{job="api", __name__=~"http_.*"}'.
            start: range start: "1h" (ago), an ISO 8601 date-time or unix seconds.
            end: range end, same forms; default now.
            limit: most series to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        matchers = _matchers(match)
        if not matchers:
            return ToolResult.fail("match is empty", hint="give a selector such as 'up' or '{job=\"api\"}'")
        try:
            params: dict[str, Any] = {"match[]": matchers, **_time_params(start, end)}
            data, warnings = prom.get("series", params, form=True)
        except PromError as exc:
            return exc.result()
        if not data:
            return ToolResult.empty(f"no series match {matchers} in that range", **meta(warnings))
        return ToolResult.ok({"series": data[:limit], **_capped(data, limit)}, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_labels(
        match: str | list[str] | None = None, start: str | None = None, end: str | None = None
    ) -> ToolResult:
        """List label names (job, instance, pod, ...), optionally only those of matching series.

        Args:
            match: optional series selectors limiting the names to those series, e.g. 'up'.
            start: optional range start: "1h" (ago), an ISO 8601 date-time or unix seconds.
            end: optional range end, same forms.
        """
        try:
            params: dict[str, Any] = {"match[]": _matchers(match), **_time_params(start, end)}
            data, warnings = prom.get("labels", params, form=True)
        except PromError as exc:
            return exc.result()
        if not data:
            return ToolResult.empty("no label names found", **meta(warnings))
        return ToolResult.ok({"labels": data[:MAX_LIST], **_capped(data, MAX_LIST)}, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_label_values(
        label: str,
        match: str | list[str] | None = None,
        start: str | None = None,
        end: str | None = None,
        limit: int = 200,
    ) -> ToolResult:
        """List the values of one label, e.g. every `job` or every `instance`, optionally for matching series.

        Args:
            label: the label name, e.g. "job", "instance", "namespace" or "__name__".
            match: optional series selectors, e.g. 'up{job="node"}'.
            start: optional range start: "1h" (ago), an ISO 8601 date-time or unix seconds.
            end: optional range end, same forms.
            limit: most values to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", label):
            return ToolResult.fail(
                f"{label!r} is not a valid label name", hint="label names look like job, instance or __name__"
            )
        try:
            params: dict[str, Any] = {"match[]": _matchers(match), **_time_params(start, end)}
            data, warnings = prom.get(f"label/{label}/values", params)
        except PromError as exc:
            return exc.result()
        if not data:
            return ToolResult.empty(
                f"label {label!r} has no values (for these series); prom_labels lists names"
            )
        return ToolResult.ok(
            {"label": label, "values": data[:limit], **_capped(data, limit)}, **meta(warnings)
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_metrics(match: str | None = None, limit: int = 200, with_help: bool = True) -> ToolResult:
        """List metric names, optionally filtered, with their type and help text where known.

        Use it to find the right metric before writing PromQL.

        Args:
            match: optional regular expression searched in metric names, e.g. "node_cpu" or "^http_.*_total$".
            limit: most metrics to return (1-1000).
            with_help: also return each metric's type, unit and help text (from the metadata API).
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            pattern = re.compile(match) if match else None
        except re.error as exc:
            return ToolResult.fail(
                f"invalid regular expression {match!r}: {exc}", hint="e.g. 'node_cpu' or '^http_'"
            )
        try:
            all_names, warnings = prom.get("label/__name__/values")
            names: list[str] = [n for n in all_names or [] if pattern is None or pattern.search(n)]
            if not names:
                message = f"no metric names match {match!r}" if match else "the server has no metrics yet"
                return ToolResult.empty(message, **meta(warnings))
            metadata: dict[str, list[dict[str, str]]] = prom.get("metadata")[0] if with_help else {}
        except PromError as exc:
            return exc.result()
        metrics: list[dict[str, Any]] = []
        for metric_name in names[:limit]:
            entry: dict[str, Any] = {"name": metric_name}
            info = (metadata or {}).get(metric_name)
            if info:
                entry.update({k: v for k, v in info[0].items() if v})
            metrics.append(entry)
        return ToolResult.ok({"metrics": metrics, **_capped(names, limit)}, **meta(warnings))

    @ts.tool(category="metrics", read_only=True)
    def prom_targets(limit: int = 100) -> ToolResult:
        """List the scrape targets with their health (up/down), last scrape and last error; down first.

        Use it when metrics are missing or `up == 0`: the last error says why a scrape fails.

        Args:
            limit: most targets to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            data, warnings = prom.get("targets", {"state": "active"})
        except PromError as exc:
            return exc.result()
        active = data.get("activeTargets") or []
        targets = [
            {
                "job": t.get("labels", {}).get("job") or t.get("scrapePool"),
                "instance": t.get("labels", {}).get("instance"),
                "health": t.get("health"),
                "last_error": t.get("lastError") or None,
                "last_scrape": t.get("lastScrape"),
                "last_scrape_duration_s": t.get("lastScrapeDuration"),
                "scrape_url": t.get("scrapeUrl"),
                "labels": t.get("labels", {}),
            }
            for t in active
        ]
        order = {"down": 0, "unknown": 1, "up": 2}
        targets.sort(key=lambda t: (order.get(str(t["health"]), 1), str(t["job"]), str(t["instance"])))
        if not targets:
            return ToolResult.empty(
                "Prometheus has no active scrape targets; check its scrape_configs", **meta(warnings)
            )
        counts = {h: sum(1 for t in targets if t["health"] == h) for h in ("up", "down", "unknown")}
        return ToolResult.ok(
            {"targets": targets[:limit], "counts": counts, **_capped(targets, limit)}, **meta(warnings)
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_alerts(limit: int = 100) -> ToolResult:
        """List the alerts firing or pending in Prometheus, with labels, annotations and since when.

        Args:
            limit: most alerts to return (1-1000), firing first.
        """
        limit = max(1, min(limit, MAX_LIST))
        try:
            data, warnings = prom.get("alerts")
        except PromError as exc:
            return exc.result()
        alerts = [
            {
                "name": a.get("labels", {}).get("alertname"),
                "state": a.get("state"),
                "severity": a.get("labels", {}).get("severity"),
                "labels": a.get("labels", {}),
                "annotations": a.get("annotations", {}),
                "active_at": a.get("activeAt"),
                "value": _round(_num(a["value"])) if a.get("value") else None,
            }
            for a in data.get("alerts") or []
        ]
        alerts.sort(key=lambda a: (a["state"] != "firing", str(a["active_at"])))
        if not alerts:
            return ToolResult.empty("no alerts are firing or pending", **meta(warnings))
        counts = {s: sum(1 for a in alerts if a["state"] == s) for s in ("firing", "pending")}
        return ToolResult.ok(
            {"alerts": alerts[:limit], "counts": counts, **_capped(alerts, limit)}, **meta(warnings)
        )

    @ts.tool(category="metrics", read_only=True)
    def prom_rules(kind: str | None = None, limit: int = 200) -> ToolResult:
        """List alerting and recording rules with their expression, health, last error and alert state.

        Use it to read what an alert actually checks (its PromQL and `for` duration).

        Args:
            kind: "alert" or "record" to list only that kind; default both.
            limit: most rules to return (1-1000).
        """
        limit = max(1, min(limit, MAX_LIST))
        if kind not in (None, "alert", "record"):
            return ToolResult.fail(f"kind must be 'alert' or 'record', got {kind!r}", hint="or leave it out")
        try:
            data, warnings = prom.get("rules", {"type": kind} if kind else None)
        except PromError as exc:
            return exc.result()
        rules: list[dict[str, Any]] = []
        for group in data.get("groups") or []:
            for r in group.get("rules") or []:
                rule: dict[str, Any] = {
                    "group": group.get("name"),
                    "file": group.get("file"),
                    "name": r.get("name"),
                    "type": "alert" if r.get("type") == "alerting" else "record",
                    "query": r.get("query"),
                    "health": r.get("health"),
                    "last_error": r.get("lastError") or None,
                    "labels": r.get("labels") or {},
                }
                if rule["type"] == "alert":
                    rule.update(
                        state=r.get("state"),
                        for_s=r.get("duration"),
                        active_alerts=len(r.get("alerts") or []),
                        annotations=r.get("annotations") or {},
                    )
                rules.append(rule)
        if not rules:
            return ToolResult.empty(
                "Prometheus has no rules loaded" + (f" of kind {kind}" if kind else ""), **meta(warnings)
            )
        return ToolResult.ok({"rules": rules[:limit], **_capped(rules, limit)}, **meta(warnings))

    return ts


def check(settings: Settings | Any, timeout_s: float = DOCTOR_TIMEOUT_S) -> tuple[bool, str]:
    """Health check for ``devops-agent doctor``: does ``prometheus.url`` answer its build-info API?"""
    config = PromConfig.from_settings(settings)
    problem = url_problem(config.url)
    if problem is not None:
        return False, problem
    client = PromClient(PromConfig(config.url, min(config.timeout_s, timeout_s), config.max_points))
    try:
        data, _warnings = client.get("status/buildinfo")
    except PromError as exc:
        return False, f"configured, not reachable: {exc.message}"
    version = data.get("version") if isinstance(data, dict) else None
    return True, f"{config.url} (Prometheus {version or 'version unknown'})"


def configured(settings: Settings) -> bool:
    """Whether doctor checks the server: a ``prometheus.url`` other than the default, toolset on."""
    return settings.prometheus.url != PrometheusSettings().url and NAME not in settings.tools.disabled


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group: the toolset and its health check, which
    only warns when it fails (the toolset is on by default; the agent works without it)."""
    registry.add_toolset(NAME, build, DESCRIPTION)
    registry.add_check(NAME, check, configured=configured, required=False)
