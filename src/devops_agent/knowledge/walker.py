"""Walk a source tree the way a developer sees it: ``.gitignore``-aware, no binaries, no vendored
or generated code.

The ignore rules implement the common subset of gitignore (``*``, ``?``, ``**``, character
classes, ``!`` negation, trailing ``/`` for directories, leading or inner ``/`` anchoring) per
directory, nested files included. This module only reads; it must not write or import the index.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
MAX_FILE_BYTES = 1_000_000
_SNIFF_BYTES = 8192


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
    prefix = "" if anchored else "(?:.*/)?"
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


def _ignored(rel: str, is_dir: bool, layers: list[tuple[str, list[_Rule]]]) -> bool:
    verdict = False
    for base, rules in layers:
        if base and not rel.startswith(base + "/"):
            continue
        local = rel[len(base) + 1 :] if base else rel
        for rule in rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.match(local):
                verdict = not rule.negate
    return verdict


def is_binary(path: Path) -> bool:
    """True when the first bytes contain NUL or are not valid UTF-8 text."""
    try:
        with path.open("rb") as fh:
            head = fh.read(_SNIFF_BYTES)
    except OSError:
        return True
    if b"\0" in head:
        return True
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start < len(head) - 4  # a multi-byte char cut at the sniff boundary is fine
    return False


def is_generated(name: str) -> bool:
    return name in GENERATED_NAMES or name.endswith(GENERATED_SUFFIXES)


def walk(root: Path, *, use_default_skips: bool = True, max_bytes: int = MAX_FILE_BYTES) -> Iterator[Path]:
    """Text files under ``root`` (paths relative to it, sorted per directory) that should be indexed."""
    root = root.resolve()
    layers: list[tuple[str, list[_Rule]]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        layers = [(b, r) for b, r in layers if not b or rel_dir == b or rel_dir.startswith(b + "/")]
        gi = Path(dirpath) / ".gitignore"
        if gi.is_file():
            with contextlib.suppress(OSError):
                layers.append((rel_dir, parse_gitignore(gi.read_text(errors="replace"))))
        keep = []
        for d in sorted(dirnames):
            rel = f"{rel_dir}/{d}" if rel_dir else d
            if use_default_skips and (d in SKIP_DIRS or d.endswith(".egg-info")):
                continue
            if os.path.islink(os.path.join(dirpath, d)) or _ignored(rel, True, layers):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in sorted(filenames):
            rel = f"{rel_dir}/{name}" if rel_dir else name
            full = Path(dirpath) / name
            if name == ".gitignore" or is_generated(name) or _ignored(rel, False, layers):
                continue
            try:
                if not full.is_file() or full.is_symlink() or full.stat().st_size > max_bytes:
                    continue
            except OSError:
                continue
            if not is_binary(full):
                yield Path(rel)
