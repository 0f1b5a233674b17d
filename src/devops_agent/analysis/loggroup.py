"""Group log lines by message shape, in one streaming pass with bounded memory.

:func:`group_lines` reads ``(source, line)`` pairs once, folds multi-line records (Python
tracebacks, Java stack traces) into the line that starts them, and counts records per message
shape with first/last seen, up to three examples, per-file counts and counts per time bucket.
Memory does not grow with the input: examples and sources are capped, the number of groups is
capped (further new shapes are counted as "other"), and the per-group time buckets are coarsened
as the covered time range grows, so a 200 MB log costs what a 2 MB one does.

Bucket sizes are chosen at the end from the time covered (about 24-60 buckets of 1m, 5m, 15m,
1h, 6h, 1d …): the summary timeline from the range of all lines read, each group from its own
first and last seen. A bucket is a spike when it holds at least five records and three times the
median of the other non-empty buckets (the peak is left out of its own baseline), and it is
described in words: "43 of 51 in the 5 minutes from 14:05 UTC".

This module is pure: it must not open files or import from tools, policies, agent or interfaces.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from devops_agent.analysis.logline import (
    CHAIN_MARKERS,
    PartialLines,
    continuation,
    extract_message,
    is_error,
    might_be_error,
    starts_traceback,
    strip_container_prefix,
)
from devops_agent.analysis.logshape import message_shape
from devops_agent.analysis.timeparse import extract_timestamp

__all__ = ["ErrorGroup", "LogSummary", "SourceStats", "choose_bucket", "group_lines"]

MAX_EXAMPLES = 3
MAX_EXAMPLE_CHARS = 500
MAX_SOURCES = 20
MAX_LINE_CHARS = 8192
OTHER_SOURCES = "(other files)"
# Standard bucket sizes in seconds; each is a multiple of the one before, so counts kept at one
# size can be merged exactly into any later one.
BUCKET_STEPS = (60, 300, 900, 3600, 21600, 86400, 604800, 2419200)
TARGET_BUCKETS = 60
_FINE_LIMIT = 4 * TARGET_BUCKETS  # coarsen the working buckets beyond this many over the range


def choose_bucket(span: timedelta) -> timedelta:
    """The smallest standard bucket (1m, 5m, 15m, 1h, 6h, 1d, 1w, 4w) giving at most 60 buckets."""
    seconds = span.total_seconds()
    for step in BUCKET_STEPS:
        if seconds / step <= TARGET_BUCKETS:
            return timedelta(seconds=step)
    return timedelta(seconds=BUCKET_STEPS[-1])


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


def _iso(dt: datetime | None) -> str | None:
    return dt.isoformat().replace("+00:00", "Z") if dt is not None else None


def _duration_words(seconds: int) -> str:
    words = {60: "minute", 3600: "hour", 86400: "day", 604800: "week"}
    if seconds in words:
        return words[seconds]
    for unit, name in ((604800, "weeks"), (86400, "days"), (3600, "hours"), (60, "minutes")):
        if seconds % unit == 0:
            return f"{seconds // unit} {name}"
    return f"{seconds} seconds"


@dataclass
class ErrorGroup:
    """Records that share one message shape.

    ``buckets`` counts the records per ``bucket`` of time, chosen from the group's own first and
    last seen (so a burst is described at a useful resolution whatever else the logs cover).
    """

    shape: str
    count: int = 0
    first_seen: datetime | None = None
    last_seen: datetime | None = None
    level: str | None = None
    examples: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)
    bucket: timedelta = timedelta(minutes=1)
    buckets: dict[datetime, int] = field(default_factory=dict)
    spike: bool = False
    spike_description: str | None = None
    spike_start: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serializable form; times are ISO 8601 UTC strings."""
        return {
            "shape": self.shape,
            "count": self.count,
            "level": self.level,
            "first_seen": _iso(self.first_seen),
            "last_seen": _iso(self.last_seen),
            "examples": list(self.examples),
            "sources": dict(self.sources),
            "bucket": _duration_words(int(self.bucket.total_seconds())),
            "buckets": {_iso(k): v for k, v in sorted(self.buckets.items())},
            "spike": self.spike,
            "spike_description": self.spike_description,
            "spike_start": _iso(self.spike_start),
        }


