"""Structured evidence for the user's faces: a metric series, a log template table, timeline entries.

A tool that reads a series or mines log templates attaches an :class:`Evidence` to its result
(:meth:`devops_agent.results.ToolResult.with_evidence`); it is never sent to a model (the model
reads the tool's summarized ``data``), it is masked by the privacy wrapper like every other
output, and it travels to the web page and the TUI on the ``tool_result`` event. A run's report
carries the incident timeline built from every call's entries (:func:`build_timeline`). The faces
only draw what is here; everything is computed server-side.

Everything is bounded so an event stays small: a series is downsampled to :data:`MAX_POINTS`
(keeping each bucket's lowest and highest point, so a spike survives), a result keeps at most
:data:`MAX_SERIES` series and :data:`MAX_TEMPLATES` templates, a timeline :data:`MAX_TIMELINE`
entries, and free text is cut to :data:`MAX_TEXT` characters.

Foundation: this module holds data and pure functions only. It must not import anything of this
package (the result, event and report types import it).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MAX_POINTS = 500
"""Points per series after downsampling."""
MAX_SERIES = 5
"""Series per result (the caller orders them, most interesting first)."""
MAX_ANOMALIES = 20
"""Anomaly windows per series (the latest)."""
MAX_TEMPLATES = 50
"""Rows of a template table (by count)."""
MAX_TIMELINE = 100
"""Entries of a timeline; tool calls go first when there are more."""
MAX_TEXT = 300
"""Characters of one template, sample, label or explanation."""

TimelineKind = Literal["alert_start", "anomaly", "error_onset", "deploy", "commit", "finding", "tool_call"]
"""What a timeline entry marks; ``anomaly`` is a metric anomaly window's start."""

Text = Callable[[str], str]
"""A function applied to every free-text field (the privacy wrapper's masking)."""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


class AnomalyWindow(BaseModel):
    """Where a series went wrong: ``start`` to ``end`` with the detector's ``score``."""

    model_config = ConfigDict(frozen=True)

    start: datetime
    end: datetime
    score: float
    kind: str = ""
    explanation: str = ""


class Series(BaseModel):
    """One metric series: ``points`` are ``[unix seconds, value]`` pairs, oldest first."""

    model_config = ConfigDict(frozen=True)

    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    points: list[tuple[float, float]] = Field(default_factory=list)
    points_total: int = 0
    """Finite points before downsampling (``len(points)`` when none were dropped)."""
    anomalies: list[AnomalyWindow] = Field(default_factory=list)


class TemplateRow(BaseModel):
    """One log template: its text with variable parts as ``<*>``, how often, when, an example."""

    model_config = ConfigDict(frozen=True)

    template: str
    count: int
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    sample: str = ""


class TemplateTable(BaseModel):
    """Log templates by count (at most :data:`MAX_TEMPLATES`); ``total`` counts them all."""

    model_config = ConfigDict(frozen=True)

    rows: list[TemplateRow] = Field(default_factory=list)
    total: int = 0
    lines: int = 0
    errors_only: bool = False
    """True when the lines were errors only (``logs_errors``), not every line."""


class TimelineEntry(BaseModel):
    """A moment of the incident: what happened at ``at``, and the tool call that showed it."""

    model_config = ConfigDict(frozen=True)

    at: datetime
    kind: TimelineKind
    label: str
    tool_call_id: str | None = None


