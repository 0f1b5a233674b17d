"""Masking of the variable parts of a log message, before template mining.

A message is cut into *pieces*: whitespace-separated tokens, further split at the delimiters
``: = , . ( ) [ ] { } " ' | ; < > #``. A piece is a variable, replaced by ``<*>``, when it holds
a digit (numbers, hex, ports, versions, durations, block and task ids; not a key before ``=``
nor a word with one digit inside, like ``ssh2``), when it is a boolean (``true``, ``False``), or
when it is a hex word of eight or more characters (``deadbeef``), digits or not. Whole tokens,
or their parts, are variables when they are of a class defined by a standard
(:mod:`.tokenclass`): a URL, a Windows or Unix file path (a quoted absolute path whole, spaces
included), an IPv4 or IPv6 address, a host name
under a public suffix of the Public Suffix List or a special-use name (``.internal``,
``.local``), a MAC address, a lowercase dotted name with a digit (``cp-1.vm1.example.us``), an
e-mail address, or an empty ``()``/``[]``/``""``. A date such as ``Fri Jun 17`` is a variable
too. Wildcards joined by punctuation (``<*>.<*>``, ``<*>:<*>``) become one, a token left with no
letter (``[<*>]``) becomes ``<*>``, and runs of ``<*>`` tokens become one, so variables of
varying length (``4 0 1`` or ``4``) do not split a template. A unit symbol after a number joins
it (``1.16 KB`` -> ``<*>KB``): the unit stays in the template, but the miner treats a position
where only the unit differs (``<*>B`` / ``<*>KB``) as one variable (see :func:`is_measure`).

The rules are the same for every log source: nothing here is tuned to a particular system, and
no list in them was taken from a benchmark's logs. Masking works token by token with a bounded
cache, because the constant tokens of a log repeat. Pure functions; this module must not read
files or import from tools, policies, agent or interfaces.
"""

from __future__ import annotations

import re

from devops_agent.analysis.tokenclass import UNIT_SYMBOLS, is_host_name, is_ip_address

__all__ = ["WILDCARD", "Masker", "is_measure", "mask", "shape"]

WILDCARD = "<*>"

_PIECE = r"""[^\s:=,()\[\]{}"'|;<>#.]"""
_EDGE = r"""(?<![^\s:=,()\[\]{}"'|;<>#.])"""
_END = r"""(?![^\s:=,()\[\]{}"'|;<>#.])"""

# One digit inside a word is part of a name (``ssh2``, ``jk2_init``, ``HttpServer2``), not a value.
_WORD_DIGIT = r"[A-Za-z]+\d[A-Za-z_]*"

