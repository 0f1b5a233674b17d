"""Incident scenarios for the report-correctness suite, built as real files at run time.

Each :class:`Scenario` writes what an on-call engineer would point the agent at — logs in several
formats and time zones, rotated (``.1``, ``.gz``, ``.xz``) and linked, Alertmanager webhook
payloads, git repositories made with the real ``git`` — relative to the current time, and states
the verdict a trustworthy report must reach (``problems_found``, ``all_clear`` or
``inconclusive``: "I could not tell") and what must appear in it: substrings of finding titles
(``findings``) and of the reasons in "what could not be gathered" (``gaps``), and exact counts
of what was read (``reads``).

:func:`run` takes a scenario through the real offline investigation: in-process through the
session service with the settings the CLI builds (the ``--logs``/``--repo`` paths added to the
roots), or, for what only the command line can do (standard input, an alert file, another time
zone for the reader), through ``python -m devops_agent investigate --json`` in a subprocess.
:func:`judge` compares the report with the expectation. Used by
``tests/test_report_correctness.py`` (CI) and ``benchmarks/report_correctness.py``.

Scenarios that need Prometheus (``needs={"prometheus"}``) get a real one's URL or are skipped;
a scenario whose expectation rests on another change still under way names it in
``depends_on``: it stays in the suite with its full expectation.

Nothing here is copied from benchmark data: every line is generated below.
"""

from __future__ import annotations

import asyncio
import bz2
import gzip
import json
import lzma
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

VERDICTS = ("problems_found", "all_clear", "inconclusive")

# --- building blocks -----------------------------------------------------------------------------


@dataclass
class Built:
    """What a scenario hands the investigation: the question and the CLI's inputs."""

    question: str
    logs: list[Path] = field(default_factory=list)
    repo: Path | None = None
    since: str | None = None
    query: str | None = None
    alert: Path | None = None
    stdin: bytes | None = None
    env: dict[str, str] = field(default_factory=dict)
    cli: bool = False
    runbooks: list[str] = field(default_factory=list)


@dataclass
class Context:
    """Where a scenario is built and what it may use."""

    root: Path
    now: datetime
    prometheus_url: str | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    build: Callable[[Context], Built]
    verdict: str
    findings: tuple[str, ...] = ()
    gaps: tuple[str, ...] = ()
    reads: tuple[tuple[str, int], ...] = ()
    absent: tuple[str, ...] = ()
    needs: frozenset[str] = frozenset()
    depends_on: str | None = None


def iso_z(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_ms(ts: datetime) -> str:
    return ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def local(ts: datetime, zone: timezone | None = None) -> datetime:
    """``ts`` as wall-clock time where it was written: ``zone``, or this host's zone."""
    return ts.astimezone(zone) if zone is not None else ts.astimezone()


def pylog(ts: datetime, level: str, msg: str, zone: timezone | None = None) -> str:
    """Python logging's default-ish format: local time without a zone."""
    t = local(ts, zone)
    return f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d} {level} [api] {msg}"


def jsonl(ts: datetime, level: str, msg: str, **extra: Any) -> str:
    return json.dumps({"time": iso_ms(ts), "level": level.lower(), "msg": msg, **extra})


def logfmt(ts: datetime, level: str, msg: str) -> str:
    return f'time={iso_z(ts)} level={level.lower()} msg="{msg}" service=checkout'


def syslog(ts: datetime, program: str, msg: str) -> str:
    t = local(ts)
    return f"{t:%b} {t.day:2d} {t:%H:%M:%S} web-1 {program}[4242]: {msg}"


def access(ts: datetime, path: str, status: int) -> str:
    t = ts.astimezone(UTC)
    return f'10.1.2.3 - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET {path} HTTP/1.1" {status} 512 "-" "curl/8.5"'


def cri(ts: datetime, stream: str, msg: str) -> str:
    return f"{ts.astimezone(UTC):%Y-%m-%dT%H:%M:%S}.{ts.microsecond:06d}000Z {stream} F {msg}"


def docker_json(ts: datetime, stream: str, msg: str) -> str:
    return json.dumps({"log": msg + "\n", "stream": stream, "time": iso_ms(ts)})


def every(start: datetime, n: int, step: timedelta) -> list[datetime]:
    return [start + step * i for i in range(n)]


def write(path: Path, lines: Iterable[str], *, mtime: datetime | None = None) -> Path:
    """Write ``lines`` (compressed by the suffix: .gz, .xz, .bz2) and set the file's mtime."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(f"{line}\n" for line in lines).encode()
    if path.suffix == ".gz":
        text = gzip.compress(text)
    elif path.suffix == ".xz":
        text = lzma.compress(text)
    elif path.suffix == ".bz2":
        text = bz2.compress(text)
    path.write_bytes(text)
    if mtime is not None:
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def healthy(ts_list: list[datetime], fmt: Callable[[datetime, str, str], str]) -> list[str]:
    return [fmt(t, "INFO", f"GET /api/orders/{i} 200 in {12 + i % 7}ms") for i, t in enumerate(ts_list)]


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/srv/worker/main.py", line 88, in <module>',
    "    run(queue)",
    '  File "/srv/worker/main.py", line 61, in run',
    "    job = decode(message)",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
]


def git(repo: Path, *args: str, when: datetime | None = None) -> None:
    """Run the real git in ``repo`` with a fixed identity (and author/committer date)."""
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    if when is not None:
        stamp = when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S+0000")
        env |= {"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}
    ident = ["-c", "user.name=Dana Ops", "-c", "user.email=dana@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(["git", "-C", str(repo), *ident, *args], env=env, check=True, capture_output=True)


def make_repo(root: Path, commits: list[tuple[datetime, str, dict[str, str]]]) -> Path:
    """A git repository with ``commits`` (when, subject, {path: content}), oldest first."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "-c", "init.defaultBranch=main", "init", "-q")
    for when, subject, files in commits:
        for name, content in files.items():
            target = repo / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content)
            git(repo, "add", name)
        git(repo, "commit", "-q", "-m", subject, when=when)
    return repo