class Evidence(BaseModel):
    """What one tool call showed, for drawing: series, a template table, timeline entries."""

    model_config = ConfigDict(frozen=True)

    series: list[Series] = Field(default_factory=list)
    templates: TemplateTable | None = None
    timeline: list[TimelineEntry] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing to draw."""
        return not self.series and self.templates is None and not self.timeline

    def map_text(self, fn: Text) -> Evidence:
        """This evidence with ``fn`` applied to every free-text field (names, label values,
        templates, samples, labels, explanations): numbers and times are not text to mask."""
        series = [
            s.model_copy(
                update={
                    "name": fn(s.name),
                    "labels": {k: fn(v) for k, v in s.labels.items()},
                    "anomalies": [
                        a.model_copy(update={"explanation": fn(a.explanation)}) for a in s.anomalies
                    ],
                }
            )
            for s in self.series
        ]
        templates = self.templates
        if templates is not None:
            rows = [
                r.model_copy(update={"template": fn(r.template), "sample": fn(r.sample)})
                for r in templates.rows
            ]
            templates = templates.model_copy(update={"rows": rows})
        timeline = [e.model_copy(update={"label": fn(e.label)}) for e in self.timeline]
        return Evidence(series=series, templates=templates, timeline=timeline)

    def for_call(self, tool_call_id: str) -> Evidence:
        """This evidence with its timeline entries pointing at ``tool_call_id``."""
        timeline = [e.model_copy(update={"tool_call_id": tool_call_id}) for e in self.timeline]
        return self.model_copy(update={"timeline": timeline})


def downsample(points: Sequence[tuple[float, float]], limit: int = MAX_POINTS) -> list[tuple[float, float]]:
    """At most ``limit`` points of ``points`` (time order): in ``limit // 2`` equal buckets of
    points, each bucket's lowest and highest point in time order, so spikes and dips survive
    where taking every n-th point would step over them. Non-finite values are dropped."""
    return _buckets(_finite(points), limit)


def _finite(points: Sequence[tuple[float, float]]) -> list[tuple[float, float]]:
    return [(t, v) for t, v in points if math.isfinite(v) and math.isfinite(t)]


def _buckets(finite: list[tuple[float, float]], limit: int) -> list[tuple[float, float]]:
    if len(finite) <= limit:
        return finite
    buckets = max(1, limit // 2)
    size = len(finite) / buckets
    out: list[tuple[float, float]] = []
    for b in range(buckets):
        chunk = finite[int(b * size) : int((b + 1) * size)]
        if not chunk:
            continue
        lo = min(range(len(chunk)), key=lambda i: chunk[i][1])
        hi = max(range(len(chunk)), key=lambda i: chunk[i][1])
        out += [chunk[i] for i in sorted({lo, hi})]
    return out


def make_series(
    name: str,
    labels: dict[str, str],
    points: Sequence[tuple[float, float]],
    anomalies: Iterable[AnomalyWindow] = (),
) -> Series:
    """A bounded :class:`Series`: points downsampled, the latest :data:`MAX_ANOMALIES` windows."""
    finite = _finite(points)
    # milliseconds and 6 significant digits are more than a chart can show, and halve the JSON
    drawn = [(round(t, 3), float(f"{v:.6g}")) for t, v in _buckets(finite, MAX_POINTS)]
    return Series(
        name=_cut(name),
        labels={k: _cut(v) for k, v in labels.items()},
        points=drawn,
        points_total=len(finite),
        anomalies=list(anomalies)[-MAX_ANOMALIES:],
    )


def template_table(
    rows: Iterable[TemplateRow], *, total: int, lines: int, errors_only: bool = False
) -> TemplateTable:
    """A bounded :class:`TemplateTable`: the :data:`MAX_TEMPLATES` most frequent rows, texts cut."""
    kept = sorted(rows, key=lambda r: -r.count)[:MAX_TEMPLATES]
    cut = [r.model_copy(update={"template": _cut(r.template), "sample": _cut(r.sample)}) for r in kept]
    return TemplateTable(rows=cut, total=total, lines=lines, errors_only=errors_only)


def parse_time(value: object) -> datetime | None:
    """An ISO 8601 text (``Z`` allowed), unix seconds or a datetime as an aware datetime (UTC when
    it names no offset); ``None`` otherwise."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return datetime.fromtimestamp(float(value), UTC)
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def entry(at: datetime, kind: TimelineKind, label: str, tool_call_id: str | None = None) -> TimelineEntry:
    """A timeline entry with its label cut to :data:`MAX_TEXT` characters."""
    return TimelineEntry(at=at, kind=kind, label=_cut(" ".join(label.split())), tool_call_id=tool_call_id)


def build_timeline(entries: Iterable[TimelineEntry], limit: int = MAX_TIMELINE) -> list[TimelineEntry]:
    """``entries`` in time order, duplicates (same time, kind and label) once; over ``limit``,
    tool-call entries are dropped first (the incident's own moments matter more), then the
    earliest, so the latest ``limit`` remain."""
    unique = list({(e.at, e.kind, e.label): e for e in entries}.values())
    unique.sort(key=lambda e: (e.at, e.kind == "tool_call"))
    if len(unique) <= limit:
        return unique
    moments = [e for e in unique if e.kind != "tool_call"]
    if len(moments) >= limit:
        return moments[-limit:]
    calls = [e for e in unique if e.kind == "tool_call"][-(limit - len(moments)) :]
    return sorted([*moments, *calls], key=lambda e: (e.at, e.kind == "tool_call"))
