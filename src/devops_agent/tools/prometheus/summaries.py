"""Range-query results condensed for the model: per-series statistics and a few points, never
thousands of raw samples. Pure: this module must not make requests.
"""

from __future__ import annotations

import math
from typing import Any

from devops_agent.tools.prometheus.params import iso, num, rounded


def points_text(points: list[int]) -> str:
    """``[300, 300]`` -> "300 points each"; ``[12, 300]`` -> "12-300 points"."""
    lo, hi = min(points), max(points)
    return f"{lo} point{'s' if lo != 1 else ''} each" if lo == hi else f"{lo}-{hi} points"


def labels_of(metric: dict[str, str]) -> dict[str, str]:
    """A series' labels, copied (callers may pop ``__name__``)."""
    return dict(metric)


def summarize_series(metric: dict[str, str], values: list[list[Any]]) -> dict[str, Any]:
    """Per-series statistics and a handful of points (first, min, max, last) instead of raw samples."""
    points = [(float(t), num(v)) for t, v in values]
    finite = [(t, v) for t, v in points if math.isfinite(v)]
    out: dict[str, Any] = {"labels": labels_of(metric), "points": len(points)}
    if len(finite) < len(points):
        out["non_finite_points"] = len(points) - len(finite)
    if not finite:
        out["last"] = rounded(points[-1][1]) if points else None
        return out
    vals = [v for _, v in finite]
    lo = min(finite, key=lambda p: p[1])
    hi = max(finite, key=lambda p: p[1])
    out.update(
        min=rounded(lo[1]),
        max=rounded(hi[1]),
        mean=rounded(math.fsum(vals) / len(vals)),
        last=rounded(finite[-1][1]),
        first_at=iso(points[0][0]),
        last_at=iso(points[-1][0]),
    )
    keep = {points[0], lo, hi, points[-1]}
    out["samples"] = [{"t": iso(t), "v": rounded(v)} for t, v in sorted(keep)]
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
