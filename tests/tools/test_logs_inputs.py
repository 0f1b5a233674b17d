"""Log inputs a user meets that the happy path does not: padding, unreadable files, pipes, other
JSON schemas. Real files in ``tmp_path``, the real tools and the real CLI in a subprocess.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devops_agent.analysis import TemplateMiner, extract_message, extract_timestamp, group_lines, logsummary
from devops_agent.analysis.logline import normalize_level
from devops_agent.analysis.logshape import with_status_phrase
from devops_agent.config import Settings
from devops_agent.config.settings import FileSettings
from devops_agent.report import Finding
from devops_agent.runbooks.analyzers.base import ANALYZERS
from devops_agent.tools import logfiles, logs
from devops_agent.tools.base import ToolEntry, ToolResult
from fixtures_cli import cli, cli_process
from fixtures_knowledge import unprivileged

ERRORS = b"".join(
    b"2026-11-25 10:00:%02d ERROR payment gateway timeout order=%d\n" % (i, i) for i in range(50)
)


def tools_for(root: Path) -> dict[str, ToolEntry]:
    return logs.build(Settings(files=FileSettings(roots=[root]))).entries


def call(root: Path, name: str, **args: Any) -> ToolResult:
    entry = tools_for(root)[name]
    result = entry.function(**entry.bind_args(args).arguments)
    assert isinstance(result, ToolResult)
    return result


# --- padding, permissions, links, corrupt gzip ------------------------------------------------


def test_nul_padding_left_by_copytruncate_is_skipped_not_taken_for_binary(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_bytes(b"\0" * 20_000 + ERRORS)
    result = call(tmp_path, "logs_errors", paths=[str(log)])
    assert result.status == "success", result.hint
    assert result.data["error_lines"] == 50
    assert result.data["skipped"] == []
    [group] = result.data["groups"]
    assert group["examples"][0].startswith("2026-11-25 10:00:00 ERROR payment gateway timeout")
    # with a time window the bisection must not land inside the padding either
    windowed = call(tmp_path, "logs_errors", paths=[str(log)], since="2026-11-25T10:00:10Z")
    assert windowed.data["error_lines"] == 40
    # and a file that is nothing but a hole is empty, not binary
    (tmp_path / "hole.log").write_bytes(b"\0" * 9000)
    assert logfiles.unreadable(tmp_path / "hole.log") is None


def test_a_directory_whose_files_cannot_be_read_fails_and_names_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "root"
    (root / "logs").mkdir(parents=True)
    outside = tmp_path / "outside.log"
    outside.write_bytes(ERRORS)
    (root / "logs" / "linked.log").symlink_to(outside)
    result = call(root, "logs_errors", paths=[str(root / "logs")])
    assert result.status == "error"  # a gap in a report, never "no errors found"
    assert "no log file could be read" in (result.error or "")
    assert result.metadata["skipped"] == [
        f"{root / 'logs' / 'linked.log'} (a link outside the allowed roots)"
    ]
    # a file the user may not read (tests may run as root, who reads anything: ask os.access)
    (root / "logs" / "app.log").write_bytes(ERRORS)
    real_access = os.access
    monkeypatch.setattr(
        logfiles.os, "access", lambda p, mode: not str(p).endswith("app.log") and real_access(p, mode)
    )
    result = call(root, "logs_errors", paths=[str(root / "logs")])
    assert result.status == "error"
    assert f"{root / 'logs' / 'app.log'} (permission denied)" in result.metadata["skipped"]
    assert call(root, "logs_patterns", paths=[str(root / "logs")]).status == "error"


def test_a_truncated_gzip_counts_what_was_read_and_the_report_says_it_is_incomplete(tmp_path: Path) -> None:
    data = gzip.compress(
        b"".join(b"2026-11-25 10:00:%02d ERROR db down id=%d\n" % (i % 60, i) for i in range(20000))
    )
    (tmp_path / "old.log.gz").write_bytes(data[: len(data) // 2])
    result = call(tmp_path, "logs_errors", paths=[str(tmp_path / "old.log.gz")])
    assert result.status == "success"
    assert 0 < result.data["error_lines"] < 20000
    [skipped] = result.data["skipped"]
    assert skipped.startswith(f"{tmp_path / 'old.log.gz'} (read failed:")
    result.metadata.update(tool="logs_errors", args={}, step="log-errors/errors")
    findings = ANALYZERS["log_error_groups"]({"errors": result}, {}, {})
    incomplete = [
        f for f in findings if isinstance(f, Finding) and f.title == "1 log input could not be read"
    ]
    assert [f.severity for f in incomplete] == ["low"]
    assert incomplete[0].evidence == [skipped]


def test_investigate_on_a_padded_log_reports_its_errors(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_bytes(b"\0" * 4096 + ERRORS)
    (tmp_path / "cfg.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    proc = cli(
        "--config",
        str(tmp_path / "cfg.toml"),
        "investigate",
        "errors in logs",
        "--logs",
        str(tmp_path / "app.log"),
    )
    assert proc.returncode == 0, proc.stderr
    assert "50× payment gateway timeout order=<VAL>" in proc.stdout
    assert "No problems found" not in proc.stdout


# --- the CLI: permissions, pipes, byte-order marks, windows -----------------------------------


def test_patterns_reads_process_substitution_and_named_pipes(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_bytes(ERRORS)
    proc = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -m devops_agent logs patterns --json <(cat app.log) app.log'],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["files_scanned"] == 2
    assert data["lines"] == 100
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    writer = subprocess.Popen(["bash", "-c", f"cat app.log > {fifo}"], cwd=tmp_path)
    try:
        proc = cli_process("logs", "patterns", "--json", str(fifo))  # a pipe: a process of its own
    finally:
        writer.wait(timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["lines"] == 50


def test_patterns_on_a_path_it_cannot_look_at_is_a_one_line_error(tmp_path: Path) -> None:
    proc = cli("logs", "patterns", str(tmp_path / "missing.log"))
    assert proc.returncode == 2
    assert "does not exist" in proc.stderr
    assert "Traceback" not in proc.stderr
    (tmp_path / "a.log").write_bytes(ERRORS)
    backwards = cli("logs", "patterns", str(tmp_path / "a.log"), "--since", "1h", "--until", "2h")
    assert backwards.returncode == 2
    assert "since is after until" in backwards.stderr


def test_patterns_is_not_fooled_by_a_byte_order_mark(tmp_path: Path) -> None:
    log = tmp_path / "bom.jsonl"
    log.write_bytes(
        b'\xef\xbb\xbf{"time":"2026-11-25T10:00:00Z","level":"error","msg":"boom 1"}\n'
        b'{"time":"2026-11-25T10:00:01Z","level":"error","msg":"boom 2"}\n'
    )
    proc = cli("logs", "patterns", "--json", str(log))
    assert proc.returncode == 0, proc.stderr
    assert [(t["count"], t["template"]) for t in json.loads(proc.stdout)["templates"]] == [(2, "boom <*>")]


# --- other JSON logging schemas ---------------------------------------------------------------


def test_elastic_common_schema_serilog_and_journal_exports_are_understood() -> None:
    ecs = json.dumps(
        {
            "@timestamp": "2026-11-25T10:00:01.000Z",
            "log.level": "error",
            "message": "Payment provider rejected charge 7",
            "ecs.version": "1.6.0",
            "log": {"logger": "payments"},
        }
    )
    clef = json.dumps(
        {
            "@t": "2026-11-25T10:00:02.0000000Z",
            "@mt": "Charge {ChargeId} rejected",
            "@l": "Error",
            "ChargeId": 7,
        }
    )
    journal = json.dumps(
        {"__REALTIME_TIMESTAMP": "1795600000000000", "PRIORITY": "3", "MESSAGE": "unit failed"}
    )
    assert extract_message(ecs) == ("Payment provider rejected charge 7", "ERROR")
    assert extract_message(clef) == ("Charge {ChargeId} rejected", "ERROR")
    clef_ts = extract_timestamp(clef)
    assert clef_ts is not None
    assert clef_ts.second == 2
    journal_ts = extract_timestamp(journal)
    assert journal_ts is not None
    assert journal_ts.timestamp() == 1795600000.0
    assert normalize_level("Information") == "INFO"
    summary = group_lines((("ecs.jsonl", ecs) for _ in range(3)), errors_only=True)
    assert summary.error_lines == 3


# --- bursts and their ranking -----------------------------------------------------------------


def _timed(lines: list[tuple[datetime, str]]) -> list[tuple[str, str]]:
    return [("app.log", f"{t:%Y-%m-%dT%H:%M:%SZ} {m}") for t, m in sorted(lines, key=lambda x: x[0])]


def test_an_error_that_only_ever_appears_as_one_burst_is_a_spike() -> None:
    start = datetime(2026, 11, 25, 13, 0, tzinfo=UTC)
    lines = [(start + timedelta(seconds=i), "INFO request ok") for i in range(0, 7200, 5)]
    lines += [
        (start + timedelta(seconds=i), f"ERROR cache refresh failed key=k{i}") for i in range(0, 7200, 180)
    ]
    burst = datetime(2026, 11, 25, 14, 5, tzinfo=UTC)
    lines += [
        (burst + timedelta(seconds=5 * j), f"ERROR payment gateway returned 503 order={j}") for j in range(8)
    ]
    summary = group_lines(_timed(lines), errors_only=True)
    groups = {g.shape: g for g in summary.groups}
    payment = groups["payment gateway returned <NUM> order=<VAL>"]
    assert payment.spike
    assert payment.spike_start == burst
    assert not groups["cache refresh failed key=<VAL>"].spike  # steady: 1-2 per bucket


def test_error_signatures_rank_a_burst_above_a_one_off_and_sparse_errors() -> None:
    start = datetime(2026, 11, 25, 13, 0, tzinfo=UTC)
    lines = [(start + timedelta(seconds=i), f"INFO request handled id={i}") for i in range(0, 7200, 5)]
    lines += [
        (start + timedelta(seconds=i), f"ERROR db connection timeout after {1000 + i}ms")
        for i in range(0, 7200, 600)
    ]
    burst = datetime(2026, 11, 25, 14, 5, tzinfo=UTC)
    lines += [
        (burst + timedelta(seconds=2 * j), f"ERROR payment gateway returned 503 for order {j}")
        for j in range(60)
    ]
    lines += [(start + timedelta(minutes=30), "ERROR cron job cleanup exited with status 1")]
    data = logsummary.mine_templates(_timed(lines), TemplateMiner())
    ranked = [(e["template"], e["burst"]) for e in data["error_signatures"]]
    assert ranked[0][0] == "payment gateway returned <*> for order <*>"
    assert ranked[0][1] > 10
    assert dict(ranked)["cron job cleanup exited with status <*>"] == 1.0  # one line is no burst
    assert dict(ranked)["db connection timeout after <*>"] == 1.0


# --- records that span lines ------------------------------------------------------------------


def test_docker_json_tracebacks_and_java_exception_lines_fold_into_one_error() -> None:
    frames = [
        "2026-11-25 10:0{i}:00,000 ERROR app: unhandled error in handler\n",
        "Traceback (most recent call last):\n",
        '  File "/srv/app/h.py", line 12, in handle\n',
        "    return 1/x\n",
        "ZeroDivisionError: division by zero\n",
    ]
    docker = [
        (
            "c.log",
            json.dumps({"log": f.format(i=i), "stream": "stderr", "time": f"2026-11-25T10:0{i}:00.{j:09d}Z"}),
        )
        for i in range(6)
        for j, f in enumerate(frames)
    ]
    [group] = group_lines(docker).groups
    assert (group.count, group.shape) == (
        6,
        "app: unhandled error in handler | ZeroDivisionError: division by zero",
    )
    java: list[tuple[str, str]] = []
    for i in range(5):
        java += [
            (
                "j.log",
                f"2026-11-25 10:0{i}:00,000 ERROR [main] c.e.OrderService - Failed to process order {i}",
            ),
            ("j.log", "java.lang.IllegalStateException: Order in bad state"),
            ("j.log", "\tat com.example.OrderService.process(OrderService.java:42)"),
            ("j.log", "Caused by: java.sql.SQLTimeoutException: query timed out after 30s"),
        ]
    [group] = group_lines(java).groups
    assert group.count == 5
    assert group.shape.endswith("| Caused by: java.sql.SQLTimeoutException: query timed out after <DUR>")
    # an exception line after an INFO record is a record of its own, as before
    info = [("i.log", "2026-11-25 10:00:00 INFO started"), ("i.log", "java.lang.IllegalStateException: boom")]
    assert group_lines(info, errors_only=False).matched_lines == 2
    assert len(group_lines(info, errors_only=False).groups) == 2


def test_cri_partial_lines_are_joined_with_their_final_part() -> None:
    lines = [
        ("pod.log", "2026-11-25T10:00:00.000000001Z stderr P 2026-11-25 10:00:00 ERROR connection to db-1 "),
        ("pod.log", "2026-11-25T10:00:00.000000002Z stderr P refused "),
        ("pod.log", "2026-11-25T10:00:00.000000003Z stderr F after 3 retries"),
        ("pod.log", "2026-11-25T10:00:01.000000000Z stdout F 2026-11-25 10:00:01 INFO ok"),
    ]
    [group] = group_lines(lines).groups
    assert group.shape == "connection to <ID> refused after <NUM> retries"
    data = logsummary.mine_templates(iter(lines), TemplateMiner())
    assert data["lines"] == 2


def test_patterns_folds_stack_traces_into_the_record_above() -> None:
    lines: list[tuple[str, str]] = []
    for i, exc in enumerate(["ZeroDivisionError: division by zero", "KeyError: 'user'"] * 3):
        lines += [
            ("a.log", f"2026-11-25 10:0{i}:00,000 ERROR app: request failed"),
            ("a.log", "Traceback (most recent call last):"),
            ("a.log", f'  File "/srv/app/h.py", line {10 + i}, in handle'),
            ("a.log", "    return work(x)"),
            ("a.log", exc),
            ("a.log", f"2026-11-25 10:0{i}:30,000 INFO request ok"),
        ]
    data = logsummary.mine_templates(iter(lines), TemplateMiner())
    assert (data["lines"], data["continuation_lines"]) == (12, 24)
    assert {t["template"] for t in data["templates"]} == {"app: request failed", "request ok"}


def test_patterns_keeps_an_access_logs_statuses_apart() -> None:
    lines = [
        (
            "access.log",
            f'10.0.0.{i % 9} - - [25/Nov/2026:10:00:{i:02d} +0000] "GET /api/items/{i} HTTP/1.1" '
            f'{500 if i % 5 == 0 else 200} 512 "-" "curl/8.0"',
        )
        for i in range(40)
    ]
    data = logsummary.mine_templates(iter(lines), TemplateMiner())
    assert [(t["count"], t["template"]) for t in data["templates"]] == [
        (32, "GET <*> OK"),
        (8, "GET <*> Internal Server Error"),
    ]
    assert [e["template"] for e in data["error_signatures"]] == ["GET <*> Internal Server Error"]
    assert with_status_phrase("GET /x HTTP/1.1 599") == "GET /x HTTP/1.1 599 status 5xx"
    assert with_status_phrase("disk 100% full 500") == "disk 100% full 500"


def test_a_time_window_over_a_file_not_in_time_order_reads_it_whole(tmp_path: Path) -> None:
    def hour(h: int) -> list[str]:
        start = datetime(2026, 11, 25, h, tzinfo=UTC)
        return [
            f"{start + timedelta(seconds=i):%Y-%m-%d %H:%M:%S} ERROR hour{h} failure id={i}"
            for i in range(3600)
        ]

    log = tmp_path / "all.log"  # cat app.log app.log.1 > all.log: noon first, then ten o'clock
    log.write_text("\n".join(hour(12) + hour(10)) + "\n")
    result = call(tmp_path, "logs_errors", paths=[str(log)], since="2026-11-25T10:30:00Z")
    assert result.data["error_lines"] == 1800 + 3600
    tail = call(tmp_path, "logs_tail", path=str(log), lines=5000, until="2026-11-25T10:59:59Z")
    [file] = tail.data["files"]
    assert file["lines"][-1].startswith("2026-11-25 10:59:59")
    assert sum(1 for line in file["lines"] if line.startswith("2026-11-25 12:")) == 0


def test_a_burst_over_two_buckets_is_a_spike_against_the_quiet_around_it() -> None:
    start = datetime(2026, 11, 25, 13, 0, tzinfo=UTC)
    lines = [(start + timedelta(seconds=i), f"INFO request handled id={i}") for i in range(0, 7200, 5)]
    burst = datetime(2026, 11, 25, 14, 5, tzinfo=UTC)
    lines += [
        (burst + timedelta(seconds=2 * j), f"ERROR payment gateway returned 503 for order {j}")
        for j in range(60)
    ]
    [group] = group_lines(_timed(lines)).groups
    assert group.spike  # 30 and 30 in two one-minute buckets, nothing else in two hours
    assert group.spike_description == "30 of 60 in the minute from 14:05 UTC"


def test_investigate_reads_a_pipe_through_a_temporary_copy_it_removes(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_bytes(ERRORS)
    (tmp_path / "cfg.toml").write_text(f'data_dir = "{tmp_path / "data"}"\n')
    proc = subprocess.run(
        [
            "bash",
            "-c",
            f'"{sys.executable}" -m devops_agent --config cfg.toml investigate "errors in logs" '
            "--logs <(cat app.log) --json",
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.dumps(json.loads(proc.stdout), ensure_ascii=False)
    assert "50× payment gateway timeout" in report
    [spooled] = set(re.findall(r"/\S*devops-agent-logs-[^/]+/[\w.-]+\.log", report))
    assert not Path(spooled).exists()


def test_logfmt_keeps_the_error_field_with_the_message() -> None:
    line = 'time=2026-11-25T10:00:00Z level=error msg="failed to reconcile object" error="context deadline exceeded"'
    assert extract_message(line) == ("failed to reconcile object: context deadline exceeded", "ERROR")
    assert extract_message("level=error msg=boom err=timeout") == ("boom: timeout", "ERROR")
    assert extract_message('level=info msg="retrying" xerror=1') == ("retrying", "INFO")


_ERRORS_TOOL = """
import json, sys
from pathlib import Path
from devops_agent.config import Settings
from devops_agent.config.settings import FileSettings
from devops_agent.tools import logs
root = Path(sys.argv[1])
entry = logs.build(Settings(files=FileSettings(roots=[root]))).entries["logs_errors"]
r = entry.function(**entry.bind_args({"paths": [str(root)]}).arguments)
print(json.dumps({"status": r.status, "errors": (r.data or {}).get("error_lines"), "skipped": (r.data or {}).get("skipped")}))
"""


def test_a_subdirectory_that_can_be_listed_but_not_entered_is_named_not_a_traceback(tmp_path: Path) -> None:
    root = tmp_path / "logs"
    (root / "sub").mkdir(parents=True)
    (root / "app.log").write_bytes(ERRORS)
    (root / "sub" / "old.log").write_bytes(ERRORS)
    os.chmod(root / "sub", 0o644)  # what `chmod -R 644` leaves: readable, no execute bit
    try:
        got = unprivileged(_ERRORS_TOOL.replace("sys.argv[1]", repr(str(root))))
    finally:
        os.chmod(root / "sub", 0o755)
    assert got["status"] == "success"
    assert got["errors"] == 50
    assert got["skipped"] == [f"{root / 'sub' / 'old.log'} (cannot read: Permission denied)"]


_SEARCH_TOOL = """
import json, sys
from pathlib import Path
from devops_agent.config import Settings
from devops_agent.config.settings import FileSettings
from devops_agent.tools import files
root = Path(sys.argv[1])
entry = files.build(Settings(files=FileSettings(roots=[root]))).entries["files_grep"]
r = entry.function(**entry.bind_args({"pattern": "payment", "path": str(root)}).arguments)
print(json.dumps({"status": r.status, "data": r.data, "metadata": r.metadata}, default=str))
"""


def test_files_grep_counts_a_directory_it_cannot_enter_instead_of_failing(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    (root / "sub").mkdir(parents=True)
    (root / "app.log").write_bytes(ERRORS)
    (root / "sub" / "old.log").write_bytes(ERRORS)
    os.chmod(root / "sub", 0o644)
    try:
        got = unprivileged(_SEARCH_TOOL.replace("sys.argv[1]", repr(str(root))))
    finally:
        os.chmod(root / "sub", 0o755)
    assert got["status"] == "success"
    assert {m["file"] for m in got["data"]["matches"]} == {str(root / "app.log")}
    assert got["data"]["skipped"]["unreadable"] == 1
