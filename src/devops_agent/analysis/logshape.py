"""The shape of a log message: its text with the variable parts masked, so repeats group together.

``user 42 failed login from 10.0.0.5`` and ``user 7 failed login from 192.168.1.9`` both become
``user <NUM> failed login from <IP>``. One compiled alternation does the masking in a single
pass; the order of its branches decides which reading wins where several could match (a URL
before the path inside it, an IP before its numbers, a duration before its number).

Access-log request lines are shaped by URL segment instead (``GET /api/orders/<NUM> HTTP/1.1
502``), because the endpoint and the status are what tell those errors apart.

This module is pure: it must not read files or import from tools, policies, agent or interfaces.
"""

from __future__ import annotations

import re
from http import HTTPStatus

__all__ = ["MAX_SHAPE_CHARS", "message_shape", "with_status_phrase"]

MAX_SHAPE_CHARS = 400
_HEX = r"[0-9a-fA-F]"
_IPV4 = r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.]*\w)"
_IPV6 = (
    rf"\[?(?<![\w:.])(?:(?:{_HEX}{{1,4}}:){{7}}{_HEX}{{1,4}}"
    rf"|(?:{_HEX}{{1,4}}(?::{_HEX}{{1,4}})*)?::(?:{_HEX}{{1,4}}(?::{_HEX}{{1,4}})*)?)"
    rf"(?:\]:\d{{1,5}}|\])?(?![\w:])"
)
_QUOTED = r"\"(?:[^\"\\\n]|\\.)*\"|(?<!\w)'(?:[^'\\\n]|\\.)*'(?!\w)"

_SHAPE_RE = re.compile(
    "|".join(
        (
            r"(?P<url>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s\"'<>]+)",
            r"(?P<email>(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[a-zA-Z]{2,}\b)",
            rf"(?P<uuid>\b{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\b)",
            rf"(?P<kv>(?<![\w.-])(?P<key>[A-Za-z_][\w.-]*)=(?:{_QUOTED}|[^\s,;&)\]}}]+))",
            rf"(?P<ip>{_IPV4}|{_IPV6})",
            r"(?P<path>(?<![\w/.:~-])(?:~|\.{1,2})?(?:/[\w.@%+-]+)+/?)",
            r"(?P<dur>(?<![\w.])(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d))+(?![\w.]))",
            rf"(?P<hex>\b0x{_HEX}+\b|\b(?={_HEX}*\d)(?={_HEX}*[a-fA-F]){_HEX}{{6,}}\b)",
            # Identifiers: a letter-initial token with two or more digits (c4821, shard17) or a
            # numbered name (worker-12, web-3). One-digit words (ssh2, s3, k8s) stay.
            r"(?P<id>(?<![\w.-])[A-Za-z][A-Za-z_]*(?:\d[\w]*\d[\w]*|[\w]*-\d+)(?![\w.-]))",
            r"(?P<num>(?<![\w.])\d+(?:\.\d+)*(?!\w|\.\d))",
        )
    )
)
_TOKENS = {
    "url": "<URL>",
    "email": "<EMAIL>",
    "uuid": "<UUID>",
    "ip": "<IP>",
    "path": "<PATH>",
    "dur": "<DUR>",
    "hex": "<HEX>",
    "num": "<NUM>",
    "id": "<ID>",
}

# Technical words that look like identifiers but name the same thing everywhere.
_KEEP_IDS = frozenset(
    {
        "utf-8",
        "utf-16",
        "x86-64",
        "sha256",
        "sha512",
        "sha384",
        "base64",
        "int32",
        "int64",
        "float32",
        "float64",
        "ipv4",
        "ipv6",
        "http11",
        "tls12",
        "tls13",
        "iso8601",
        "rfc3339",
    }
)
_QUOTED_RE = re.compile(rf"(?P<key>(?<![\w.-])[A-Za-z_][\w.-]*=)?(?:{_QUOTED})")
_NEEDS_MASK_RE = re.compile(r"[\d/@=:~]")
# Tokens repeat ("db-3", "port=5432"); the alternation is slow enough to be worth remembering.
_token_cache: dict[str, str] = {}
_REQUEST_LINE_RE = re.compile(r"([A-Z]{3,7}) (\S+)( HTTP/[\d.]+)? (\d{3})")
_UUID_RE = re.compile(rf"{_HEX}{{8}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}")
_ID_SEGMENT_RE = re.compile(rf"(?={_HEX}*\d){_HEX}{{8,}}|[\w-]*\d[\w-]{{15,}}")


