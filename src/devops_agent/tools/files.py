"""The ``files`` toolset: list, read, tail and search text files inside the configured roots.

Every path goes through :func:`devops_agent.tools.paths.resolve_in_roots` first, so ``..`` and
symlinks cannot lead outside ``files.roots``; a directory walk re-checks each file it meets.
Reads are bounded (``files.max_read_bytes`` per answer, ten times that per search) and binary
files are refused. These tools never write, move, delete or execute anything, and they must not
follow a path the roots check has not approved.
"""

from __future__ import annotations

import contextlib
import fnmatch
import gzip
import io
import os
import stat
import zlib
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from devops_agent.config import Settings
from devops_agent.errors import PathAccessError
from devops_agent.filetypes import BINARY_PROBE_BYTES, is_binary_head
from devops_agent.tools.base import ToolResult, ToolsetBuilder
from devops_agent.tools.paths import resolve_in_roots, roots_of
from devops_agent.tools.patterns import search_pattern
from devops_agent.tools.registry import ToolRegistry

NAME = "files"
DESCRIPTION = "List, read, tail and search text files under the configured roots"

TAIL_BLOCK_BYTES = 64 * 1024
LIST_SCAN_CAP = 100_000
GREP_LINE_CHARS = 1000
SKIP_DIRS = frozenset({".git", ".hg", ".svn"})
GZIP_ERRORS = (EOFError, gzip.BadGzipFile, zlib.error)


def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat()


class NotRegularFile(OSError):
    """What was opened is not a regular file (a FIFO, socket or device swapped in, or named)."""


def _moved(path: Path) -> PathAccessError:
    return PathAccessError(
        f"{path} changed while it was being opened (a symlink appeared in it)",
        hint="the file or a directory above it was replaced; try again",
        path=str(path),
    )


_DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: opening a FIFO must not wait for a writer, and a read of a procfs file such as
# /proc/kmsg must not wait for data; regular files on disk ignore it.
_FILE_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CONFINED = bool(_NOFOLLOW) and os.open in os.supports_dir_fd


def _open_fd(path: Path, roots: list[Path]) -> int:
    """A read-only descriptor of ``path``, an already checked, symlink-free path inside a root.

    The path is opened one component at a time below its root, refusing every symlink: if a
    directory or the file was swapped for a symlink after :func:`resolve_in_roots` approved the
    path, the open fails instead of following it out of the roots. Raises
    :class:`~devops_agent.errors.PathAccessError` for such a swap or a path outside ``roots``,
    :class:`NotRegularFile` for anything but a regular file, ``OSError`` otherwise.
    """
    root = next((r for r in roots if path == r or path.is_relative_to(r)), None)
    if root is None:
        resolve_in_roots(str(path), roots)  # raises the usual refusal
        raise _moved(path)
    parts = path.relative_to(root).parts
    if not parts or not _CONFINED:
        fd = os.open(path, _FILE_FLAGS | _NOFOLLOW)
    else:
        fd = os.open(root, _DIR_FLAGS)
        try:
            for i, part in enumerate(parts):
                last = i == len(parts) - 1
                try:
                    nfd = os.open(part, (_FILE_FLAGS if last else _DIR_FLAGS) | _NOFOLLOW, dir_fd=fd)
                except OSError:
                    with contextlib.suppress(OSError):
                        if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                            raise _moved(path) from None
                    raise
                os.close(fd)
                fd = nfd
        except BaseException:
            os.close(fd)
            raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise NotRegularFile(f"{path} is not a regular file")
    return fd


@contextmanager
def _open(path: Path, roots: list[Path]) -> Iterator[tuple[io.BufferedIOBase, int]]:
    """``(stream, size on disk)`` of a checked path (see :func:`_open_fd`), for binary reading;
    ``.gz`` files are decompressed on the fly. The size comes from the open file itself."""
    fd = _open_fd(path, roots)
    raw = os.fdopen(fd, "rb")
    try:
        size = os.fstat(fd).st_size
        if path.suffix.lower() == ".gz":
            with gzip.GzipFile(fileobj=raw, mode="rb") as gz:
                yield gz, size
        else:
            yield raw, size
    finally:
        raw.close()


def _is_binary(fh: io.BufferedIOBase) -> bool:
    """:func:`is_binary_head` of an open file; leaves the stream at its start."""
    head = fh.read(BINARY_PROBE_BYTES)
    if head is None:  # a non-blocking special file (e.g. /proc/kmsg) with nothing to read now
        raise BlockingIOError("no data available without waiting")
    fh.seek(0)
    return is_binary_head(head)


