"""What a log read says about its time window: how many lines lay in it, and why none did.

``logs_errors`` reads only the lines of a window, and "no errors in 0 lines" is not an answer.
:func:`window_facts` turns the per-file counts of :class:`~devops_agent.analysis.LogSummary`
into facts a report can word: lines inside and outside the window, the files with nothing in it
(their newest line, how old it is, what it and the errors just before it said), empty files,
a window that starts in the future, and stamps that look written in another time zone (no zone
in the stamp, and the file written hours after its newest stamp) or in the future.

This module reads file metadata (``stat``) only, never file contents, and must not build tool
results or word findings.
"""

from __future__ import annotations

from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from devops_agent.analysis import extract_message, is_error, message_shape
from devops_agent.analysis.loggroup import LogSummary, SourceStats
from devops_agent.analysis.logline import MAX_SHOWN_CHARS
from devops_agent.analysis.timeparse import iso, stamp_has_zone
from devops_agent.tools.logfiles import is_rotated, mtime

MAX_QUIET_FILES = 20
FUTURE_SLACK_S = 300.0
"""Stamps up to this far ahead of the clock are clock skew, not a zone."""
ZONE_GAP_S = 2700.0
"""A file written this long after its newest stamp (45 min) looks stamped in another zone."""


def _last_errors(stats: SourceStats) -> list[dict[str, Any]]:
    """The error records among the last lines before the window, grouped by shape, newest last."""
    shapes: Counter[str] = Counter()
    examples: dict[str, str] = {}
    for line in stats.before:
        message, level = extract_message(line)
        if is_error(message, level):
            shape = message_shape(message)
            shapes[shape] += 1
            examples[shape] = line[:MAX_SHOWN_CHARS]
    return [{"shape": s, "count": n, "example": examples[s]} for s, n in shapes.items()]


def _zone_note(path: str, stats: SourceStats, start: datetime) -> str | None:
    """Why a file written inside the window may hold only lines stamped before it."""
    newest = stats.newest
    modified = mtime(Path(path))
    if newest is None or not modified or modified < start.timestamp():
        return None
    ahead = modified - newest.timestamp()
    if ahead < ZONE_GAP_S:
        return None
    hours = round(ahead / 900) / 4
    written = iso(datetime.fromtimestamp(modified, UTC))
    if stamp_has_zone(stats.newest_line):
        return (
            f"the file was written at {written}, {hours:g} h after its newest stamp: "
            "copied, or written without timestamps since"
        )
    return (
        f"its stamps carry no time zone and were read as this host's local time, but the file was "
        f"written at {written}, about {hours:g} h after its newest stamp: a host {hours:g} h behind "
        "this one's zone may have written it"
    )


def _quiet_file(path: str, stats: SourceStats, start: datetime, now: datetime) -> dict[str, Any]:
    # A file without timestamps is as old as its last write, and says what its last line says.
    undated = stats.newest is None
    modified = mtime(Path(path))
    newest = datetime.fromtimestamp(modified, UTC) if undated else stats.newest
    last = stats.before[-1] if stats.before else ""
    entry: dict[str, Any] = {
        "path": path,
        "rotated": is_rotated(path),
        "undated": undated,
        "newest": iso(newest),
        "newest_age_s": round((now - newest).total_seconds()) if newest else None,
        "newest_line": (last if undated else stats.newest_line)[:MAX_SHOWN_CHARS],
        "last_lines": [line[:MAX_SHOWN_CHARS] for line in list(stats.before)[-3:]],
        "last_errors": _last_errors(stats),
        "lines_considered": len(stats.before),
    }
    if (note := _zone_note(path, stats, start)) is not None:
        entry["zone_note"] = note
    return entry


def window_facts(
    summary: LogSummary,
    scanned: list[str],
    start: datetime | None,
    end: datetime | None,
    older: list[str],
    now: datetime | None = None,
) -> dict[str, Any]:
    """Facts about the window of one read, for ``logs_errors``' result.

    Always ``lines_in_window`` and ``lines_outside_window``; with a window, ``quiet_files`` (the
    files with no record in it whose newest line is older than its start, newest first, at most
    MAX_QUIET_FILES; ``quiet_files_total`` counts them all), ``empty_files``, ``older_files``
    (compressed files rotated before the window, not read), ``window_in_future`` and
    ``future_files`` (stamps ahead of the clock: a zone ahead of this host's, or a wrong clock).
    """
    now = now or datetime.now(UTC)
    facts: dict[str, Any] = {
        "lines_in_window": summary.matched_lines,
        "lines_outside_window": max(0, summary.total_lines - summary.matched_lines),
    }
    empty = [path for path in scanned if summary.sources.get(path, SourceStats()).records == 0]
    if empty:
        facts["empty_files"] = empty[:MAX_QUIET_FILES]
    future = [
        {"path": path, "ahead_s": round((stats.newest - now).total_seconds())}
        for path, stats in summary.sources.items()
        if stats.newest is not None and (stats.newest - now).total_seconds() > FUTURE_SLACK_S
    ]
    if future:
        facts["future_files"] = future[:MAX_QUIET_FILES]
    if older:
        facts["older_files"] = {"count": len(older), "paths": older[:5]}
    if start is None and end is None:
        return facts
    if start is not None and start > now:
        facts["window_in_future"] = True
        return facts  # every file is "quiet" before a window that has not begun: say that instead
    if start is None:
        return facts
    quiet = [
        (path, stats)
        for path, stats in summary.sources.items()
        if stats.in_window == 0 and stats.records and (stats.newest is None or stats.newest < start)
    ]
    quiet.sort(
        key=lambda item: item[1].newest or datetime.fromtimestamp(mtime(Path(item[0])), UTC), reverse=True
    )
    if quiet:
        facts["quiet_files"] = [
            _quiet_file(path, stats, start, now) for path, stats in quiet[:MAX_QUIET_FILES]
        ]
        facts["quiet_files_total"] = len(quiet)
    return facts
