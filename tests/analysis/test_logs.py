"""Log analysis (devops_agent.analysis): time parsing, messages, errors, shapes and grouping.

Everything here runs on real text: lines in the formats real daemons write, and for the memory
check a real 50 MB file on disk read line by line.
"""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from devops_agent.analysis import (
    extract_message,
    extract_timestamp,
    group_lines,
    is_error,
    message_shape,
    parse_since,
)
from devops_agent.errors import UserError

NOW = datetime(2026, 11, 22, 15, 30, 0, tzinfo=UTC)


def local(*args: int) -> datetime:
    """A naive wall-clock time as logs write it, converted like the analyzers do (local → UTC)."""
    return datetime(*args).astimezone(UTC)  # type: ignore[arg-type]


# --- parse_since ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "delta"),
    [
        ("15m", timedelta(minutes=15)),
        ("2h", timedelta(hours=2)),
        ("3d", timedelta(days=3)),
        ("1w", timedelta(weeks=1)),
        ("90s", timedelta(seconds=90)),
        ("2 hours ago", timedelta(hours=2)),
        ("10 minutes", timedelta(minutes=10)),
        (" 1.5h ", timedelta(minutes=90)),
        ("now", timedelta(0)),
    ],
)
def test_parse_since_relative(text: str, delta: timedelta) -> None:
    assert parse_since(text, now=NOW) == NOW - delta


def test_parse_since_iso_forms() -> None:
    assert parse_since("2026-11-22T03:35:01Z", now=NOW) == datetime(2026, 11, 22, 3, 35, 1, tzinfo=UTC)
    assert parse_since("2026-11-22T05:35:01+02:00") == datetime(2026, 11, 22, 3, 35, 1, tzinfo=UTC)
    # Naive means local time, returned as aware UTC.
    assert parse_since("2026-11-22 03:35") == local(2026, 11, 22, 3, 35)
    assert parse_since("2026-11-22") == local(2026, 11, 22)
    assert parse_since("2026-11-22").tzinfo is UTC


def test_parse_since_today_and_yesterday_are_local_midnights() -> None:
    today = NOW.astimezone().date()
    assert parse_since("today", now=NOW) == local(today.year, today.month, today.day)
    yesterday = today - timedelta(days=1)
    assert parse_since("Yesterday", now=NOW) == local(yesterday.year, yesterday.month, yesterday.day)


@pytest.mark.parametrize("garbage", ["banana", "", "15x", "2026-13-45", "ago", "-"])
def test_parse_since_rejects_garbage_with_a_hint(garbage: str) -> None:
    with pytest.raises(UserError) as info:
        parse_since(garbage, now=NOW)
    assert info.value.hint is not None
    for form in ("15m", "2 hours ago", "ISO 8601", "yesterday"):
        assert form in info.value.hint


