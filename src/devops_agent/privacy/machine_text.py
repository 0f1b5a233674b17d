"""Machine text is not prose: what the NER model may read, and which of its spans are log vocabulary.

A statistical NER model was trained on news and web prose. Shown a log line it reads event words
(``Ido chip status changed``, ``Machine State Register``), key names and identifiers as names.
Three general signals, no word list, decide what it may read and which of its spans count:

* **Per token** (:func:`blank_machine_tokens`): a whitespace token that holds a digit or code
  punctuation (``= / \\ _ @ < > [ ] { } | # $ % * + ; ~ ^ `` ` ``), or is camelCase or dotted
  (``dfs.DataNode``, ``onExtend``), is an identifier, a path, a key or a value, never part of a
  person's name. It is blanked (same length, so offsets hold) before the model reads the line.
  Lines that differ only in such tokens then also share one cached model result.
* **Per span** (:func:`is_machine_span`): a span across a column gap, or the key of a
  ``Key: value`` line whose value is machine-made, is layout (``kubectl describe``, tables).
* **Per text** (:class:`TemplateVocabulary`): the lines of a multi-line text are grouped by the
  log template miner (:mod:`devops_agent.analysis.templates`), with every name-like word read as
  one and the same word, so that lines differing only in whom they name share a template. A word
  present in every line of a template that has at least ``MIN_TEMPLATE_LINES`` distinct lines is
  a constant part of that template, an event word that the program printed, not a value it
  logged; a model span made only of such words is dropped. Values (user names, hosts, the names
  in a ticket) vary between the lines of a template, so they stay variables and are still read.
  A name that every line of a template repeats verbatim is the cost; the pattern path
  (:mod:`.names`, a known first name and a surname) does not use this signal and still masks it.

Pure functions of the text; no model. This module must not import from ``cli/`` or ``agent/``
and must not log the text it reads.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from devops_agent.analysis.templates import TemplateMiner
from devops_agent.privacy.names import cap_words, is_name_word

# A template counts as evidence once it has this many distinct lines (two lines that share a
# sentence by chance are no program's format).
MIN_TEMPLATE_LINES = 3
# Fewer lines than this are not mined (a chat message, one log line): no evidence.
MIN_TEXT_LINES = 6
# Lines longer than this are not mined (minified JSON, dumps): they are not template lines.
MAX_LINE = 2_000

# A token with code punctuation or a digit; camelCase (a lower-case letter then a capital);
# a dotted identifier (``dfs.DataNode``, ``org.apache``), not an initial (``M.``) or ``Inc.``.
_MACHINE_TOKEN_RX = re.compile(r"\S*(?:[\d=/\\_@<>\[\]{}|#$%*+;~^`]|[a-z][A-Z]|[^\W\d_]{2}\.[^\W\d_])\S*")

# A surname whose inner capital is its prefix's (Mc, Mac), with its trailing punctuation.
_NAME_CAMEL_RX = re.compile(r"[(\"'“]?Ma?c[A-Z][a-z]+(?:['’]s)?[.,;:!?)\"'”]*")


def blank_machine_tokens(line: str) -> str:
    """``line`` with each machine-made token (see the module docstring) replaced by zeros of the
    same length: what the NER model reads."""
    return _MACHINE_TOKEN_RX.sub(_blank, line)


def _blank(m: re.Match[str]) -> str:
    token = m.group()
    if _NAME_CAMEL_RX.fullmatch(token):  # McAllister, MacLeod, O'Brien's: names, not camelCase
        return token
    return "0" * len(token)


# Where a key of a ``Key: value`` line may start: the line's start after indentation, list bullets
# and box-drawing characters (``kubectl describe``, YAML, tables drawn by CLIs).
_KEY_LEAD_RX = re.compile(r"[ \t\-*•│|├└─]*")
_KEY_RX = re.compile(r"[ \t]*:(?:[ \t]*$|[ \t]+(\S+))", re.MULTILINE)


def is_machine_span(text: str, start: int, end: int) -> bool:
    """Whether a model span of ``text`` is machine layout rather than a name: it crosses a
    column gap (two or more spaces, a tab: a table's cells), or it is the key of a ``Key: value``
    line whose value is empty or machine-made (``Labels:  app=web``, ``Mounts:``, ``Replicas:  3``).

    A speaker's name before a sentence (``Jane Doe: You saved my life!``) stays a name: its value
    is prose.
    """
    span = text[start:end]
    if "  " in span or "\t" in span:
        return True
    line_start = text.rfind("\n", 0, start) + 1
    lead = _KEY_LEAD_RX.match(text, line_start)
    if lead is None or lead.end() != start:
        return False
    key = _KEY_RX.match(text, end)
    if key is None:
        return False
    value = key.group(1)
    return value is None or _MACHINE_TOKEN_RX.fullmatch(value) is not None or value.startswith("<")


def _all_lines(text: str) -> list[tuple[int, int]]:
    out, pos = [], 0
    for raw in text.split("\n"):
        if raw.strip():
            out.append((pos, pos + len(raw)))
        pos += len(raw) + 1
    return out


def _names_as_one(line: str) -> str:
    """``line`` with each name-like word written as one and the same word, for the miner: lines
    that differ only in who they name (``session opened for Aino Virta`` / ``… for Bence Fodor``)
    then share a template even when few people fill the slot, and a name word is constant only
    where every line of the template repeats it."""
    out, last = [], 0
    for start, end in cap_words(line):
        out.append(line[last:start])
        out.append("Name")
        last = end
    out.append(line[last:])
    return "".join(out)


class TemplateVocabulary:
    """The constant words of each line's log template, learnt from one multi-line text.

    ``constant(start, end)`` tells whether the words of ``text[start:end]`` all belong to the
    constant part of the template of the line they are on. Built only when the text has at least
    ``MIN_TEXT_LINES`` lines; otherwise nothing is constant.
    """

    def __init__(self, text: str, lines: Sequence[tuple[int, int]] | None = None) -> None:
        """Learn from ``text``; with ``lines`` (``(start, end)`` of whole lines), only from those:
        the NER path passes the lines its prefilter lets through, the only ones a span can be on."""
        self._text = text
        self._line_words: dict[int, frozenset[str]] = {}  # line start -> its template's constant words
        if lines is None:
            lines = _all_lines(text)
        if len(lines) < MIN_TEXT_LINES:
            return
        miner = TemplateMiner()
        line_ids: list[tuple[int, int]] = []  # (line start, template id when it was added)
        for start, end in lines:
            if end - start <= MAX_LINE:
                line_ids.append((start, miner.add(_names_as_one(text[start:end])).template_id))
        groups: dict[int, list[int]] = {}  # template id after all merges -> its lines' starts
        for start, tid in line_ids:
            current = miner.resolve(tid)
            if current is not None:
                groups.setdefault(current, []).append(start)
        for starts in groups.values():
            distinct = {self._line(s) for s in starts}
            if len(distinct) < MIN_TEMPLATE_LINES:
                continue
            words = frozenset.intersection(*(frozenset(line.split()) for line in distinct))
            for start in starts:
                self._line_words[start] = words

    def _line(self, start: int) -> str:
        end = self._text.find("\n", start)
        return self._text[start : len(self._text) if end < 0 else end]

    def constant(self, start: int, end: int) -> bool:
        """Whether the words of ``text[start:end]`` that read as names (all its words when none
        does) are constants of its line's template."""
        line_start = self._text.rfind("\n", 0, start) + 1
        words = self._line_words.get(line_start)
        if not words:
            return False
        line = self._line(line_start)
        # the span's words as they stand in the line (a span may cut a token: take the whole token)
        lo = start - line_start
        hi = end - line_start
        while lo > 0 and not line[lo - 1].isspace():
            lo -= 1
        while hi < len(line) and not line[hi].isspace():
            hi += 1
        tokens = line[lo:hi].split()
        # the span is a name because of its capitalised words: when those are the program's own
        # (``Unpacking lsb-release``, ``Setting up …``), the rest is a value beside an event word
        named = [t for t in tokens if is_name_word(t.strip(".,;:!?()[]'\"’"))] or tokens
        return bool(named) and all(t in words for t in named)
