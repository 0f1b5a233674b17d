"""Token *shapes*: secrets of providers no rule names, found by how generated tokens look.

A provider's token is a short prefix naming the kind of token, a separator, and a random body
(``<prefix>_<base62>``, ``<prefix>-<digits>-<digits>-<hex>``, ``<a>.<b>.<random>``); a JSON Web
Token is three base64url segments, the first a JSON header. These finders look at every long run
of token characters in a text (one regex scan, then a few string tests per run: ordinary text has
a few thousand such runs per megabyte) and keep the runs that have such a shape *and* whose body
reads as random rather than as words, numbers or an identifier:

* :func:`find_prefixed_tokens`: ``prefix`` + separator + a body of 20+ characters with letters and
  digits, not word-like (see :func:`random_body`), not a UUID or a version;
* :func:`find_jwts`: ``e[wy]…`` header and payload segments whose header decodes to a JSON object
  (also after ``token =``, in a URL, in a cookie), and base64 JSON blobs that carry a random key
  (``eyJrIjoi…``: ``{"k":"…"}``);
* :func:`find_hook_urls`: the random path segments of a webhook URL (a host or path naming a
  hook: ``hooks.slack.com/services/…``, ``…/webhook/…``, ``…/api/webhooks/…``).

What this module must not do: flag identifiers (``test_parse_rfc2822_date``), ids that are numbers
(``blk_-160899…``, ``container_1445144423722_0020_01``), UUIDs (``req-3f2a…``), hashes that name
their algorithm (``sha256-…``), file names (``app-3f2a1b4c5d6e7f8a9b0c.js``). It imports nothing
from the package and returns spans only, never values.
"""

from __future__ import annotations

import base64
import binascii
import heapq
import json
import math
import re
import string
from collections import Counter
from collections.abc import Callable, Iterator

# A run of token characters, maximal on both sides ("/" and "+" are in the boundary set so a base64
# blob or a path is not cut into token-looking pieces: such runs are left to other rules).
_RUN_RX = re.compile(
    r"(?:(?<![A-Za-z0-9_.~+/-])|(?<=://))[A-Za-z0-9_.~-]{20,400}(?:==?(?![A-Za-z0-9]))?(?![A-Za-z0-9_.~+/-])"
)
# Where a run may start: after a character outside the run's boundary set, or after "://". The
# first starts with a class of characters that are rare in text, so the regex engine skips from one
# to the next in C instead of trying _RUN_RX's look-behind at every position (see _runs).
_AFTER_BOUNDARY_RX = re.compile(r"[^A-Za-z0-9_.~+/-][A-Za-z0-9_.~-]{20}")
_AFTER_SCHEME_RX = re.compile(r"://[A-Za-z0-9_.~-]{20}")
_TWO_DIGITS_RX = re.compile(r"[0-9][^0-9]*[0-9]")  # a run is ASCII: its digits are 0-9
_SEP_RX = re.compile(r"[_.~-]")
_PREFIX_RX = re.compile(r"([A-Za-z0-9][A-Za-z0-9]{0,11})[_.~-]")
# A digest labelled with its algorithm: "SHA256:<base64>" (an SSH key fingerprint), "md5=<hex>".
_HASH_LABEL_RX = re.compile(r"(?i)(?:sha(?:1|224|256|384|512)?|md5|blake2[bs]?|crc32)[:=]$")
# Anti-forgery tokens (a form's authenticity_token, X-CSRF-Token) are per session and useless
# without the session's cookie: not credentials (the config-line rule skips them too).
_ANTI_FORGERY_RX = re.compile(r"(?i)csrf|xsrf|authenticity_token|requestverificationtoken")
_UUID_RX = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HASH_NAMES = frozenset(
    {"sha1", "sha224", "sha256", "sha384", "sha512", "md5", "sha", "blake2b", "crc32", "xxh64"}
)
_FILE_EXT_RX = re.compile(r"\.(?:[a-z]{1,5}\d?)$")
_VERSION_RX = re.compile(r"[.-]v?\d+(?:\.\d+)+$")  # an image or package name ending in a version
_HEX_RX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
_NOT_HEX_RX = re.compile(r"[^0-9a-fA-F]")
_ANY_HEX_RX = re.compile(r"[0-9a-fA-F]+")