_VARIABLE_RE = re.compile(
    _EDGE
    + "(?:"
    + "|".join(
        (
            rf"(?:[0-9A-Fa-f]{{2}}[:-]){{5,}}[0-9A-Fa-f]{{2}}{_END}",
            rf"(?=[a-z0-9.-]*\d)(?:[a-z0-9-]+\.){{2,}}[a-z0-9-]+{_END}",
            r"""(?:\.{1,2}|~)?/[^\s"'()\[\]{}<>,;|]+""",
            rf"(?!{_WORD_DIGIT}{_END})(?={_PIECE}*\d){_PIECE}++(?!=)",
            rf"[\w.+-]+@[\w-]+(?:\.[\w-]+)+{_END}",
        )
    )
    + ")"
)
# Pieces without a digit that are values all the same: booleans, and hex words of id length (a
# hash, a pointer, a trace id; no English word of 8 letters is spelt with a-f alone). Searched
# only in tokens that hold a boolean's letters or _HEX_WORD_HINT.
_WORD_VALUE_RE = re.compile(
    _EDGE + rf"(?:true|false|True|False|TRUE|FALSE|[0-9a-f]{{8,}}|[0-9A-F]{{8,}}){_END}(?!=)"
)
_HEX_WORD_HINT = re.compile(r"[a-f]{8}|[A-F]{8}")
# The classes that need more than a regex to tell (:mod:`.tokenclass`) are searched only in
# tokens holding the character each needs, so most tokens are spared the search.
_URL_RE = re.compile(r"(?<![\w+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s\"'<>]*")
_WINPATH_RE = re.compile(r"(?<![\w\\])(?:[A-Za-z]:\\|\\\\[\w.$-]+\\)[^\s\"'<>|]*")
_IP_RE = re.compile(
    r"(?<![\w:.%\[])\[?(?=[0-9A-Fa-f.]*:[0-9A-Fa-f.]*:)[0-9A-Fa-f:.]+(?:%[\w.-]+)?(?:\](?::\d+)?)?(?![\w:%])"
)
# A host name's last label is letters in one case, ending the name (``.com:443``, ``.COM.``);
# dotted numbers, versions and Java class names have none.
_HOST_HINT = r"\.(?:[a-z]{2,}|[A-Z]{2,})\.?(?![\w.-])"
_HOST_HINT_RE = re.compile(_HOST_HINT)
# What a token needs to hold for any of these classes to be in it: one search spares most tokens.
_CLASS_HINT_RE = re.compile(r"://|\\|:[0-9A-Fa-f]{0,4}:|" + _HOST_HINT)
# Two colons around at most one group of 1-4 hex digits: an IPv6 address may be here.
_IPV6_HINT_RE = re.compile(r":[0-9A-Fa-f]{0,4}:")
# Host names are looked for between these (not ``.`` or ``-``, which are inside them).
_HOST_SPLIT_RE = re.compile(r"""([\s:=,()\[\]{}"'|;<>#@/\\]+)""")
_DATE_RE = re.compile(
    r"\b(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,?\s+)?"
    r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d{1,2}\b"
)
_MONTH_RE = re.compile(r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.?\s+\d")
# A quoted absolute path is one value, spaces and all ("/srv/Web Applications/Logs", 'C:\Program
# Files\x'): unquoted, a space ends a path, as nothing else says where it would.
_QUOTED_PATH_RE = re.compile(r"""(?<![\w])(["'])(?:/|[A-Za-z]:\\)[^"'\n]*?\1""")
_EMPTY = frozenset(("()", "[]", "{}", '""', "''"))
_JOINED_RE = re.compile(r"<\*>(?:[.:/_,-]<\*>)+")
_RUN_RE = re.compile(r"(?<!\S)<\*>(?:\s+<\*>)+(?!\S)")
_DIGIT_RE = re.compile(r"\d")
_ZEROS = bytes.maketrans(b"123456789", b"000000000")
# Tokens that kept no letter (``[<*>]``, ``-<*>``) are one variable.
_LETTER_RE = re.compile(r"[A-Za-z]")
# Punctuation that may follow a value or its unit: ``(1.16 KB),``
_CLOSERS = ")]},;.:'\""
# Unit symbols as whitespace-split words show them: one set test tells whether a message has one.
_UNIT_WORDS = frozenset(u + c for u in UNIT_SYMBOLS for c in ("", *_CLOSERS, "),", ").", "],"))


def _ip_or_not(match: re.Match[str]) -> str:
    text = match.group()
    # ``add::ed`` is a valid address but more likely C++: ask for a digit or 3 colons
    plausible = is_ip_address(text) and (text.count(":") >= 3 or _DIGIT_RE.search(text) is not None)
    return WILDCARD if plausible else text


def _mask_hosts(token: str) -> str:
    parts = _HOST_SPLIT_RE.split(token)
    changed = False
    for i in range(0, len(parts), 2):
        part = parts[i]
        # not the domain of an e-mail address or a file name in a path (their own rules)
        if "." in part and (i == 0 or parts[i - 1][-1] not in "@/\\") and is_host_name(part):
            parts[i] = WILDCARD
            changed = True
    return "".join(parts) if changed else token


def _mask_classes(token: str) -> str:
    if "://" in token:
        token = _URL_RE.sub(WILDCARD, token)
    if "\\" in token:
        token = _WINPATH_RE.sub(WILDCARD, token)
    if token.count(":") >= 2 and _IPV6_HINT_RE.search(token) is not None:
        token = _IP_RE.sub(_ip_or_not, token)
    if "." in token and _HOST_HINT_RE.search(token) is not None:
        token = _mask_hosts(token)
    return token


def _needs_variable_rules(token: str) -> bool:
    """Whether any rule of _VARIABLE_RE can match: each needs a digit, ``/``, ``@`` or a MAC's
    five separators. Most words have none of them, and a few substring tests are cheaper than
    the search."""
    if token.isalpha():
        return False
    return (
        _DIGIT_RE.search(token) is not None
        or "/" in token
        or "@" in token
        or token.count(":") >= 5
        or token.count("-") >= 5
    )


def _mask_piecewise(token: str) -> str:
    if token in _EMPTY:
        return WILDCARD
    if _LETTER_RE.search(token) is None:
        # no letter: a digit makes some piece <*>, and a token left with no letter is <*>
        # (the rules below would say the same, more slowly: most new tokens are numbers)
        return WILDCARD if _DIGIT_RE.search(token) is not None else token
    # substring tests first: most tokens hold none of what these searches need
    if ("." in token or ":" in token or "\\" in token) and _CLASS_HINT_RE.search(token) is not None:
        token = _mask_classes(token)
    if _needs_variable_rules(token):
        masked = _VARIABLE_RE.sub(WILDCARD, token)
        if masked == WILDCARD:  # a whole value: nothing left to look at
            return masked
    else:
        masked = token
    if (
        "rue" in masked
        or "alse" in masked
        or "RUE" in masked
        or "ALSE" in masked
        or (len(masked) >= 8 and _HEX_WORD_HINT.search(masked) is not None)
    ):
        masked = _WORD_VALUE_RE.sub(WILDCARD, masked)
    if WILDCARD in masked:
        masked = _JOINED_RE.sub(WILDCARD, masked)
        if _LETTER_RE.search(masked.replace(WILDCARD, "")) is None:
            return WILDCARD
    return masked


def _join_units(words: list[str], masked: list[str]) -> list[str]:
    """``1.16 KB)`` -> ``<*>KB)``: a unit symbol after a number is part of the value."""
    out = [masked[0]]
    for i in range(1, len(words)):
        if (
            out[-1].endswith(WILDCARD)
            and words[i].rstrip(_CLOSERS) in UNIT_SYMBOLS
            and words[i - 1].rstrip(_CLOSERS)[-1:].isdigit()
        ):
            out[-1] += masked[i]
        else:
            out.append(masked[i])
    return out


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
        text, kept = self.masked_words(message)
        return text, kept == ()

    def masked_words(self, message: str) -> tuple[str, tuple[int, ...] | None]:
        """The masked message, and which of ``message.split()`` kept a digit through masking.

        Messages of the same :func:`shape` whose words at those positions are equal mask alike
        (``... port 22 ssh2`` and ``... port 80 ssh2``; not ``... ssh1``). None when no such
        positions can be given (a date was masked across words).
        """
        dated = _MONTH_RE.search(message) is not None
        if dated:
            message = _DATE_RE.sub(WILDCARD, message)
        if ('"' in message or "'" in message) and _QUOTED_PATH_RE.search(message) is not None:
            message = _QUOTED_PATH_RE.sub(WILDCARD, message)
            dated = True  # words moved: no positions to give (see the return value)
        get = self._cache.get
        token = self.token
        words = message.split()
        # numbers are the commonest tokens and never cached (each is new): no call for them
        out = [get(t) or (WILDCARD if t.isdigit() else token(t)) for t in words]
        text = " ".join(out)
        if _DIGIT_RE.search(text) is None:
            kept: tuple[int, ...] | None = ()
        else:
            kept = None if dated else tuple(i for i, t in enumerate(out) if _DIGIT_RE.search(t) is not None)
        if not _UNIT_WORDS.isdisjoint(words):
            text = " ".join(_join_units(words, out))
        if "<*> <*>" in text:
            text = _RUN_RE.sub(WILDCARD, text)
        return text, kept


def is_measure(token: str) -> bool:
    """Whether a masked token is a value, with or without a unit symbol (``<*>``, ``<*>KB)``).

    Human-readable sizes and durations pick their unit by magnitude (``850 B``, ``1.16 KB``), so
    two messages of one event may differ only there.
    """
    if token == WILDCARD:
        return True
    return token.startswith(WILDCARD) and token[len(WILDCARD) :].rstrip(_CLOSERS) in UNIT_SYMBOLS


def shape(message: str) -> bytes:
    """The message with every ASCII digit made ``0``: a cheap key under which masking is the same."""
    return message.encode("utf-8", "surrogatepass").translate(_ZEROS)


def mask(message: str) -> str:
    """:class:`Masker` without a cache, for one-off use (see :meth:`Masker.__call__`)."""
    return Masker(cache_size=0)(message)