# --- extract_timestamp ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("2026-11-22T03:35:01Z GET /", datetime(2026, 11, 22, 3, 35, 1, tzinfo=UTC)),
        ("2026-11-22T03:35:01.250+02:00 x", datetime(2026, 11, 22, 1, 35, 1, 250000, tzinfo=UTC)),
        ("2026-11-22 03:35:01.5-0130 x", datetime(2026, 11, 22, 5, 5, 1, 500000, tzinfo=UTC)),
        ("2026-11-22 03:35:01,123 ERROR boom", local(2026, 11, 22, 3, 35, 1, 123000)),
        ("2026-11-22 03:35:01 +0100 msg", datetime(2026, 11, 22, 2, 35, 1, tzinfo=UTC)),
        (
            "2026-11-22T03:35:01.123456789Z stderr F panic: boom",
            datetime(2026, 11, 22, 3, 35, 1, 123456, tzinfo=UTC),
        ),
        ("2026/11/22 03:35:01 [error] 7#7: *1 connect() failed", local(2026, 11, 22, 3, 35, 1)),
        (
            '10.0.0.1 - - [22/Nov/2026:03:35:01 +0200] "GET / HTTP/1.1" 502 12 "-" "curl"',
            datetime(2026, 11, 22, 1, 35, 1, tzinfo=UTC),
        ),
        ("[2026-11-22 03:35:01] app.ERROR: db down", local(2026, 11, 22, 3, 35, 1)),
        ('{"time": "2026-11-22T03:35:01Z", "msg": "x"}', datetime(2026, 11, 22, 3, 35, 1, tzinfo=UTC)),
        ('{"@timestamp": "2026-11-22T03:35:01.5Z"}', datetime(2026, 11, 22, 3, 35, 1, 500000, tzinfo=UTC)),
        ('{"ts": 1795318501.5, "msg": "x"}', datetime.fromtimestamp(1795318501.5, UTC)),
        ('{"timestamp": 1795318501000}', datetime.fromtimestamp(1795318501, UTC)),
        (
            '{"request": {"time": 0.12}, "ts": "2026-11-22T03:35:01Z"}',
            datetime(2026, 11, 22, 3, 35, 1, tzinfo=UTC),
        ),
    ],
)
def test_extract_timestamp_formats(line: str, expected: datetime) -> None:
    got = extract_timestamp(line)
    assert got == expected
    assert got is not None
    assert got.utcoffset() == timedelta(0)


def test_extract_timestamp_yearless_formats() -> None:
    assert extract_timestamp("Nov 22 03:35:01 web1 sshd[1]: x", default_year=2025) == local(
        2025, 11, 22, 3, 35, 1
    )
    assert extract_timestamp("Nov  2 03:35:01 web1 kernel: x", default_year=2025) == local(
        2025, 11, 2, 3, 35, 1
    )
    klog = "E1122 03:35:01.123456       1 reflector.go:138] failed to list"
    assert extract_timestamp(klog, default_year=2025) == local(2025, 11, 22, 3, 35, 1, 123456)


def test_syslog_year_defaults_to_the_current_one_and_never_the_future() -> None:
    today = date.today()
    jan = extract_timestamp("Jan  1 00:00:00 host app: x")
    assert jan is not None
    assert jan.astimezone().year == today.year
    dec = extract_timestamp("Dec 31 23:59:59 host app: x")
    assert dec is not None
    expected_year = today.year if (today.month, today.day) >= (12, 30) else today.year - 1
    assert dec.astimezone().year == expected_year


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Apache 2.2 error log; 2.4 adds microseconds; ctime pads a one-digit day with a space
        ("[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok", local(2005, 12, 4, 4, 47, 44)),
        (
            "[Sun Dec 04 04:47:44.123456 2005] [core:error] [pid 9] AH00037",
            local(2005, 12, 4, 4, 47, 44, 123456),
        ),
        ("[Mon Dec  5 19:15:57 2005] [error] mod_jk child", local(2005, 12, 5, 19, 15, 57)),
        # compact stamps with milliseconds after a colon, fields not always zero-padded
        (
            "20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579",
            local(2017, 12, 23, 22, 15, 29, 606000),
        ),
        ("20171224-0:9:8:61|Step_LSC|30002312|onExtend:1514 14 0 4", local(2017, 12, 24, 0, 9, 8, 61000)),
        # IBM DB2 / Blue Gene RAS: the stamp is a field in the head of the line
        (
            "- 1117838570 2005.06.03 R02-M1-N0-C:J12-U11 2005-06-03-15.42.50.675872 R02-M1-N0-C:J12-U11 RAS",
            local(2005, 6, 3, 15, 42, 50, 675872),
        ),
    ],
)
def test_extract_timestamp_apache_error_compact_and_db2(line: str, expected: datetime) -> None:
    assert extract_timestamp(line) == expected