def _mask(m: re.Match[str]) -> str:
    kind = m.lastgroup  # the outermost branch that matched (``kv`` closes after ``key``)
    if kind == "kv":
        return f"{m.group('key')}=<VAL>"
    if kind == "id" and m.group(0).lower() in _KEEP_IDS:
        return m.group(0)
    return _TOKENS[kind] if kind else m.group(0)


def _mask_quoted(m: re.Match[str]) -> str:
    key = m.group("key")
    return f"{key}<VAL>" if key else "<STR>"


def _segment(seg: str) -> str:
    if not seg:
        return seg
    if seg.isdigit():
        return "<NUM>"
    if _UUID_RE.fullmatch(seg):
        return "<UUID>"
    if _ID_SEGMENT_RE.fullmatch(seg):
        return "<HEX>"
    return seg


def _request_shape(method: str, target: str, version: str | None, status: str) -> str:
    path, _, query = target.partition("?")
    if "://" in path:  # a proxy request: keep only the path
        path = "/" + path.split("/", 3)[-1] if path.count("/") >= 3 else path
    shaped = "/".join(_segment(s) for s in path.split("/"))
    return f"{method} {shaped}{'?<QUERY>' if query else ''}{version or ''} {status}"


def with_status_phrase(message: str) -> str:
    """An access-log request line with its status's reason phrase after it, else ``message``.

    ``GET /x/42 HTTP/1.1 500`` → ``… 500 Internal Server Error``: a template miner masks every
    number, so without a phrase a request's 200s and 500s are one template.
    """
    request = _REQUEST_LINE_RE.fullmatch(message) if message[-4:-3] == " " else None
    if request is None:
        return message
    try:
        return f"{message} {HTTPStatus(int(request.group(4))).phrase}"
    except ValueError:  # a status code HTTP does not define
        return f"{message} status {request.group(4)[0]}xx"


def message_shape(message: str) -> str:
    """The message with its variable parts replaced by tokens, for grouping repeats.

    Tokens: ``<NUM>`` numbers, ``<HEX>`` hex numbers and ids, ``<UUID>``, ``<IP>`` IPv4/IPv6 with
    an optional port, ``<DUR>`` durations (``12ms``, ``3.5s``, ``1m30s``), ``<PATH>`` file
    paths, ``<STR>`` quoted strings, ``<EMAIL>``, ``<URL>``, and ``key=<VAL>`` for the value of a
    ``key=value`` pair (the key is kept). Whitespace runs become one space; the result is cut at
    :data:`MAX_SHAPE_CHARS` characters. An access-log request line ("GET /x/42 HTTP/1.1 502")
    keeps its method, status and the fixed segments of its path.

    Args:
        message: a log message, usually from :func:`~devops_agent.analysis.extract_message`.
    """
    text = message.strip()[: MAX_SHAPE_CHARS * 3]
    request = _REQUEST_LINE_RE.fullmatch(text)
    if request is not None:
        return _request_shape(*request.groups())[:MAX_SHAPE_CHARS]
    if '"' in text or "'" in text:
        text = _QUOTED_RE.sub(_mask_quoted, text)
    tokens = text.split()
    for i, token in enumerate(tokens):
        if _NEEDS_MASK_RE.search(token) is not None:
            masked = _token_cache.get(token)
            if masked is None:
                if len(_token_cache) > 8192:
                    _token_cache.clear()
                masked = _token_cache[token] = _SHAPE_RE.sub(_mask, token)
            tokens[i] = masked
    return " ".join(tokens)[:MAX_SHAPE_CHARS]
