"""Masking of the variable parts of a log message, before template mining.

A message is cut into *pieces*: whitespace-separated tokens, further split at the delimiters
``: = , . ( ) [ ] { } " ' | ; < > #``. A piece is a variable, replaced by ``<*>``, when it holds
a digit (numbers, hex, ports, versions, durations, block and task ids; not a key before ``=``
nor a word with one digit inside, like ``ssh2``). Whole tokens are variables when they are a
MAC address, a lowercase dotted name with a digit (IPs, ``cp-1.vm1.example.us``), a host name
ending in a common top-level domain, a file path (``/x``, ``./x``, ``~/x``), an e-mail address,
or an empty ``()``/``[]``/``""``. A date such as ``Fri Jun 17`` is a variable too. Wildcards
joined by punctuation (``<*>.<*>``, ``<*>:<*>``) become one, a token left with no letter
(``[<*>]``) becomes ``<*>``, and runs of ``<*>`` tokens become one, so variables of varying
length (``4 0 1`` or ``4``) do not split a template.

The rules are the same for every log source: nothing here is tuned to a particular system.
Masking works token by token with a bounded cache, because the constant tokens of a log repeat.
Pure functions; this module must not read files or import from tools, policies, agent or
interfaces.
"""

from __future__ import annotations

import re

__all__ = ["WILDCARD", "Masker", "mask", "shape"]

WILDCARD = "<*>"

_PIECE = r"""[^\s:=,()\[\]{}"'|;<>#.]"""
_EDGE = r"""(?<![^\s:=,()\[\]{}"'|;<>#.])"""
_END = r"""(?![^\s:=,()\[\]{}"'|;<>#.])"""
_TLD = r"(?:com|net|org|edu|gov|mil|io|info|biz|cn|de|uk|jp|fr|ru|br|in|au|us|ca|nl|eu|local|internal|lan)"

# One digit inside a word is part of a name (``ssh2``, ``jk2_init``, ``HttpServer2``), not a value.
_WORD_DIGIT = r"[A-Za-z]+\d[A-Za-z_]*"

_VARIABLE_RE = re.compile(
    _EDGE
    + "(?:"
    + "|".join(
        (
            rf"(?:[0-9A-Fa-f]{{2}}[:-]){{5,}}[0-9A-Fa-f]{{2}}{_END}",
            rf"(?=[a-z0-9.-]*\d)(?:[a-z0-9-]+\.){{2,}}[a-z0-9-]+{_END}",
            rf"(?:[A-Za-z0-9-]+\.)+{_TLD}{_END}",
            r"""(?:\.{1,2}|~)?/[^\s"'()\[\]{}<>,;|]+""",
            rf"(?!{_WORD_DIGIT}{_END})(?={_PIECE}*\d){_PIECE}++(?!=)",
            rf"[\w.+-]+@[\w-]+(?:\.[\w-]+)+{_END}",
        )
    )
    + ")"
)
_DATE_RE = re.compile(
    r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?"
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}\b"
)
_MONTH_RE = re.compile(r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d")
_EMPTY = frozenset(("()", "[]", "{}", '""', "''"))
_JOINED_RE = re.compile(r"<\*>(?:[.:/_,-]<\*>)+")
_RUN_RE = re.compile(r"(?<!\S)<\*>(?:\s+<\*>)+(?!\S)")
_DIGIT_RE = re.compile(r"\d")
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
# Tokens that kept no letter (``[<*>]``, ``-<*>``) are one variable.
_LETTER_RE = re.compile(r"[A-Za-z]")


def _mask_piecewise(token: str) -> str:
    if token in _EMPTY:
        return WILDCARD
    masked = _VARIABLE_RE.sub(WILDCARD, token)
    if WILDCARD in masked:
        masked = _JOINED_RE.sub(WILDCARD, masked)
        if _LETTER_RE.search(masked.replace(WILDCARD, "")) is None:
            return WILDCARD
    return masked


class Masker:
    """Masks messages, remembering up to ``cache_size`` tokens (the constant ones repeat)."""

    def __init__(self, cache_size: int = 50_000) -> None:
        self.cache_size = cache_size
        self._cache: dict[str, str] = {}

    def token(self, token: str) -> str:
        """One whitespace-free token with its variable pieces masked."""
        if token.isdigit():
            return WILDCARD
        masked = self._cache.get(token)
        if masked is None:
            masked = _mask_piecewise(token)
            if len(self._cache) < self.cache_size:
                self._cache[token] = masked
        return masked

    def __call__(self, message: str) -> str:
        """The message with its variable pieces replaced by ``<*>`` and whitespace runs made single.

        ``"Connection from 10.0.0.5 port 22 [preauth]"`` gives ``"Connection from <*> port <*>
        [preauth]"``; ``"onExtend:1514038530000 14 0 4"`` gives ``"onExtend:<*> <*>"``.
        """
        return self.masked(message)[0]

    def masked(self, message: str) -> tuple[str, bool]:
        """The masked message, and whether every message of the same :func:`shape` masks alike.

        No rule looks at a digit's value, only at where digits are, so messages that differ only
        in their digits mask alike, unless a digit survives masking (``ssh2``, ``r27=``).
        """
        if _MONTH_RE.search(message) is not None:
            message = _DATE_RE.sub(WILDCARD, message)
        get = self._cache.get
        token = self.token
        text = " ".join([get(t) or token(t) for t in message.split()])
        if "<*> <*>" in text:
            text = _RUN_RE.sub(WILDCARD, text)
        return text, _DIGIT_RE.search(text) is None


def shape(message: str) -> bytes:
    """The message with every ASCII digit made ``0``: a cheap key under which masking is the same."""
    return message.encode("utf-8", "surrogatepass").translate(_ZEROS)


def mask(message: str) -> str:
    """:class:`Masker` without a cache, for one-off use (see :meth:`Masker.__call__`)."""
    return Masker(cache_size=0)(message)