@pytest.mark.parametrize(
    "line",
    [
        "plain text without time",
        "",
        "12345 not a date",
        "{not json",
        '{"time": 0.5}',
        "Nov 99 99:99:99 x",
        # two six-digit groups (HDFS' 081109 203615) look like too many ordinary numbers
        "081109 203615 148 INFO dfs.DataNode: PacketResponder 1 terminating",
        "204800 102400 /var/lib/docker",
        # ordinary numbers that resemble the compact, DB2 and ctime forms
        "20171223 apples sold",
        "20171399-22:15:29 not a month",
        "12345678-12:34:56 build tag",
        "20171223-22:15 no seconds",
        "20171223-22:15:29:606:7 a counter",
        "copied 2005-13-03-15.42.50 bytes",
        "release-2005-06-03-15.42.50 tag",
        "v2005-06-03-15.42.50.1 build",
        "2005-06-03-15.42.50.1.2 dotted version",
        "[Sun Dec 04 04:47:44] no year",
        "[Sun Dec 04 04:47:44 2005 unclosed",
        "[Xyz Dec 04 04:47:44 2005] not a weekday",
        "[Sun Foo 04 04:47:44 2005] not a month",
    ],
)
def test_extract_timestamp_none(line: str) -> None:
    assert extract_timestamp(line) is None


# --- extract_message / is_error ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "message", "level"),
    [
        (
            '{"time":"2026-11-22T03:35:01Z","level":"error","msg":"db timeout","error":"deadline exceeded"}',
            "db timeout: deadline exceeded",
            "ERROR",
        ),
        ('{"severity":"WARNING","message":"disk 91% full"}', "disk 91% full", "WARNING"),
        ('{"level":50,"msg":"pino says"}', "pino says", "ERROR"),
        (
            '{"log":"2026-11-22 03:35:01,1 ERROR boom\\n","stream":"stderr","time":"2026-11-22T03:35:01Z"}',
            "boom",
            "ERROR",
        ),
        (
            'time="2026-11-22T03:35:01Z" level=error msg="failed to sync pod" pod=web-1',
            "failed to sync pod",
            "ERROR",
        ),
        ("Nov 22 03:35:01 web1 sshd[1234]: Accepted key for bob", "sshd: Accepted key for bob", None),
        (
            "Nov 22 03:35:01 web1 kernel: Out of memory: Killed process 9 (java)",
            "kernel: Out of memory: Killed process 9 (java)",
            None,
        ),
        ("2026-11-22 03:35:01,123 ERROR [app.db] connection refused", "[app.db] connection refused", "ERROR"),
        ("2026-11-22 03:35:01,123 - app.db - WARNING - slow query", "app.db slow query", "WARNING"),
        ("2026-11-22T03:35:01.123456789Z stdout F 2026-11-22 03:35:01,123 INFO ready", "ready", "INFO"),
        (
            '10.0.0.1 - - [22/Nov/2026:03:35:01 +0000] "GET /api/x?id=1 HTTP/1.1" 502 0 "-" "curl"',
            "GET /api/x?id=1 HTTP/1.1 502",
            "ERROR",
        ),
        (
            '10.0.0.1 - - [22/Nov/2026:03:35:01 +0000] "POST /login HTTP/1.1" 401 0 "-" "curl"',
            "POST /login HTTP/1.1 401",
            "WARNING",
        ),
        ("E1122 03:35:01.123456       1 reflector.go:138] failed to list", "failed to list", "ERROR"),
        ("2026-11-22T03:35:01Z just a message", "just a message", None),
        ("no timestamp at all", "no timestamp at all", None),
        (
            "[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok /etc/httpd/conf/workers2.properties",
            "workerEnv.init() ok /etc/httpd/conf/workers2.properties",
            "NOTICE",
        ),
        (
            "[Sun Dec 04 04:47:44.5 2005] [error] mod_jk child in error state 6",
            "mod_jk child in error state 6",
            "ERROR",
        ),
        (
            "20171223-22:15:29:606|Step_LSC|30002312|onStandStepChanged 3579",
            "Step_LSC|30002312|onStandStepChanged 3579",
            None,
        ),
    ],
)
def test_extract_message(line: str, message: str, level: str | None) -> None:
    assert extract_message(line) == (message, level)


