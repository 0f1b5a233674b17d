"""Walk a source tree the way a developer sees it: ``.gitignore``-aware, no binaries, no vendored
or generated code.

The ignore rules implement the common subset of gitignore (``*``, ``?``, ``**``, character
classes, ``!`` negation, trailing ``/`` for directories, leading or inner ``/`` anchoring) per
directory, nested files included. When the root lies inside a git work tree, the ``.gitignore``
files of the directories above it up to the work tree's top and ``.git/info/exclude`` apply too,
as git applies them; a rule that would exclude the root itself (or a directory above it) is not
applied to it, because the root was named on purpose (an unanchored one still applies below it).
For the same reason the default skip list (:data:`SKIP_DIRS`) applies to directories below the
root, never to the root.

Binary or text: a file is binary when its first 8 KiB hold a NUL byte (the rule of
:func:`devops_agent.filetypes.is_binary_head`, shared with the file and log tools); every other
file is text.
:func:`decode_text` reads text as UTF-8 (a byte order mark dropped) and, when that fails, as
Latin-1, so a file's length never decides whether it is indexed.

What the walk leaves out for a reason the user may not expect (a directory it cannot list, a file
it cannot read, a directory on the default skip list, a file over the size limit) is reported as a
:class:`Skipped` entry to whoever collects them (see :func:`report_skips`); what ``.gitignore``
excludes, binaries and generated files are not reported. Nothing the file system raises escapes
:func:`walk`. This module only reads; it must not write or import the index.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path

from devops_agent.filetypes import BINARY_PROBE_BYTES, is_binary_head

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "vendor",
        "third_party",
        "__pycache__",
        ".venv",
        "venv",
        ".tox",
        ".nox",
        ".mypy_cache",
        ".ruff_cache",
        ".pytest_cache",
        "dist",
        "build",
        ".eggs",
        "site-packages",
        ".terraform",
        "target",
        ".idea",
        ".vscode",
        "coverage",
        ".next",
    }
)
GENERATED_SUFFIXES = (".min.js", ".min.css", "_pb2.py", "_pb2_grpc.py", ".pb.go", ".lock", ".map")
GENERATED_NAMES = frozenset({"package-lock.json", "yarn.lock", "poetry.lock", "Cargo.lock", "go.sum"})
# Skipped directories not worth a line in the report: they never hold a project's source.
_QUIET_SKIPS = frozenset({".git", ".hg", ".svn", "__pycache__"})
MAX_FILE_BYTES = 1_000_000
_ANY_DEPTH = "^(?:.*/)?"  # how a rule that matches at any depth starts (see _translate)


@dataclass(frozen=True)
class _Rule:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool


def _translate(pattern: str) -> str:
    """A gitignore glob (already stripped of ``!`` and trailing ``/``) as a regex on relative paths."""
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern.lstrip("/")
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        else:
            out.append(re.escape(c))
        i += 1
    prefix = "" if anchored else _ANY_DEPTH[1:]
    return "^" + prefix + "".join(out) + "(?:/.*)?$"


def parse_gitignore(text: str) -> list[_Rule]:
    """Rules of one ``.gitignore`` file, in order (later rules win)."""
    rules: list[_Rule] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        if not line or line.startswith("#"):
            continue
        negate = line.startswith("!")
        if negate:
            line = line[1:]
        line = line.removeprefix("\\")
        dir_only = line.endswith("/")
        rules.append(_Rule(re.compile(_translate(line.rstrip("/"))), negate, dir_only))
    return rules


@dataclass(frozen=True)
class _Layer:
    """Consecutive rules of one ignore file. ``base`` is the file's directory relative to the
    root ("" for the root and any directory above it); ``prefix`` is the path from the file's
    directory down to the root ("svc/" for a ``.gitignore`` one level above a root ``svc``)."""

    base: str
    prefix: str
    rules: list[_Rule]


@dataclass(frozen=True)
class Skipped:
    """A path :func:`walk` (or the index, reading a file) left out, and why.

    ``path`` is relative to the root ("" is the root itself). ``unreadable`` marks what the file
    system refused: that may be temporary, so the index keeps what it held for such paths.
    """

    path: str
    reason: str
    is_dir: bool = False
    unreadable: bool = False

    def __str__(self) -> str:
        name = (self.path or ".") + ("/" if self.is_dir else "")
        return f"{name} ({self.reason})"

    def covers(self, path: str) -> bool:
        """True when ``path`` (relative to the root) is this entry or lies under it."""
        if not self.is_dir:
            return path == self.path
        return not self.path or path.startswith(self.path + "/")


_REPORT: ContextVar[list[Skipped] | None] = ContextVar("knowledge_walk_skips", default=None)


@contextlib.contextmanager
def report_skips() -> Iterator[list[Skipped]]:
    """Collect, in the returned list, what every :func:`walk` run inside the block skips.

    For callers that do not call :func:`walk` themselves (the index iterating a directory source).
    """
    skips: list[Skipped] = []
    token = _REPORT.set(skips)
    try:
        yield skips
    finally:
        _REPORT.reset(token)


def _ignored(rel: str, is_dir: bool, layers: list[_Layer]) -> bool:
    verdict = False
    for layer in layers:
        base = layer.base
        if base and not rel.startswith(base + "/"):
            continue
        local = layer.prefix + (rel[len(base) + 1 :] if base else rel)
        for rule in layer.rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(local):
                verdict = not rule.negate
    return verdict


def _read_rules(path: Path, skip: Callable[[Skipped], None] | None = None, rel: str = "") -> list[_Rule]:
    """The rules of one ignore file; none when it is missing or unreadable (reported to ``skip``)."""
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        return []
    except OSError as exc:
        if skip is not None:
            skip(Skipped(rel, _why(exc), unreadable=True))
        return []
    return parse_gitignore(text)


def _git_dir(top: Path) -> Path:
    """The git directory of the work tree ``top``: ``.git``, or where a ``.git`` file points
    (worktrees and submodules), whose shared part holds ``info/exclude``."""
    dot = top / ".git"
    if not os.path.isfile(dot):
        return dot
    with contextlib.suppress(OSError, UnicodeDecodeError):
        text = dot.read_text()
        if text.startswith("gitdir:"):
            git_dir = top / text[len("gitdir:") :].strip()
            common = git_dir / "commondir"
            if os.path.isfile(common):
                git_dir = git_dir / common.read_text().strip()
            return git_dir
    return dot


def _outer_layers(root: Path) -> list[_Layer]:
    """Ignore rules that apply to ``root`` from outside it: ``info/exclude`` of the enclosing
    git work tree and the ``.gitignore`` files between the work tree's top and ``root``, lowest
    priority first, each re-based on ``root``."""
    top = next((d for d in (root, *root.parents) if os.path.lexists(d / ".git")), None)
    if top is None:
        return []
    layers: list[_Layer] = []
    sources = [(top, _git_dir(top) / "info" / "exclude")]
    sources += [(d, d / ".gitignore") for d in reversed(root.parents) if d == top or top in d.parents]
    for where, file in sources:
        down = root.relative_to(where).as_posix()
        prefix = "" if down == "." else down + "/"
        rules = _read_rules(file)
        if not prefix:
            layers.append(_Layer("", "", rules))
            continue
        # The root and the directories above it, relative to the rules' directory: a rule that
        # matches one of them would exclude the whole root, which was named on purpose.
        above = [prefix[:i] for i, c in enumerate(prefix) if c == "/"]
        for rule in rules:
            if any(rule.regex.match(p) for p in above):
                if not rule.regex.pattern.startswith(_ANY_DEPTH):
                    continue  # anchored at or above the root: nothing below it to match
                layer = _Layer("", "", [rule])  # matches at any depth: keep it for below the root
            else:
                layer = _Layer("", prefix, [rule])
            if layers and layers[-1].prefix == layer.prefix and layers[-1].base == "":
                layers[-1].rules.append(rule)
            else:
                layers.append(layer)
    return layers


def _why(exc: OSError) -> str:
    return f"unreadable: {exc.strerror or type(exc).__name__}"


def is_binary(path: Path) -> bool:
    """True when the first 8 KiB of ``path`` hold a NUL byte (or it cannot be read)."""
    try:
        with path.open("rb") as fh:
            return is_binary_head(fh.read(BINARY_PROBE_BYTES))
    except OSError:
        return True


def decode_text(data: bytes) -> str:
    """A text file's content as a string: UTF-8 (without a byte order mark), else Latin-1."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def is_generated(name: str) -> bool:
    return name in GENERATED_NAMES or name.endswith(GENERATED_SUFFIXES)


