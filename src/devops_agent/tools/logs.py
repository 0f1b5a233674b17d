"""The ``logs`` toolset: tail, search and analyze log files (plain or compressed) and the journal.

Read-only by construction: files are found and opened by :mod:`devops_agent.tools.logfiles`
(inside ``files.roots`` only, each real file once); the only command run is the fixed
``journalctl -o json --no-pager`` with argv (no shell). ``logs_tail`` and ``logs_search`` read at
most ``files.max_read_bytes`` per file (a plain file's window is found by bisecting on
timestamps, so ``since``/``until`` reach into big files cheaply; a .gz, .xz or .bz2 is
decompressed from its start and only its lines inside the window count); ``logs_errors`` streams
every line through :func:`~devops_agent.analysis.group_lines`, so a 200 MB log costs bounded
memory, and says what it read: the lines inside the window, those outside it, and for each file
with nothing in the window how old its newest line is and what it said. The analysis itself
lives in :mod:`devops_agent.analysis`; this module only calls it and shapes the results.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from devops_agent.analysis import (
    TemplateMiner,
    group_lines,
    message_shape,
    normalize_level,
    parse_since,
)
from devops_agent.analysis.logline import MAX_SHOWN_CHARS
from devops_agent.analysis.logsummary import mine_templates
from devops_agent.analysis.timeparse import iso
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.evidence import error_groups_evidence, patterns_evidence
from devops_agent.tools.logfiles import (
    MAX_SCAN_FILES,
    FileRead,
    collect,
    file_lines,
    newest,
    nothing_read,
    read_paths,
    read_stream,
    resolve_log_path,
    stream_files,
    unreadable,
    walk,
    window_args,
    window_words,
)
from devops_agent.tools.logwindow import window_facts
from devops_agent.tools.paths import roots_of
from devops_agent.tools.patterns import search_pattern
from devops_agent.tools.registry import ToolRegistry

__all__ = [
    "build",
    "nothing_read",
    "read_paths",
    "read_stream",
    "register",
    "window_args",
]

NAME = "logs"
DESCRIPTION = "Tail, search and group errors in log files (plain, .gz, .xz) and the systemd journal"

MAX_TAIL_FILES = 5
MAX_SEARCH_FILES = 50
# Share of the tool timeout (tools.timeout_s) that logs_errors / logs_patterns spend reading: a
# larger input returns what was read by then, marked partial, instead of timing out while the
# worker thread reads on.
READ_BUDGET_SHARE = 0.75
JOURNAL_TIMEOUT_S = 20
JOURNAL_DIRS = (Path("/var/log/journal"), Path("/run/log/journal"))
PRIORITIES = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")


# --- the toolset ------------------------------------------------------------------------------


def _fail(exc: UserError) -> ToolResult:
    return ToolResult.fail(exc.message, hint=exc.hint)


def _nothing_read(paths: list[str], skipped: list[str]) -> ToolResult:
    exc = nothing_read(paths, skipped)
    return ToolResult.fail(exc.message, hint=exc.hint, skipped=skipped[:50])


def _journal_present() -> bool:
    for base in JOURNAL_DIRS:
        try:
            if any(base.glob("*.journal")) or any(base.glob("*/*.journal")):
                return True
        except OSError:
            continue
    return False


def _journal_entry(raw: dict[str, Any]) -> dict[str, Any]:
    message = raw.get("MESSAGE")
    if isinstance(message, list):  # journald sends non-UTF-8 messages as a list of bytes
        message = bytes(b for b in message if isinstance(b, int) and 0 <= b < 256).decode("utf-8", "replace")
    stamp = raw.get("__REALTIME_TIMESTAMP")
    when = (
        datetime.fromtimestamp(int(stamp) / 1e6, UTC) if isinstance(stamp, str) and stamp.isdigit() else None
    )
    return {
        "time": iso(when),
        "unit": raw.get("_SYSTEMD_UNIT") or raw.get("UNIT"),
        "identifier": raw.get("SYSLOG_IDENTIFIER"),
        "pid": raw.get("_PID"),
        "priority": normalize_level(raw.get("PRIORITY")),
        "message": str(message if message is not None else "")[:MAX_SHOWN_CHARS],
    }


class ReadBudget:
    """Stops a line stream once its time is spent (checked every few thousand lines): three
    quarters of the tool timeout (:data:`READ_BUDGET_SHARE` of ``tools.timeout_s``)."""

    CHECK_EVERY = 4096

    def __init__(self, settings: Settings) -> None:
        seconds = settings.tools.timeout_s * READ_BUDGET_SHARE
        self.seconds = seconds
        self.ends = time.monotonic() + seconds
        self.spent = False
        self.last: tuple[str, str] | None = None  # the last (file, line) read

    def wrap(self, lines: Iterable[tuple[str, str]]) -> Iterator[tuple[str, str]]:
        for n, item in enumerate(lines):
            if n % self.CHECK_EVERY == 0 and n and time.monotonic() > self.ends:
                self.spent = True
                return
            self.last = item
            yield item

    def note(self) -> str:
        where = f" (last read: {self.last[0]})" if self.last else ""
        return (
            f"partial: stopped reading after {self.seconds:.0f} s{where}; narrow with since/until or "
            "fewer paths for the rest"
        )

    def mark(self, data: dict[str, Any]) -> None:
        """When the time was spent, say so in a tool's ``data``: ``partial`` and the note."""
        if self.spent:
            data["partial"] = True
            data["note"] = "; ".join(n for n in (data.get("note"), self.note()) if n)


