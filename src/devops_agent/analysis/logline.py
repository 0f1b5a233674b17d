"""One log line at a time: its message and level, and whether it reports an error.

:func:`extract_message` strips the parts of a line that differ between occurrences of the same
event but say nothing about it (timestamp, host, pid, container stream prefix) and finds the
level where the format has one. :func:`is_error` decides whether a line reports a failure, with
care for the usual false positives ("0 errors", ``failed=0``). Both are used on every line of a
log, so they dispatch on cheap prefix tests before any regex.

This module is pure: it must not read files or import from tools, policies, agent or interfaces.
"""

from __future__ import annotations

import json
import re
from typing import Any

from devops_agent.analysis.timeparse import _CLF_RE, _COMPACT_RE, _CTIME_RE, _ISO_RE, _KLOG_RE, _SYSLOG_RE

__all__ = [
    "CHAIN_MARKERS",
    "ERROR_LEVELS",
    "MAX_SHOWN_CHARS",
    "Continuations",
    "PartialLines",
    "continuation",
    "extract_message",
    "is_continuation",
    "is_error",
    "might_be_error",
    "normalize_level",
    "starts_traceback",
    "strip_container_prefix",
]

MAX_SHOWN_CHARS = 2000
"""The most of one log line a result shows or keeps as an example."""

ERROR_LEVELS = frozenset({"ERROR", "ERR", "FATAL", "CRITICAL", "CRIT", "EMERG", "ALERT", "PANIC", "SEVERE"})
_LEVEL_ALIASES = {
    "WARN": "WARNING",
    "EMERGENCY": "EMERG",
    "E": "ERROR",
    "W": "WARNING",
    "I": "INFO",
    "F": "FATAL",
    "D": "DEBUG",
    "INFORMATION": "INFO",  # Serilog / .NET
    "VERBOSE": "TRACE",
}
# pino / bunyan numeric levels; syslog / journald PRIORITY 0-7.
_NUMERIC_LEVELS = {10: "TRACE", 20: "DEBUG", 30: "INFO", 40: "WARNING", 50: "ERROR", 60: "FATAL"}
_SYSLOG_PRIORITY = ("EMERG", "ALERT", "CRIT", "ERR", "WARNING", "NOTICE", "INFO", "DEBUG")

# "@m"/"@mt" and "@l" are Serilog's compact JSON (CLEF), "log.level" the Elastic Common Schema's.
_MESSAGE_KEYS = ("message", "msg", "log", "event", "text", "MESSAGE", "@m", "@mt")
_LEVEL_KEYS: tuple[str, ...] = ("level", "severity", "lvl", "loglevel", "log_level", "levelname")
_LEVEL_KEYS += ("PRIORITY", "log.level", "@l")
_ERROR_KEYS = ("error", "err", "exception", "exc_info", "stack_trace")

_KNOWN_LEVELS = ERROR_LEVELS | {"TRACE", "DEBUG", "INFO", "NOTICE", "WARN", "WARNING"}
# A level near the start of a line: "ERROR", "[error]", "<warn>", "level=error".
_LEVEL_RE = re.compile(
    r"(?:^|(?<=[\s\[(<|]))(?:"
    r"(?:level|lvl|severity)=\"?(?P<kv>\w+)\"?"
    r"|\[(?P<br>[A-Za-z]{1,8})\]"
    r"|<(?P<ang>[A-Za-z]{1,8})>"
    r"|(?P<up>TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|EMERG|ALERT|PANIC|SEVERE)"
    r"(?=$|[\s\]):>|,-]))"
)
_LEVEL_HEAD = 64
_CRI_RE = re.compile(r"\S+ (?:stdout|stderr) [FP] ")
_SYSLOG_TAG_RE = re.compile(r"\S+ ([\w./@-]+?)(?:\[\d+\])?: ")
_REQUEST_RE = re.compile(r'"([A-Z]{3,7} \S+(?: HTTP/[\d.]+)?)" (\d{3})\b')
_LOGFMT_MSG_RE = re.compile(r'\bmsg=(?:"((?:[^"\\]|\\.)*)"|(\S+))')
_LOGFMT_ERR_RE = re.compile(r'(?<![\w.])(?:error|err)=(?:"((?:[^"\\]|\\.)*)"|(\S+))')
_SEPARATORS = " \t-:|]>"


