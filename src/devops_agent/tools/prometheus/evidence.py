"""A range query's series as :class:`~devops_agent.evidence.Evidence`: the points to chart and the
anomaly windows to shade, for the user's faces (a model reads the summaries, never these points).

Pure: this module must not make requests.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from devops_agent.analysis.anomaly import Anomaly
from devops_agent.evidence import MAX_SERIES, AnomalyWindow, Evidence, Series, entry, make_series
from devops_agent.tools.prometheus.params import num


def series_title(metric: Mapping[str, str], query: str) -> tuple[str, dict[str, str]]:
    """The series' name (``__name__``, else the query) and its other labels."""
    labels = dict(metric)
    return labels.pop("__name__", None) or query, labels


def _peak(series: Mapping[str, Any]) -> float:
    return max((x for _t, v in series.get("values", []) if math.isfinite(x := num(v))), default=-math.inf)


def range_evidence(
    result: Sequence[Mapping[str, Any]],
    query: str,
    anomalies: Mapping[int, Sequence[Anomaly]] | None = None,
) -> Evidence:
    """Up to :data:`~devops_agent.evidence.MAX_SERIES` series of a matrix ``result``: those with
    anomalies first (``anomalies`` by index in ``result``), then by peak; each anomaly window's
    start is also a timeline entry (``anomaly``)."""
    found = anomalies or {}
    order = sorted(range(len(result)), key=lambda i: (not found.get(i), -_peak(result[i])))
    series: list[Series] = []
    timeline = []
    for i in order[:MAX_SERIES]:
        name, labels = series_title(result[i].get("metric", {}), query)
        points = [(float(t), num(v)) for t, v in result[i].get("values", [])]
        windows = [
            AnomalyWindow(
                start=a.start, end=a.end, score=round(a.score, 3), kind=a.kind, explanation=a.explanation
            )
            for a in found.get(i, ())
        ]
        made = make_series(name, labels, points, windows)
        series.append(made)
        label_text = ",".join(f"{k}={v}" for k, v in sorted(made.labels.items()))
        title = f"{made.name}{{{label_text}}}" if label_text else made.name
        # the detector's explanation names the series already
        timeline += [entry(w.start, "anomaly", w.explanation or f"{title}: {w.kind}") for w in made.anomalies]
    return Evidence(series=series, timeline=timeline)
