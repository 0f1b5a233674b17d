"""Search patterns a model or a person gives the search tools (``files_grep``, ``logs_search``):
compiled, or refused with a message the model can act on.

A pattern that repeats, without bound, something that itself repeats (``(a+)+``) backtracks
exponentially on a line it almost matches and hangs the process, so it is refused before it runs.
This module only compiles and inspects patterns: it must not read files or import a toolset.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

from devops_agent.results import ToolResult

__all__ = ["WIDE_REPEAT", "nested_repeat", "search_pattern"]

# The stdlib's own regex parser (it has no public API): used only to refuse a nested repeat.
_SRE = importlib.import_module("re._parser")
_REPEATS = (_SRE.MAX_REPEAT, _SRE.MIN_REPEAT)
WIDE_REPEAT = 10  # an outer repeat of more than this many (or unbounded) counts as unbounded


def nested_repeat(pattern: str, flags: int = 0) -> bool:
    """Whether ``pattern`` repeats, without bound, something that itself repeats a variable
    number of times: ``(a+)+``, ``(\\w+\\s?)*``. Such a pattern backtracks exponentially on a
    line it almost matches, and Python's ``re`` holds the GIL while it does, so no timeout can
    stop it: the whole process hangs. Possessive repeats and atomic groups do not backtrack.
    """

    def children(op: Any, av: Any) -> list[Any]:
        """The subpatterns under one node; empty for a leaf."""
        if op is _SRE.SUBPATTERN:
            return [av[-1]]
        if op is _SRE.BRANCH:
            return list(av[1])
        if op in (_SRE.ASSERT, _SRE.ASSERT_NOT):
            return [av[1]]
        if op is _SRE.GROUPREF_EXISTS:
            return [b for b in av[1:] if b is not None]
        return []

    def walk(items: Any, inside: bool) -> bool:
        for op, av in items:
            if op in _REPEATS:
                lo, hi, sub = av
                if (inside and hi > lo) or walk(sub, inside or (hi > lo and hi > WIDE_REPEAT)):
                    return True
            elif op is _SRE.ATOMIC_GROUP or op is _SRE.POSSESSIVE_REPEAT:
                # no backtracking into these from outside; inside, they start afresh
                if walk(av if op is _SRE.ATOMIC_GROUP else av[2], False):
                    return True
            elif any(walk(sub, inside) for sub in children(op, av)):
                return True
        return False

    return walk(_SRE.parse(pattern, flags), False)


def search_pattern(pattern: str, *, regex: bool, ignore_case: bool) -> re.Pattern[str] | ToolResult:
    """The compiled pattern of a search tool (``files_grep``, ``logs_search``), or the failure to
    return to the model: an invalid expression, or one with a nested repeat (:func:`nested_repeat`)."""
    try:
        rx = re.compile(pattern if regex else re.escape(pattern), re.IGNORECASE if ignore_case else 0)
    except re.error as exc:
        return ToolResult.fail(
            f"invalid regular expression {pattern!r}: {exc}",
            hint="fix the expression, or pass regex=false to search for the text literally",
        )
    if regex and nested_repeat(pattern, rx.flags):
        return ToolResult.fail(
            f"regular expression {pattern!r} repeats a group that itself repeats, which can take"
            " exponential time on a line it almost matches",
            hint="rewrite it without the nested repeat (e.g. (\\w+\\s?)+ as [\\w\\s]+), make the"
            " inner repeat possessive (a++), or pass regex=false",
        )
    return rx
