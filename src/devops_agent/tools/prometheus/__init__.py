"""The ``prometheus`` toolset: PromQL queries, series, labels, targets, alerts and rules over the HTTP API.

Every tool is a read-only GET/POST against ``/api/v1/...`` of the configured server
(``settings.prometheus.url``; ``http://127.0.0.1:9090`` when that setting does not exist yet). Range
queries are summarized here before they reach the model: per series min/max/mean/last and a few
points (first, last, extremes), never thousands of raw samples; the step is chosen so a query
stays under Prometheus's 11,000 points per series. Failures become :class:`ToolResult` errors with
a hint: a URL without ``http(s)://`` (before any request), connection refused (wrong URL or
server down), a PromQL parse error (the parser's text), and 5xx or timeouts, which carry
``transient=True`` so a retry policy may try again.

The modules: :mod:`.client` (settings, HTTP client, errors), :mod:`.params` (times, durations,
steps), :mod:`.summaries` (range results condensed), :mod:`.server` (what the tools share),
:mod:`.queries`, :mod:`.anomalies`, :mod:`.slo` (with :mod:`.coverage`) and :mod:`.catalog` (the
tools), :mod:`.toolset` (assembly, health check, entry point); this package re-exports their
public names.

This package must not call any endpoint that changes the server (admin APIs, lifecycle, remote
write) and must not return unbounded raw data: everything it returns is capped or summarized.
"""

from devops_agent.analysis.anomaly import ANOMALY_MIN_POINTS
from devops_agent.tools.prometheus.anomalies import LOOKBACK_S, MAX_EVENTS
from devops_agent.tools.prometheus.client import (
    DEFAULT_TIMEOUT_S,
    DEFAULT_URL,
    NAME,
    PROMETHEUS_MAX_POINTS,
    PromClient,
    PromConfig,
    PromError,
    url_problem,
)
from devops_agent.tools.prometheus.params import TARGET_POINTS, choose_step, parse_duration, parse_time
from devops_agent.tools.prometheus.queries import MAX_LIST
from devops_agent.tools.prometheus.slo import SLO_EXCESS_SLACK, SLO_MAX_WINDOW, SLO_MIN_WINDOW, check_slo_args
from devops_agent.tools.prometheus.summaries import summarize_matrix, summarize_series
from devops_agent.tools.prometheus.toolset import (
    DESCRIPTION,
    DOCTOR_TIMEOUT_S,
    build,
    build_for,
    check,
    configured,
    register,
)

__all__ = [
    "ANOMALY_MIN_POINTS",
    "DEFAULT_TIMEOUT_S",
    "DEFAULT_URL",
    "DESCRIPTION",
    "DOCTOR_TIMEOUT_S",
    "LOOKBACK_S",
    "MAX_EVENTS",
    "MAX_LIST",
    "NAME",
    "PROMETHEUS_MAX_POINTS",
    "SLO_EXCESS_SLACK",
    "SLO_MAX_WINDOW",
    "SLO_MIN_WINDOW",
    "TARGET_POINTS",
    "PromClient",
    "PromConfig",
    "PromError",
    "build",
    "build_for",
    "check",
    "check_slo_args",
    "choose_step",
    "configured",
    "parse_duration",
    "parse_time",
    "register",
    "summarize_matrix",
    "summarize_series",
    "url_problem",
]
