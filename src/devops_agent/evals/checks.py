"""Deterministic checks of an answer: the literals an expected statement names, and its sections.

An expected statement is prose for a judge ("The pod fails to pull the image `x/y:latest`"), but
part of it may be text that can only be copied, never paraphrased: what the statement marks as
exact (backticks, quotes), a URL, a date, a ``host:port``, a name that carries a digit
(``ip-10-0-1-5``, ``api-7d9f``), a number of two digits or more. :func:`literals` extracts
those; :func:`check_literals` looks for each in the answer. A literal that the question itself
contains proves nothing (an answer may quote the question) and is not checked.

The verdict is ``pass`` when every statement has a literal and all are found, ``fail`` when one
is missing, ``unscored`` when none is missing but some statement has nothing to check (only a
judge can score it). This module reads strings; it calls no model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

Verdict = Literal["pass", "fail", "unscored"]

_PATTERNS = (
    re.compile(r"`([^`\n]+)`"),
    re.compile(r'"([^"\n]{2,})"'),
    re.compile(r"(?<![\w'])'([^'\n]{2,}?)'(?![\w'])"),
    re.compile(r"(https?://[^\s)>\]`'\"]+)"),
    re.compile(r"\b(\d{4}-\d{2}-\d{2})\b"),
    re.compile(r"(?<![\w.-])([A-Za-z][\w.-]*:\d{2,5})\b"),
    # a name joined by - or . that holds a digit and a letter: ip-172-31-1-2, api-7d9f8c-x2x9z
    re.compile(r"(?<![\w.-])((?=[\w.-]*\d)(?=[\w.-]*[A-Za-z])[A-Za-z0-9][\w]*(?:[-.][\w]+)+)"),
    # a number of two digits or more on its own (one digit is too common to prove anything: "5 items
    # could not be gathered" is not "5 pods are running"); not an enumeration ("12." or "12)")
    re.compile(r"(?<![\w.\-/:])(\d{2,}(?:\.\d+)?)(?![\w\-/:)]|\.(?:\s|\w|$))"),
)
_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")
_SPACE = re.compile(r"\s+")


class LiteralCheck(BaseModel):
    statement: int
    """Index of the expected statement the literal comes from."""
    literal: str
    found: bool


class LiteralChecks(BaseModel):
    verdict: Verdict
    checks: list[LiteralCheck] = Field(default_factory=list)
    unverifiable: list[int] = Field(default_factory=list)
    """Statements with nothing to check deterministically."""

    @property
    def missing(self) -> list[str]:
        return [c.literal for c in self.checks if not c.found]


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


def literals(statement: str) -> list[str]:
    """The literals of one statement in order, none overlapping another in the statement (the
    date in ``` `2025-08-23T10:00` ``` is part of one literal; ``wge`` and ``wget`` are two)."""
    spans: list[tuple[int, int, str]] = []
    for pattern in _PATTERNS:
        for m in pattern.finditer(statement):
            value = m.group(1).strip().rstrip(".,;:")
            if value and (len(value) > 1 or value.isdigit()):
                spans.append((m.start(1), m.end(1), value))
    kept: list[tuple[int, int, str]] = []
    for start, end, value in sorted(spans, key=lambda s: s[0] - s[1]):  # longest first
        if all(end <= s or start >= e for s, e, _ in kept):
            kept.append((start, end, value))
    return list(dict.fromkeys(v for _, _, v in sorted(kept)))


def present(literal: str, text: str) -> bool:
    """Whether ``literal`` is in ``text``: case and runs of spaces aside; a number as a whole
    number (``30`` is not in ``300``, but is in ``30×`` and ``3h`` has ``3``)."""
    if _NUMBER.match(literal):
        return re.search(rf"(?<![\d.]){re.escape(literal)}(?!\d|\.\d)", text) is not None
    return _norm(literal) in _norm(text)


def check_literals(expected: Sequence[str], answer: str, question: str = "") -> LiteralChecks:
    """Each statement's literals looked for in ``answer``; those in ``question`` are skipped."""
    checks: list[LiteralCheck] = []
    unverifiable: list[int] = []
    for i, statement in enumerate(expected):
        own = [lit for lit in literals(statement) if not present(lit, question)]
        if not own:
            unverifiable.append(i)
        checks += [LiteralCheck(statement=i, literal=lit, found=present(lit, answer)) for lit in own]
    if any(not c.found for c in checks):
        verdict: Verdict = "fail"
    elif unverifiable or not expected:
        verdict = "unscored"
    else:
        verdict = "pass"
    return LiteralChecks(verdict=verdict, checks=checks, unverifiable=unverifiable)


class SectionCheck(BaseModel):
    section: str
    expected: bool
    present: bool

    @property
    def ok(self) -> bool:
        return self.expected == self.present


def check_sections(sections: dict[str, bool | list[str]] | None, answer: str) -> list[SectionCheck]:
    """Upstream's ``expected_sections``: a title mapped to ``false`` must not be a heading of the
    answer; to ``true`` or a list of statements, must be one (the statements are the judge's)."""
    headings = {_norm(m.group(1)) for m in re.finditer(r"(?m)^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", answer)}
    return [
        SectionCheck(section=title, expected=want is not False, present=_norm(title) in headings)
        for title, want in (sections or {}).items()
    ]
