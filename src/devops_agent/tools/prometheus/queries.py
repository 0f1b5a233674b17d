"""PromQL at one instant (``prom_query``) and over a range, summarized (``prom_query_range``)."""

from __future__ import annotations

from typing import Any

from devops_agent.results import ToolResult
from devops_agent.tools.base import ToolsetBuilder
from devops_agent.tools.prometheus.client import PromError
from devops_agent.tools.prometheus.evidence import range_evidence
from devops_agent.tools.prometheus.params import iso, num, parse_time, rounded
from devops_agent.tools.prometheus.server import Server
from devops_agent.tools.prometheus.summaries import labels_of, summarize_matrix

MAX_LIST = 1000


def add_query_tools(ts: ToolsetBuilder, server: Server) -> None:
    """Declare ``prom_query`` and ``prom_query_range`` on ``ts``."""
    prom, meta, fetch_range = server.prom, server.meta, server.fetch_range

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
            value: Any = rounded(num(v)) if kind == "scalar" else v
            return ToolResult.ok({"result_type": kind, "value": value, "at": iso(float(t))}, **meta(warnings))
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
                "labels": labels_of(s.get("metric", {})),
                "value": rounded(num(s["value"][1])),
                "at": iso(s["value"][0]),
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
        ).with_evidence(range_evidence(result, query))
