"""Evidence a tool call showed, drawn in text: a series as a sparkline with its anomaly windows
marked under it, a log template table (a ``DataTable``, sorted by count; ``s`` flips the order),
and timeline entries. The series, windows, rows and entries come from the server
(:class:`~devops_agent.evidence.Evidence` on ``tool_result``, a report's ``timeline``); this
module only draws them, every string from a tool as literal text.

This module must not call the API or judge the evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from devops_agent.evidence import Evidence, Series, TemplateTable, TimelineEntry
from devops_agent.textsafe import printable, visible

BARS = "▁▂▃▄▅▆▇█"
WIDTH = 60
KIND_STYLE = {
    "alert_start": "bold red",
    "anomaly": "red",
    "error_onset": "red",
    "deploy": "yellow",
    "commit": "yellow",
    "finding": "bold",
    "tool_call": "dim",
}


def literal(text: str, style: str = "") -> Text:
    """Outside text as a Rich ``Text``: no markup, control characters shown, not obeyed (the
    conversation and the screens use it too)."""
    return Text(visible(text), style=style)


def _utc(at: datetime) -> str:
    return at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _hhmm(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%H:%M UTC")


def _num(v: float) -> str:
    return f"{v:.4g}"


def spark(series: Series, width: int = WIDTH) -> tuple[str, str]:
    """The series in ``width`` columns (each column the highest value of its time slice, or the
    previous column's where a slice has no point) and the marker line: ``▔`` under each column
    whose time slice meets an anomaly window, a space elsewhere."""
    points = series.points
    if not points:
        return "", ""
    t0, t1 = points[0][0], max(points[-1][0], points[0][0] + 1)
    lo = min(v for _t, v in points)
    hi = max(v for _t, v in points)
    span = (t1 - t0) / width
    columns: list[float | None] = [None] * width
    for t, v in points:
        i = min(width - 1, int((t - t0) / span))
        current = columns[i]
        columns[i] = v if current is None else max(current, v)
    line = []
    last = points[0][1]
    for value in columns:
        last = last if value is None else value
        level = 0 if hi == lo else round((last - lo) / (hi - lo) * (len(BARS) - 1))
        line.append(BARS[level])
    windows = [(w.start.timestamp(), w.end.timestamp()) for w in series.anomalies]
    marks = []
    for i in range(width):
        a, b = t0 + i * span, t0 + (i + 1) * span
        marks.append("▔" if any(start < b and end >= a for start, end in windows) else " ")
    return "".join(line), "".join(marks).rstrip()


def chart_text(series: Series, width: int = WIDTH) -> Text:
    """A series' name, its sparkline between its lowest and highest value, the anomaly marks
    under it, its time range, and each anomaly window in words."""
    labels = ",".join(f"{k}={v}" for k, v in sorted(series.labels.items()))
    title = f"{series.name}{{{labels}}}" if labels else series.name
    text = literal(f"{title}\n", "bold")
    if not series.points:
        text.append("no points to draw\n", style="dim")
        return text
    line, marks = spark(series, width)
    lo = min(v for _t, v in series.points)
    hi = max(v for _t, v in series.points)
    pad = max(len(_num(lo)), len(_num(hi)))
    text.append(f"{_num(hi):>{pad}} ┐\n", style="dim")
    text.append(" " * pad + " │", style="dim")
    text.append(line + "\n", style="cyan")
    text.append(f"{_num(lo):>{pad}} ┘", style="dim")
    text.append(marks + "\n", style="bold red")
    start, end = _hhmm(series.points[0][0]), _hhmm(series.points[-1][0])
    text.append(
        " " * (pad + 2) + start + " " * max(1, width - len(start) - len(end)) + end + "\n", style="dim"
    )
    drawn = len(series.points)
    total = max(series.points_total, drawn)
    text.append(f"{drawn} of {total} points drawn\n", style="dim")
    for w in series.anomalies:
        words = f"▔ anomaly {_utc(w.start)} – {_utc(w.end)} ({w.kind or 'anomaly'}, score {w.score:g})"
        text.append_text(literal(words + (f": {w.explanation}" if w.explanation else "") + "\n", "red"))
    return text


def timeline_text(entries: Sequence[TimelineEntry]) -> Text:
    """A timeline, one entry a line: time (UTC), what kind of moment, its label, its tool call."""
    text = Text()
    for e in entries:
        text.append(_utc(e.at) + "  ", style="dim")
        text.append(f"{e.kind.replace('_', ' '):<11} ", style=KIND_STYLE.get(e.kind, ""))
        text.append_text(literal(e.label))
        if e.tool_call_id:
            text.append_text(literal(f"  [{e.tool_call_id}]", "dim"))
        text.append("\n")
    return text


class TemplateTableView(DataTable[Any]):
    """A template table: count, template, first and last seen; ``s`` flips the order by count."""

    BINDINGS = [Binding("s", "flip", "Sort by count")]

    def __init__(self, table: TemplateTable) -> None:
        super().__init__(zebra_stripes=True, cursor_type="row")
        self.table = table
        self.descending = True

    def on_mount(self) -> None:
        self.add_column("count", key="count")
        self.add_column("template", key="template")
        self.add_column("first seen", key="first")
        self.add_column("last seen", key="last")
        for row in sorted(self.table.rows, key=lambda r: -r.count):
            self.add_row(
                Text(str(row.count), justify="right"),
                Text(printable(row.template)),
                row.first_seen.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if row.first_seen else "",
                row.last_seen.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") if row.last_seen else "",
            )

    def action_flip(self) -> None:
        self.descending = not self.descending
        self.sort("count", key=lambda cell: int(cell.plain), reverse=self.descending)

    @property
    def counts(self) -> list[int]:
        """The counts in the order shown (tests read it)."""
        return [int(self.get_row_at(i)[0].plain) for i in range(self.row_count)]


class EvidenceView(Vertical):
    """Everything one call's evidence holds: its charts, its template table, its dated moments."""

    DEFAULT_CSS = """
    EvidenceView { height: auto; padding: 0 1; }
    EvidenceView Static { height: auto; }
    EvidenceView TemplateTableView { height: auto; max-height: 16; }
    """

    def __init__(self, evidence: Evidence | None = None) -> None:
        super().__init__(classes="evidence")
        self.evidence = evidence

    def show(self, evidence: Evidence) -> None:
        """Draw ``evidence`` (now, or when the view is mounted)."""
        self.evidence = evidence
        if self.is_mounted:
            self.refresh(recompose=True)

    def compose(self) -> ComposeResult:
        if self.evidence is None:
            return
        for series in self.evidence.series:
            yield Static(chart_text(series), classes="chart")
        table = self.evidence.templates
        if table is not None:
            what = "error templates" if table.errors_only else "log templates"
            unit = "error records" if table.errors_only else "lines"
            yield Static(
                Text(f"{what}: {len(table.rows)} of {table.total} from {table.lines} {unit}", style="bold")
            )
            yield TemplateTableView(table)
        moments = [e for e in self.evidence.timeline if e.kind != "tool_call"]
        if moments:
            yield Static(Text("dated in this output", style="bold") + Text("\n") + timeline_text(moments))