def _iter_lines(fh: io.BufferedIOBase, max_line: int, budget: int) -> Iterator[tuple[bytes, int, bool]]:
    """Yield ``(first max_line bytes of the line, its length, whole)``; memory stays bounded, and
    reading stops once about ``budget`` bytes were read: a line still going then (one 50 GB line
    without a newline) is the last one yielded, ``whole`` false and its length what was read."""
    read = 0
    while read < budget and (raw := fh.readline(max_line)):
        size, whole = len(raw), True
        if size == max_line and not raw.endswith(b"\n"):
            while True:  # drain the rest of an overlong line, within the budget
                if read + size >= budget:
                    whole = False
                    break
                more = fh.readline(max_line)
                size += len(more)
                if not more or more.endswith(b"\n"):
                    break
        read += size
        yield raw, size, whole
        if not whole:
            return


def _text(raw: bytes) -> str:
    """A line as text. Bytes that are not UTF-8 (a Latin-1 log) show as ``\\xe9`` escapes rather
    than all becoming the same U+FFFD, so they stay distinguishable and searchable."""
    return raw.decode("utf-8", errors="backslashreplace").rstrip("\r\n")


def _clip(text: str, limit: int = GREP_LINE_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def _not_a_file(p: Path, shown: str) -> ToolResult | None:
    if not p.exists():
        return ToolResult.fail(f"{shown}: no such file", hint="check the path; files_list shows what exists")
    if p.is_dir():
        return ToolResult.fail(f"{shown} is a directory", hint="use files_list or files_grep on directories")
    if not p.is_file():
        return ToolResult.fail(f"{shown} is not a regular file", hint="only regular files can be read")
    return None


def _os_error(exc: OSError, shown: str) -> ToolResult:
    if isinstance(exc, NotRegularFile):
        return ToolResult.fail(
            f"{shown} is not a regular file (a FIFO, socket or device)",
            hint="only regular files can be read",
        )
    if isinstance(exc, PermissionError):
        return ToolResult.fail(
            f"permission denied reading {shown}",
            hint="the agent's user cannot read it; grant read access or run the agent as a user that can",
        )
    return ToolResult.fail(f"cannot read {shown}: {exc.strerror or exc}")


def _binary(shown: str) -> ToolResult:
    return ToolResult.fail(
        f"{shown} looks binary (NUL bytes in its first 8 KB)",
        hint="only text files can be read; files_list shows its size and age",
    )


def _tail_plain(fh: io.BufferedIOBase, size: int, n: int, max_bytes: int) -> tuple[list[bytes], bool]:
    """Last ``n`` lines by reading blocks backwards from the end; ``True`` when cut at max_bytes."""
    pos, buf, newlines = size, b"", 0
    while pos > 0 and newlines <= n and len(buf) < max_bytes:
        step = min(TAIL_BLOCK_BYTES, pos)
        pos -= step
        fh.seek(pos)
        block = fh.read(step)
        newlines += block.count(b"\n")
        buf = block + buf
    capped = pos > 0 and newlines <= n
    parts = buf.split(b"\n")
    if parts[-1] == b"":
        parts.pop()
    if pos > 0 and len(parts) > 1:
        parts = parts[1:]  # the first piece starts mid-line
    return parts[-n:], capped


def build(settings: Settings) -> ToolsetBuilder:
    """The files toolset, confined to ``settings.files.roots``."""
    ts = ToolsetBuilder(NAME, DESCRIPTION)
    max_bytes = settings.files.max_read_bytes

    def locate(path: str) -> Path | ToolResult:
        try:
            return resolve_in_roots(path, roots_of(settings))
        except PathAccessError as exc:
            return ToolResult.fail(exc.message, exc.hint)

    def entry(p: Path, base: Path) -> dict[str, Any]:
        st = p.lstat()
        kind = "dir" if stat.S_ISDIR(st.st_mode) else "file" if stat.S_ISREG(st.st_mode) else "other"
        row: dict[str, Any] = {"name": str(p.relative_to(base)) if p != base else p.name, "type": kind}
        if stat.S_ISLNK(st.st_mode):
            row["type"] = "symlink"
            row["target"] = os.readlink(p)
        row["size"] = st.st_size if kind == "file" else None
        row["mtime"] = _iso(st.st_mtime)
        return row

    @ts.tool(category="files", read_only=True)
    def files_list(
        path: str,
        pattern: str = "*",
        recursive: bool = False,
        limit: Annotated[int, Field(ge=1, le=5000)] = 200,
    ) -> ToolResult:
        """List the entries of a directory with type, size and modification time.

        Use it to see what is in a directory (e.g. which logs exist, which file changed last).

        Args:
            path: directory to list (a file lists just that file).
            pattern: shell glob matched against each entry's name, e.g. "*.log".
            recursive: descend into subdirectories (symlinked directories are not followed).
            limit: most entries to return (1-5000); `truncated` says when there were more.
        """
        p = locate(path)
        if isinstance(p, ToolResult):
            return p
        if not p.exists():
            return ToolResult.fail(f"{path}: no such file or directory", hint="check the path")
        if not p.is_dir():
            return ToolResult.ok(
                {"path": str(p), "entries": [entry(p, p)], "truncated": False}, source=str(p)
            )
        found: list[Path] = []
        scanned = 0
        unreadable: list[str] = []
        denied: list[OSError] = []

        def on_error(exc: OSError) -> None:
            if exc.filename is not None and Path(exc.filename) == p:
                denied.append(exc)  # the directory asked for: an error, not an empty listing
            unreadable.append(str(exc.filename))

        try:
            if recursive:
                walk = os.walk(p, onerror=on_error)
                for top, dirs, files in walk:
                    dirs.sort()
                    for name in sorted(dirs + files):
                        scanned += 1
                        if fnmatch.fnmatch(name, pattern):
                            found.append(Path(top, name))
                        if len(found) > limit or scanned >= LIST_SCAN_CAP:
                            break
                    if len(found) > limit or scanned >= LIST_SCAN_CAP:
                        break
            else:
                with os.scandir(p) as it:
                    names = sorted(e.name for e in it)
                scanned = len(names)
                found = [p / n for n in names if fnmatch.fnmatch(n, pattern)][: limit + 1]
        except OSError as exc:
            return _os_error(exc, path)
        if denied:
            return _os_error(denied[0], path)
        rows = []
        for f in found[:limit]:
            try:
                rows.append(entry(f, p))
            except OSError:  # vanished or unreadable between listing and stat
                continue
        data: dict[str, Any] = {"path": str(p), "entries": rows, "truncated": len(found) > limit}
        if recursive and scanned >= LIST_SCAN_CAP:
            data["note"] = f"stopped after scanning {LIST_SCAN_CAP} entries; narrow the path or pattern"
        if unreadable:
            data["unreadable_dirs"] = unreadable[:20]
        if not rows:
            return ToolResult.empty(f"no entries matching {pattern!r} in {p}")
        return ToolResult.ok(data, source=str(p))

    @ts.tool(category="files", read_only=True, risk="sensitive")
    def files_read(
        path: str, start_line: int = 1, max_lines: Annotated[int, Field(ge=1, le=5000)] = 200
    ) -> ToolResult:
        """Read a range of lines from a text file (``.gz`` files are decompressed), with line numbers.

        Use it to look at a config file, script or part of a log; for the end of a large log use
        files_tail, to find lines use files_grep. Binary files are refused.

        Args:
            path: the file to read.
            start_line: first line to return (1-based).
            max_lines: most lines to return (1-5000); `next_start_line` continues a long file.
        """
        start_line = max(1, start_line)
        p = locate(path)
        if isinstance(p, ToolResult):
            return p
        if problem := _not_a_file(p, path):
            return problem
        lines: list[dict[str, Any]] = []
        used = scanned = line_no = 0
        cut_by_bytes = more = False
        try:
            with _open(p, roots_of(settings)) as (fh, size):
                if _is_binary(fh):
                    return _binary(path)
                for line_no, (raw, full, whole) in enumerate(_iter_lines(fh, max_bytes, max_bytes * 20), 1):
                    scanned += full
                    if line_no < start_line:
                        if scanned > max_bytes * 10:
                            return ToolResult.fail(
                                f"line {start_line} is beyond the first {max_bytes * 10} bytes of {path}",
                                hint="use files_tail for the end of a large file or files_grep to find lines",
                            )
                        continue
                    if len(lines) >= max_lines or used + len(raw) > max_bytes and lines:
                        more, cut_by_bytes = True, len(lines) < max_lines
                        break
                    text = _text(raw)
                    if not whole:  # stopped reading inside this line: its end and the rest unknown
                        text += f"… [line cut: more than {full - len(raw)} more bytes]"
                        more = True
                    elif full > len(raw):
                        text += f"… [line cut: {full - len(raw)} more bytes]"
                    used += len(raw)
                    lines.append({"n": line_no, "text": text})
                total: int | None = None
                if not more:
                    total = line_no
                elif p.suffix != ".gz" and size <= max_bytes:  # cheap: finish counting in memory
                    total = line_no + sum(1 for _ in _iter_lines(fh, max_bytes, max_bytes))
        except PathAccessError as exc:
            return ToolResult.fail(exc.message, exc.hint)
        except OSError as exc:
            return _os_error(exc, path)
        except GZIP_ERRORS as exc:
            return ToolResult.fail(f"{path}: corrupt or truncated gzip data: {exc}")
        if not lines:
            if line_no == 0:
                return ToolResult.empty(f"{path} is empty")
            return ToolResult.empty(
                f"{path} has only {line_no} lines; start_line {start_line} is past the end"
            )
        data: dict[str, Any] = {
            "path": str(p),
            "start_line": lines[0]["n"],
            "end_line": lines[-1]["n"],
            "total_lines": total,
            "lines": lines,
            "truncated": more,
            "next_start_line": lines[-1]["n"] + 1 if more else None,
        }
        if cut_by_bytes:
            data["note"] = f"stopped at files.max_read_bytes ({max_bytes} bytes)"
        return ToolResult.ok(data, source=str(p))

    @ts.tool(category="files", read_only=True, risk="sensitive")
    def files_tail(path: str, lines: Annotated[int, Field(ge=1, le=10_000)] = 100) -> ToolResult:
        """Return the last lines of a text file, like ``tail -n``; fast on multi-GB files.

        Use it to see the most recent entries of a log. ``.gz`` files are decompressed (they have
        to be read from the start, so they are slower).

        Args:
            path: the file to read.
            lines: how many lines from the end to return (1-10000).
        """
        p = locate(path)
        if isinstance(p, ToolResult):
            return p
        if problem := _not_a_file(p, path):
            return problem
        gz = p.suffix == ".gz"
        total: int | None = None
        try:
            with _open(p, roots_of(settings)) as (fh, size):
                if _is_binary(fh):
                    return _binary(path)
                if not gz:
                    raw_lines, capped = _tail_plain(fh, size, lines, max_bytes)
                else:
                    window: deque[bytes] = deque(maxlen=lines)
                    scanned = total = 0
                    for raw, full, _ in _iter_lines(fh, max_bytes, max_bytes * 1000 + 1):
                        window.append(raw)
                        total += 1
                        scanned += full
                        if scanned > max_bytes * 1000:
                            return ToolResult.fail(
                                f"{path} decompresses to more than {max_bytes * 1000} bytes",
                                hint="decompress it outside the agent, or raise files.max_read_bytes",
                            )
                    # the same bound as a plain file's tail: the last max_bytes bytes' worth of lines
                    kept = used = 0
                    for raw in reversed(window):
                        if used + len(raw) > max_bytes and kept:
                            break
                        used += len(raw)
                        kept += 1
                    raw_lines, capped = list(window)[len(window) - kept :], kept < len(window)
        except PathAccessError as exc:
            return ToolResult.fail(exc.message, exc.hint)
        except OSError as exc:
            return _os_error(exc, path)
        except GZIP_ERRORS as exc:
            return ToolResult.fail(f"{path}: corrupt or truncated gzip data: {exc}")
        if not raw_lines:
            return ToolResult.empty(f"{path} is empty")
        data: dict[str, Any] = {
            "path": str(p),
            "lines": [_text(r) for r in raw_lines],
            "line_count": len(raw_lines),
            "file_size_bytes": size,
            "compressed": gz,
            "truncated": capped,
        }
        if total is not None:
            data["total_lines"] = total
        if capped:
            data["note"] = (
                f"returned only the last {max_bytes} bytes of lines (files.max_read_bytes);"
                " ask for fewer lines, or use files_read with start_line for earlier ones"
            )
        return ToolResult.ok(data, source=str(p))

    @ts.tool(category="files", read_only=True, risk="sensitive")
    def files_grep(
        pattern: str,
        path: str,
        regex: bool = True,
        ignore_case: bool = False,
        max_matches: Annotated[int, Field(ge=1, le=2000)] = 200,
        context: Annotated[int, Field(ge=0, le=10)] = 0,
    ) -> ToolResult:
        """Search a file or a directory tree for lines matching a pattern, like ``grep -rn``.

        Use it to find errors, IDs or settings across logs and configs. Binary files and
        .git/.hg/.svn directories are skipped; ``.gz`` files are searched decompressed.

        Args:
            pattern: a Python regular expression, or literal text when regex is false.
            path: a file, or a directory searched recursively.
            regex: treat pattern as a regular expression; false matches it literally.
            ignore_case: match regardless of letter case.
            max_matches: stop after this many matching lines (1-2000).
            context: lines of context to include before and after each match (0-10).
        """
        rx = search_pattern(pattern, regex=regex, ignore_case=ignore_case)
        if isinstance(rx, ToolResult):
            return rx
        roots = roots_of(settings)
        p = locate(path)
        if isinstance(p, ToolResult):
            return p
        if not p.exists():
            return ToolResult.fail(f"{path}: no such file or directory", hint="check the path")
        single = not p.is_dir()
        if single and (problem := _not_a_file(p, path)):
            return problem  # a FIFO would block the search until something writes to it

        skipped = {"binary": 0, "unreadable": 0, "outside_roots": 0, "not_regular": 0}
        walk_capped = False

        def unreadable_dir(_: OSError) -> None:
            skipped["unreadable"] += 1

        def candidates() -> Iterator[tuple[Path, Path]]:
            """``(path as found, checked path to open)`` of each file to search."""
            nonlocal walk_capped
            if single:
                yield p, p
                return
            seen = 0
            for top, dirs, files in os.walk(p, onerror=unreadable_dir):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
                for name in sorted(files):
                    seen += 1
                    if seen > LIST_SCAN_CAP:  # millions of empty or binary files add no bytes
                        walk_capped = True
                        return
                    f = Path(top, name)
                    try:
                        real = resolve_in_roots(str(f), roots)  # a symlink may point outside the roots
                        if not real.is_file():
                            skipped["not_regular"] += 1
                            continue
                    except PathAccessError:
                        skipped["outside_roots"] += 1
                        continue
                    except OSError:  # listed but not searchable: a directory without x permission
                        skipped["unreadable"] += 1
                        continue
                    yield f, real

        budget = max_bytes * 10
        matches: list[dict[str, Any]] = []
        scanned = files_scanned = 0
        truncated = capped = False
        for f, real in candidates():
            if truncated or capped:
                break
            try:
                with _open(real, roots) as (fh, _):
                    if _is_binary(fh):
                        skipped["binary"] += 1
                        continue
                    files_scanned += 1
                    before: deque[str] = deque(maxlen=context)
                    pending: list[dict[str, Any]] = []
                    lines = _iter_lines(fh, max_bytes, budget - scanned)
                    for line_no, (raw, full, _) in enumerate(lines, 1):
                        scanned += full
                        text = _text(raw)
                        for m in pending:
                            m["after"].append(_clip(text))
                        pending = [m for m in pending if len(m["after"]) < context]
                        if not truncated and rx.search(text):
                            if len(matches) >= max_matches:
                                truncated = True
                            else:
                                m = {"file": str(f), "line_no": line_no, "line": _clip(text)}
                                if context:
                                    m.update(before=list(before), after=[])
                                    pending.append(m)
                                matches.append(m)
                        before.append(_clip(text))
                        if (truncated and not pending) or scanned >= budget:
                            capped = scanned >= budget
                            break
            except PathAccessError as exc:  # swapped for a symlink after the check
                if single:
                    return ToolResult.fail(exc.message, exc.hint)
                skipped["outside_roots"] += 1
            except NotRegularFile as exc:  # swapped for a FIFO or device after the check
                if single:
                    return _os_error(exc, path)
                skipped["not_regular"] += 1
            except (OSError, *GZIP_ERRORS):
                skipped["unreadable"] += 1
        summary = {"files_scanned": files_scanned, "bytes_scanned": scanned, "skipped": skipped}
        note = None
        if capped:
            note = f"stopped after scanning {budget} bytes (10 x files.max_read_bytes); narrow the path"
        elif walk_capped and not truncated:
            note = f"stopped after looking at {LIST_SCAN_CAP} files; narrow the path"

        if not matches:
            msg = f"no lines match {pattern!r} under {p} ({files_scanned} files scanned)"
            return ToolResult.empty(msg + (f"; {note}" if note else ""), **summary)
        data: dict[str, Any] = {
            "pattern": pattern,
            "path": str(p),
            "matches": matches,
            "truncated": truncated,
        }
        data.update(summary)
        if note:
            data["note"] = note
        return ToolResult.ok(data, source=str(p))

    return ts


def register(registry: ToolRegistry) -> None:
    """Entry point of the ``devops_agent.toolsets`` group."""
    registry.add_toolset(NAME, build, DESCRIPTION)
