"""Code-aware tokenization for lexical retrieval.

Identifiers are kept whole (``parse_http_header``) *and* split into their parts (``parse``,
``http``, ``header``; camelCase and digits too), so a query in prose finds code and a query with
the exact identifier ranks the defining chunk highest. Paths split on separators as a side effect
of the identifier pattern. Pure functions only: this module must not touch files or the index.

Words are Unicode-aware: ``Zürich`` is one token, not ``rich``. Text that is not pure ASCII is
NFKC-normalized first (``ﬁle`` -> ``file``, composed accents), and runs of CJK ideographs and kana,
written without spaces between words, also give their overlapping character pairs as parts
(``東京都`` -> ``東京``, ``京都``), so a shorter query word finds a longer run. Pure-ASCII text
takes exactly the same path as before the Unicode support (a benchmark was tuned on its output).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

# The same pattern, the second beyond ASCII (every letter); the first is faster on ASCII text.
_ASCII_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT = re.compile(r"[^\W\d]\w*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# Scripts written without spaces between words: CJK ideographs (with extension A and the
# supplementary planes), hiragana, katakana and half-width katakana.
_CJK = re.compile(
    r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003ffff]+"
)

# Words so common in prose and code that they only add noise to BM25 postings.
STOPWORDS = frozenset(
    """
    a an and are as at be but by for from has have if in into is it its of on or that the their
    then there these this to was were will with which would should can could not no we you i he
    she they them our your my me do does did so than too very just also any all some such when
    where what who how why been being am while
    """.split()  # noqa: SIM905
)


def split_identifier(word: str) -> list[str]:
    """The parts of one identifier, lowercased: ``getHTTPResponse_code`` -> get, http, response, code."""
    parts: list[str] = []
    for piece in word.split("_"):
        if piece:
            found = _CAMEL.findall(piece) if piece.isascii() else _unicode_parts(piece)
            parts.extend(m.lower() for m in found)
    return parts


def _case_shape(ch: str) -> str:
    """``ch`` as the ASCII character of its class, so :data:`_CAMEL` can split any script."""
    if ch.isdecimal():
        return "0"
    if ch.isupper() or ch.istitle():
        return "A"
    return "a"  # lowercase, caseless letters and combining marks continue a word


def _unicode_parts(piece: str) -> list[str]:
    """Camel-case parts of a non-ASCII ``piece``; a CJK run gives its character pairs instead."""
    out: list[str] = []
    pos = 0
    for run in [*_CJK.finditer(piece), None]:
        end = run.start() if run else len(piece)
        if pos < end:
            text = piece[pos:end]
            shape = "".join(_case_shape(c) for c in text)
            out.extend(text[m.start() : m.end()] for m in _CAMEL.finditer(shape))
        if run:
            cjk = run.group()
            out.extend([cjk] if len(cjk) == 1 else [cjk[i : i + 2] for i in range(len(cjk) - 1)])
            pos = run.end()
    return out


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order: each identifier whole (lowercased), then its parts if it has several."""
    out: list[str] = []
    ident = _ASCII_IDENT
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
        ident = _IDENT
    for match in ident.finditer(text):
        word = match.group()
        whole = word.lower().strip("_")
        if len(whole) < 2 or whole in STOPWORDS:
            continue
        out.append(whole)
        parts = split_identifier(word)
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) > 1 and p not in STOPWORDS and p != whole)
    return out


def term_counts(text: str) -> Counter[str]:
    """Term frequencies of ``text`` (what a BM25 posting stores)."""
    return Counter(tokenize(text))