def alert_payload(
    path: Path,
    name: str,
    starts: datetime,
    expr: str | None,
    *,
    status: str = "firing",
    labels: dict[str, str] | None = None,
) -> Path:
    """An Alertmanager webhook body (version 4) with one alert."""
    alert: dict[str, Any] = {
        "status": status,
        "labels": {"alertname": name, "severity": "critical", "service": "checkout", **(labels or {})},
        "annotations": {"summary": f"{name} on checkout"},
        "startsAt": iso_z(starts),
        "endsAt": "0001-01-01T00:00:00Z",
        "generatorURL": f"http://prometheus:9090/graph?g0.expr={quote(expr)}&g0.tab=1" if expr else "",
        "fingerprint": "c0ffee0123456789",
    }
    body = {
        "version": "4",
        "status": status,
        "receiver": "oncall",
        "groupLabels": {"alertname": name},
        "commonLabels": alert["labels"],
        "commonAnnotations": alert["annotations"],
        "externalURL": "http://alertmanager:9093",
        "groupKey": f'{{}}:{{alertname="{name}"}}',
        "truncatedAlerts": 0,
        "alerts": [alert],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2))
    return path


# --- the scenarios -------------------------------------------------------------------------------

H = timedelta(hours=1)
M = timedelta(minutes=1)
S = timedelta(seconds=1)
BEHIND = timezone(timedelta(hours=-5))  # a host on US Eastern standard time
AHEAD = timezone(timedelta(hours=5, minutes=30))  # a host in India