SOURCE_TAIL = 20
"""How many of a source's last records before the window :class:`SourceStats` keeps."""


@dataclass
class SourceStats:
    """What one source (a file) held: records inside the window, and its newest line.

    ``before`` keeps the last records read that lie before the window (at most SOURCE_TAIL):
    for a source with nothing in the window, what it said before it went quiet.
    """

    records: int = 0
    in_window: int = 0
    newest: datetime | None = None
    newest_line: str = ""
    before: deque[str] = field(default_factory=lambda: deque(maxlen=SOURCE_TAIL))


@dataclass
class LogSummary:
    """What :func:`group_lines` found: counts, the groups by count, and a timeline.

    ``total_lines`` counts every line read, ``matched_lines`` the lines inside the time window
    (``total_lines - matched_lines`` were read but lay outside it),
    ``error_lines`` the error records (a multi-line traceback is one record), ``undated_lines``
    the records with no timestamp of their own or inherited (they are kept). ``other_count`` is
    the records whose shape arrived after ``max_groups`` groups existed.
    """

    total_lines: int = 0
    matched_lines: int = 0
    error_lines: int = 0
    undated_lines: int = 0
    time_range: tuple[datetime, datetime] | None = None
    bucket: timedelta = timedelta(minutes=1)
    groups: list[ErrorGroup] = field(default_factory=list)
    other_count: int = 0
    timeline: list[tuple[datetime, int]] = field(default_factory=list)
    spikes: list[str] = field(default_factory=list)
    sources: dict[str, SourceStats] = field(default_factory=dict)
    """Per source (file): records in the window and the newest line; see :class:`SourceStats`."""

    def top(self, n: int) -> list[ErrorGroup]:
        """The ``n`` largest groups, plus any spiking group beyond them (a burst is news)."""
        head = self.groups[:n]
        return head + [g for g in self.groups[n:] if g.spike][:5]

    def to_dict(self, max_groups: int | None = None) -> dict[str, Any]:
        """A JSON-serializable form with at most ``max_groups`` groups (plus spiking ones)."""
        shown = self.groups if max_groups is None else self.top(max_groups)
        return {
            "total_lines": self.total_lines,
            "matched_lines": self.matched_lines,
            "error_lines": self.error_lines,
            "undated_lines": self.undated_lines,
            "time_range": (
                {"start": _iso(self.time_range[0]), "end": _iso(self.time_range[1])}
                if self.time_range
                else None
            ),
            "bucket": _duration_words(int(self.bucket.total_seconds())),
            "groups_total": len(self.groups),
            "groups_shown": len(shown),
            "records_in_hidden_groups": sum(g.count for g in self.groups) - sum(g.count for g in shown),
            "other_count": self.other_count,
            "spikes": list(self.spikes),
            "timeline": [{"start": _iso(t), "count": c} for t, c in self.timeline],
            "groups": [g.to_dict() for g in shown],
        }