def normalize_level(level: Any) -> str | None:
    """``"err"``, ``"E"``, ``50`` or syslog priority ``"3"`` → an upper-case level name."""
    if level is None or isinstance(level, bool):
        return None
    if isinstance(level, int | float):
        n = int(level)
        return _SYSLOG_PRIORITY[n] if 0 <= n <= 7 else _NUMERIC_LEVELS.get(n - n % 10)
    text = str(level).strip().upper()
    if text.isdigit():
        return normalize_level(int(text))
    return _LEVEL_ALIASES.get(text, text) or None


def strip_container_prefix(line: str) -> str:
    """The container's own line from a Kubernetes CRI log line (``<time> stderr F <line>``) or
    a Docker json-file line (``{"log": "<line>\\n", "stream": …, "time": …}``)."""
    if "0" <= line[:1] <= "9":
        cri = _CRI_RE.match(line)
        if cri is not None and _ISO_RE.match(line) is not None:
            return line[cri.end() :]
    elif line.startswith('{"log":'):
        try:
            obj = json.loads(line)
        except ValueError:
            return line
        if isinstance(obj, dict) and isinstance(obj.get("log"), str) and "stream" in obj:
            return str(obj["log"]).rstrip("\r\n")
    return line


def _strip_timestamp(line: str) -> str:
    """The line without a leading timestamp (and its brackets, and a ``|`` after it)."""
    start = 1 if line[:1] == "[" else 0
    if start:
        ctime = _CTIME_RE.match(line)  # brackets included
        if ctime is not None:
            return line[ctime.end() :].lstrip(" \t|")
    for regex in (_ISO_RE, _SYSLOG_RE, _KLOG_RE, _COMPACT_RE):
        m = regex.match(line, start)
        if m is not None:
            end = m.end()
            if start and line[end : end + 1] == "]":
                end += 1
            return line[end:].lstrip(" \t|")
    return line


def _find_level(text: str) -> tuple[str, int, int] | None:
    """The first level marker in the head of ``text``: (level, start, end)."""
    for m in _LEVEL_RE.finditer(text, 0, _LEVEL_HEAD):
        level = normalize_level(m.group("kv") or m.group("br") or m.group("ang") or m.group("up"))
        if level in _KNOWN_LEVELS:
            return level, m.start(), m.end()
    return None


def _level_and_rest(text: str) -> tuple[str, str | None]:
    found = _find_level(text)
    if found is None:
        return text, None
    level, start, end = found
    rest = text[end:].lstrip(_SEPARATORS)
    before = text[:start].strip(_SEPARATORS + "[(<")
    # Keep what stood before the level (a logger name, a thread) unless it was only punctuation.
    return (f"{before} {rest}" if before else rest) or text, level


def _from_json(line: str) -> tuple[str, str | None] | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    message: Any = next((obj[k] for k in _MESSAGE_KEYS if k in obj), None)
    level_value = next((obj[k] for k in _LEVEL_KEYS if k in obj), None)
    if level_value is None and isinstance(obj.get("log"), dict):  # ECS: {"log": {"level": …}}
        level_value = obj["log"].get("level")
    level = normalize_level(level_value)
    if not isinstance(message, str):
        message = json.dumps(message) if message is not None else line
    elif "log" in obj and level is None and "stream" in obj:
        # Docker's json-file driver wraps the container's own line; parse that line instead.
        return extract_message(message.rstrip("\n"))
    error = next((obj[k] for k in _ERROR_KEYS if isinstance(obj.get(k), str) and obj[k].strip()), None)
    if error and error not in message:
        lines = [x for x in error.splitlines() if x.strip()]
        # A formatted traceback ends with the exception; anything else starts with its summary.
        summary = lines[-1] if lines[0].startswith("Traceback") else lines[0]
        message = f"{message}: {summary.strip()}"
    return message.strip(), level


