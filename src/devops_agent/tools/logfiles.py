"""Finding and reading log files: walk directories inside the roots, open plain and compressed
logs, and read the lines inside a time window cheaply.

Each real file is read once, however many paths lead to it: the Kubernetes layout
(``/var/log/containers/*.log`` links into ``/var/log/pods/…``), a ``current.log`` link or a hard
link are the same inode, counted once. Compressed logs (.gz, .xz, .bz2) are decompressed with the
standard library; a compressed file last modified before the window cannot hold lines in it and
is not decompressed. A plain file's window is found by bisecting on timestamps.

Read-only by construction: files are only opened for reading, always after
:func:`~devops_agent.tools.paths.resolve_in_roots` has checked they lie inside ``files.roots``.
This module must not analyze what it reads (that is :mod:`devops_agent.analysis`) nor build tool
results.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, cast

from devops_agent.analysis import extract_timestamp, parse_since
from devops_agent.analysis.timeparse import iso
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.filetypes import BINARY_PROBE_BYTES, is_binary_head
from devops_agent.tools.paths import resolve_in_roots, roots_of

LOG_NAME_RE = re.compile(
    r"(?:\.log(?:\.\d+)?|\.gz|\.xz|\.bz2|\.jsonl|\.out|\.err"
    r"|^(?:syslog|messages|kern|auth|daemon|dmesg)(?:\.\d+)?)$"
)
MAX_SCAN_FILES = 2000
MAX_LINE_CHARS = 65536
GZ_BUDGET_FACTOR = 20  # a compressed file cannot be read from the end: allow this many times the byte limit
BISECT_STOP = 65536
COMPRESSED: dict[str, Callable[..., IO[Any]]] = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
"""Compressed log suffixes and the standard-library opener of each."""
ROTATED_RE = re.compile(r"(?:\.\d+|\.gz|\.xz|\.bz2|[-_.]\d{8}|[-_.]\d{4}-\d\d-\d\d(?:\.log)?)$")
"""A rotated log's name: ``app.log.1``, ``app.log.2.gz``, ``syslog-20261126``, ``app.2026-11-26.log``."""
MTIME_SLACK_S = 900.0
"""A compressed file modified this long before the window starts is skipped (clock skew between
the writer and this host is allowed for)."""


def resolve_log_path(path: str, roots: list[Path]) -> Path:
    resolved = resolve_in_roots(path, roots)
    if not resolved.exists():
        raise UserError(
            f"{path!r} does not exist", hint="check the path; logs_tail on a directory lists logs"
        )
    return resolved


def is_rotated(path: str | Path) -> bool:
    """Whether ``path`` names a rotated (archived) log rather than the one being written."""
    return ROTATED_RE.search(Path(path).name) is not None


def _is_log_name(path: Path) -> bool:
    return LOG_NAME_RE.search(path.name) is not None


# Text is decoded leniently; utf-8-sig drops a byte-order mark at the start of a file or stream.
ENCODING = "utf-8-sig"


def _padding_end(fh: IO[bytes]) -> int:
    """Where a file's leading run of NUL bytes ends (0 when it starts with text).

    ``logrotate``'s copytruncate, or a writer that keeps its offset after the file was
    truncated, leaves the start of a live log as a hole of NULs; the text after it is the log.
    """
    fh.seek(0)
    pos = 0
    while block := fh.read(1 << 20):
        rest = block.lstrip(b"\0")
        if rest:
            return pos + len(block) - len(rest)
        pos += len(block)
    return pos


def is_compressed(path: Path) -> bool:
    """Whether ``path`` is a compressed log (.gz, .xz, .bz2), read from its start only."""
    return path.suffix in COMPRESSED


def _open_text(path: Path) -> IO[str]:
    if is_compressed(path):
        return cast("IO[str]", COMPRESSED[path.suffix](path, "rt", encoding=ENCODING, errors="replace"))
    raw = path.open("rb")
    if raw.read(1) == b"\0":
        raw.seek(_padding_end(raw))
    else:
        raw.seek(0)
    return io.TextIOWrapper(raw, encoding=ENCODING, errors="replace")