def _hex_digest(run: str) -> bool:
    """Hexadecimal in one case, or with a stray letter or two of the other (an edited digest):
    a random base62 run of 20+ characters is all hex about once in 10^9."""
    if _ANY_HEX_RX.fullmatch(run) is None:
        return False
    upper = sum(map(str.isupper, run))
    return min(upper, sum(map(str.islower, run))) <= 2


# Letter runs that may be words (a capital and lower-case letters, or capitals): what identifiers
# are made of. A run is a word when it has vowels where words have them (see _wordlike).
_WORD_RX = re.compile(r"[A-Z]?[a-z]{3,}|[A-Z]{4,}")
_VOWELS = frozenset("aeiouyAEIOUY")
_CLUSTER_RX = re.compile(r"[^aeiouyAEIOUY]{4}")
_DIGIT_RUN_RX = re.compile(r"[0-9]{8}")  # a timestamp or a counter inside an id


def entropy(value: str) -> float:
    """Shannon entropy of ``value``'s characters, in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


def _wordlike(run: str) -> bool:
    """4+ letters with a word's share of vowels (30-60 %, y counted) and no four consonants in a row."""
    if len(run) < 4:
        return False
    share = sum(map(_VOWELS.__contains__, run)) / len(run)
    return 0.3 <= share <= 0.6 and _CLUSTER_RX.search(run) is None


_CLASS_RUN_RX = re.compile(r"[a-z]+|[A-Z]+|[0-9]+|[^a-zA-Z0-9]+")