def extract_message(line: str) -> tuple[str, str | None]:
    """The message of one log line and its level (upper case, ``None`` when the line has none).

    Handles JSON lines (``message``/``msg``/``log`` and ``level``/``severity``/``lvl``), logfmt
    (``msg=``), Kubernetes CRI container lines (the stream prefix is removed and the inner line
    parsed), syslog (the host and pid are removed; the program name is kept because it tells
    otherwise identical messages apart), Python logging and klog, and access logs (the request
    line and status; level ERROR for 5xx, WARNING for 4xx). Anything else is the whole line
    without its leading timestamp.

    Args:
        line: one raw log line (a trailing newline is ignored).
    """
    line = line.rstrip("\r\n")
    if not line:
        return "", None
    first = line[0]
    if first == "{":
        parsed = _from_json(line)
        if parsed is not None:
            return parsed
    if "0" <= first <= "9" and (inner := strip_container_prefix(line)) is not line:
        return extract_message(inner)
    if first in "IWEF" and (k := _KLOG_RE.match(line)) is not None:
        rest = line[k.end() :]
        bracket = rest.find("] ")
        return (rest[bracket + 2 :] if bracket >= 0 else rest).strip(), normalize_level(first)
    request = _REQUEST_RE.search(line) if '" ' in line else None
    if request is not None and _CLF_RE.search(line, 0, 160) is not None:
        status = int(request.group(2))
        severity = "ERROR" if status >= 500 else "WARNING" if status >= 400 else "INFO"
        return f"{request.group(1)} {status}", severity
    if "msg=" in line:
        msg = _LOGFMT_MSG_RE.search(line)
        if msg is not None:
            text = msg.group(1) if msg.group(1) is not None else msg.group(2)
            found = _find_level(line[: msg.start()] + line[msg.end() :])
            text = text.replace('\\"', '"')
            error = _LOGFMT_ERR_RE.search(line) if "err" in line else None
            if error is not None:  # as for JSON lines: the error says what failed
                detail = (error.group(1) if error.group(1) is not None else error.group(2)).replace(
                    '\\"', '"'
                )
                if detail and detail not in text:
                    text = f"{text}: {detail}"
            return text, found[0] if found else None
    rest = _strip_timestamp(line)
    if rest is not line and _SYSLOG_RE.match(line) is not None:
        tag = _SYSLOG_TAG_RE.match(rest)
        if tag is not None:
            message, level = _level_and_rest(rest[tag.end() :])
            return f"{tag.group(1)}: {message}".strip(), level
    message, level = _level_and_rest(rest)
    return message.strip(), level


# --- errors ----------------------------------------------------------------------------------