class _Series:
    """Counts per time bucket whose working bucket coarsens as the covered range grows.

    Keys are bucket starts in epoch seconds, aligned to multiples of the bucket, so counts at
    one standard size merge exactly into a larger one; at most about _FINE_LIMIT keys are kept.
    """

    __slots__ = ("counts", "fixed", "hi", "lo", "step")

    def __init__(self, fixed: int | None) -> None:
        self.fixed = fixed
        self.step = fixed or BUCKET_STEPS[0]
        self.counts: dict[int, int] = {}
        self.lo: float | None = None
        self.hi: float | None = None

    def cover(self, ts: float) -> None:
        lo, hi = self.lo, self.hi
        if lo is None or hi is None:
            self.lo = self.hi = ts
            return
        if lo <= ts <= hi:
            return
        self.lo, self.hi = lo, hi = min(lo, ts), max(hi, ts)
        if self.fixed is None:
            while (hi - lo) / self.step > _FINE_LIMIT and self.step < BUCKET_STEPS[-1]:
                self.step = BUCKET_STEPS[BUCKET_STEPS.index(self.step) + 1]
                self.counts = _rebucket(self.counts, self.step)

    def add(self, ts: float) -> None:
        self.cover(ts)
        key = int(ts - ts % self.step)
        self.counts[key] = self.counts.get(key, 0) + 1

    def final(self) -> tuple[int, dict[int, int], int]:
        """(bucket seconds, counts per bucket, number of buckets the range spans)."""
        lo, hi = self.lo, self.hi
        if lo is None or hi is None:
            return self.step, dict(self.counts), 0
        step = self.fixed or max(self.step, int(choose_bucket(timedelta(seconds=hi - lo)).total_seconds()))
        first, last = int(lo - lo % step), int(hi - hi % step)
        return step, _rebucket(self.counts, step), (last - first) // step + 1

    def describe_spike(self, total: int, within: _Series | None = None) -> tuple[str, int] | None:
        """The spike of these counts, at their own bucket size; ``within`` (the whole input's
        series) widens the range judged, so a series that is one short burst still counts as
        a spike against the quiet around it instead of spanning too little to judge."""
        step, counts, n_range = self.final()
        if self.lo is None or self.hi is None:
            return None
        one_day = _utc(self.lo).date() == _utc(self.hi).date()
        if n_range < 4 and within is not None and within.lo is not None and within.hi is not None:
            whole = int((within.hi - within.lo) // step) + 1
            if whole >= 4:  # a short burst in a longer input: the rest of the input is its baseline
                return _spike(counts, total, step, whole, one_day, quiet_elsewhere=True)
        return _spike(counts, total, step, n_range, one_day)


@dataclass
class _Acc:
    shape: str
    level: str | None
    series: _Series
    count: int = 0
    examples: list[str] = field(default_factory=list)
    sources: dict[str, int] = field(default_factory=dict)


@dataclass
class _Record:
    source: str
    first_line: str
    ts: float | None
    keep: bool
    head: str = ""  # the first line without its container prefix
    message: str = ""
    level: str | None = None
    error: bool = False
    exc: str | None = None
    in_traceback: bool = False
    chained: bool = False  # "During handling …" / "The above exception …" since the last Traceback


def _rebucket(buckets: dict[int, int], step: int) -> dict[int, int]:
    out: dict[int, int] = {}
    for key, count in buckets.items():
        k = key - key % step
        out[k] = out.get(k, 0) + count
    return out


SPIKE_MIN = 5
"""The fewest records a time bucket must hold to be a spike (or a template's burst)."""


def _spike(
    buckets: dict[int, int],
    total: int,
    step: int,
    n_range: int,
    one_day: bool,
    quiet_elsewhere: bool = False,
) -> tuple[str, int] | None:
    """Describe the peak bucket when it holds >= max(SPIKE_MIN, 3x the median of the other
    non-empty buckets); with ``quiet_elsewhere`` (a burst inside a longer, otherwise empty
    range) the baseline is the empty rest of the range, so SPIKE_MIN alone decides."""
    if not buckets or n_range < 4:
        return None
    peak_key, peak = max(buckets.items(), key=lambda kv: (kv[1], -kv[0]))
    others = [c for k, c in buckets.items() if k != peak_key]
    baseline = statistics.median(others) if others and not quiet_elsewhere else 0
    if peak < max(SPIKE_MIN, 3 * baseline):
        return None
    start = _utc(peak_key)
    when = start.strftime("%H:%M" if one_day else "%Y-%m-%d %H:%M")
    return f"{peak} of {total} in the {_duration_words(step)} from {when} UTC", peak_key


class _Grouper:
    def __init__(
        self,
        errors_only: bool,
        bucket: timedelta | None,
        since: datetime | None,
        until: datetime | None,
        max_groups: int,
        default_year: int | None,
        undated_before: Collection[str] = (),
    ) -> None:
        self.errors_only = errors_only
        self.fixed_step = max(1, int(bucket.total_seconds())) if bucket is not None else None
        self.since = since.timestamp() if since is not None else None
        self.until = until.timestamp() if until is not None else None
        self.max_groups = max_groups
        self.default_year = default_year
        self.undated_before = undated_before
        self.summary = LogSummary()
        self.groups: dict[str, _Acc] = {}
        self.timeline = _Series(self.fixed_step)  # grouped records, over the range of all lines
        self.last_ts: dict[str, float] = {}
        self.record: _Record | None = None
        self.idle = _Record("", "", None, False)  # never grouped: error stays False
        self.partial = PartialLines()
        self._source_name: str | None = None
        self._source = SourceStats()

    def feed(self, source: str, raw: str) -> None:
        self.summary.total_lines += 1
        line = raw.rstrip("\r\n")[:MAX_LINE_CHARS]
        rec = self.record
        if not line or line.isspace():
            if rec is not None and rec.keep and rec.in_traceback:
                self.summary.matched_lines += 1
            return
        content = strip_container_prefix(line)
        partial = self.partial
        if content is not line or partial.pending:  # a container's line, maybe a partial one
            joined = partial.feed(source, line, content)
            if partial.flushed is not None:
                (done_line, done_content), partial.flushed = partial.flushed, None
                self._line(source, done_line, done_content)
            if joined is None:
                return
            line, content = joined
        self._line(source, line, content)

    def _line(self, source: str, line: str, content: str) -> None:
        rec = self.record
        if rec is not None and rec.source == source:
            done = rec.exc is not None and not rec.in_traceback  # a whole traceback came already
            body = continuation(content, rec.in_traceback, rec.error, rec.head, rec.chained, done)
            if body is not None:
                self._continue(rec, body)
                return
        self._flush()
        self._start(source, line, content)

    def _continue(self, rec: _Record, content: str) -> None:
        """Fold ``content`` (a continuation line, without a timestamp prefix) into ``rec``."""
        if rec.keep:
            self.summary.matched_lines += 1
        if rec is self.idle or not content:
            return
        stripped = content.strip()
        if content.startswith(CHAIN_MARKERS):
            rec.chained = True
        if content.startswith("Traceback"):
            rec.in_traceback, rec.chained = True, False
        elif rec.in_traceback and content[0] not in " \t":
            if not content.startswith(("During handling", "The above exception")):
                rec.exc = stripped  # the exception line ends a Python traceback
                rec.in_traceback = False
        elif stripped.startswith("Caused by:"):
            rec.exc = stripped  # Java: the last cause is the root cause
        elif rec.exc is None and content[0] not in " \t" and not content.startswith(CHAIN_MARKERS):
            rec.exc = stripped  # the exception line under a JVM / .NET error message

    def _start(self, source: str, line: str, content: str) -> None:
        ts_dt = extract_timestamp(line, self.default_year)
        if ts_dt is not None:
            epoch = ts_dt.timestamp()
            self.last_ts[source] = epoch
            ts: float | None = epoch
        else:
            ts = self.last_ts.get(source)
        if ts is None:
            # no time of its own or inherited: inside the window, unless its file was last
            # written before the window began
            keep = self.since is None or source not in self.undated_before
        else:
            keep = (self.since is None or ts >= self.since) and (self.until is None or ts <= self.until)
        stats = self._stats(source)
        stats.records += 1
        if ts_dt is not None and (stats.newest is None or ts_dt >= stats.newest):
            stats.newest, stats.newest_line = ts_dt, line
        if keep:
            stats.in_window += 1
        else:
            stats.before.append(line)
        if keep:
            self.summary.matched_lines += 1
            if ts is None:
                self.summary.undated_lines += 1
            else:
                self.timeline.cover(ts)
        if not keep or (self.errors_only and not might_be_error(line)):
            # Most lines end here; one reused record absorbs their continuation lines.
            idle = self.idle
            idle.source, idle.keep, idle.first_line, idle.head = source, keep, line, content
            self.record = idle
            return
        rec = self.record = _Record(source, line, ts, keep, content)
        rec.in_traceback = starts_traceback(content)
        rec.message, rec.level = extract_message(line)
        rec.error = is_error(rec.message, rec.level)

    def _stats(self, source: str) -> SourceStats:
        # Lines come file by file: one lookup per file, not per line.
        if source != self._source_name:
            self._source_name = source
            self._source = self.summary.sources.setdefault(source, SourceStats())
        return self._source

    def _flush(self) -> None:
        rec, self.record = self.record, None
        if rec is None or rec is self.idle or not rec.keep:
            return
        if rec.error:
            self.summary.error_lines += 1
        elif self.errors_only:
            return
        shape = message_shape(rec.message)
        if rec.exc is not None:
            shape = f"{shape} | {message_shape(rec.exc)}"
        if rec.ts is not None:
            self.timeline.add(rec.ts)
        acc = self.groups.get(shape)
        if acc is None:
            if len(self.groups) >= self.max_groups:
                self.summary.other_count += 1
                return
            acc = self.groups[shape] = _Acc(shape, rec.level, _Series(self.fixed_step))
        acc.count += 1
        if rec.ts is not None:
            acc.series.add(rec.ts)
        if acc.level is None:
            acc.level = rec.level
        if len(acc.examples) < MAX_EXAMPLES:
            example = rec.first_line if rec.exc is None else f"{rec.first_line[:300]}\n{rec.exc}"
            example = example[:MAX_EXAMPLE_CHARS]
            if example not in acc.examples:
                acc.examples.append(example)
        src = rec.source if rec.source in acc.sources or len(acc.sources) < MAX_SOURCES else OTHER_SOURCES
        acc.sources[src] = acc.sources.get(src, 0) + 1

    def finish(self) -> LogSummary:
        for source, line, content in self.partial.drain():
            self._line(source, line, content)
        self._flush()
        out = self.summary
        series = self.timeline
        step, timeline, n_range = series.final()
        out.bucket = timedelta(seconds=step)
        if series.lo is not None and series.hi is not None:
            out.time_range = (_utc(series.lo), _utc(series.hi))
            if n_range <= 4 * TARGET_BUCKETS:  # zeros make the shape of the timeline readable
                first = int(series.lo - series.lo % step)
                for k in range(first, first + n_range * step, step):
                    timeline.setdefault(k, 0)
        out.timeline = [(_utc(k), c) for k, c in sorted(timeline.items())]
        series.counts = {k: c for k, c in series.counts.items() if c}
        overall = series.describe_spike(sum(series.counts.values()))
        if overall is not None:
            out.spikes.append(f"all grouped records: {overall[0]}")
        for acc in self.groups.values():
            lo, hi = acc.series.lo, acc.series.hi
            group_step, buckets, _ = acc.series.final()
            group = ErrorGroup(
                shape=acc.shape,
                count=acc.count,
                first_seen=_utc(lo) if lo is not None else None,
                last_seen=_utc(hi) if hi is not None else None,
                level=acc.level,
                examples=acc.examples,
                sources=acc.sources,
                bucket=timedelta(seconds=group_step),
                buckets={_utc(k): c for k, c in buckets.items()},
            )
            spike = acc.series.describe_spike(acc.count, within=series)
            if spike is not None:
                group.spike, group.spike_description, group.spike_start = True, spike[0], _utc(spike[1])
                out.spikes.append(f"{acc.shape[:120]}: {spike[0]}")
            out.groups.append(group)
        out.groups.sort(key=lambda g: (-g.count, g.first_seen or datetime.max.replace(tzinfo=UTC)))
        return out


def group_lines(
    lines: Iterable[tuple[str, str]],
    *,
    errors_only: bool = True,
    bucket: timedelta | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    max_groups: int = 10_000,
    default_year: int | None = None,
    undated_before: Collection[str] = (),
) -> LogSummary:
    """Group log records by message shape in one streaming pass with bounded memory.

    Continuation lines (indented lines, ``Traceback …``, ``Caused by:``, the exception line that
    ends a Python traceback, a JVM's exception line under an error) are folded into the record
    that starts them, Kubernetes CRI partial lines are joined first, so a traceback is
    one error whose shape ends with its exception (``… | ValueError: invalid literal …``). They
    fold the same when every line carries a timestamp (and a container stream, ``stdout F``)
    like the record's first line; a line with a level after its timestamp starts a new record
    (see :func:`~devops_agent.analysis.logline.continuation`). A line without a timestamp
    inherits the previous timestamp of the same source.

    Args:
        lines: ``(source_name, raw_line)`` pairs, e.g. the file name and each of its lines.
        errors_only: group only records that :func:`~devops_agent.analysis.is_error` accepts.
        bucket: the time bucket for counts; default: chosen from the time range (24-60 buckets).
        since: skip records before this time (aware datetime).
        until: skip records after this time (aware datetime).
        max_groups: at most this many groups; records of further new shapes go to ``other_count``.
        default_year: the year for timestamps that omit it (syslog); default: the current one.
        undated_before: sources (files) last written before ``since``: their lines without a
            timestamp lie before the window, not in it. Checked as lines arrive, so it may fill
            up while ``lines`` is consumed.
    """
    grouper = _Grouper(errors_only, bucket, since, until, max_groups, default_year, undated_before)
    for source, line in lines:
        grouper.feed(source, line)
    return grouper.finish()