def random_body(core: str, min_len: int = 20) -> bool:
    """Does ``core`` (a token body, separators removed) read as generated rather than written?

    Measured on random tokens of the usual alphabets (base62, base36, base64url, hex) against
    identifiers of Python's standard library: it needs ``min_len`` characters, letters and at least
    two digits (all-digit ids and all-letter words are left), ten distinct characters or more, a change
    of character class (lower, upper, digit) at one position in four or more, one in six for a
    single case (random base62: 3 in 5, base36: 2 in 5; ``testmusllinuxx8664signature``: 1 in 13),
    no eight digits in a row unless hexadecimal, no letters or digits that count up or down when read
    apart (``a1B2c3…``, ``X9y8Z7…``: typed), and at most half of it in word-like letter runs
    (``ResourceFromNamespaceTest01`` is 85 % words). About 2 % of random bodies fail it.
    """
    n = len(core)
    if n < min_len:
        return False
    digits = sum(map(str.isdigit, core))
    if digits < 2 or n - digits < 2:
        return False
    changes = len(_CLASS_RUN_RX.findall(core)) - 1  # C-level: this runs on every long run of text
    # one case and digits (base36, hex) changes class less often than base62: 2 in 5 against 3 in 5
    if changes * (6 if core.islower() or core.isupper() else 4) < n - 1 or (
        _DIGIT_RUN_RX.search(core) and _NOT_HEX_RX.findall(core)[n // 10 :]
    ):
        # (eight digits in a row: a timestamp or a counter, unless the body is hexadecimal, where
        # a run of eight digits is common: at most a tenth of it may be other characters)
        return False
    words = sum(len(w) for w in _WORD_RX.findall(core) if _wordlike(w))
    if words * 2 > n or len(set(core)) < 10:  # ten symbols or more: over 3 bits each
        return False
    return not _typed_sequence(core)


_NOT_DIGITS = str.maketrans("", "", string.ascii_letters)
_NOT_LETTERS = str.maketrans("", "", string.digits)
_RUNS = ("abcdefghijklmnopqrstuvwxyzabcde", "0123456789012345")
_SEQ6_RX = re.compile(
    "|".join(sorted({r[i : i + 6] for run in _RUNS for r in (run, run[::-1]) for i in range(len(r) - 5)}))
)


# What follows each letter and digit in _RUNS (z is followed by a, 9 by 0); any other byte maps to
# 0x80, which no ASCII byte equals. Lower-cases and deletes by bytes.translate (C speed).
_SUCC = bytes(
    ord(_RUNS[0][_RUNS[0].index(chr(c)) + 1]) if chr(c) in string.ascii_lowercase
    else ord(_RUNS[1][_RUNS[1].index(chr(c)) + 1]) if chr(c) in string.digits
    else 0x80
    for c in range(256)
)  # fmt: skip
_LOWER = bytes.maketrans(string.ascii_uppercase.encode(), string.ascii_lowercase.encode())
_LETTER_BYTES, _DIGIT_BYTES = string.ascii_letters.encode(), string.digits.encode()


def _typed_sequence(core: str) -> bool:
    """Letters or digits that, read apart, count up or down (``a1B2c3D4…``, ``X9y8Z7a6…``): typed.

    This runs on every long run that could be a token, so ASCII (nearly all) is read with byte
    operations: the same answer as searching _SEQ6_RX, four times faster."""
    if not core.isascii():  # lower() may then turn a non-ASCII letter into an ASCII one (K)
        letters, digits = core.translate(_NOT_LETTERS).lower(), core.translate(_NOT_DIGITS)
        return _SEQ6_RX.search(letters) is not None or _SEQ6_RX.search(digits) is not None
    raw = core.encode()
    return _counts_six(raw.translate(_LOWER, _DIGIT_BYTES)) or _counts_six(raw.translate(None, _LETTER_BYTES))


def _counts_six(raw: bytes) -> bool:
    """Six bytes in a row counting up or down in _RUNS: five neighbours in a row where one follows
    the other (compared all at once as two big integers, a zero byte where they do)."""
    n = len(raw)
    if n < 6:
        return False
    succ = raw.translate(_SUCC)
    up = int.from_bytes(raw[1:], "big") ^ int.from_bytes(succ[:-1], "big")
    if b"\0\0\0\0\0" in up.to_bytes(n - 1, "big"):
        return True
    down = int.from_bytes(raw[:-1], "big") ^ int.from_bytes(succ[1:], "big")
    return b"\0\0\0\0\0" in down.to_bytes(n - 1, "big")


_EDGE = ".-_~="


def find_prefixed_tokens(
    text: str, lo: int, hi: int, covered: Callable[[int, int], bool] | None = None
) -> Iterator[tuple[int, int]]:
    """``<prefix><sep><random body>`` runs (``aio_…``, ``odt_…``, ``dp.pt.…``, ``xoxp-…-…-…``) and
    bare random runs of 32+ characters (not hexadecimal: those are digests and ids). A run for which
    ``covered(start, end)`` holds (already found by another rule) is not tested."""
    for match in _runs(text, lo, hi):
        raw = match.group()
        run = raw.strip(_EDGE)  # a sentence's full stop, a leading "--" are no part of it
        if len(run) < 20 or _TWO_DIGITS_RX.search(run) is None:
            continue  # cheapest test first: most long runs of text are words and paths
        start = match.start() + len(raw) - len(raw.lstrip(_EDGE))
        if covered is not None and covered(start, start + len(run)):
            continue
        if (
            _is_token_shape(run)
            and _HASH_LABEL_RX.search(text, max(0, start - 10), start) is None
            and _ANTI_FORGERY_RX.search(text, max(0, start - 40), start) is None
        ):
            yield start, start + len(run)


def _runs(text: str, lo: int, hi: int) -> Iterator[re.Match[str]]:
    """The matches of ``_RUN_RX.finditer(text, lo, hi)``, found twice as fast: _RUN_RX is tried only
    at ``lo`` and where a run of 20 can start (its look-behind reads the text before ``lo`` too)."""
    after_boundary = (m.start() + 1 for m in _AFTER_BOUNDARY_RX.finditer(text, max(0, lo - 1), hi))
    after_scheme = (m.start() + 3 for m in _AFTER_SCHEME_RX.finditer(text, max(0, lo - 3), hi))
    end = lo
    for start in heapq.merge((lo,), after_boundary, after_scheme):
        if start < end:
            continue  # inside the last run (or before lo): finditer does not look there either
        match = _RUN_RX.match(text, start, hi)
        if match is not None:
            end = match.end()
            yield match


def _is_token_shape(run: str) -> bool:
    m = _PREFIX_RX.match(run)
    if m is not None:
        if m.group(1).lower() in _HASH_NAMES:
            return False
        body = run[m.end() :]
        mixed = not body.islower() and not body.isupper()
        longest = max(map(len, _SEP_RX.split(body)))
        # a random body has one random part of 20+ characters; names are built of short parts
        if (not mixed and (m.group(1)[0].isdigit() or longest < 20)) or (longest < 16 and "." in run):
            return False  # a resource name (pod web-5f8b576878-slnpb), a dotted name, a date, a version
        # Dotted runs are judged by their longest part (SG.<22>.<43>, dp.pt.<43>): the other parts
        # of a dotted name are words (org.slf4j.impl.Log4jLoggerAdapter).
        core = max(body.split("."), key=len) if "." in body else body
        if not random_body(_SEP_RX.sub("", core)):
            return False
    elif (
        run.islower()
        or (run.isupper() and len(run) < 48)
        or run.startswith(("eyJ", "ewo"))
        or _hex_digest(run)
    ):
        return False  # a bare run needs both cases (lower-case base32 is a public key or an id;
        # capitals and digits are ids up to ULIDs' 26 and beyond, a key from 48: base32 TOTP seeds);
        # base64 JSON (eyJ…) is find_jwts' to judge by what it holds; a hex run is a digest
    elif not random_body(run, 32):
        return False
    return (
        _UUID_RX.search(run) is None and _FILE_EXT_RX.search(run) is None and _VERSION_RX.search(run) is None
    )


_JWT_RX = re.compile(
    r"(?<![A-Za-z0-9_-])(e[wy][A-Za-z0-9_-]{8,})\.(e[wy][A-Za-z0-9_-]{8,})\.([A-Za-z0-9_-]*)(?![A-Za-z0-9_-])"
)
_B64_JSON_RX = re.compile(r"(?<![A-Za-z0-9+/_-])eyJ[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/=_-])")


def _b64_json(segment: str) -> object:
    """The JSON value a base64 (or base64url) segment encodes, or ``None``."""
    padded = segment.replace("-", "+").replace("_", "/") + "=" * (-len(segment) % 4)
    try:
        raw = base64.b64decode(padded, validate=True)
        return json.loads(raw.decode("utf-8"))
    except (binascii.Error, ValueError):
        return None


def find_jwts(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """JWTs (header decodes to a JSON object) and base64 JSON objects holding a random string."""
    done = -1
    for m in _JWT_RX.finditer(text, lo, hi):
        if isinstance(_b64_json(m.group(1)), dict):
            done = m.end()
            yield m.span()
    for m in _B64_JSON_RX.finditer(text, lo, hi):
        if m.start() < done:
            continue
        value = _b64_json(m.group().rstrip("="))
        if isinstance(value, dict) and any(isinstance(v, str) and random_body(v) for v in value.values()):
            yield m.span()


_HOOK_URL_RX = re.compile(
    r"(?i)://[^\s/\"'<>]*hook[^\s/\"'<>]*(?:/[^\s\"'<>?#]*)|://[^\s/\"'<>]+/[^\s\"'<>?#]*hook[^\s\"'<>?#]*"
)
_PATH_SEGMENT_RX = re.compile(r"[^/@]+")


def find_hook_urls(text: str, lo: int, hi: int) -> Iterator[tuple[int, int]]:
    """Random path segments of webhook URLs: whoever has the URL can post as the hook."""
    for m in _HOOK_URL_RX.finditer(text, lo, hi):
        path_start = text.find("/", m.start() + 3, m.end())
        if path_start < 0:
            continue
        for seg in _PATH_SEGMENT_RX.finditer(text, path_start, m.end()):
            value = seg.group()
            core = value.replace("-", "")
            if len(core) >= 8 and sum(c.isdigit() for c in core) >= 2 and entropy(core) >= 3.0:
                yield seg.span()