def _stale_oom(c: Context) -> Built:
    start = c.now - 3 * H
    lines = healthy(every(start, 30, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}")
    dying = c.now - 2.5 * H - 30 * S  # "2h 30m" while the scenario runs
    lines += [f"{iso_z(dying + i * S)} ERROR out of memory: cannot allocate 65536 bytes" for i in range(20)]
    lines += [f"{iso_z(dying + 30 * S)} CRITICAL api worker died"]
    log = write(c.root / "logs" / "app.log", lines, mtime=dying + 30 * S)
    return Built("errors in the api", logs=[log.parent], since="2h")


def _empty_file(c: Context) -> Built:
    log = write(c.root / "logs" / "app.log", [])
    return Built("errors in the api", logs=[log], since="2h")


def _empty_file_no_window(c: Context) -> Built:
    log = write(c.root / "logs" / "app.log", [])
    return Built("errors in the api", logs=[log])


def _future_since(c: Context) -> Built:
    lines = healthy(every(c.now - 30 * M, 20, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}")
    lines += [f"{iso_z(c.now - 5 * M)} ERROR payment gateway timeout"]
    log = write(c.root / "logs" / "app.log", lines)
    return Built("errors in the api", logs=[log], since=iso_z(c.now + 24 * H))


def _naive_behind_errors(c: Context) -> Built:
    # written just now on a host 5 h behind UTC, stamps without a zone; read on a UTC host
    start = c.now - 20 * M
    lines = [pylog(t, "INFO", "request ok", BEHIND) for t in every(start, 15, M)]
    lines += [
        pylog(c.now - 2 * M + i * S, "ERROR", "connection refused: db-primary:5432", BEHIND)
        for i in range(12)
    ]
    log = write(c.root / "logs" / "app.log", lines)
    return Built("errors in the api", logs=[log], since="2h", cli=True, env={"TZ": "UTC"})


def _naive_behind_healthy(c: Context) -> Built:
    lines = [pylog(t, "INFO", "request ok", BEHIND) for t in every(c.now - 20 * M, 20, M)]
    log = write(c.root / "logs" / "app.log", lines)
    return Built("errors in the api", logs=[log], since="2h", cli=True, env={"TZ": "UTC"})


def _naive_ahead_errors(c: Context) -> Built:
    lines = [pylog(t, "INFO", "request ok", AHEAD) for t in every(c.now - 20 * M, 15, M)]
    lines += [pylog(c.now - M + i * S, "ERROR", "upstream timed out after 3000ms", AHEAD) for i in range(8)]
    log = write(c.root / "logs" / "app.log", lines)
    return Built("errors in the api", logs=[log], since="2h", cli=True, env={"TZ": "UTC"})


def _explicit_offset(c: Context) -> Built:
    def stamp(t: datetime) -> str:
        return t.astimezone(BEHIND).isoformat(timespec="seconds")

    lines = [f"{stamp(t)} INFO request ok" for t in every(c.now - 30 * M, 20, M)]
    lines += [f"{stamp(c.now - 3 * M + i * S)} ERROR connection refused: redis:6379" for i in range(9)]
    log = write(c.root / "logs" / "app.log", lines)
    return Built("errors in the api", logs=[log], since="2h", cli=True, env={"TZ": "UTC"})


def _healthy_json(c: Context) -> Built:
    lines = [
        jsonl(t, "info", f"order {i} placed", status=200) for i, t in enumerate(every(c.now - 50 * M, 40, M))
    ]
    log = write(c.root / "logs" / "checkout.jsonl", lines)
    return Built("any errors in checkout?", logs=[log], since="1h")


def _healthy_plain(c: Context) -> Built:
    lines = healthy(every(c.now - 50 * M, 45, M), lambda t, lv, m: pylog(t, lv, m))
    log = write(c.root / "logs" / "api.log", lines)
    return Built("errors in the api", logs=[log], since="1h")


def _pylog_errors(c: Context) -> Built:
    lines = healthy(every(c.now - 50 * M, 30, M), lambda t, lv, m: pylog(t, lv, m))
    lines += [
        pylog(c.now - 10 * M + i * 10 * S, "ERROR", f"db query timeout after 5000ms id={i}")
        for i in range(30)
    ]
    log = write(c.root / "logs" / "api.log", lines)
    return Built("errors in the api", logs=[log], since="1h")


def _json_errors(c: Context) -> Built:
    lines = [jsonl(t, "info", "order placed") for t in every(c.now - 40 * M, 20, M)]
    lines += [
        jsonl(c.now - 5 * M + i * S, "error", "card processor returned 502", order=i) for i in range(14)
    ]
    log = write(c.root / "logs" / "checkout.jsonl", lines)
    return Built("errors in checkout", logs=[log], since="1h")


def _logfmt_errors(c: Context) -> Built:
    lines = [logfmt(t, "info", "cart updated") for t in every(c.now - 40 * M, 20, M)]
    lines += [
        logfmt(c.now - 4 * M + i * S, "error", "inventory lookup failed: context deadline exceeded")
        for i in range(11)
    ]
    log = write(c.root / "logs" / "checkout.log", lines)
    return Built("errors in checkout", logs=[log], since="1h")


def _syslog_errors(c: Context) -> Built:
    lines = [syslog(t, "sshd", "Accepted publickey for deploy") for t in every(c.now - 40 * M, 10, 3 * M)]
    lines += [
        syslog(
            c.now - 6 * M + i * S,
            "nginx",
            "connect() failed (111: Connection refused) while connecting to upstream",
        )
        for i in range(13)
    ]
    log = write(c.root / "logs" / "syslog", lines)
    return Built("errors on web-1", logs=[log], since="1h")


def _nginx_5xx(c: Context) -> Built:
    lines = [access(t, "/api/cart", 200) for t in every(c.now - 40 * M, 60, 30 * S)]
    lines += [access(c.now - 5 * M + i * S, "/api/checkout", 502) for i in range(25)]
    log = write(c.root / "logs" / "access.log", lines)
    return Built("5xx errors at the edge", logs=[log], since="1h")


def _k8s_links(c: Context) -> Built:
    # /var/log/containers/*.log are links into /var/log/pods/…: one real file, counted once
    base = c.root / "varlog"
    real = base / "pods" / "shop_api-7d9f_0a1b2c" / "api" / "0.log"
    lines = [cri(t, "stdout", "GET /healthz 200") for t in every(c.now - 30 * M, 20, M)]
    lines += [
        cri(c.now - 4 * M + i * S, "stderr", "ERROR upstream connect error: connection reset")
        for i in range(7)
    ]
    write(real, lines)
    (base / "containers").mkdir(parents=True)
    (base / "containers" / "api-7d9f_shop_api-0123abcd.log").symlink_to(real)
    return Built("errors in the api pods", logs=[base], since="1h")


def _current_link(c: Context) -> Built:
    logs = c.root / "logs"
    lines = [f"{iso_z(t)} INFO ok" for t in every(c.now - 20 * M, 10, M)]
    lines += [f"{iso_z(c.now - 3 * M + i * S)} ERROR disk quota exceeded for /data" for i in range(5)]
    write(logs / "app.log", lines)
    (logs / "current.log").symlink_to("app.log")
    os.link(logs / "app.log", logs / "app-hardlink.log")
    return Built("errors in the app", logs=[logs], since="1h")


def _rotated_gz_old(c: Context) -> Built:
    logs = c.root / "logs"
    write(logs / "app.log", healthy(every(c.now - 50 * M, 40, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}"))
    old = [f"{iso_z(c.now - 30 * H + i * S)} ERROR stale failure from yesterday" for i in range(40)]
    write(logs / "app.log.1.gz", old, mtime=c.now - 26 * H)
    return Built("errors in the app", logs=[logs], since="1h")


def _rotated_gz_in_window(c: Context) -> Built:
    logs = c.root / "logs"
    write(logs / "app.log", healthy(every(c.now - 10 * M, 10, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}"))
    rotated = [
        f"{iso_z(c.now - 40 * M + i * S)} ERROR kafka producer: broker not available" for i in range(16)
    ]
    write(logs / "app.log.1.gz", rotated, mtime=c.now - 12 * M)
    return Built("errors in the app", logs=[logs], since="1h")


def _rotated_xz(c: Context) -> Built:
    logs = c.root / "logs"
    write(logs / "app.log", healthy(every(c.now - 10 * M, 10, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}"))
    rotated = [
        f"{iso_z(c.now - 30 * M + i * S)} ERROR TLS handshake failed with payments.internal"
        for i in range(12)
    ]
    write(logs / "app.log.1.xz", rotated, mtime=c.now - 12 * M)
    return Built("errors in the app", logs=[logs], since="1h")


def _rotated_plain(c: Context) -> Built:
    logs = c.root / "logs"
    write(logs / "app.log", healthy(every(c.now - 10 * M, 10, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}"))
    write(
        logs / "app.log.1",
        [f"{iso_z(c.now - 30 * M + i * S)} ERROR cache node 3 unreachable" for i in range(10)],
    )
    return Built("errors in the app", logs=[logs])


def _worker_tracebacks(c: Context) -> Built:
    lines: list[str] = []
    for _ in range(5):
        lines += TRACEBACK
    log = write(c.root / "logs" / "worker.err", lines)
    return Built("why does the worker crash", logs=[log], since="1h")


def _stamped_tracebacks(c: Context) -> Built:
    lines: list[str] = []
    for k in range(3):
        t = c.now - (10 - k) * M
        lines += [f"{iso_z(t)} {text}" for text in TRACEBACK]
        lines += [f"{iso_z(t + S)} INFO restarting worker"]
    log = write(c.root / "logs" / "worker.log", lines)
    return Built("why does the worker crash", logs=[log], since="1h")


def _lines_outside(c: Context) -> Built:
    old = [f"{iso_z(t)} INFO batch step ok" for t in every(c.now - 6 * H, 1000, 18 * S)]
    new = [f"{iso_z(t)} INFO batch step ok" for t in every(c.now - 9 * M, 10, 50 * S)]
    log = write(c.root / "logs" / "batch.log", old + new)
    return Built("errors in the batch job", logs=[log], since="10m")


def _quiet_among_active(c: Context) -> Built:
    logs = c.root / "logs"
    write(logs / "api.log", healthy(every(c.now - 50 * M, 40, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}"))
    died = c.now - 3 * H - 30 * S
    worker = [f"{iso_z(t)} INFO consumed batch" for t in every(died - 30 * M, 20, M)]
    worker += [f"{iso_z(died + i * S)} FATAL worker: cannot connect to queue at mq-1:5672" for i in range(3)]
    write(logs / "worker.log", worker, mtime=died + 3 * S)
    return Built("errors in the services", logs=[logs], since="1h")


def _quiet_no_errors(c: Context) -> Built:
    logs = c.root / "logs"
    write(logs / "api.log", healthy(every(c.now - 50 * M, 40, M), lambda t, lv, m: f"{iso_z(t)} {lv} {m}"))
    stopped = c.now - 3 * H - 30 * S
    write(
        logs / "billing.log",
        [f"{iso_z(t)} INFO invoice sent" for t in every(stopped - 20 * M, 20, M)],
        mtime=stopped,
    )
    return Built("errors in the services", logs=[logs], since="1h")


def _binary_only(c: Context) -> Built:
    path = c.root / "logs" / "core.dump"
    path.parent.mkdir(parents=True)
    path.write_bytes(bytes(range(256)) * 64)
    return Built("errors in the app", logs=[path.parent], since="1h")


def _undated_stale(c: Context) -> Built:
    lines = ["worker starting", "connected to queue", *TRACEBACK]
    log = write(c.root / "logs" / "worker.err", lines, mtime=c.now - 3 * H - 30 * S)
    return Built("why does the worker crash", logs=[log], since="1h")


def _undated_stale_healthy(c: Context) -> Built:
    log = write(
        c.root / "logs" / "worker.out",
        ["worker starting", "connected to queue", "idle"],
        mtime=c.now - 3 * H - 30 * S,
    )
    return Built("errors in the worker", logs=[log], since="1h")


def _docker_json(c: Context) -> Built:
    lines = [docker_json(t, "stdout", "listening on :8080") for t in every(c.now - 20 * M, 5, M)]
    lines += [
        docker_json(
            c.now - 2 * M + i * S,
            "stderr",
            "panic: runtime error: invalid memory address or nil pointer dereference",
        )
        for i in range(4)
    ]
    log = write(c.root / "docker" / "abc123-json.log", lines)
    return Built("why does the container crash", logs=[log], since="1h")


def _stdin_errors(c: Context) -> Built:
    lines = [f"{iso_z(t)} INFO ok" for t in every(c.now - 20 * M, 10, M)]
    lines += [f"{iso_z(c.now - M + i * S)} ERROR payment gateway timeout order={i}" for i in range(6)]
    return Built("errors in the piped log", stdin=("\n".join(lines) + "\n").encode(), since="1h", cli=True)


def _stdin_empty(c: Context) -> Built:
    return Built("errors in the piped log", stdin=b"", since="1h", cli=True)


def _alert_no_query(c: Context) -> Built:
    payload = alert_payload(c.root / "alert.json", "CheckoutLatencyHigh", c.now - 10 * M, None)
    return Built("", alert=payload, cli=True)


def _alert_unreachable(c: Context) -> Built:
    rate = 'rate(http_request_duration_seconds_bucket{job="checkout"}[5m])'
    expr = f"histogram_quantile(0.99, sum by (le) ({rate})) > 0.5"
    payload = alert_payload(c.root / "alert.json", "CheckoutLatencyHigh", c.now - 10 * M, expr)
    return Built("", alert=payload, cli=True, env={"DEVOPS_AGENT_PROMETHEUS__URL": "http://127.0.0.1:9"})


def _alert_no_data(c: Context) -> Built:
    expr = 'sum(rate(checkout_http_errors_total{job="checkout"}[5m])) > 5'
    payload = alert_payload(c.root / "alert.json", "CheckoutErrorRate", c.now - 10 * M, expr)
    return Built("", alert=payload, cli=True)


def _shift_expr(at: datetime, low: float, high: float) -> str:
    # a real PromQL series, evaluated by Prometheus at every step: low before ``at``, high after
    return f"({low:g} + {high - low:g} * (vector(time()) > bool {at.timestamp():.0f}))"


def _alert_level_shift(c: Context) -> Built:
    onset = c.now - 40 * M
    expr = f"{_shift_expr(onset, 20, 180)} > 100"
    payload = alert_payload(c.root / "alert.json", "CheckoutLatencyHigh", onset + M, expr)
    return Built("", alert=payload, cli=True)


def _alert_shift_after_spike(c: Context) -> Built:
    # a 4x spike 3 h before, then a +60 level shift at the alert's start: the spike must not
    # poison the baseline the shift is judged against
    spike, onset = c.now - 4 * H, c.now - 40 * M
    series = (
        f"(20 + 60 * ((vector(time()) > bool {spike.timestamp():.0f}) * (vector(time()) < bool "
        f"{(spike + 10 * M).timestamp():.0f})) + 60 * (vector(time()) > bool {onset.timestamp():.0f}))"
    )
    payload = alert_payload(c.root / "alert.json", "CheckoutLatencyHigh", onset + M, f"{series} > 60")
    return Built("", alert=payload, cli=True)


def _alert_starts_in_future(c: Context) -> Built:
    onset = c.now - 40 * M
    expr = f"{_shift_expr(onset, 20, 180)} > 100"
    payload = alert_payload(c.root / "alert.json", "CheckoutLatencyHigh", c.now + 2 * H, expr)
    return Built("", alert=payload, cli=True)


def _alert_flat(c: Context) -> Built:
    payload = alert_payload(c.root / "alert.json", "DiskAlmostFull", c.now - 30 * M, "vector(93) > 90")
    return Built("", alert=payload, cli=True)


def _alert_with_logs_and_change(c: Context) -> Built:
    onset = c.now - 40 * M
    expr = f"{_shift_expr(onset, 20, 180)} > 100"
    payload = alert_payload(c.root / "alert.json", "CheckoutLatencyHigh", onset + M, expr)
    logs = c.root / "logs"
    lines = [f"{iso_z(t)} INFO request ok" for t in every(c.now - 5 * H, 100, 3 * M)]
    lines += [
        f"{iso_z(onset + i * 20 * S)} ERROR pool exhausted: timeout waiting for connection" for i in range(30)
    ]
    write(logs / "checkout.log", sorted(lines))
    repo = make_repo(
        c.root,
        [
            (c.now - 30 * H, "Initial service", {"app.py": "print('hi')\n"}),
            (onset - 20 * M, "Lower db pool size to 5", {"config/pool.yaml": "size: 5\n"}),
        ],
    )
    return Built("", alert=payload, logs=[logs], repo=repo, cli=True)


def _resolved_alert_no_data(c: Context) -> Built:
    expr = 'sum(rate(checkout_http_errors_total{job="gone"}[5m])) > 5'
    payload = alert_payload(
        c.root / "alert.json", "CheckoutErrorRate", c.now - 50 * M, expr, status="resolved"
    )
    body = json.loads(payload.read_text())
    body["alerts"][0]["endsAt"] = iso_z(c.now - 20 * M)
    payload.write_text(json.dumps(body))
    return Built("", alert=payload, cli=True)


def _git_config_change(c: Context) -> Built:
    repo = make_repo(
        c.root,
        [
            (c.now - 10 * 24 * H, "Initial service", {"app.py": "print('hi')\n"}),
            (c.now - 2 * H, "Raise request timeout to 60s", {"deploy/values.yaml": "timeout: 60s\n"}),
        ],
    )
    return Built("what changed in the service recently?", repo=repo)


def _git_quiet(c: Context) -> Built:
    repo = make_repo(c.root, [(c.now - 10 * 24 * H, "Initial service", {"app.py": "print('hi')\n"})])
    repo_second = c.now - 9 * 24 * H
    (repo / "README.md").write_text("service\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "Document the service", when=repo_second)
    return Built("what changed in the service recently?", repo=repo)


def _git_not_a_repo(c: Context) -> Built:
    plain = c.root / "not-a-repo"
    plain.mkdir()
    (plain / "app.py").write_text("print('hi')\n")
    return Built("what changed in the service recently?", repo=plain)


def _logs_and_change(c: Context) -> Built:
    onset = c.now - 30 * M
    lines = [f"{iso_z(t)} INFO request ok" for t in every(c.now - 55 * M, 25, M)]
    lines += [f"{iso_z(onset + i * 15 * S)} ERROR KeyError: 'currency' in price formatter" for i in range(20)]
    log = write(c.root / "logs" / "api.log", sorted(lines))
    repo = make_repo(
        c.root,
        [
            (c.now - 10 * 24 * H, "Initial service", {"app.py": "print('hi')\n"}),
            (onset - 10 * M, "Format prices with the new currency table", {"app/prices.py": "TABLE = {}\n"}),
        ],
    )
    return Built("errors since the deploy", logs=[log], repo=repo, since="1h")


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "stale-log-after-oom",
        "the newest lines (20 out-of-memory errors, a dying worker) are 2.5 h old; --since 2h",
        _stale_oom,
        "problems_found",
        findings=("app.log: errors, then nothing for 2h", "out of memory"),
        gaps=("no log line since", "2h 30m old and says", "CRITICAL api worker died"),
        reads=(("log lines", 0),),
    ),
    Scenario("empty-file", "an empty log file, --since 2h", _empty_file, "inconclusive", gaps=("empty",)),
    Scenario(
        "empty-file-no-window",
        "an empty log file, no window",
        _empty_file_no_window,
        "inconclusive",
        gaps=("empty",),
    ),
    Scenario(
        "future-window",
        "--since a day from now over a log with an error",
        _future_since,
        "inconclusive",
        gaps=("the window starts in the future",),
    ),
    Scenario(
        "naive-zone-behind-with-errors",
        "stamps without a zone from a host 5 h behind UTC, written now, with errors",
        _naive_behind_errors,
        "problems_found",
        findings=("app.log: errors in its newest lines",),
        gaps=("stamps carry no time zone", "about 5 h"),
    ),
    Scenario(
        "naive-zone-behind-healthy",
        "stamps without a zone from a host 5 h behind UTC, written now, no errors: cannot tell",
        _naive_behind_healthy,
        "inconclusive",
        gaps=("cannot tell whether it went quiet", "stamps carry no time zone"),
    ),
    Scenario(
        "naive-zone-ahead-with-errors",
        "stamps without a zone from a host 5.5 h ahead of UTC, with errors",
        _naive_ahead_errors,
        "problems_found",
        findings=("upstream timed out",),
    ),
    Scenario(
        "explicit-offset",
        "ISO stamps with a -05:00 offset, errors in the last minutes",
        _explicit_offset,
        "problems_found",
        findings=("9× ", "connection refused"),
    ),
    Scenario(
        "healthy-json",
        "JSON lines at info level inside the window",
        _healthy_json,
        "all_clear",
        reads=(("log lines", 40),),
    ),
    Scenario(
        "healthy-plain",
        "Python logging lines at INFO inside the window",
        _healthy_plain,
        "all_clear",
        reads=(("log lines", 45),),
    ),
    Scenario(
        "python-logging-errors",
        "30 database timeouts in Python logging format",
        _pylog_errors,
        "problems_found",
        findings=("30× ", "db query timeout"),
    ),
    Scenario(
        "json-errors",
        "14 error-level JSON lines",
        _json_errors,
        "problems_found",
        findings=("14× ", "card processor returned"),
    ),
    Scenario(
        "logfmt-errors",
        "11 logfmt errors",
        _logfmt_errors,
        "problems_found",
        findings=("11× ", "inventory lookup failed"),
    ),
    Scenario(
        "syslog-errors",
        "13 nginx upstream errors in syslog",
        _syslog_errors,
        "problems_found",
        findings=("13× ", "Connection refused"),
    ),
    Scenario(
        "nginx-5xx",
        "25 responses with status 502 in an access log",
        _nginx_5xx,
        "problems_found",
        findings=("25× ", "502"),
    ),
    Scenario(
        "kubernetes-links",
        "/var/log/containers/*.log linking into /var/log/pods: 7 errors, counted once",
        _k8s_links,
        "problems_found",
        findings=("7× ", "connection reset"),
        absent=("14× ",),
    ),
    Scenario(
        "current-and-hard-links",
        "current.log -> app.log and a hard link to it: 5 errors, counted once",
        _current_link,
        "problems_found",
        findings=("5× ", "disk quota exceeded"),
        absent=("10× ", "15× "),
    ),
    Scenario(
        "rotated-gz-before-window",
        "errors only in app.log.1.gz rotated a day ago; the live log is healthy",
        _rotated_gz_old,
        "all_clear",
        reads=(("log lines", 40),),
    ),
    Scenario(
        "rotated-gz-in-window",
        "errors in app.log.1.gz rotated 12 minutes ago",
        _rotated_gz_in_window,
        "problems_found",
        findings=("16× ", "broker not available"),
    ),
    Scenario(
        "rotated-xz",
        "errors in app.log.1.xz",
        _rotated_xz,
        "problems_found",
        findings=("12× ", "TLS handshake failed"),
    ),
    Scenario(
        "rotated-plain",
        "errors in app.log.1, no window",
        _rotated_plain,
        "problems_found",
        findings=("10× ", "cache node"),
    ),
    Scenario(
        "worker-tracebacks",
        "a worker's stderr: 5 tracebacks without timestamps",
        _worker_tracebacks,
        "problems_found",
        findings=("5× Traceback", "JSONDecodeError"),
    ),
    Scenario(
        "stamped-tracebacks",
        "3 tracebacks with a timestamp on every line",
        _stamped_tracebacks,
        "problems_found",
        findings=("3× Traceback", "JSONDecodeError"),
    ),
    Scenario(
        "lines-outside-window",
        "1000 lines before --since 10m, 10 inside: 10 are counted",
        _lines_outside,
        "all_clear",
        reads=(("log lines", 10),),
    ),
    Scenario(
        "quiet-worker-after-fatal",
        "the api logs on; the worker stopped 3 h ago after FATAL errors",
        _quiet_among_active,
        "problems_found",
        findings=("worker.log: errors, then nothing for 3h", "cannot connect to queue"),
    ),
    Scenario(
        "quiet-service-no-errors",
        "billing stopped logging 3 h ago without an error; the api logs on",
        _quiet_no_errors,
        "problems_found",
        findings=("billing.log has logged nothing for 3h",),
    ),
    Scenario(
        "binary-only",
        "the only file is a binary dump",
        _binary_only,
        "inconclusive",
        gaps=("no log file could be read",),
    ),
    Scenario(
        "undated-stale-crash",
        "an undated stderr last written 3 h ago, ending in a traceback; --since 1h",
        _undated_stale,
        "problems_found",
        findings=("worker.err: errors, then nothing for 3h",),
        reads=(("log lines", 0),),
    ),
    Scenario(
        "undated-stale-healthy",
        "an undated stdout last written 3 h ago, no errors; --since 1h: nothing is in the window",
        _undated_stale_healthy,
        "problems_found",
        findings=("worker.out has logged nothing for 3h",),
        gaps=("no log line since",),
    ),
    Scenario(
        "docker-json-panic",
        "Docker json-file log with 4 Go panics",
        _docker_json,
        "problems_found",
        findings=("4× ", "nil pointer dereference"),
    ),
    Scenario(
        "stdin-errors",
        "investigate --logs - with 6 errors piped in",
        _stdin_errors,
        "problems_found",
        findings=("6× ", "payment gateway timeout"),
    ),
    Scenario(
        "stdin-empty",
        "investigate --logs - with nothing piped in",
        _stdin_empty,
        "inconclusive",
        gaps=("empty",),
    ),
    Scenario(
        "alert-without-expression",
        "a firing alert whose payload carries no PromQL",
        _alert_no_query,
        "inconclusive",
        gaps=("input `query` was not given",),
    ),
    Scenario(
        "alert-prometheus-unreachable",
        "a firing alert; Prometheus does not answer",
        _alert_unreachable,
        "inconclusive",
        gaps=("127.0.0.1:9",),
    ),
    Scenario(
        "alert-metric-no-data",
        "a firing alert whose metric returns no data",
        _alert_no_data,
        "inconclusive",
        gaps=("CheckoutErrorRate", "returned no data", "the selector may not match"),
        needs=frozenset({"prometheus"}),
    ),
    Scenario(
        "alert-level-shift",
        "a firing alert whose series shifted from 20 to 180 at its start",
        _alert_level_shift,
        "problems_found",
        findings=("shifted level",),
        needs=frozenset({"prometheus"}),
    ),
    Scenario(
        "alert-shift-after-spike",
        "a 4x spike 3 h before the alert, then a +60 level shift at its start",
        _alert_shift_after_spike,
        "problems_found",
        findings=("shifted level",),
        needs=frozenset({"prometheus"}),
    ),
    Scenario(
        "alert-starts-in-the-future",
        "an alert whose startsAt is 2 h ahead of the clock: its start cannot be lined up with anything",
        _alert_starts_in_future,
        "problems_found",
        findings=("shifted level",),
        gaps=("future",),
        needs=frozenset({"prometheus"}),
    ),
    Scenario(
        "alert-flat-above-threshold",
        "a firing alert whose series sat above the threshold the whole range: no anomaly to explain it",
        _alert_flat,
        "inconclusive",
        gaps=("DiskAlmostFull", "no anomaly was found"),
        needs=frozenset({"prometheus"}),
    ),
    Scenario(
        "alert-logs-and-change",
        "a level shift at the alert's start, new pool errors and a config commit just before",
        _alert_with_logs_and_change,
        "problems_found",
        findings=("shifted level",),
        needs=frozenset({"prometheus", "git"}),
    ),
    Scenario(
        "resolved-alert-no-data",
        "a resolved alert whose metric returns no data",
        _resolved_alert_no_data,
        "inconclusive",
        gaps=("returned no data",),
        needs=frozenset({"prometheus"}),
    ),
    Scenario(
        "git-config-change",
        "a repository whose last commit, 2 h ago, changed deploy/values.yaml",
        _git_config_change,
        "problems_found",
        findings=("1 commit", "config file change"),
        needs=frozenset({"git"}),
    ),
    Scenario(
        "git-no-recent-change",
        "a repository without a commit in the last 24 h: nothing changed is an answer",
        _git_quiet,
        "all_clear",
        reads=(("commits", 0),),
        needs=frozenset({"git"}),
    ),
    Scenario(
        "git-not-a-repository",
        "--repo names a directory that is not a git repository",
        _git_not_a_repo,
        "inconclusive",
        gaps=("not a git repository",),
        needs=frozenset({"git"}),
    ),
    Scenario(
        "logs-and-change",
        "a new KeyError right after a commit to the price formatter",
        _logs_and_change,
        "problems_found",
        findings=("20× KeyError", "1 commit"),
        needs=frozenset({"git"}),
    ),
)


# --- running and judging -------------------------------------------------------------------------


def available(prometheus_url: str | None) -> frozenset[str]:
    """What this machine offers the scenarios: ``git`` when installed, ``prometheus`` with a URL."""
    have = {"git"} if shutil.which("git") else set()
    if prometheus_url:
        have.add("prometheus")
    return frozenset(have)


def clean_env(root: Path, extra: dict[str, str]) -> dict[str, str]:
    """The environment of a CLI run: no DEVOPS_AGENT_* of the caller, data and config under ``root``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEVOPS_AGENT_")}
    env |= {
        "DEVOPS_AGENT_HOME": str(root / "home" / "data"),
        "XDG_CONFIG_HOME": str(root / "home" / "config"),
        "TZ": "UTC",
        "NO_COLOR": "1",
    }
    return env | extra


def _cli(built: Built, root: Path, prometheus_url: str | None) -> dict[str, Any]:
    argv = [sys.executable, "-m", "devops_agent", "investigate", "--json"]
    if built.question:
        argv.insert(4, built.question)
    for log in built.logs:
        argv += ["--logs", str(log)]
    if built.stdin is not None:
        argv += ["--logs", "-"]
    if built.repo is not None:
        argv += ["--repo", str(built.repo)]
    if built.since:
        argv += ["--since", built.since]
    if built.alert is not None:
        argv += ["--alert", str(built.alert)]
    extra = {"DEVOPS_AGENT_PROMETHEUS__URL": prometheus_url} if prometheus_url else {}
    env = clean_env(root, extra | built.env)
    proc = subprocess.run(
        argv, input=built.stdin or b"", capture_output=True, env=env, cwd=root, timeout=180, check=False
    )
    out = proc.stdout.decode("utf-8", "replace")
    try:
        payload = json.loads(out)
    except ValueError:
        err = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        return {"error": f"exit {proc.returncode}: {err[-1] if err else out[:200]}"}
    report = payload.get("report")
    return report if isinstance(report, dict) else {"error": f"no report (status {payload.get('status')})"}


def _service(built: Built, root: Path, prometheus_url: str | None) -> dict[str, Any]:
    from devops_agent.agent.session import SessionService
    from devops_agent.cli.context import with_roots
    from devops_agent.config import Settings
    from devops_agent.store import Store

    url = f"sqlite:///{root / 'store.db'}"
    settings = Settings(
        database_url=url,
        data_dir=root / "data",
        model={"name": None},
        files={"roots": []},
        prometheus={"url": prometheus_url or "http://127.0.0.1:9"},
    )
    paths = [*built.logs, *([built.repo] if built.repo else [])]
    settings = with_roots(settings, paths)
    inputs: dict[str, Any] = {"question": built.question}
    if built.logs:
        inputs["logs"] = [str(p) for p in built.logs]
    if built.repo is not None:
        inputs["repo"] = str(built.repo)
    if built.since:
        inputs["since"] = built.since
    if built.query:
        inputs["query"] = built.query
    if built.runbooks:
        inputs["runbooks"] = built.runbooks
    with Store(url) as store:
        _events, final = asyncio.run(SessionService(settings, store).run(built.question, inputs=inputs))
    if final.report is None:
        return {"error": f"no report (status {final.status}: {final.output})"}
    return final.report


def run(scenario: Scenario, root: Path, prometheus_url: str | None = None) -> dict[str, Any]:
    """Build ``scenario`` under ``root`` and investigate it as the CLI does; the report as JSON."""
    root.mkdir(parents=True, exist_ok=True)
    built = scenario.build(Context(root, datetime.now(UTC), prometheus_url))
    if built.cli or built.alert is not None or built.stdin is not None:
        return _cli(built, root, prometheus_url)
    return _service(built, root, prometheus_url)


@dataclass
class Outcome:
    """How a report compares with its scenario's expectation."""

    scenario: str
    expected: str
    verdict: str | None
    missed: list[str] = field(default_factory=list)
    error: str | None = None

    @property
    def false_all_clear(self) -> bool:
        return self.verdict == "all_clear" and self.expected != "all_clear"

    @property
    def ok(self) -> bool:
        return self.error is None and self.verdict == self.expected and not self.missed


def _texts(items: Any, *keys: str) -> list[str]:
    return [" ".join(str(i.get(k) or "") for k in keys) for i in items or [] if isinstance(i, dict)]


def judge(scenario: Scenario, report: dict[str, Any]) -> Outcome:
    """The verdict, and each expected finding, gap or read count that the report lacks."""
    if "error" in report:
        return Outcome(scenario.name, scenario.verdict, None, error=str(report["error"]))
    titles = _texts(report.get("findings"), "title")
    details = _texts(report.get("findings"), "title", "detail")
    reasons = _texts(report.get("gaps"), "reason")
    missed = [f"finding: {want}" for want in scenario.findings if not any(want in t for t in titles)]
    missed += [f"gap: {want}" for want in scenario.gaps if not any(want in r for r in reasons)]
    missed += [f"absent: {bad}" for bad in scenario.absent if any(bad in t for t in details)]
    checks = report.get("checks") or []
    for unit, count in scenario.reads:
        got = sum(int(c.get("read") or 0) for c in checks if c.get("unit") == unit)
        if got != count or not any(c.get("unit") == unit for c in checks):
            missed.append(f"read: {count} {unit} (got {got})")
    return Outcome(scenario.name, scenario.verdict, report.get("verdict") or _old_verdict(report), missed)


def _old_verdict(report: dict[str, Any]) -> str | None:
    """The verdict a report from before the ``verdict`` field claimed, read from its summary (to
    measure an older version with the same scenarios)."""
    summary = str(report.get("summary") or "")
    if summary.startswith("No findings") and "could not be gathered" in summary:
        return "inconclusive"  # it said nothing was found, but also that something was not read
    if summary.startswith(("No problems found", "No findings")):
        return "all_clear"
    if summary.startswith("Found "):
        return "problems_found"
    return None
