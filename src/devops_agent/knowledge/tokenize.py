"""Code-aware tokenization for lexical retrieval.

Identifiers are kept whole (``parse_http_header``) *and* split into their parts (``parse``,
``http``, ``header``; camelCase and digits too), so a query in prose finds code and a query with
the exact identifier ranks the defining chunk highest. Paths split on separators as a side effect
of the identifier pattern. Pure functions only: this module must not touch files or the index.
"""

from __future__ import annotations

import re
from collections import Counter

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z0-9])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")

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
            parts.extend(m.lower() for m in _CAMEL.findall(piece))
    return parts


def tokenize(text: str) -> list[str]:
    """Tokens of ``text`` in order: each identifier whole (lowercased), then its parts if it has several."""
    out: list[str] = []
    for match in _IDENT.finditer(text):
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
