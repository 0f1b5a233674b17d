"""Tests on one candidate value of the secret scrubber: is it a placeholder, a documentation value,
code, a word-built identifier, or random enough to be a token?

:mod:`devops_agent.secrets.scrubber` asks these before redacting what a context rule found (a
config line's value, the word after "secret"); the shape rules of
:mod:`devops_agent.secrets.shapes` have their own test of randomness. Pure functions on
strings: this module imports nothing from the package and never logs the values; it keeps them
only inside a :class:`one_scan` block (the answers of one text's scan), never after it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable
from contextvars import ContextVar
from types import TracebackType
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")
_R = TypeVar("_R")

# The answers of is_dummy and is_wordy, by value, while one text is scanned: a text holds the same
# value in several places, and several rules test each one (a provider's format, the key = value
# rule, a shape). Forgotten when the scan ends: a value may be a secret.
_Memo = tuple[dict[str, bool], dict[str, bool]]  # is_dummy's answers, is_wordy's
_SCAN_MEMO: ContextVar[_Memo | None] = ContextVar("_SCAN_MEMO", default=None)


class one_scan:  # noqa: N801 - used as a block, like contextlib's suppress
    """Within this block, :func:`is_dummy` and :func:`is_wordy` test each distinct value once (per
    thread or task: the memory is a context variable); the values are dropped when it ends."""

    __slots__ = ("_token",)

    def __enter__(self) -> None:
        self._token = _SCAN_MEMO.set(({}, {}))

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        _SCAN_MEMO.reset(self._token)


def _remembered(slot: int, test: Callable[[str], bool], value: str) -> bool:
    """``test(value)``, answered once per distinct value inside a :class:`one_scan` block."""
    memo = _SCAN_MEMO.get()
    if memo is None:
        return test(value)
    known = memo[slot].get(value)
    if known is None:
        known = memo[slot][value] = test(value)
    return known


def one_scan_per_call(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """``fn`` (a scan of one text) runs inside a :class:`one_scan` block on each call."""

    @functools.wraps(fn)
    def scan(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        with one_scan():
            return fn(*args, **kwargs)

    return scan


# Documentation and hand-typed values, never generated: marker words, one character repeated, six
# ascending letters or digits (``abcdef``, ``123456``: under 1 in 10^8 per position by chance in a
# random token), three letters and three digits counting up side by side (``abc123``, ``456def``),
# and a short unit repeated (``1234-1234-1234-``).
_DUMMY_RX = re.compile(
    r"xxxx|\*\*\*\*|####|example|your|here|placeholder|dummy|fake|sample|qwerty|change[_-]?me|a1b2c3"
)
# Each byte maps to the byte that would follow it in an ascending run (a-y, 0-8); others to 0x80,
# which no ASCII character equals. See _ascending_steps.
_NEXT = bytes(c + 1 if chr(c) in "abcdefghijklmnopqrstuvwxy012345678" else 0x80 for c in range(256))
# Candidates for a counting pair (character classes only: cheap); each is then read in Python.
_PAIR_RX = re.compile(r"[a-z]{3}[0-9]{3}|[0-9]{3}[a-z]{3}")
_REPEAT_HINT_RX = re.compile(r"(...).{0,3}\1")  # needed for a repeat, and cheap: most values stop here
_REPEAT_RX = re.compile(r"(.)\1{7}|(..)\2{4,}|(...)\3\3|(....)\4\4|(.....)\5\5|(......)\6\6")
_ZERO_RUN_RX = re.compile(r"A{4,}")
MASK_TAIL = ("####", "****", "xxxx", "XXXX", "...", "…")


def is_dummy(value: str) -> bool:
    """Documentation values: ``ghp_xxxx…``, ``AKIA…EXAMPLE``, ``sk-…abcdef…``, ``1234-1234-1234``.

    Applied to tokens of every format (a real token never holds these patterns, so the choice only
    decides whether a fake one is redacted), but not to passwords: people choose those, and words
    in them (``ExamplePas123``) are no evidence of a placeholder. Placeholders are short, so only
    the head of a long value is looked at.
    """
    return _remembered(0, _dummy, value)


def _dummy(value: str) -> bool:
    head = value[:64]
    if len(value) >= 32 and "AAAA" in head and not value.isupper():
        head = _ZERO_RUN_RX.sub("A", head)  # base64 of zero bytes (DER padding), not a typed run
    head = head.lower()
    if _DUMMY_RX.search(head) or (len(value) >= 12 and len(set(head)) < 6):
        return True
    steps = _ascending_steps(head)
    if b"\0\0\0\0\0" in steps:
        return True  # six letters or digits counting up
    if steps.count(b"\0\0") >= 2 and any(_counts_up(m.group()) for m in _PAIR_RX.finditer(head)):
        return True
    return _REPEAT_HINT_RX.search(head) is not None and _REPEAT_RX.search(head) is not None


def _ascending_steps(head: str) -> bytes:
    """One byte per pair of neighbours in ``head`` (lower case), zero where the second follows the
    first in the alphabet or in 0-9: six counting up are five zeros in a row. Computed with two
    big-integer operations instead of a Python loop (this runs on every candidate value)."""
    raw = head.encode("ascii", "replace")
    if len(raw) < 2:
        return b"\xff"
    n = len(raw) - 1
    diff = int.from_bytes(raw[1:], "big") ^ int.from_bytes(raw[:-1].translate(_NEXT), "big")
    return diff.to_bytes(n, "big")


def _counts_up(pair: str) -> bool:
    """Both halves of a three-and-three pair (``abc123``) count up by one."""
    return all(ord(pair[i + 1]) - ord(pair[i]) == 1 for i in (0, 1, 3, 4))


_PLACEHOLDER_RX = re.compile(
    r"(?i)^(?:.*\.\.\.|\$\{.*\}|\$\(.*\)|\$[A-Za-z_][A-Za-z0-9_]*|%\(.*\)s|%[A-Za-z_]+%|\{\{.*\}\}|\{[A-Za-z_]*\}|<.*>|&lt;.*&gt;|"
    r"\[REDACTED[A-Z_]*\]|<<[A-Z_]+_[0-9a-f]{8}>>|\*+|x+|\.+|-+|_+|#+|"
    r"null|none|nil|true|false|yes|no|on|off|undefined|empty|required|optional|string|str|"
    r"placeholder|redacted|hidden|masked|todo|tbd|"
    r"env\(.*|process\.env.*|os\.environ.*|os\.getenv.*|getenv.*|!vault.*|vault:.*|ref\+.*)$"
)
# Not a literal: interpolation ($VAR, \\$VAR, ${…}, $(…)), an annotation (@Value), a piece of an
# expression (leading ",;)+.", trailing ":(+"), an ARN, a name ending in a version ("-v1.2.3").
_EXPRESSION_RX = re.compile(r"^\\?\$|^@@?[A-Za-z_]|\$[{(]|^[,;)+.]|[:(+]$|^arn:|[-_]v?\d+\.\d+(?:\.\d+)*$")
_EXPRESSION_STARTS = ("@", ",", ";", ")", "+", ".", "arn:")
_EXPRESSION_ENDS = (":", "(", "+")


def is_expression(value: str) -> bool:
    """A variable, an annotation, a piece of an expression, an ARN or a versioned name, not a literal.

    Every branch of _EXPRESSION_RX needs a "$", one of a few first characters, or one of ":(+" or a
    digit last (before one final newline, as ``$`` reads): tested first with string methods, since
    this runs on every value of a secret-named key and most values have none of them."""
    tail = value[:-1] if value.endswith("\n") else value
    if "$" in value or value.startswith(_EXPRESSION_STARTS) or tail.endswith(_EXPRESSION_ENDS):
        return _EXPRESSION_RX.search(value) is not None
    return tail[-1:].isdigit() and _EXPRESSION_RX.search(value) is not None


_IDENTIFIER_RX = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+$|^[a-z]+(?:[A-Z][a-z]+)+$")


_LONG_HEX_RX = re.compile(r"(?:^|\.)(?=[a-f]{0,63}[0-9])(?=[0-9]{0,63}[a-f])[0-9a-f]{32,}(?:\.|$)")


def is_code_reference(value: str) -> bool:
    """A variable or attribute chain (``settings.SECRET_KEY``), not a dotted token: no segment of an
    attribute chain is 32+ hex digits (``patXfsZBLOgxbJqSi.fd6210cf…`` is an Airtable token)."""
    return _IDENTIFIER_RX.match(value) is not None and _LONG_HEX_RX.search(value) is None


def is_placeholder(value: str) -> bool:
    """``${VAR}``, ``<x>``, ``***``, ``null``, ``os.environ[...]``, an already redacted value …"""
    return bool(_PLACEHOLDER_RX.match(value.strip()))


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    counts: dict[str, int] = {}
    for ch in value:
        counts[ch] = counts.get(ch, 0) + 1
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def looks_random(value: str, min_len: int) -> bool:
    """A token-like value: long enough, several character classes, no spaces, high entropy."""
    if len(value) < min_len or " " in value:
        return False
    classes = sum(
        (any(c.islower() for c in value), any(c.isupper() for c in value), any(c.isdigit() for c in value))
    )
    return classes >= 2 and entropy(value) >= 3.0


_WORD_SPLIT_RX = re.compile(r"[_.\-/ ]+|(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # CPUThrottlingHigh


def is_wordy(value: str) -> bool:
    """Identifier-like values (``Tile_Cache_4_16``, ``acme.build.v2_migration``,
    ``ConnectionString_EU1``), not tokens."""
    return _remembered(1, _wordy, value)


def _wordy(value: str) -> bool:
    parts = [p for p in _WORD_SPLIT_RX.split(value) if p]
    if len(parts) < 3 or max(len(p) for p in parts) > 12:
        return False
    return all(
        p.isalpha() or p.isdigit() or len(p) <= 3 or (p[0].isalpha() and p[1:].isdigit()) for p in parts
    )
