"""Which lines of a text hold which keywords: the prefilter every secret rule and entity recognizer
shares, computed once per text.

A rule names literal keywords that every match of it contains; it runs only on the lines that hold
one. Modules register their keywords with :func:`index_keywords` (the secret rules at import, the
recognizers theirs), and :class:`LineIndex` finds all of them in one pass of an Aho-Corasick
automaton (``pyahocorasick``, extra ``privacy``) or, without it, with one ``str.find`` scan per
keyword. Lower-case keywords match case-insensitively, others exactly. This module knows nothing of
secrets or entities, imports nothing from the package, and never keeps the texts it indexes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

try:  # optional accelerator: one pass for all rule keywords instead of one scan per keyword
    import ahocorasick as _ahocorasick  # type: ignore[import-untyped,import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - exercised where the extra is not installed
    _ahocorasick = None


def _build_automaton(keywords: Iterable[str]) -> Any:
    """One automaton over lower-cased keywords; each hit gives the keywords it stands for, with
    whether the text must be re-checked for case (``AUTH`` and ``auth`` share one entry)."""
    if _ahocorasick is None:
        return None
    variants: dict[str, list[tuple[str, bool]]] = {}
    for kw in set(keywords):
        variants.setdefault(kw.lower(), []).append((kw, not _is_case_insensitive(kw)))
    automaton = _ahocorasick.Automaton()
    for low, kws in variants.items():
        automaton.add_word(low, tuple(kws))
    automaton.make_automaton()
    return automaton


def _is_case_insensitive(kw: str) -> bool:
    return kw.islower() or not any(c.isalpha() for c in kw)


# [(the keyword automaton, the keywords it finds)], built on first use and again when keywords
# are added; a text's index is then one pass of the automaton, whatever the number of keywords.
_AUTOMATA: list[tuple[Any, frozenset[str]]] = []
_KEYWORDS: set[str] = set()


def index_keywords(words: Iterable[str]) -> None:
    """Index ``words`` in every :class:`LineIndex` from now on (one pass finds them all).

    The secret rules register theirs at import; the entity recognizers, which share the index,
    theirs: a keyword tested on every text then costs nothing extra, instead of one scan each.
    """
    new = set(words) - _KEYWORDS
    if new:
        _KEYWORDS.update(new)
        _AUTOMATA.clear()


def _all_keywords() -> list[str]:
    return sorted(_KEYWORDS)


class LineIndex:
    """Which lines of a text hold each rule keyword, computed once per text.

    With ``pyahocorasick`` installed every keyword is found in one pass (Aho-Corasick); without it,
    one ``str.find`` scan per keyword (about 1 ms per keyword per MB) gives the same answer.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        low = text.lower()
        # str.lower() can change lengths for a few non-ASCII characters; then offsets would drift.
        self.low = low if len(low) == len(text) else None
        self._cache: dict[str, list[tuple[int, int]]] = {}
        self._indexed: frozenset[str] = frozenset()  # keywords the automaton looked for
        if _ahocorasick is not None and self.low is not None:
            self._index_all()

    def _index_all(self) -> None:
        if not _AUTOMATA:
            # One automaton over the lower-cased text; case-sensitive keywords are re-checked below.
            keywords = _all_keywords()
            _AUTOMATA.append((_build_automaton(keywords), frozenset(keywords)))
        automaton, self._indexed = _AUTOMATA[0]
        text = self.text
        hits: dict[str, list[tuple[int, int]]] = {}
        last: dict[str, int] = {}
        lo, hi = 0, -1  # the line of the last hit: hits come by position, several to a line
        for end, variants in automaton.iter(self.low):
            for kw, exact in variants:
                if exact and not text.startswith(kw, end - len(kw) + 1):
                    continue
                if last.get(kw, -1) >= end:
                    continue  # already inside a line recorded for this keyword
                if end > hi:
                    lo = text.rfind("\n", 0, end) + 1
                    hi = text.find("\n", end)
                    hi = len(text) if hi < 0 else hi
                hits.setdefault(kw, []).append((lo, hi))
                last[kw] = hi
        self._cache.update(hits)  # keywords looked for and not found are in self._indexed alone

    @property
    def holds_no_keyword(self) -> bool:
        """Whether the automaton looked for every keyword and found none: then no rule can fire."""
        return bool(self._indexed) and not any(self._cache.values())

    def lines(self, kw: str) -> list[tuple[int, int]]:
        """The (start, end) of every line holding ``kw`` (case-insensitively when ``kw`` is lower-case)."""
        if kw in self._cache:
            return self._cache[kw]
        if kw in self._indexed:
            return []
        text = self.text
        if _is_case_insensitive(kw):
            hay = self.low
            if hay is None:
                hit = kw in text.lower()
                self._cache[kw] = [(0, len(text))] if hit else []
                return self._cache[kw]
        else:
            hay = text
        out: list[tuple[int, int]] = []
        i = hay.find(kw)
        while i >= 0:
            lo = text.rfind("\n", 0, i) + 1
            hi = text.find("\n", i)
            hi = len(text) if hi < 0 else hi
            out.append((lo, hi))
            i = hay.find(kw, hi)
        self._cache[kw] = out
        return out

    def ranges(self, keywords: tuple[str, ...]) -> list[tuple[int, int]]:
        """Merged line ranges holding any of ``keywords``, sorted."""
        found = [self.lines(kw) for kw in keywords]
        if not any(found):
            return []
        nonempty = [lines for lines in found if lines]
        # one keyword's lines are sorted and distinct already; several need sorting
        spans = nonempty[0] if len(nonempty) == 1 else sorted({r for lines in nonempty for r in lines})
        merged: list[tuple[int, int]] = []
        start, stop = spans[0]
        for lo, hi in spans:  # (the first joins itself)
            if lo <= stop + 1:
                stop = max(hi, stop)
            else:
                merged.append((start, stop))
                start, stop = lo, hi
        merged.append((start, stop))
        return merged