# Markers that mean trouble whatever level the line was logged at.
_STRONG_RE = re.compile(
    r"Traceback \(most recent call last\)|\bpanic:|segfault|Segmentation fault|[Oo]ut of memory"
    r"|\bOOM(?:Killed|[- ]?kill(?:er|ed)?)?\b|oom-kill|core dumped|Killed process \d+"
    r"|\bFATAL\b|Fatal error|[Uu]nhandled exception|[Uu]ncaught exception|No space left on device"
)
# Markers that mean trouble when the line has no level of its own.
_WEAK_RE = re.compile(
    r"(?<![\w/.-])(?i:errors?|exception|failed|failure|fatal|panic|timed out|refused|denied|unreachable"
    r"|unable to|cannot|could not)(?![\w/-]|\.\w)"
    r"|[A-Z]\w*(?:Error|Exception)\b"
)
# "0 errors", "no errors", "error_count=0", "failed=0", "errors: 0", "error=nil" …
_BENIGN_RE = re.compile(
    r"\b(?:no|zero|0|without|never)\s+(?:errors?|failures?|exceptions?|failed)\b"
    r"|\b(?:errors?|failures?|failed|fatal|exceptions?)(?:[_-]?(?:count|total|num|s))?"
    r"\s*[=:]\s*(?:0(?![\d.])|none\b|nil\b|null\b|false\b|<nil>|\[\]|\{\}|\"\")",
    re.IGNORECASE,
)
_ACCESS_STATUS_RE = re.compile(r'"[A-Z]{3,7} [^"]*" (\d{3})\b|^[A-Z]{3,7} \S+(?: HTTP/[\d.]+)? (\d{3})$')


def is_error(line_or_message: str, level: str | None) -> bool:
    """Whether a log line (or its extracted message) reports an error.

    True for an error level (ERROR, ERR, FATAL, CRITICAL, CRIT, EMERG, ALERT, PANIC, any case),
    for markers that mean trouble at any level (a Python traceback, ``panic:``, segfault, out of
    memory / OOM, core dumped), for an access-log status >= 500, and, when the line has no level,
    for words such as "error", "failed", "fatal", "timed out", "refused", "denied", "cannot" or
    an ``…Exception``. Counts of zero ("0
    errors", "no errors", ``error_count=0``, ``failed=0``) do not count as errors, and neither
    do words such as "failed" in a line logged at INFO, DEBUG or WARNING.

    Args:
        line_or_message: the raw line or the message returned by :func:`extract_message`.
        level: the level returned by :func:`extract_message`; ``None`` looks for one in the text.
    """
    text = line_or_message
    if level is not None:
        norm = normalize_level(level)
    else:
        found = _find_level(_strip_timestamp(text) if text[:1].isdigit() else text)
        norm = found[0] if found else None
    if norm in ERROR_LEVELS:
        return True
    if '" ' in text or text[:1].isupper():
        access = _ACCESS_STATUS_RE.search(text)
        if access is not None:
            return int(access.group(1) or access.group(2)) >= 500
    if _STRONG_RE.search(text) is None and (norm is not None or _WEAK_RE.search(text) is None):
        return False
    # A marker matched; look again with the zero counts ("0 errors", "failed=0") taken out.
    cleaned = _BENIGN_RE.sub(" ", text)
    if _STRONG_RE.search(cleaned) is not None:
        return True
    return norm is None and _WEAK_RE.search(cleaned) is not None


_ERROR_WORDS = (
    "err",
    "fail",
    "fatal",
    "crit",
    "emerg",
    "alert",
    "panic",
    "severe",
    "exception",
    "traceback",
    "segfault",
    "segmentation",
    "memory",
    "oom",
    "core dump",
    "killed process",
    "no space left",
    "timed out",
    "refused",
    "denied",
    "unreachable",
    "unable to",
    "cannot",
    "could not",
)
_LEVEL_WORDS = ("level", "severity", "lvl", "priority")
_NUMERIC_LEVEL_RE = re.compile(r'(?:level|severity|lvl|priority)"?\s*[:=]\s*"?(?:\d|[ef]")')


def might_be_error(line: str) -> bool:
    """A cheap pre-check: ``False`` means :func:`is_error` is ``False`` for this raw line.

    Plain substring tests on the lower-cased line, several times faster than extracting the
    message; grouping uses it to skip the full parse of most lines of a healthy log.
    """
    low = line.lower()
    for word in _ERROR_WORDS:  # a plain loop: any() with a generator is markedly slower here
        if word in low:
            return True
    if '" 5' in line or (line[:1] in ("E", "F") and line[1:5].isdigit()):
        return True
    return any(word in low for word in _LEVEL_WORDS) and _NUMERIC_LEVEL_RE.search(low) is not None