@pytest.mark.parametrize(
    "line",
    [
        "2026-11-22 03:35:01,123 ERROR [app] boom",
        "2026-11-22 03:35:01,123 CRITICAL [app] boom",
        '{"level":"fatal","msg":"cannot start"}',
        "Traceback (most recent call last):",
        "panic: runtime error: index out of range",
        "Nov 22 03:35:01 web1 kernel: app[12]: segfault at 0 ip 00007f",
        "Nov 22 03:35:01 web1 kernel: Out of memory: Killed process 9 (java)",
        "container web was OOMKilled",
        "upload failed: connection reset",
        "fatal: not a git repository",
        "java.lang.IllegalStateException: bad state",
        "Error: cannot connect to db",
        "3 errors found",
        '10.0.0.1 - - [22/Nov/2026:03:35:01 +0000] "GET /a HTTP/1.1" 503 0 "-" "curl"',
        "2026-11-22 03:35:01,123 INFO worker: Traceback (most recent call last):",
        "task finished: failed=2",
        "Nov 22 03:35:01 web1 app[7]: upstream timed out connecting to 10.0.0.1:5432",
        "open /etc/shadow: Permission denied",
    ],
)
def test_is_error_positive(line: str) -> None:
    message, level = extract_message(line)
    assert is_error(message, level)
    assert is_error(line, None)


@pytest.mark.parametrize(
    "line",
    [
        "build finished with 0 errors",
        "no errors found",
        "error_count=0 warnings=3",
        "ok=5 changed=1 failed=0 skipped=2",
        "errors: 0",
        "err=<nil>",
        "opened /var/log/nginx/error.log",
        "2026-11-22 03:35:01,123 INFO retrying failed upload (attempt 2)",
        "2026-11-22 03:35:01,123 DEBUG error handler installed",
        '10.0.0.1 - - [22/Nov/2026:03:35:01 +0000] "GET /errors/failed HTTP/1.1" 200 0 "-" "curl"',
        '10.0.0.1 - - [22/Nov/2026:03:35:01 +0000] "GET /missing HTTP/1.1" 404 0 "-" "curl"',
        "server started on port 8080",
        "terror-list refreshed",
    ],
)
def test_is_error_negative(line: str) -> None:
    message, level = extract_message(line)
    assert not is_error(message, level)
    assert not is_error(line, None)


# --- message_shape ----------------------------------------------------------------------------


def test_shapes_mask_variable_parts() -> None:
    a = message_shape("user 42 failed login from 10.0.0.5")
    assert a == message_shape("user 7 failed login from 192.168.1.9") == "user <NUM> failed login from <IP>"
    assert message_shape("user 42 logged out") != a


@pytest.mark.parametrize(
    ("message", "shape"),
    [
        ("request 550e8400-e29b-41d4-a716-446655440000 done", "request <UUID> done"),
        ("commit 3f9a2b7c1d pushed, ptr 0x7ffd1234", "commit <HEX> pushed, ptr <HEX>"),
        ("upstream [2001:db8::1]:443 and ::1 down", "upstream <IP> and <IP> down"),
        ("took 12ms then 3.5s then 1m30s", "took <DUR> then <DUR> then <DUR>"),
        ("cannot open /var/lib/app/data-7.db", "cannot open <PATH>"),
        ("bad value 'abc' in \"x y\"", "bad value <STR> in <STR>"),
        ("mail to bob@example.com bounced", "mail to <EMAIL> bounced"),
        ("GET https://api.example.com/v1/x?id=3 failed", "GET <URL> failed"),
        ('sync done user_id=42 status=ok msg="all good"', "sync done user_id=<VAL> status=<VAL> msg=<VAL>"),
        ("can't reach 'db' at 10.1.2.3:5432", "can't reach <STR> at <IP>"),
        ("GET /api/orders/12345?x=1 HTTP/1.1 502", "GET /api/orders/<NUM>?<QUERY> HTTP/1.1 502"),
        ("std::vector<int> threw", "std::vector<int> threw"),
    ],
)
def test_shape_tokens(message: str, shape: str) -> None:
    assert message_shape(message) == shape