def walk(
    root: Path,
    *,
    use_default_skips: bool = True,
    max_bytes: int = MAX_FILE_BYTES,
    skipped: list[Skipped] | None = None,
) -> Iterator[Path]:
    """Text files under ``root`` (paths relative to it, sorted per directory) that should be indexed.

    What is left out for a reason worth telling is appended to ``skipped`` (or to the list of an
    enclosing :func:`report_skips`); see the module docstring.
    """
    root = root.resolve()
    sink = skipped if skipped is not None else _REPORT.get()

    def skip(entry: Skipped) -> None:
        if sink is not None:
            sink.append(entry)

    def unlistable(exc: OSError) -> None:
        rel = os.path.relpath(exc.filename or root, root).replace(os.sep, "/")
        skip(Skipped("" if rel == "." else rel, _why(exc), is_dir=True, unreadable=True))

    outer = _outer_layers(root)
    layers: list[_Layer] = list(outer)
    for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        try:  # also the probe for a directory that can be listed but not entered (no x bit)
            os.stat(os.path.join(dirpath, ".gitignore"))
            has_gitignore = True
        except FileNotFoundError:
            has_gitignore = False
        except OSError as exc:
            skip(Skipped(rel_dir, _why(exc), is_dir=True, unreadable=True))
            dirnames[:] = []
            continue
        layers = outer + [
            layer
            for layer in layers[len(outer) :]
            if not layer.base or rel_dir == layer.base or rel_dir.startswith(layer.base + "/")
        ]
        if has_gitignore:
            gi_rel = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
            layers.append(_Layer(rel_dir, "", _read_rules(Path(dirpath, ".gitignore"), skip, gi_rel)))
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if use_default_skips and (d in SKIP_DIRS or d.endswith(".egg-info")):
                if d not in _QUIET_SKIPS and not d.endswith("_cache"):
                    skip(Skipped(rel, "default skip list", is_dir=True))
                continue
            if os.path.islink(os.path.join(dirpath, d)) or _ignored(rel, True, layers):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if name in {".gitignore", ".git"} or is_generated(name) or _ignored(rel, False, layers):
                continue
            full = os.path.join(dirpath, name)
            try:
                st = os.lstat(full)
                if not stat.S_ISREG(st.st_mode):
                    continue  # symlinks, sockets, devices
                if st.st_size > max_bytes:
                    skip(Skipped(rel, f"over {max_bytes:,} bytes"))
                    continue
                with open(full, "rb") as fh:
                    head = fh.read(BINARY_PROBE_BYTES)
            except FileNotFoundError:
                continue  # deleted while walking
            except OSError as exc:
                skip(Skipped(rel, _why(exc), unreadable=True))
                continue
            if not is_binary_head(head):
                yield Path(rel)