# --- multi-line records ----------------------------------------------------------------------

CHAIN_MARKERS = (
    "Traceback (most recent call last)",
    "Caused by:",
    "During handling of the above exception",
    "The above exception was the direct cause",
)


# A qualified exception class at the start of a line, then ":" or the end: what a JVM or .NET
# layout prints under the message of an error it logs with its exception.
_EXCEPTION_LINE_RE = re.compile(
    r"(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*(?:Exception|Error|Throwable|Fault)(?::|$)"
)


# What follows a timestamp in a line of a container's output (``docker logs --timestamps``,
# ``kubectl logs --timestamps``): the stream, and the runtime's full/partial flag.
_STREAM_PREFIXES = ("stdout ", "stderr ")
# A level at the start of a message ("INFO", "[warn]", "level=info"): a new record, however
# far it is indented after its timestamp (Rust's tracing right-aligns " INFO").
_LEVEL_START_RE = re.compile(
    r"(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|FATAL|CRITICAL|CRIT|EMERG|ALERT|PANIC|SEVERE)"
    r"(?=$|[\s\]):>|,-])|\[[A-Za-z]{1,8}\]|<[A-Za-z]{1,8}>|(?:level|lvl|severity)="
)
# The line that ends a Python traceback: the exception's (qualified) name, then ":" or nothing.
_TRACEBACK_END_RE = re.compile(r"(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?::|$)")


# The first character after a timestamp prefix that may begin a continuation (see continuation).
_MAYBE_AFTER_STAMP = frozenset(" \tCDTsU+-")


def _stamped_body(text: str) -> str | None:
    """What follows a leading ISO 8601 timestamp (bracketed or not) and a container stream and
    flag (``stdout F``), less the one separator after them, so that an indentation is kept;
    ``None`` when ``text`` does not start with such a timestamp."""
    start = 1 if text[:1] == "[" else 0
    m = _ISO_RE.match(text, start)
    if m is None:
        return None
    end = m.end()
    if start:
        if text[end : end + 1] != "]":
            return None
        end += 1
    if text[end : end + 1] in (" ", "\t"):
        end += 1
    elif end < len(text):
        return None  # "2026-03-14T09:40:03Zfoo": no separator, no timestamp prefix
    if text.startswith(_STREAM_PREFIXES, end):
        end += 7
        if text[end + 1 : end + 2] == " " and text[end : end + 1] in ("F", "P"):
            end += 2
    return text[end:]


def starts_traceback(text: str) -> bool:
    """Whether ``text`` is a ``Traceback …`` header, also after a timestamp prefix
    (``2026-03-14T09:40:03.123Z Traceback (most recent call last):``)."""
    if text.startswith("Traceback"):
        return True
    if "Traceback" not in text:
        return False
    body = _stamped_body(text)
    return body is not None and body.lstrip(" \t").startswith("Traceback")


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


def _stamped_continuation(
    body: str, head: str, in_traceback: bool, after_error: bool, chained: bool, done: bool = False
) -> str | None:
    """:func:`continuation` of a line with a timestamp prefix (``body`` is the rest)."""
    if (
        not (in_traceback or after_error)
        and body[:1] not in ("", " ", "\t")
        and not body.startswith(CHAIN_MARKERS)
    ):
        return None  # most lines of a timestamped log: an unindented message
    head_body = _stamped_body(head)
    if head_body is None:
        return None  # the record's first line had no timestamp prefix: this one starts a record
    stripped = body.lstrip(" \t")
    if not stripped:  # a timestamp alone: a blank line inside a traceback or an exception chain
        return "" if in_traceback or after_error else None
    if _indent(body) > _indent(head_body):  # indented further than the record's first line
        return body if _LEVEL_START_RE.match(stripped) is None else None
    if _LEVEL_START_RE.match(stripped) is not None:
        return None
    if stripped.startswith("Traceback"):
        # under an error message (logger.exception) or after "During handling …": the same record;
        # after a whole traceback of its own, a stamped Traceback is the next occurrence
        return stripped if _traceback_continues(head_body, after_error, chained, done) else None
    if stripped.startswith(CHAIN_MARKERS):
        return stripped
    if in_traceback:
        return stripped if _TRACEBACK_END_RE.match(stripped) is not None else None
    return stripped if after_error and _EXCEPTION_LINE_RE.match(stripped) is not None else None