# --- group_lines ------------------------------------------------------------------------------


def syslog_with_burst() -> list[tuple[str, str]]:
    """Two hours of syslog noise with one error now and then and a burst of 43 at 14:05-14:10."""
    base = datetime(2026, 11, 22, 13, 0)
    events: list[tuple[datetime, str]] = []
    for i in range(240):
        t = base + timedelta(seconds=30 * i)
        events.append((t, f"web1 nginx[{900 + i % 7}]: served request {i} in {i % 40}ms"))
        if i % 30 == 25:  # 8 background errors, one every 15 minutes, none in the burst
            events.append((t, f"web1 app[77]: upstream timed out connecting to 10.0.0.{i % 250}:5432"))
    for j in range(43):
        t = datetime(2026, 11, 22, 14, 5) + timedelta(seconds=6 * j)
        events.append((t, f"web1 app[77]: upstream timed out connecting to 10.0.1.{j}:5432"))
    events.append((datetime(2026, 11, 22, 14, 30), "web1 cron[5]: job backup failed with status 2"))
    events.sort(key=lambda e: e[0])
    return [("syslog", f"{t:%b %d %H:%M:%S} {rest}") for t, rest in events]


def test_grouping_counts_first_last_and_spike() -> None:
    summary = group_lines(syslog_with_burst(), default_year=2026)
    assert summary.total_lines == 240 + 8 + 43 + 1
    assert summary.error_lines == 52
    top = summary.groups[0]
    assert top.shape == "app: upstream timed out connecting to <IP>"
    assert top.count == 51
    assert top.first_seen == local(2026, 11, 22, 13, 12, 30)
    assert top.last_seen == local(2026, 11, 22, 14, 57, 30)  # the last background error
    assert top.sources == {"syslog": 51}
    assert len(top.examples) == 3
    assert len(set(top.examples)) == 3
    assert summary.bucket == timedelta(minutes=5)
    assert top.spike
    burst_start = local(2026, 11, 22, 14, 5)
    assert top.spike_start == burst_start
    assert top.spike_description == f"43 of 51 in the 5 minutes from {burst_start:%H:%M} UTC"
    assert any(f"from {burst_start:%H:%M} UTC" in s for s in summary.spikes)
    other = summary.groups[1]
    assert other.shape == "cron: job backup failed with status <NUM>"
    assert other.count == 1
    assert not other.spike
    # Every error record lands in exactly one timeline bucket.
    assert sum(c for _, c in summary.timeline) == summary.error_lines
    assert 20 <= len(summary.timeline) <= 60
    json.dumps(summary.to_dict())  # JSON-friendly all the way down


def test_lines_differing_only_in_ids_share_a_group_and_others_do_not() -> None:
    lines = [
        (
            "a.log",
            "2026-11-22T10:00:00Z ERROR order 1001 failed for customer 550e8400-e29b-41d4-a716-446655440000",
        ),
        (
            "b.log",
            "2026-11-22T10:00:01Z ERROR order 1002 failed for customer 6ba7b810-9dad-11d1-80b4-00c04fd430c8",
        ),
        ("a.log", "2026-11-22T10:00:02Z ERROR payment gateway 10.0.0.7 refused connection"),
        ("a.log", "2026-11-22T10:00:03Z INFO order 1003 shipped"),
    ]
    summary = group_lines(lines)
    shapes = {g.shape: g for g in summary.groups}
    assert set(shapes) == {
        "order <NUM> failed for customer <UUID>",
        "payment gateway <IP> refused connection",
    }
    order = shapes["order <NUM> failed for customer <UUID>"]
    assert order.count == 2
    assert order.sources == {"a.log": 1, "b.log": 1}
    assert order.level == "ERROR"
    assert summary.matched_lines == 4
    assert summary.error_lines == 3