def unreadable(path: Path) -> str | None:
    """Why ``path`` cannot be read as a text log (binary, permission, corrupt archive), or None.

    A NUL run at the start of a plain file is padding, not a sign of binary content; a .gz,
    .xz or .bz2 file is judged by what it decompresses to.
    """
    try:
        if is_compressed(path):
            with COMPRESSED[path.suffix](path, "rb") as packed:
                head = packed.read(BINARY_PROBE_BYTES)
        else:
            with path.open("rb") as fh:
                head = fh.read(BINARY_PROBE_BYTES)
                if head[:1] == b"\0":
                    fh.seek(_padding_end(fh))
                    head = fh.read(BINARY_PROBE_BYTES)
    except PermissionError:
        return "permission denied"
    except (OSError, EOFError, lzma.LZMAError) as exc:
        return f"cannot read: {exc}"
    return "binary" if is_binary_head(head) else None


def _file_key(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_dev, st.st_ino


def walk(
    root: Path,
    roots: list[Path],
    limit: int,
    logs_only: bool,
    skipped: list[str] | None = None,
    seen: set[tuple[int, int]] | None = None,
) -> tuple[list[Path], bool]:
    """Readable files under ``root`` (itself if a file), inside the roots; True if ``limit`` hit.

    What a directory holds but cannot be read (an unreadable file or subdirectory, a link
    leading outside the roots) is noted in ``skipped``, so an empty result is never silent.
    Each real file comes once: links and hard links to a file already found (in this walk, or
    in ``seen``, which the walk extends) are left out, so no line is counted twice.
    """
    keys: set[tuple[int, int]] = seen if seen is not None else set()
    if root.is_file():
        key = _file_key(root)
        if key is not None and key in keys:
            return [], False
        if key is not None:
            keys.add(key)
        return [root], False
    found: list[Path] = []
    notes: list[str] = skipped if skipped is not None else []

    def cannot_list(exc: OSError) -> None:
        notes.append(f"{exc.filename} (cannot list: {exc.strerror or exc})")

    for dirpath, dirnames, filenames in os.walk(root, onerror=cannot_list):
        dirnames.sort()
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if logs_only and not _is_log_name(path):
                continue
            try:
                path = resolve_in_roots(str(path), roots)  # a symlink must not lead outside
                if not path.is_file():
                    continue
            except UserError:
                notes.append(f"{Path(dirpath, name)} (a link outside the allowed roots)")
                continue
            except OSError as exc:  # listed but not searchable: a directory without x permission
                notes.append(f"{path} (cannot read: {exc.strerror or exc})")
                continue
            if not os.access(path, os.R_OK):
                notes.append(f"{path} (permission denied)")
                continue
            key = _file_key(path)
            if key is not None and key in keys:
                continue  # a link to a file read already (containers/*.log -> pods/…)
            if len(found) >= limit:
                return found, True
            if key is not None:
                keys.add(key)
            found.append(path)
    return found, False


def mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:  # rotated away since it was listed
        return 0.0


def newest(files: list[Path], n: int) -> list[Path]:
    """The ``n`` most recently modified of ``files``."""
    return sorted(files, key=mtime, reverse=True)[:n]


def _first_ts_after(fh: IO[bytes], pos: int) -> datetime | None:
    fh.seek(pos)
    if pos:
        fh.readline(MAX_LINE_CHARS)  # the partial line we landed in
    for _ in range(64):
        raw = fh.readline(MAX_LINE_CHARS)
        if not raw:
            return None
        ts = extract_timestamp(raw.decode("utf-8", "replace"))
        if ts is not None:
            return ts
    return None


def _next_stamped_line(fh: IO[bytes], pos: int) -> int:
    """The offset of the first timestamped line after ``pos``: a seek must not start mid-record."""
    fh.seek(pos)
    fh.readline(MAX_LINE_CHARS)  # the partial line we landed in
    first = fh.tell()
    for _ in range(1000):
        start = fh.tell()
        raw = fh.readline(MAX_LINE_CHARS)
        if not raw:
            break
        if extract_timestamp(raw.decode("utf-8", "replace")) is not None:
            return start
    return first  # no timestamps here: start at the first whole line


SORT_SAMPLES = 16
SORT_SLACK_S = 300.0  # writers out of step by up to this much still count as in time order


def _time_sorted(fh: IO[bytes], size: int) -> bool:
    """Whether the file looks written in time order, judged at SORT_SAMPLES evenly spaced offsets.

    Bisection on timestamps assumes it; a concatenation such as ``cat app.log app.log.1`` is
    not, and is then read whole (and filtered line by line) rather than cut in the wrong place.
    """
    previous: datetime | None = None
    for k in range(SORT_SAMPLES):
        ts = _first_ts_after(fh, size * k // SORT_SAMPLES)
        if ts is None:
            continue
        if previous is not None and (previous - ts).total_seconds() > SORT_SLACK_S:
            return False
        previous = ts
    return True


def _bisect(fh: IO[bytes], size: int, target: datetime, known_sorted: bool = False) -> tuple[int, int]:
    """Byte offsets (lo, hi) with the first line stamped >= ``target`` starting between them.

    (0, 0) for a file that is not in time order (:func:`_time_sorted`, unless ``known_sorted``
    says the caller checked): read it from the start.
    """
    lo, hi = 0, size
    if hi - lo > BISECT_STOP and not known_sorted and not _time_sorted(fh, size):
        return 0, 0
    while hi - lo > BISECT_STOP:
        mid = (lo + hi) // 2
        ts = _first_ts_after(fh, mid)
        if ts is not None and ts < target:
            lo = mid
        else:
            hi = mid  # no timestamp there: look earlier rather than skip lines
    return lo, hi


def _end_offset(fh: IO[bytes], size: int, until: datetime) -> int:
    """The offset of the first line stamped after ``until`` (``size`` when there is none, or
    when the file is not in time order)."""
    if size > BISECT_STOP and not _time_sorted(fh, size):
        return size
    lo = _bisect(fh, size, until, known_sorted=True)[0]
    fh.seek(lo)
    if lo:
        fh.readline(MAX_LINE_CHARS)
    while (start := fh.tell()) < lo + 4 * BISECT_STOP:  # a stretch without timestamps ends the scan
        raw = fh.readline(MAX_LINE_CHARS)
        if not raw:
            return size
        ts = extract_timestamp(raw.decode("utf-8", "replace"))
        if ts is not None and ts > until:
            return start
    return start


def _read_window(
    path: Path, since: datetime | None, until: datetime | None, budget: int, keep_end: bool
) -> tuple[list[str], bool]:
    """Lines of a plain file between since and until (by bisection), at most ``budget`` bytes.

    When the window is larger than the budget, keep its end (``keep_end``) or its start.
    """
    with path.open("rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        lo = _bisect(fh, size, since)[0] if since is not None else 0
        hi = _end_offset(fh, size, until) if until is not None else size
        truncated = hi - lo > budget
        if truncated:
            lo, hi = (hi - budget, hi) if keep_end else (lo, lo + budget)
        if lo > 0:
            lo = min(hi, _next_stamped_line(fh, lo))
        fh.seek(lo)
        data = fh.read(hi - lo)
    text = data.decode(ENCODING, "replace")
    lines = text.splitlines()
    if hi < size and lines and not text.endswith("\n"):
        lines = lines[:-1]  # stopped inside a line
    return lines, truncated


def _iter_lines(fh: IO[str]) -> Iterator[str]:
    """Lines of ``fh``; an overlong line is cut to MAX_LINE_CHARS and the rest skipped."""
    while line := fh.readline(MAX_LINE_CHARS):
        if len(line) == MAX_LINE_CHARS and not line.endswith("\n"):
            while (rest := fh.readline(MAX_LINE_CHARS)) and not rest.endswith("\n"):
                pass
        yield line.lstrip("\0").rstrip("\r\n") if line[:1] == "\0" else line.rstrip("\r\n")


class FileRead:
    """How reading one file went: whether the byte limit cut the window short."""

    truncated: bool = False


def file_lines(
    path: Path, since: datetime | None, until: datetime | None, max_bytes: int, keep_end: bool, read: FileRead
) -> Iterator[str]:
    """The lines of one file inside [since, until], reading a bounded number of bytes.

    A plain file's window is found by bisection and cut to ``max_bytes`` (its end when
    ``keep_end``). A compressed file cannot be read from its end or bisected, so it is streamed from
    its start, and the budget counts only the lines inside the window: with ``keep_end`` the last
    ``max_bytes`` of them are kept, otherwise up to GZ_BUDGET_FACTOR times that from its start.
    Counting every line read instead would stop before a window late in the file, and report
    its absence, or older lines as the file's last ones.
    """
    if not is_compressed(path):
        lines, read.truncated = _read_window(path, since, until, max_bytes, keep_end)
        yield from _in_window(lines, since, until)
        return
    with _open_text(path) as fh:
        window = _in_window(_iter_lines(fh), since, until)
        if keep_end:
            yield from _last_bytes(window, max_bytes, read)
        else:
            yield from _budgeted(window, max_bytes * GZ_BUDGET_FACTOR, read)


def _last_bytes(lines: Iterable[str], budget: int, read: FileRead) -> list[str]:
    """The last lines of ``lines`` that fit in ``budget`` characters (at least the last one)."""
    kept: deque[str] = deque()
    size = 0
    for line in lines:
        kept.append(line)
        size += len(line) + 1
        while size > budget and len(kept) > 1:
            size -= len(kept.popleft()) + 1
            read.truncated = True
    return list(kept)


def _budgeted(lines: Iterable[str], budget: int, read: FileRead) -> Iterator[str]:
    seen = 0
    for line in lines:
        seen += len(line) + 1
        if seen > budget:
            read.truncated = True
            return
        yield line


def _in_window(lines: Iterable[str], since: datetime | None, until: datetime | None) -> Iterator[str]:
    """Lines inside [since, until]; a line without a timestamp inherits the previous one's."""
    if since is None and until is None:
        yield from lines
        return
    current: datetime | None = None
    for line in lines:
        current = extract_timestamp(line) or current
        if current is None or ((since is None or current >= since) and (until is None or current <= until)):
            yield line


def window_args(since: str | None, until: str | None) -> tuple[datetime | None, datetime | None]:
    now = datetime.now(UTC)
    start = parse_since(since, now) if since else None
    end = parse_since(until, now) if until else None
    if start is not None and end is not None and start > end:
        raise UserError("since is after until", hint="swap them, or leave one out")
    return start, end


def nothing_read(paths: list[str], skipped: list[str]) -> UserError:
    """The error for inputs of which no file could be read: what was skipped, or that none exist.

    Reading nothing is not evidence of no errors, so the tools fail (a gap in a report) and
    the CLI exits 2, rather than report an empty result.
    """
    if skipped:
        more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
        return UserError(
            f"no log file could be read: {'; '.join(skipped[:3])}{more}",
            hint="pass text log files (plain or .gz) you can read, or directories holding some",
        )
    return UserError(
        f"no files found in {', '.join(paths)}", hint="pass log files or directories holding some"
    )


def _open_at(path: Path, since: datetime | None) -> IO[str]:
    """Open a log for reading text; a plain file with ``since`` starts about where that time is."""
    if since is None or is_compressed(path):
        return _open_text(path)
    raw = path.open("rb")
    try:
        pad = _padding_end(raw) if raw.read(1) == b"\0" else 0
        lo, _ = _bisect(raw, os.fstat(raw.fileno()).st_size, since)
        raw.seek(max(pad, _next_stamped_line(raw, lo) if lo else 0))
    except BaseException:
        raw.close()
        raise
    return io.TextIOWrapper(raw, encoding=ENCODING, errors="replace")


def window_words(start: datetime | None, end: datetime | None) -> str:
    """`` (since 2026-11-27T14:42:14Z, until …)`` for messages; empty without a window."""
    parts = []
    if start is not None:
        parts.append(f"since {iso(start.replace(microsecond=0))}")
    if end is not None:
        parts.append(f"until {iso(end.replace(microsecond=0))}")
    return f" ({', '.join(parts)})" if parts else ""


def collect(targets: list[Path], roots: list[Path], skipped: list[str]) -> tuple[list[Path], bool]:
    """Every file under ``targets``, each real file once, capped at MAX_SCAN_FILES; see :func:`walk`."""
    files: list[Path] = []
    seen: set[tuple[int, int]] = set()
    capped = False
    for target in targets:
        found, hit = walk(target, roots, MAX_SCAN_FILES - len(files), False, skipped, seen)
        files.extend(found)
        capped = capped or hit
    return files, capped


def before_window(path: Path, start: datetime | None) -> bool:
    """Whether ``path`` is a compressed log last modified (well) before ``start``: rotated away
    before the window began, it holds no line in it, and decompressing it would cost for nothing."""
    if start is None or not is_compressed(path):
        return False
    modified = mtime(path)
    return 0 < modified < start.timestamp() - MTIME_SLACK_S


def stream_files(
    files: list[Path],
    start: datetime | None,
    scanned: list[str],
    skipped: list[str],
    older: list[str] | None = None,
    written_before: set[str] | None = None,
) -> Iterator[tuple[str, str]]:
    """(file, line) for every line of ``files``, skipping binaries; notes what was read or skipped.

    A compressed file rotated before ``start`` (:func:`before_window`) is not read; it is noted
    in ``older``. A plain file last written before ``start`` is read (bisection finds its
    stamped lines cheaply) and added to ``written_before`` before its lines come: its lines
    without a timestamp are not in the window either.
    """
    for file in files:
        if before_window(file, start):
            if older is not None:
                older.append(str(file))
            continue
        if written_before is not None and start is not None:
            modified = mtime(file)
            if 0 < modified < start.timestamp() - MTIME_SLACK_S:
                written_before.add(str(file))
        if reason := unreadable(file):
            skipped.append(f"{file} ({reason})")
            continue
        scanned.append(str(file))
        try:
            fh = _open_at(file, start)
        except (OSError, EOFError) as exc:
            skipped.append(f"{file} (read failed: {exc})")
            continue
        with fh:
            yield from _stream_lines(fh, str(file), skipped)


def _decompressing(head: bytes, raw: IO[bytes]) -> IO[bytes] | None:
    """``raw`` decompressed when ``head`` starts with the magic bytes of gzip, xz or bzip2."""
    if head.startswith(b"\x1f\x8b"):
        return cast("IO[bytes]", gzip.GzipFile(fileobj=raw, mode="rb"))
    if head.startswith(b"\xfd7zXZ\x00"):
        return cast("IO[bytes]", lzma.LZMAFile(raw))  # noqa: SIM115 - the caller's reader owns it
    if head.startswith(b"BZh"):
        return cast("IO[bytes]", bz2.BZ2File(raw))  # noqa: SIM115 - the caller's reader owns it
    return None


def _stream_lines(fh: IO[str], source: str, skipped: list[str]) -> Iterator[tuple[str, str]]:
    try:
        for line in _iter_lines(fh):
            yield source, line
    except (OSError, EOFError, lzma.LZMAError) as exc:  # a truncated or corrupt compressed stream
        skipped.append(f"{source} (read failed: {exc})")


def read_stream(
    raw: IO[bytes], source: str = "stdin"
) -> tuple[Iterator[tuple[str, str]], list[str], list[str]]:
    """Lines of a byte stream such as standard input: (lines, scanned, skipped), as :func:`read_paths`.

    A stream that starts with the magic bytes of gzip, xz or bzip2 is decompressed on the fly,
    so ``cat app.log.gz | …`` reads like the file itself.
    """
    buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(cast("io.RawIOBase", raw))
    head = buffered.peek(BINARY_PROBE_BYTES)
    packed = _decompressing(head, buffered)
    if packed is None and is_binary_head(head):  # as files are judged
        return iter(()), [], [f"{source} (binary)"]
    stream = cast("io.BufferedReader", packed if packed is not None else buffered)
    text = io.TextIOWrapper(stream, encoding=ENCODING, errors="replace")
    skipped: list[str] = []
    return _stream_lines(text, source, skipped), [source], skipped


def read_paths(
    paths: list[str], settings: Settings, since: datetime | None = None
) -> tuple[Iterator[tuple[str, str]], list[str], list[str], bool]:
    """Lines of every log file under ``paths`` (inside the roots): (lines, scanned, skipped, capped).

    ``scanned`` and ``skipped`` fill up as the iterator is consumed.
    """
    roots = roots_of(settings)
    skipped: list[str] = []
    files, capped = collect([resolve_log_path(p, roots) for p in paths], roots, skipped)
    scanned: list[str] = []
    return stream_files(files, since, scanned, skipped), scanned, skipped, capped