def _traceback_continues(head: str, after_error: bool, chained: bool, done: bool) -> bool:
    """Whether a ``Traceback`` line continues the record rather than starting the next one.

    It does under an error message (``logger.exception``) whose traceback has not come yet, and
    after "During handling of the above exception" / "The above exception was …" (``chained``).
    After a whole traceback (the record starts with one, or its exception line came: ``done``)
    it is the next occurrence: a worker's stderr with five crashes holds five errors.
    """
    return after_error and (chained or not (done or head.lstrip().startswith("Traceback")))


def continuation(
    text: str,
    in_traceback: bool,
    after_error: bool = False,
    head: str | None = None,
    chained: bool = False,
    done: bool = False,
) -> str | None:
    """``text`` as a continuation of the previous record, or ``None`` when it starts a new one.

    See :func:`is_continuation` for what continues a record. With ``head``, the first line of
    the record (without its container prefix), a line with an ISO timestamp prefix (and a
    container stream, ``stdout F``) continues it the same way when the record's first line has
    such a prefix too: as many logging setups and ``docker logs --timestamps`` write every line
    of a traceback. Indented means indented further after the timestamp than the first line,
    and a line that starts with a level after its timestamp always starts a new record, as does
    a ``Traceback`` line when the record is a traceback already, unless ``chained`` (a "During
    handling of the above exception" or "The above exception …" line came since). The
    value returned is then the line without its timestamp prefix (a blank line for a timestamp
    alone), unindented unless it is indented further than the first line.

    ``done`` says the record holds a whole traceback already (its exception line came): with
    ``head``, a ``Traceback`` line then starts the next record unless ``chained``, with or
    without a timestamp (:func:`_traceback_continues`).
    """
    if not text:
        return text if in_traceback else None
    if head is not None and ("0" <= text[0] <= "9" or text[0] == "["):
        if not (in_traceback or after_error):
            # Most lines of a timestamped log; a cheap look at what follows the first space
            # after the date and time spares them the regex: only an indentation, a chain
            # marker (Caused by, During handling, The above …), a stream or a zone (" UTC",
            # " +01:00") there can make the line a continuation.
            space = text.find(" ", 16, 64)
            if space >= 0 and text[space + 1 : space + 2] not in _MAYBE_AFTER_STAMP:
                return None
        body = _stamped_body(text)
        if body is not None:
            return _stamped_continuation(body, head, in_traceback, after_error, chained, done)
    if head is not None and text.startswith("Traceback"):
        return text if _traceback_continues(head, after_error, chained, done) else None
    return text if is_continuation(text, in_traceback, after_error) else None


def is_continuation(text: str, in_traceback: bool, after_error: bool = False) -> bool:
    """Whether ``text`` continues the previous record rather than starting a new one.

    Continuations are indented lines (stack frames, wrapped text), traceback and exception-chain
    headers, inside a Python traceback the final ``ExceptionType: message`` line, which has no
    timestamp of its own, and, after an error record (``after_error``), the unindented exception
    line that Java (logback, log4j) and .NET layouts print under the message
    (``java.lang.IllegalStateException: …``). A ``Traceback`` after a record that is no error is
    an uncaught exception of its own, not a continuation. For lines that carry a timestamp of
    their own, see :func:`continuation`.
    """
    if not text:
        return in_traceback
    if not after_error and text.startswith("Traceback"):
        return False
    first = text[0]
    if first in " \t":
        return True
    if text.startswith(CHAIN_MARKERS):
        return True
    if in_traceback:
        return _ISO_RE.match(text) is None and _SYSLOG_RE.match(text) is None and first != "{"
    return after_error and _EXCEPTION_LINE_RE.match(text) is not None