def build(settings: Settings) -> ToolsetBuilder:
    """The logs toolset; file access is confined to ``settings.files.roots``."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)
    max_bytes = settings.files.max_read_bytes

    @ts.tool(category="logs", read_only=True, risk="sensitive")
    def logs_tail(
        path: str, lines: int = 200, since: str | None = None, until: str | None = None
    ) -> ToolResult:
        """Show the last lines of a log file, or of the newest log files in a directory.

        Plain and .gz files are read; a directory gives its 5 most recently modified readable
        log files (*.log, *.log.N, *.gz, syslog, messages …). Lines without a timestamp inherit the
        previous line's when filtering by time.

        Args:
            path: a log file or a directory of logs, e.g. /var/log/nginx.
            lines: how many lines to return per file (1-5000).
            since: only lines at or after this time: 15m, 2h, 1d, '2 hours ago', an ISO date.
            until: only lines at or before this time (same forms as since).
        """
        try:
            roots = roots_of(settings)
            target = resolve_log_path(path, roots)
            start, end = window_args(since, until)
        except UserError as exc:
            return _fail(exc)
        count = max(1, min(lines, 5000))
        skipped: list[str] = []
        capped = False
        if target.is_dir():
            candidates, capped = walk(target, roots, MAX_SCAN_FILES, logs_only=True, skipped=skipped)
        else:
            candidates = [target]
        results: list[dict[str, Any]] = []
        # the newest readable logs: a binary or corrupt file must not take the place of a log
        for file in newest(candidates, len(candidates)):
            if sum("lines" in r for r in results) == MAX_TAIL_FILES:
                break
            if reason := unreadable(file):
                skipped.append(f"{file} ({reason})")
                continue
            read = FileRead()
            try:
                tail = list(deque(file_lines(file, start, end, max_bytes, True, read), maxlen=count))
            except (OSError, EOFError) as exc:
                skipped.append(f"{file} (read failed: {exc})")
                continue
            results.append(
                {"path": str(file), "lines": [x[:MAX_SHOWN_CHARS] for x in tail], "truncated": read.truncated}
            )
        if not results:
            return _nothing_read([path], skipped)
        meta: dict[str, Any] = {"skipped": skipped[:50]} if skipped else {}
        if capped:
            meta["note"] = f"stopped listing files at {MAX_SCAN_FILES}; pass a narrower path"
        if not any(r["lines"] for r in results):
            return ToolResult.empty(
                f"no lines in {path}{window_words(start, end)}", files=[r["path"] for r in results], **meta
            )
        return ToolResult.ok({"files": results}, source=str(target), since=iso(start), until=iso(end), **meta)

    @ts.tool(category="logs", read_only=True, risk="sensitive")
    def logs_search(
        path: str,
        pattern: str,
        regex: bool = True,
        ignore_case: bool = True,
        since: str | None = None,
        until: str | None = None,
        limit: int = 200,
    ) -> ToolResult:
        """Find log lines matching a pattern in a file or in the log files under a directory.

        Without since, the most recent part of each file is searched (up to the read limit per
        file) and its latest matches are shown; with since, the search starts at that time even
        in very large files and shows the first matches from then.

        Args:
            path: a log file or a directory searched recursively (its 50 most recently modified
                log files, newest first).
            pattern: a regular expression (Python syntax), or plain text with regex=False. A
                nested repeat such as (a+)+ is refused: it can take exponential time.
            regex: treat pattern as a regular expression; False matches it literally.
            ignore_case: match regardless of case.
            since: only lines at or after this time: 15m, 2h, 1d, '2 hours ago', an ISO date.
            until: only lines at or before this time (same forms as since).
            limit: the most matching lines to return (1-2000); all matches in what was read
                are counted.
        """
        try:
            roots = roots_of(settings)
            target = resolve_log_path(path, roots)
            start, end = window_args(since, until)
        except UserError as exc:
            return _fail(exc)
        rx = search_pattern(pattern, regex=regex, ignore_case=ignore_case)
        if isinstance(rx, ToolResult):
            return rx
        cap = max(1, min(limit, 2000))
        skipped: list[str] = []
        candidates, capped = walk(target, roots, MAX_SCAN_FILES, logs_only=target.is_dir(), skipped=skipped)
        files = newest(candidates, MAX_SEARCH_FILES)
        matches: list[dict[str, str]] = []
        total, searched, truncated_files = 0, 0, []
        for file in files:
            if reason := unreadable(file):
                skipped.append(f"{file} ({reason})")
                continue
            read = FileRead()
            # Without since the end of the file is searched, so its last matches are the news.
            kept: deque[dict[str, str]] = deque(maxlen=cap - len(matches) if since is None else None)
            try:
                for line in file_lines(file, start, end, max_bytes, since is None, read):
                    if rx.search(line):
                        total += 1
                        if since is None or len(matches) + len(kept) < cap:
                            kept.append({"file": str(file), "line": line[:MAX_SHOWN_CHARS]})
            except (OSError, EOFError) as exc:  # a corrupt or truncated .gz: what came before counts
                skipped.append(f"{file} (read failed: {exc})")
            matches.extend(kept)
            searched += 1
            if read.truncated:
                truncated_files.append(str(file))
        if not searched:
            return _nothing_read([path], skipped)
        meta: dict[str, Any] = {"files_searched": searched, "truncated_files": truncated_files}
        if skipped:
            meta["skipped"] = skipped[:50]
        if len(candidates) > len(files) or capped:
            meta["note"] = (
                f"searched the {len(files)} most recently modified of {len(candidates)}"
                f"{' or more' if capped else ''} log files; pass a narrower path to search the others"
            )
        if not matches:
            return ToolResult.empty(
                f"no line matches {pattern!r} in {searched} file(s){window_words(start, end)}"
                + (" (only part of some files was read; narrow with since/until)" if truncated_files else "")
                + (f"; {meta['note']}" if "note" in meta else ""),
                **meta,
            )
        data = {"matches": matches, "total_matches": total, "shown": len(matches)}
        return ToolResult.ok(data, source=str(target), truncated=bool(truncated_files), **meta)

    @ts.tool(category="logs", read_only=True, risk="sensitive")
    def logs_errors(
        paths: list[str], since: str | None = None, until: str | None = None, max_groups: int = 30
    ) -> ToolResult:
        """Group the errors in log files by message shape: counts, first/last seen, examples, spikes.

        The main tool for "what is failing?": it reads whole files (plain or .gz, directories
        recursively, binaries skipped) in one streaming pass, folds Python tracebacks and stack
        traces into one error, and groups errors that differ only in ids, numbers, IPs or paths.
        Groups are ranked by count (a result too long for the output loses its smallest groups);
        a spike (a time bucket with an unusual burst) is described in words, e.g. "43 of 51 in
        the 5 minutes from 14:05 UTC".

        Args:
            paths: log files or directories, e.g. ["/var/log/app", "/var/log/syslog"].
            since: only errors at or after this time: 15m, 2h, 1d, '2 hours ago', an ISO date.
            until: only errors at or before this time (same forms as since).
            max_groups: how many groups to return in full (1-200); all are counted.
        """
        if not paths:
            return ToolResult.fail("no paths given", hint="pass log files or directories, e.g. ['/var/log']")
        try:
            roots = roots_of(settings)
            targets = [resolve_log_path(p, roots) for p in paths]
            start, end = window_args(since, until)
        except UserError as exc:
            return _fail(exc)
        skipped: list[str] = []
        files, capped = collect(targets, roots, skipped)
        scanned: list[str] = []
        older: list[str] = []
        written_before: set[str] = set()
        budget = ReadBudget(settings)
        stream = budget.wrap(stream_files(files, start, scanned, skipped, older, written_before))
        summary = group_lines(stream, errors_only=True, since=start, until=end, undated_before=written_before)
        if not scanned:
            if older and start is not None:
                return ToolResult.fail(
                    f"no log file was written in the window: the {len(older)} compressed file(s) "
                    f"found were last modified before {iso(start)} ({', '.join(older[:3])})",
                    hint="widen the window (--since), or pass the log that is being written now",
                    older_files=older[:50],
                )
            return _nothing_read(paths, skipped)
        facts = window_facts(summary, scanned, start, end, older)
        data = summary.to_dict(max(1, min(max_groups, 200)))
        data["files_scanned"] = len(scanned)
        data["files"] = scanned[:50]
        data["skipped"] = skipped[:50]
        data.update(facts)
        if capped:
            data["note"] = f"stopped listing files at {MAX_SCAN_FILES}; pass narrower paths"
        budget.mark(data)
        if summary.error_lines == 0:
            counts = {k: data[k] for k in ("total_lines", "matched_lines", "files_scanned", "skipped")}
            outside = facts["lines_outside_window"]
            return ToolResult.empty(
                f"no errors in {summary.matched_lines} lines from {len(scanned)} file(s)"
                f"{window_words(start, end)}"
                + (f"; {outside} lines read outside the window were not counted" if outside else "")
                + (f" ({budget.note()})" if budget.spent else ""),
                **counts,
                **facts,
                since=iso(start.replace(microsecond=0)) if start else None,
                until=iso(end.replace(microsecond=0)) if end else None,
                partial=budget.spent,
            )
        # ranked by count: the output cap drops the smallest groups, never the middle ones, and
        # counts the records in the groups it leaves out
        return ToolResult.ok(
            data,
            source=", ".join(paths),
            since=iso(start),
            until=iso(end),
            ranked=["groups"],
            ranked_tally={
                "groups": {"count": "count", "shown": "groups_shown", "hidden": "records_in_hidden_groups"}
            },
        ).with_evidence(error_groups_evidence(data))

    @ts.tool(category="logs", read_only=True, risk="sensitive")
    def logs_patterns(
        paths: list[str], since: str | None = None, until: str | None = None, max_templates: int = 30
    ) -> ToolResult:
        """Mine the message templates of log files: what kinds of lines there are and how many of each.

        Use it to see the shape of unfamiliar logs, or what is new or bursting: every line (not
        only errors) is reduced to a template with its variable parts as <*>, with counts,
        first/last seen and examples, most frequent first.

        Args:
            paths: log files or directories.
            since: only lines at or after this time: 15m, 2h, 1d, an ISO date.
            until: only lines at or before this time.
            max_templates: how many templates to return (1-500); all are counted.
        """
        try:
            start, end = window_args(since, until)
            lines, scanned, skipped, capped = read_paths(paths, settings, start)
        except UserError as exc:
            return _fail(exc)
        budget = ReadBudget(settings)
        data = mine_templates(budget.wrap(lines), TemplateMiner(), start, end, max_templates)
        if not scanned:
            return _nothing_read(paths, skipped)
        data.update(files_scanned=len(scanned), skipped=skipped[:50])
        if capped:
            data["note"] = f"stopped listing files at {MAX_SCAN_FILES}; pass narrower paths"
        budget.mark(data)
        if not data["templates"]:
            return ToolResult.empty(
                f"no log lines in {len(scanned)} file(s){window_words(start, end)}",
                skipped=skipped[:50],
                partial=budget.spent,
            )
        return ToolResult.ok(
            data, source=", ".join(paths), ranked=["templates", "error_signatures"]
        ).with_evidence(patterns_evidence(data))

    @ts.tool(category="logs", read_only=True, risk="sensitive")
    def logs_journal(
        unit: str | None = None, since: str | None = "1h", priority: str = "err", lines: int = 200
    ) -> ToolResult:
        """Read recent systemd journal entries (journalctl), newest last, with the most common messages.

        Returns an empty result, not an error, on hosts without journald (containers, macOS).

        Args:
            unit: a systemd unit such as nginx.service; all units when omitted.
            since: only entries at or after this time: 15m, 2h, 1d, '2 hours ago', an ISO date.
            priority: the least severe priority to include: emerg, alert, crit, err, warning,
                notice, info or debug (0-7 also accepted).
            lines: the most entries to return (1-5000).
        """
        prio = priority.strip().lower()
        if prio not in PRIORITIES and not (prio.isdigit() and int(prio) < len(PRIORITIES)):
            return ToolResult.fail(
                f"unknown priority {priority!r}", hint=f"use one of {', '.join(PRIORITIES)}"
            )
        if unit is not None and (not unit.strip() or unit.startswith("-")):
            return ToolResult.fail(f"invalid unit {unit!r}", hint="give a unit name such as nginx.service")
        try:
            start = parse_since(since) if since else None
        except UserError as exc:
            return _fail(exc)
        exe = shutil.which("journalctl")
        unavailable = "journald is not available on this host ({}); read log files with logs_tail/logs_errors"
        if exe is None:
            return ToolResult.empty(unavailable.format("journalctl not found"), journald=False)
        argv = [exe, "-o", "json", "--no-pager", "-n", str(max(1, min(lines, 5000))), "-p", prio]
        if start is not None:
            argv += ["--since", f"@{int(start.timestamp())}"]
        if unit:
            argv += ["-u", unit.strip()]
        try:
            proc = subprocess.run(
                argv, capture_output=True, text=True, timeout=JOURNAL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            return ToolResult.fail(
                f"journalctl did not answer within {JOURNAL_TIMEOUT_S} s", hint="narrow with unit or since"
            )
        except OSError as exc:
            return ToolResult.empty(
                unavailable.format(f"cannot run journalctl: {exc.strerror}"), journald=False
            )
        entries = []
        for raw in proc.stdout.splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict):
                entries.append(_journal_entry(obj))
        if proc.returncode != 0 and not entries:
            err = (proc.stderr.strip().splitlines() or ["no output"])[0]
            if "No journal files" in err or not _journal_present():
                return ToolResult.empty(unavailable.format(err), journald=False)
            return ToolResult.fail(
                f"journalctl failed: {err}",
                hint="the user may need to be in the systemd-journal or adm group to read the journal",
            )
        if not entries:
            if not _journal_present():
                return ToolResult.empty(
                    unavailable.format("journalctl found but there are no journal files"), journald=False
                )
            return ToolResult.empty(
                f"no journal entries at priority {prio} or more severe"
                f"{' for ' + unit if unit else ''}{window_words(start, None)}"
            )
        shapes = Counter(message_shape(e["message"]) for e in entries)
        data = {
            "entries": entries,
            "count": len(entries),
            "top_messages": [{"shape": s, "count": c} for s, c in shapes.most_common(10)],
        }
        return ToolResult.ok(data, source="journald", command=" ".join(["journalctl", *argv[1:]]))

    return ts


def register(registry: ToolRegistry) -> None:
    """Entry point ``devops_agent.toolsets: logs``."""
    registry.add_toolset(NAME, build, DESCRIPTION)
