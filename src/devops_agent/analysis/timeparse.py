"""Time parsing for log analysis: ``--since`` style values and the timestamps inside log lines.

:func:`parse_since` turns what a person (or a model) types as a time bound into an aware UTC
datetime. :func:`extract_timestamp` finds the timestamp of one log line in the common formats
(ISO 8601 / RFC 3339, Python logging, syslog, Apache/Nginx access and error logs, Kubernetes, klog,
JSON lines, and the compact forms of IBM DB2 and Android-style logs) and
runs over millions of lines, so it dispatches on the first character and uses compiled regexes
instead of trying parsers one after another.

Timestamps without an offset are taken as the host's local time, as syslog and Python logging
write them. This module is pure: it must not read files or import from tools, policies, agent or
interfaces.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from functools import lru_cache

from devops_agent.errors import UserError

__all__ = ["SINCE_FORMS", "extract_timestamp", "iso", "parse_since", "stamp_has_zone", "to_utc"]

SINCE_FORMS = (
    "a relative time such as 90s, 15m, 2h, 3d, 1w or '2 hours ago'; an ISO 8601 date or "
    "date-time such as 2026-11-22 or 2026-11-22T03:35:01Z (no offset = local time); "
    "'today', 'yesterday' or 'now'"
)

_UNIT_SECONDS = {
    "s": 1,
    "sec": 1,
    "secs": 1,
    "second": 1,
    "seconds": 1,
    "m": 60,
    "min": 60,
    "mins": 60,
    "minute": 60,
    "minutes": 60,
    "h": 3600,
    "hr": 3600,
    "hrs": 3600,
    "hour": 3600,
    "hours": 3600,
    "d": 86400,
    "day": 86400,
    "days": 86400,
    "w": 604800,
    "week": 604800,
    "weeks": 604800,
}
_RELATIVE_RE = re.compile(r"^-?(\d+(?:\.\d+)?)\s*([a-z]+)(?:\s+ago)?$")


def to_utc(dt: datetime) -> datetime:
    """An aware UTC datetime; a naive one is taken as local time."""
    return dt.astimezone(UTC)


def parse_since(value: str, now: datetime | None = None) -> datetime:
    """Parse a time bound such as ``15m``, ``2 hours ago``, ``2026-11-22T03:35Z`` or ``yesterday``.

    Args:
        value: the text to parse; relative values count back from ``now``.
        now: the reference time (default: the current time); naive means local time.

    Returns:
        An aware datetime in UTC.

    Raises:
        UserError: the value is not one of the accepted forms; the hint lists them.
    """
    ref = to_utc(now) if now is not None else datetime.now(UTC)
    text = value.strip().lower()
    if text == "now":
        return ref
    if text in ("today", "yesterday"):
        local = ref.astimezone()
        midnight = local.replace(hour=0, minute=0, second=0, microsecond=0)
        if text == "yesterday":
            # Go through a naive date so a DST change overnight still lands on local midnight.
            day = (midnight - timedelta(days=1)).date()
            return to_utc(datetime(day.year, day.month, day.day))
        return to_utc(midnight)
    match = _RELATIVE_RE.match(text)
    if match and match.group(2) in _UNIT_SECONDS:
        return ref - timedelta(seconds=float(match.group(1)) * _UNIT_SECONDS[match.group(2)])
    if text and text[0].isdigit():
        try:
            return to_utc(datetime.fromisoformat(value.strip()))
        except ValueError:
            pass
    raise UserError(f"cannot understand the time {value!r}", hint=f"use {SINCE_FORMS}")


# --- timestamps inside log lines -------------------------------------------------------------

_MONTH_NAMES = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTHS = {m: i for i, m in enumerate(_MONTH_NAMES, 1)}

# 2026-11-22T03:35:01.123456789Z, 2026-11-22 03:35:01,123, 2026/11/22 03:35:01 (nginx error log)
_ISO_RE = re.compile(
    r"(\d{4})[-/](\d\d)[-/](\d\d)[T ](\d\d):(\d\d)(?::(\d\d)(?:[.,](\d+))?)?"
    r"(?:(Z|z|[+-]\d\d(?::?\d\d)?\b)| (UTC\b|[+-]\d\d:?\d\d\b))?"
)
# Nov 22 03:35:01 (BSD syslog; no year)
_SYSLOG_RE = re.compile(r"([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?")
# [22/Nov/2026:03:35:01 +0000] (Apache/Nginx common and combined log format)
_CLF_RE = re.compile(r"\[(\d\d)/([A-Z][a-z]{2})/(\d{4}):(\d\d):(\d\d):(\d\d)(?: ([+-]\d{4}))?\]")
# [Sun Dec 04 04:47:44 2005], [Sun Dec 04 04:47:44.123456 2005] (Apache error log: ctime in brackets)
_CTIME_RE = re.compile(
    r"\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) {1,2}(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?"
    r" (\d{4})\]"
)
# 20171223-22:15:29:606, 20171224-0:9:8:61 (compact date, dash, the time with unpadded fields and
# milliseconds after a colon, as Android-style apps write it; only at the start of a line)
_COMPACT_RE = re.compile(
    r"(\d{4})(\d\d)(\d\d)-(\d{1,2}):(\d{1,2}):(\d{1,2})(?::(\d{1,3})|[.,](\d{1,9}))?(?![\d:.,])"
)
# 2005-06-03-15.42.50.675872 (IBM DB2 / Blue Gene RAS logs; found in the head of a line)
_DB2_RE = re.compile(r"(?<![\w.:-])(\d{4})-(\d\d)-(\d\d)-(\d\d)\.(\d\d)\.(\d\d)(?:\.(\d{1,9}))?(?![\w.:-])")
# E1122 03:35:01.123456    1 file.go:12] (klog / glog, Kubernetes components; no year)
_KLOG_RE = re.compile(r"[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{1,9})")
# "time": "...", "ts": 1700000000.5 … (JSON lines; a regex avoids decoding the whole object)
# "@t" is Serilog's compact JSON; "__REALTIME_TIMESTAMP" (epoch µs as a string) journalctl -o json's.
_JSON_TS_RE = re.compile(
    r'"(?:@timestamp|timestamp|time|ts|@t|__REALTIME_TIMESTAMP)"\s*:\s*(?:"([^"]+)"|(\d+(?:\.\d+)?))'
)

_MIN_EPOCH = 1e8  # 1973: smaller numbers under a "time" key are durations
_HEAD = 96  # a timestamp that is not at the start of a line is near it


@lru_cache(maxsize=64)
def _offset(text: str) -> timezone:
    if text in ("Z", "z", "UTC"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + (int(digits[2:4]) if len(digits) >= 4 else 0)
    return timezone(sign * timedelta(minutes=minutes))


def _micro(frac: str | None) -> int:
    return int(frac[:6].ljust(6, "0")) if frac else 0


_local_cache: dict[tuple[int, int, int, int], timedelta] = {}


def _local_to_utc(naive: datetime) -> datetime:
    # astimezone() on a naive datetime asks the C library for every call; the UTC offset is
    # constant within an hour, so remember it per hour (bounded: cleared when it grows).
    key = (naive.year, naive.month, naive.day, naive.hour)
    off = _local_cache.get(key)
    if off is None:
        if len(_local_cache) > 4096:
            _local_cache.clear()
        hour = naive.replace(minute=0, second=0, microsecond=0)
        try:
            off = hour.astimezone().utcoffset() or timedelta(0)
        except (OverflowError, OSError, ValueError):
            off = timedelta(0)
        _local_cache[key] = off
    return (naive - off).replace(tzinfo=UTC)


def _build(
    year: int, month: int, day: int, hour: int, minute: int, second: int, micro: int, tz: timezone | None
) -> datetime | None:
    try:
        if tz is None:
            return _local_to_utc(datetime(year, month, day, hour, minute, second, micro))
        dt = datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)
    except (ValueError, OverflowError):
        return None
    return dt if tz is UTC else dt.astimezone(UTC)


# Consecutive lines mostly share their second; parsing it once is most of the speed.
_second_cache: dict[tuple[str | int | None, ...], datetime | None] = {}
_MISSING = datetime.min


def _cached_second(key: tuple[str | int | None, ...]) -> datetime | None:
    return _second_cache.get(key, _MISSING)


def _remember(key: tuple[str | int | None, ...], dt: datetime | None) -> datetime | None:
    if len(_second_cache) > 8192:
        _second_cache.clear()
    _second_cache[key] = dt
    return dt


def _with_fraction(dt: datetime | None, frac: str | None) -> datetime | None:
    return dt.replace(microsecond=_micro(frac)) if frac and dt is not None else dt


def _from_iso(m: re.Match[str]) -> datetime | None:
    y, mo, d, h, mi, s, frac, tz, spaced_tz = m.groups()
    tz = tz or spaced_tz
    key = (y, mo, d, h, mi, s, tz)
    dt = _cached_second(key)
    if dt is _MISSING:
        offset = _offset(tz) if tz else None
        dt = _remember(key, _build(int(y), int(mo), int(d), int(h), int(mi), int(s or 0), 0, offset))
    return _with_fraction(dt, frac)


def _guess_year(month: int, day: int, default_year: int | None) -> int:
    if default_year is not None:
        return default_year
    today = date.today()
    return _year_for(month, day, today.toordinal())


@lru_cache(maxsize=512)
def _year_for(month: int, day: int, today_ordinal: int) -> int:
    # Logs do not come from the future: a December line read in January belongs to last year.
    today = date.fromordinal(today_ordinal)
    try:
        candidate = date(today.year, month, day)
    except ValueError:  # 29 February outside a leap year
        return today.year - 1
    return today.year - 1 if candidate > today + timedelta(days=1) else today.year


def _from_syslog(m: re.Match[str], default_year: int | None) -> datetime | None:
    mon, d, h, mi, s, frac = m.groups()
    key = (mon, d, h, mi, s, default_year)
    dt = _cached_second(key)
    if dt is _MISSING:
        month = _MONTHS.get(mon)
        if month is None:
            return None
        day = int(d)
        year = _guess_year(month, day, default_year)
        dt = _remember(key, _build(year, month, day, int(h), int(mi), int(s), 0, None))
    return _with_fraction(dt, frac)


_DB2_DOT = 13  # "2005-06-03-15." the first dot of the time, counted from the year


def _find_db2(line: str) -> re.Match[str] | None:
    # Most lines have no timestamp in this form; trying the regex only where a dot could end its
    # date and hour costs a fraction of a regex search over the whole head.
    dot = line.find(".", _DB2_DOT, _HEAD)
    while dot >= 0:
        m = _DB2_RE.match(line, dot - _DB2_DOT)
        if m is not None:
            return m
        dot = line.find(".", dot + 1, _HEAD)
    return None


def _from_db2(m: re.Match[str]) -> datetime | None:
    y, mo, d, h, mi, s, frac = m.groups()
    return _build(int(y), int(mo), int(d), int(h), int(mi), int(s), _micro(frac), None)


def _from_compact(m: re.Match[str]) -> datetime | None:
    y, mo, d, h, mi, s, millis, frac = m.groups()
    micro = int(millis) * 1000 if millis else _micro(frac)  # "…:29:61" is 61 ms, not 0.61 s
    return _build(int(y), int(mo), int(d), int(h), int(mi), int(s), micro, None)


def _from_ctime(m: re.Match[str]) -> datetime | None:
    mon, d, h, mi, s, frac, y = m.groups()
    month = _MONTHS.get(mon)
    if month is None:
        return None
    return _build(int(y), month, int(d), int(h), int(mi), int(s), _micro(frac), None)


def _from_epoch(value: float) -> datetime | None:
    while value > 1e11:  # milliseconds, microseconds or nanoseconds
        value /= 1000
    try:
        return datetime.fromtimestamp(value, UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _from_json(line: str) -> datetime | None:
    for m in _JSON_TS_RE.finditer(line):
        text = m.group(1)
        if text is not None:
            iso = _ISO_RE.match(text)
            if iso is not None:
                return _from_iso(iso)
        try:
            value = float(text if text is not None else m.group(2))
        except ValueError:
            continue
        if value > _MIN_EPOCH:  # "time": 0.12 is a duration, not a point in time
            return _from_epoch(value)
    return None


def extract_timestamp(line: str, default_year: int | None = None) -> datetime | None:
    """The timestamp of one log line as an aware UTC datetime, or ``None`` when it has none.

    Recognized: ISO 8601 / RFC 3339 (``T`` or space, fractional seconds, ``Z`` or offset; also
    Kubernetes' RFC 3339 nano prefix), Python logging (``2026-11-22 03:35:01,123``), syslog
    (``Nov 22 03:35:01``), Apache/Nginx (``[22/Nov/2026:03:35:01 +0000]``), nginx error logs
    (``2026/11/22 03:35:01``), Apache error logs (``[Sun Dec 04 04:47:44 2005]``, also with
    microseconds), klog (``E1122 03:35:01.123456``), compact stamps at the start of a line
    (``20171223-22:15:29:606``), IBM DB2 style stamps near it (``2005-06-03-15.42.50.675872``) and
    JSON lines with a ``time``, ``timestamp``, ``ts``, ``@timestamp``, ``@t`` (Serilog) or
    ``__REALTIME_TIMESTAMP`` (journalctl) field (ISO text or epoch seconds/milli-/microseconds).
    Two six-digit groups (``081109 203615``) are not taken as a time: too many ordinary numbers
    look the same.

    Args:
        line: one raw log line.
        default_year: the year for formats that omit it (syslog, klog); default: the current
            year, or last year for dates that would otherwise lie in the future.
    """
    if not line:
        return None
    first = line[0]
    if "0" <= first <= "9":
        m = _ISO_RE.match(line)
        if m is not None:
            return _from_iso(m)
        compact = _COMPACT_RE.match(line)
        if compact is not None:
            return _from_compact(compact)
    elif first == "{":
        return _from_json(line)
    elif first == "[" and "A" <= line[1:2] <= "Z":
        ctime = _CTIME_RE.match(line)
        if ctime is not None:
            return _from_ctime(ctime)
    elif "A" <= first <= "S":
        m2 = _SYSLOG_RE.match(line)
        if m2 is not None:
            return _from_syslog(m2, default_year)
        if first in "IWEF":
            k = _KLOG_RE.match(line)
            if k is not None:
                mo, d, h, mi, s, frac = k.groups()
                month, day = int(mo), int(d)
                year = _guess_year(month, day, default_year)
                return _build(year, month, day, int(h), int(mi), int(s), _micro(frac), None)
    bracket = line.find("[", 0, _HEAD + 64)
    if bracket >= 0 and bracket + 1 < len(line) and "0" <= line[bracket + 1] <= "9":
        c = _CLF_RE.match(line, bracket)
        if c is not None:
            d, mon, y, h, mi, s, tz = c.groups()
            clf_month = _MONTHS.get(mon)
            if clf_month is None:
                return None
            tzinfo = _offset(tz) if tz else None
            return _build(int(y), clf_month, int(d), int(h), int(mi), int(s), 0, tzinfo)
    m3 = _ISO_RE.search(line, 0, _HEAD)
    if m3 is not None:
        return _from_iso(m3)
    db2 = _find_db2(line)
    return _from_db2(db2) if db2 is not None else None


def stamp_has_zone(line: str) -> bool:
    """Whether the timestamp of ``line`` says its zone: an offset, ``Z`` or ``UTC`` after an
    ISO 8601 or access-log time, or epoch seconds in a JSON line. ``False`` for a stamp read as
    local time (syslog, Python logging without ``%z``, klog …) and for a line without one.

    A log whose stamps carry no zone, written by a host in another zone, is read hours off:
    callers use this to say so rather than report its lines as old or new.
    """
    if not line:
        return False
    if line[0] == "{":
        m = _JSON_TS_RE.search(line)
        if m is None:
            return False
        if m.group(1) is None:
            return True  # epoch seconds
        iso = _ISO_RE.match(m.group(1))
        return iso is not None and bool(iso.group(8) or iso.group(9))
    bracket = line.find("[", 0, _HEAD + 64)
    if bracket >= 0:
        clf = _CLF_RE.match(line, bracket)
        if clf is not None:
            return clf.group(7) is not None
    m = _ISO_RE.match(line) or _ISO_RE.search(line, 0, _HEAD)
    return m is not None and bool(m.group(8) or m.group(9))


def iso(dt: datetime | None) -> str | None:
    """ISO 8601 in UTC with a ``Z``; ``None`` stays ``None``."""
    return dt.isoformat().replace("+00:00", "Z") if dt is not None else None