PY_LOG = """\
2026-11-22 10:00:00,001 INFO [worker] starting job 41
2026-11-22 10:00:01,002 ERROR [worker] job 41 crashed
Traceback (most recent call last):
  File "/app/worker.py", line 10, in run
    value = int(raw)
ValueError: invalid literal for int() with base 10: 'abc'
2026-11-22 10:00:02,003 INFO [worker] starting job 42
2026-11-22 10:05:01,004 ERROR [worker] job 42 crashed
Traceback (most recent call last):
  File "/app/worker.py", line 10, in run
    value = int(raw)
ValueError: invalid literal for int() with base 10: 'xyz'
2026-11-22 10:06:00,000 INFO [worker] uncaught exception follows
Traceback (most recent call last):
  File "/app/main.py", line 3, in <module>
    main()
KeyError: 'config'
2026-11-22 10:07:00,000 INFO [worker] done
"""


def test_tracebacks_fold_into_one_error_with_the_exception_in_its_shape() -> None:
    summary = group_lines(("app.log", line) for line in PY_LOG.splitlines())
    assert summary.total_lines == len(PY_LOG.splitlines())
    assert summary.error_lines == 3  # two logged tracebacks, one uncaught; no frame counted alone
    crash = summary.groups[0]
    assert crash.count == 2
    assert crash.shape == (
        "[worker] job <NUM> crashed | ValueError: invalid literal for int() with base <NUM>: <STR>"
    )
    assert crash.first_seen == local(2026, 11, 22, 10, 0, 1, 2000)
    assert crash.last_seen == local(2026, 11, 22, 10, 5, 1, 4000)
    assert "ValueError: invalid literal for int() with base 10: 'abc'" in crash.examples[0]
    # A traceback after an INFO line is its own error, not part of the INFO record.
    uncaught = summary.groups[1]
    assert uncaught.count == 1
    assert uncaught.shape.endswith("| KeyError: <STR>")
    assert uncaught.first_seen == local(2026, 11, 22, 10, 6)  # inherited from the line before


def test_java_stack_trace_folds_with_its_root_cause() -> None:
    lines = [
        "2026-11-22 10:00:00,000 ERROR [http] request failed",
        "java.lang.RuntimeException: wrapper",
        "\tat com.example.Api.handle(Api.java:42)",
        "Caused by: java.sql.SQLException: connection 17 refused",
        "\t... 12 more",
        "2026-11-22 10:00:01,000 INFO [http] next",
    ]
    summary = group_lines(("app.log", line) for line in lines)
    # The unindented exception line under an error belongs to it, as logback and log4j print it.
    [group] = summary.groups
    assert group.shape == "[http] request failed | Caused by: java.sql.SQLException: connection <NUM> refused"
    assert summary.error_lines == 1


def test_since_until_filter_records() -> None:
    lines = [("x", f"2026-11-22T10:{m:02d}:00Z ERROR thing {m} broke") for m in range(0, 60, 10)]
    since = datetime(2026, 11, 22, 10, 15, tzinfo=UTC)
    until = datetime(2026, 11, 22, 10, 40, tzinfo=UTC)
    summary = group_lines(lines, since=since, until=until)
    assert summary.total_lines == 6
    assert summary.matched_lines == 3
    assert summary.error_lines == 3
    group = summary.groups[0]
    assert group.first_seen == datetime(2026, 11, 22, 10, 20, tzinfo=UTC)
    assert group.last_seen == datetime(2026, 11, 22, 10, 40, tzinfo=UTC)
    assert summary.time_range == (group.first_seen, group.last_seen)


