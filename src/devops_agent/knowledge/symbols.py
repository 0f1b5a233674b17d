"""Symbol-definition channel: the code names a query mentions -> the files that define them.

A question or an issue that names ``Ledger.reconcile``, ``retry_budget()`` or
``shop.billing.invoice.Invoice.merge``, or a traceback frame ``in _render_rows``, is usually about
the file that *defines* that name, while BM25 also rewards every file that merely uses it. The
:class:`SymbolTable` maps each defined name (bare ``merge`` and qualified ``Invoice.merge``) to its
files, built from the chunks the index already holds; :func:`query_names` picks the words of a
query that look like code; :meth:`SymbolTable.rank_files` scores files by the names they define,
a name defined in few files counting more. Pure functions and data only: no I/O, no index access.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence

# A name defined in more files than this (``__init__``, ``get``, ``run``) says nothing about where.
MAX_DEFINITIONS = 25

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FILE_SUFFIXES = frozenset(
    {"py", "pyi", "pyx", "txt", "md", "rst", "cfg", "ini", "toml", "yaml", "yml", "json", "html", "js", "log"}
)
# A module-level constant: ``UPLOAD_FILE_MODE = 0o644`` or ``TIMEOUT: float = 5`` at column 0.
_MODULE_CONSTANT = re.compile(r"^([A-Z_][A-Z0-9_]*)[ \t]*(?::[^=\n]+)?=(?!=)", re.MULTILINE)
_INNER_DEF = re.compile(r"^[ \t]+(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)", re.MULTILINE)
# Code-looking spans of a query: `backticked`, dotted paths (a.b.C), calls name(, frames, defs.
_BACKTICKS = re.compile(r"`+([^`\n]{1,200})`+")
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
_FRAME = re.compile(r"\bline \d+, in ([A-Za-z_]\w*)")
_DECL = re.compile(r"\b(?:def|class|import)\s+([A-Za-z_]\w*)")
# snake_case (an inner underscore), camelCase, CamelCase with a second capital, HTTPError.
_CODE_SHAPED = re.compile(
    r"^_*[A-Za-z0-9]+_\w*$|^_*[a-z0-9]+[A-Z]\w*$|^_*[A-Z][a-z0-9]+[A-Z]\w*$|^[A-Z]{2,}[a-z]\w*$"
)


def defined_names(kind: str, symbol: str, text: str) -> list[str]:
    """Names one chunk defines: its symbol (``Class.method`` also as ``method``); for a class
    kept whole, the methods and nested classes in it as ``Class.name``; for module-level code,
    its ``UPPER_CASE`` constants (settings such as ``UPLOAD_FILE_MODE``)."""
    if kind == "module":
        return [n for n in dict.fromkeys(_MODULE_CONSTANT.findall(text)) if any(c.isalpha() for c in n)]
    if kind not in {"function", "method", "class", "block"} or not symbol:
        return []
    parts = symbol.split(".")
    if not all(_IDENT.fullmatch(p) for p in parts):
        return []  # a block headed by something that is not a definition ("- name: x")
    names = [symbol] if len(parts) == 1 else [symbol, parts[-1]]
    if kind == "class":
        for inner in dict.fromkeys(_INNER_DEF.findall(text)):
            names += [f"{symbol}.{inner}", inner]
    return names


def is_code_shaped(word: str) -> bool:
    """True for ``snake_case``, ``camelCase``, ``CamelCase`` and ``HTTPError`` words; prose words
    (``Model``, ``the``) are not, unless the query marks them as code some other way."""
    return bool(_CODE_SHAPED.match(word))


def query_names(query: str) -> Counter[str]:
    """Code names in ``query`` with how often each is mentioned.

    A name counts when it is written as code: in backticks, in a dotted path (each part, and each
    ``Owner.member`` pair), called (``name(``), declared or imported, a traceback frame's
    function, or shaped like an identifier (``snake_case``, ``CamelCase``).
    """
    names: Counter[str] = Counter()
    for m in _BACKTICKS.finditer(query):
        for word in _IDENT.findall(m.group(1)):
            names[word] += 1
    for m in _DOTTED.finditer(query):
        parts = m.group().split(".")
        if parts[-1].lower() in _FILE_SUFFIXES:  # a file name (conf.py): the path channel's job
            continue
        names.update(parts)
        names.update(f"{a}.{b}" for a, b in zip(parts, parts[1:], strict=False))
    for rx in (_CALL, _FRAME, _DECL):
        names.update(rx.findall(query))
    names.update(w for w in _IDENT.findall(query) if is_code_shaped(w))
    return names


class SymbolTable:
    """Which files define which names, from ``(path, kind, symbol, text)`` rows of chunks."""

    def __init__(self, rows: Iterable[tuple[str, str, str, str]]) -> None:
        where: defaultdict[str, set[str]] = defaultdict(set)
        for path, kind, symbol, text in rows:
            for name in defined_names(kind, symbol, text):
                where[name].add(path)
        self._where = {name: sorted(paths) for name, paths in where.items()}

    def __len__(self) -> int:
        return len(self._where)

    def files_defining(self, name: str) -> list[str]:
        return self._where.get(name, [])

    def scores(self, query: str, paths: Sequence[str] | None = None) -> dict[str, float]:
        """Each file's score: over the names the query mentions and the file defines,
        ``(1 + log(mentions)) / definitions``, where ``definitions`` is how many files define
        the name. ``paths`` (optional) limits which files may score."""
        allowed = set(paths) if paths is not None else None
        score: defaultdict[str, float] = defaultdict(float)
        for name, mentions in query_names(query).items():
            files = self._where.get(name, [])
            if not files or len(files) > MAX_DEFINITIONS:
                continue
            weight = (1.0 + math.log(mentions)) / len(files)
            for path in files:
                if allowed is None or path in allowed:
                    score[path] += weight
        return dict(score)

    def rank_files(self, query: str, paths: Sequence[str] | None = None) -> list[str]:
        """Files defining what ``query`` names, best first (ties by path, for stable output)."""
        score = self.scores(query, paths)
        return sorted(score, key=lambda p: (-score[p], p))