MAX_JOINED_CHARS = 65536


class PartialLines:
    """Kubernetes CRI partial lines joined with the ``F`` line that ends them, one line at a time.

    The container runtime splits a long line into ``<time> <stream> P <part>`` lines ended by an
    ``F`` line; joined, they read as one ``F`` line with the first part's time. A reader calls
    :meth:`feed` only for a line whose container prefix was stripped (``content is not line``)
    or while :attr:`pending` is not empty, so other logs pay nothing.
    """

    __slots__ = ("flushed", "pending")

    def __init__(self) -> None:
        self.pending: dict[str, tuple[str, list[str]]] = {}
        # a record a non-CRI line of the same source interrupted: the reader handles it first
        self.flushed: tuple[str, str] | None = None

    def feed(self, source: str, line: str, content: str) -> tuple[str, str] | None:
        """``(line, content)`` to handle now, or ``None`` while the record is still partial.

        ``content`` is :func:`strip_container_prefix` of ``line``.
        """
        pending = self.pending
        if content is not line and "0" <= line[:1] <= "9":  # a CRI line
            cut = len(line) - len(content)
            if line[cut - 2] == "P":
                head, parts = pending.setdefault(source, (line[: cut - 2] + "F ", []))
                parts.append(content)
                if sum(map(len, parts)) < MAX_JOINED_CHARS:
                    return None
                del pending[source]  # too long: let it out as it is
                joined = "".join(parts)
                return head + joined, joined
            if source in pending:
                head, parts = pending.pop(source)
                joined = "".join(parts) + content
                return head + joined, joined
            return line, content
        if source in pending:  # the source stopped writing CRI lines mid-record
            head, parts = pending.pop(source)
            joined = "".join(parts)
            self.flushed = (head + joined, joined)
        return line, content

    def drain(self) -> list[tuple[str, str, str]]:
        """``(source, line, content)`` of the records still partial at the end of the input."""
        out = [
            (source, head + "".join(parts), "".join(parts)) for source, (head, parts) in self.pending.items()
        ]
        self.pending.clear()
        return out


class Continuations:
    """Line by line, whether a line continues the record before it (one source at a time).

    For readers that want one entry per record rather than per line (``logs patterns``): the
    state of :func:`continuation` — the record's first line, inside a Python traceback, after
    an error record.
    """

    def __init__(self) -> None:
        self.source: str | None = None
        self.head = ""
        self.in_traceback = False
        self.after_error = False
        self.chained = False  # a chain marker came since the last Traceback line
        self.done = False  # the record holds a whole traceback (its exception line came)

    def continues(self, source: str, content: str) -> bool:
        """True when ``content`` (a line without its container prefix) belongs to the last record."""
        if source == self.source:
            body = continuation(
                content, self.in_traceback, self.after_error, self.head, self.chained, self.done
            )
            if body is not None:
                if body.startswith(CHAIN_MARKERS):
                    self.chained = True
                if body.startswith("Traceback"):
                    self.in_traceback, self.chained = True, False
                elif (
                    self.in_traceback
                    and body[:1] not in ("", " ", "\t")
                    and not body.startswith(CHAIN_MARKERS)
                ):
                    self.in_traceback = False  # the exception line ends a Python traceback
                    self.done = True
                return True
        self.source = source
        self.head = content
        self.in_traceback = starts_traceback(content)
        self.after_error = self.chained = self.done = False
        return False

    def started(self, error: bool) -> None:
        """Tell whether the record that just started is an error (exception lines may follow)."""
        self.after_error = error