def test_max_groups_caps_memory_and_counts_the_rest() -> None:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
    lines = [("x", f"2026-11-22T10:00:0{i}Z ERROR {w} exploded") for i, w in enumerate(words)]
    summary = group_lines(lines, max_groups=4)
    assert len(summary.groups) == 4
    assert summary.other_count == 2
    assert summary.error_lines == 6
    data = summary.to_dict(max_groups=2)
    assert data["groups_total"] == 4
    assert data["groups_shown"] == 2
    assert data["records_in_hidden_groups"] == 2
    assert data["other_count"] == 2


def test_all_lines_and_a_fixed_bucket() -> None:
    lines = [("x", f"2026-11-22T10:{m:02d}:00Z INFO tick {m}") for m in range(30)]
    summary = group_lines(lines, errors_only=False, bucket=timedelta(minutes=10))
    assert summary.error_lines == 0
    assert [(g.shape, g.count) for g in summary.groups] == [("tick <NUM>", 30)]
    assert summary.bucket == timedelta(minutes=10)
    assert [c for _, c in summary.timeline] == [10, 10, 10]


def test_bucket_grows_with_the_time_range() -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    lines = [
        ("x", f"{start + timedelta(hours=h):%Y-%m-%dT%H:%M:%SZ} ERROR disk full") for h in range(0, 24 * 10)
    ]
    summary = group_lines(lines)
    assert summary.bucket == timedelta(hours=6)
    assert 24 <= len(summary.timeline) <= 60
    assert sum(summary.groups[0].buckets.values()) == 240


def big_log(path: Path, target_bytes: int) -> None:
    """A realistic application log: mostly INFO, 2% errors with many distinct ids."""
    start = datetime(2026, 11, 20, tzinfo=UTC)
    chunk: list[str] = []
    written, i = 0, 0
    with path.open("w") as fh:
        while written < target_bytes:
            t = start + timedelta(milliseconds=250 * i)
            stamp = f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond // 1000:03d}Z"
            if i % 50 == 0:
                line = f"{stamp} ERROR [db] query {i} on shard {i % 16} failed after {i % 900}ms: timeout\n"
            else:
                line = (
                    f"{stamp} INFO [http] GET /api/items/{i}?page={i % 7} 200 {i % 300}ms user={i % 997} "
                    f'req={i:012x} ua="Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0" '
                    f"region=eu-west-{i % 3} bytes={i * 7 % 65536}\n"
                )
            chunk.append(line)
            written += len(line)
            i += 1
            if len(chunk) == 5000:
                fh.write("".join(chunk))
                chunk.clear()
        fh.write("".join(chunk))


def test_grouping_a_large_log_uses_bounded_memory(tmp_path: Path) -> None:
    # 16 MB under tracemalloc: peak memory must stay a small fraction of the file (the 1 GB
    # figure is benchmarks/log_memory.py's; a bigger file here only made the suite slower).
    path = tmp_path / "big.log"
    big_log(path, 16 * 1024 * 1024)
    size = path.stat().st_size

    def read() -> Iterator[tuple[str, str]]:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                yield "big.log", line

    tracemalloc.start()
    try:
        summary = group_lines(read())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert size >= 16 * 1024 * 1024
    assert peak < size / 3, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"
    assert summary.error_lines == summary.total_lines // 50 + (1 if summary.total_lines % 50 else 0)
    assert [g.shape for g in summary.groups] == [
        "[db] query <NUM> on shard <NUM> failed after <DUR>: timeout"
    ]


def test_offsets_other_than_utc_are_converted() -> None:
    line = "2026-11-22T10:00:00+05:30 ERROR x failed"
    summary = group_lines([("x", line)])
    assert summary.groups[0].first_seen == datetime(
        2026, 11, 22, 10, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))
    )
    assert summary.groups[0].first_seen is not None
    assert summary.groups[0].first_seen.tzinfo is UTC
