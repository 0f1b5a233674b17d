"""``prom_anomalies``: the anomaly detector of :mod:`devops_agent.analysis.anomaly` over every series
of a range query, each event explained in words."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from devops_agent.analysis.anomaly import ANOMALY_MIN_POINTS, Anomaly, detect
from devops_agent.analysis.slo import format_window
from devops_agent.results import ToolResult
from devops_agent.tools.base import ToolsetBuilder
from devops_agent.tools.prometheus.client import PromError
from devops_agent.tools.prometheus.evidence import range_evidence
from devops_agent.tools.prometheus.params import num
from devops_agent.tools.prometheus.server import Server
from devops_agent.tools.prometheus.summaries import labels_of, points_text

LOOKBACK_S = 300
"""Prometheus's default lookback delta: a selector at time t sees samples of (t - 5m, t]."""
MAX_EVENTS = 5  # anomalies listed per series (the latest); anomalies_total counts all


def add_anomaly_tools(ts: ToolsetBuilder, server: Server) -> None:
    """Declare ``prom_anomalies`` on ``ts``."""
    meta, fetch_range = server.meta, server.fetch_range

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
            key=lambda r: -max((x for v in r["values"] if math.isfinite(x := num(v[1]))), default=0),
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
        windows: dict[int, list[Anomaly]] = {}  # every anomaly by series, for the chart
        too_short: list[dict[str, Any]] = []
        points: list[int] = []  # finite points of each analyzed series
        non_finite = 0  # NaN / ±Inf samples left out of the analyzed series
        for index, series in enumerate(result[:max_series]):
            labels = labels_of(series.get("metric", {}))
            name = labels.pop("__name__", None) or query
            label_text = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
            title = f"{name}{{{label_text}}}" if label_text else name
            # NaN (0/0) and ±Inf (x/0) samples are gaps, not values: the detector's baselines
            # would turn them into spikes with a NaN score
            finite = [(float(t), x) for t, v in series["values"] if math.isfinite(x := num(v))]
            points.append(len(finite))
            non_finite += len(series["values"]) - len(finite)
            if len(finite) < ANOMALY_MIN_POINTS:
                too_short.append({"series": title, "points": len(finite)})
                continue
            times = [datetime.fromtimestamp(t, UTC) for t, _x in finite]
            values = [x for _t, x in finite]
            found = detect(times, values, name=title).anomalies
            if found:
                windows[index] = found
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
                f"too few points to judge {query!r} {between}: {points_text(points)} at a step of {step_text}"
                f"{why}, the detector needs {ANOMALY_MIN_POINTS}; {advice}",
                **meta(warnings, **facts),
            )
        # the analyzed series as the chart draws them (the model reads the facts, not the points)
        evidence = range_evidence(result[:max_series], query, windows)
        if not anomalous:
            judged = [n for n in points if n >= ANOMALY_MIN_POINTS]
            return ToolResult.empty(
                f"no anomalies in {len(judged)} series of {query!r} {between} ({points_text(judged)})",
                **meta(warnings, **facts),
            ).with_evidence(evidence)
        return ToolResult.ok({**facts, "anomalous": anomalous}, **meta(warnings)).with_evidence(evidence)
