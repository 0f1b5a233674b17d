"""The ``logs`` toolset on real files: syslog, JSON lines, Python, nginx, Kubernetes, gzip.

Every fixture is a real file written into ``tmp_path`` in the format the daemon writes. The only
stand-in is a ``journalctl`` script for the success path of ``logs_journal``: this machine has no
journal to read, so the script prints entries in journald's own JSON export format.

And the tools as a model calls them: ranked results through the real output cap, a regular
expression that would hang the process, big .gz files, unreadable inputs, directories with more
logs than a call reads.
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devops_agent.analysis import TemplateMiner, logsummary
from devops_agent.config import Settings
from devops_agent.config.settings import FileSettings
from devops_agent.tools import logs
from devops_agent.tools.base import ToolEntry
from devops_agent.tools.registry import ToolRegistry
from fixtures_logs import call_entry, log_tools

MAX_READ = 64 * 1024


def local(dt: datetime) -> datetime:
    """A naive wall-clock time, as syslog and Python logging write it, in UTC."""
    return dt.astimezone(UTC)


# --- fixture logs -----------------------------------------------------------------------------

# Yesterday, so that year-less syslog stamps resolve to the right year and nothing is in the future.
DAY = (datetime.now() - timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
BURST = DAY.replace(hour=14, minute=5)


def write_syslog(path: Path) -> None:
    """Two hours of noise, one error every 15 minutes, and a burst of 43 between 14:05 and 14:10."""
    events: list[tuple[datetime, str]] = []
    base = DAY.replace(hour=13)
    for i in range(240):
        t = base + timedelta(seconds=30 * i)
        events.append((t, f"web1 nginx[{900 + i % 7}]: served request {i} in {i % 40}ms"))
        if i % 30 == 25:
            events.append((t, f"web1 app[77]: upstream timed out connecting to 10.0.0.{i}:5432"))
    for j in range(43):
        events.append(
            (
                BURST + timedelta(seconds=6 * j),
                f"web1 app[77]: upstream timed out connecting to 10.0.1.{j}:5432",
            )
        )
    events.sort(key=lambda e: e[0])
    path.write_text("".join(f"{t:%b %d %H:%M:%S} {rest}\n" for t, rest in events))


def write_json_log(path: Path) -> None:
    t0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    lines = []
    for i in range(30):
        t = t0 + timedelta(minutes=i)
        stamp = t.isoformat().replace("+00:00", "Z")
        if i % 10 == 3:
            lines.append(
                f'{{"time":"{stamp}","level":"error","msg":"payment {1000 + i} declined","error":"card expired"}}'
            )
        else:
            lines.append(f'{{"time":"{stamp}","level":"info","msg":"payment {1000 + i} accepted"}}')
    path.write_text("\n".join(lines) + "\n")


PY_LOG = """\
2026-11-20 10:00:00,001 INFO [worker] starting job 41
2026-11-20 10:00:01,002 ERROR [worker] job 41 crashed
Traceback (most recent call last):
  File "/app/worker.py", line 10, in run
    value = int(raw)
ValueError: invalid literal for int() with base 10: 'abc'
2026-11-20 10:02:00,003 INFO [worker] starting job 42
2026-11-20 10:05:01,004 ERROR [worker] job 42 crashed
Traceback (most recent call last):
  File "/app/worker.py", line 10, in run
    value = int(raw)
ValueError: invalid literal for int() with base 10: 'xyz'
2026-11-20 10:07:00,000 INFO [worker] done
"""


def write_access_log(path: Path) -> None:
    t0 = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
    lines = []
    for i in range(60):
        t = t0 + timedelta(seconds=20 * i)
        status = 502 if i % 12 == 5 else 200
        lines.append(
            f'10.0.0.{i % 9} - - [{t:%d/%b/%Y:%H:%M:%S} +0000] "GET /api/orders/{500 + i}?v=2 HTTP/1.1" '
            f'{status} {120 + i} "-" "curl/8.5"'
        )
    path.write_text("\n".join(lines) + "\n")


K8S_LOG = """\
2026-11-20T11:00:00.000000001Z stdout F 2026-11-20 11:00:00,000 INFO ready on :8080
2026-11-20T11:00:05.123456789Z stderr F 2026-11-20 11:00:05,123 ERROR cache node 10.1.0.4 unreachable
2026-11-20T11:00:06.000000000Z stderr F 2026-11-20 11:00:06,000 ERROR cache node 10.1.0.9 unreachable
"""

ROTATED = """\
2026-11-19T08:00:00Z ERROR disk /dev/sda1 is 97% full
2026-11-19T08:10:00Z INFO cleanup started
2026-11-19T08:20:00Z ERROR disk /dev/sdb1 is 99% full
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    base = tmp_path / "logs"
    (base / "nginx").mkdir(parents=True)
    (base / "pods" / "shop_web-7d9f8c6b5-x2k4q" / "web").mkdir(parents=True)
    write_syslog(base / "syslog")
    write_json_log(base / "app.jsonl")
    (base / "worker.log").write_text(PY_LOG)
    write_access_log(base / "nginx" / "access.log")
    (base / "pods" / "shop_web-7d9f8c6b5-x2k4q" / "web" / "0.log").write_text(K8S_LOG)
    with gzip.open(base / "app.log.1.gz", "wt") as fh:
        fh.write(ROTATED)
    (base / "wtmp").write_bytes(b"\x00\x01\x02 error failed \x00" * 100)
    return base


@pytest.fixture
def tools(root: Path) -> dict[str, ToolEntry]:
    settings = Settings(files=FileSettings(roots=[root], max_read_bytes=MAX_READ))
    return logs.build(settings).entries


# --- toolset shape ----------------------------------------------------------------------------


def test_toolset_specs_and_registration(root: Path) -> None:
    ts = logs.build(Settings(files=FileSettings(roots=[root])))
    assert set(ts.entries) == {"logs_tail", "logs_search", "logs_errors", "logs_patterns", "logs_journal"}
    for entry in ts.entries.values():
        assert entry.spec.category == "logs"
        assert entry.spec.read_only is True
        assert entry.spec.risk == "sensitive"
        assert entry.description
    registry = ToolRegistry()
    logs.register(registry)
    assert "logs" in registry.toolsets
    built = registry.build(Settings(files=FileSettings(roots=[root])))
    assert set(built["logs"].entries) == set(ts.entries)
    ts.to_pydantic_ai()  # the signatures and docstrings make valid pydantic-ai tools


# --- logs_tail --------------------------------------------------------------------------------


def test_tail_a_file(tools: dict[str, ToolEntry], root: Path) -> None:
    result = call_entry(tools, "logs_tail", path=str(root / "worker.log"), lines=3)
    assert result.status == "success"
    (only,) = result.data["files"]
    assert only["lines"] == PY_LOG.splitlines()[-3:]
    assert only["truncated"] is False


def test_tail_a_gzip_file(tools: dict[str, ToolEntry], root: Path) -> None:
    result = call_entry(tools, "logs_tail", path=str(root / "app.log.1.gz"), lines=2)
    assert result.data["files"][0]["lines"] == ROTATED.splitlines()[-2:]


def test_tail_a_directory_takes_the_newest_log_files(tools: dict[str, ToolEntry], root: Path) -> None:
    many = root / "many"
    many.mkdir()
    for i in range(7):
        f = many / f"svc{i}.log"
        f.write_text(f"2026-11-20T10:00:0{i}Z INFO svc {i} up\n")
        os.utime(f, (1_700_000_000 + i, 1_700_000_000 + i))
    (many / "notes.txt").write_text("not a log\n")
    result = call_entry(tools, "logs_tail", path=str(many), lines=10)
    names = [Path(f["path"]).name for f in result.data["files"]]
    assert names == ["svc6.log", "svc5.log", "svc4.log", "svc3.log", "svc2.log"]


def test_tail_since_until_with_inherited_timestamps(tools: dict[str, ToolEntry], root: Path) -> None:
    since = local(datetime(2026, 11, 20, 10, 5)).isoformat()
    result = call_entry(tools, "logs_tail", path=str(root / "worker.log"), since=since)
    lines = result.data["files"][0]["lines"]
    assert lines[0] == "2026-11-20 10:05:01,004 ERROR [worker] job 42 crashed"
    # The traceback lines have no timestamp: they inherit 10:05:01 and stay with their record.
    assert "ValueError: invalid literal for int() with base 10: 'xyz'" in lines
    assert len(lines) == 6
    until = local(datetime(2026, 11, 20, 10, 1)).isoformat()
    early = call_entry(tools, "logs_tail", path=str(root / "worker.log"), until=until).data["files"][0][
        "lines"
    ]
    assert early == PY_LOG.splitlines()[:6]


def test_tail_reads_a_bounded_window_of_a_big_file(tools: dict[str, ToolEntry], root: Path) -> None:
    big = root / "big.log"
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    with big.open("w") as fh:
        for i in range(40_000):
            fh.write(f"{t0 + timedelta(seconds=i):%Y-%m-%dT%H:%M:%SZ} INFO line {i} of the big file\n")
    assert big.stat().st_size > 10 * MAX_READ
    tail = call_entry(tools, "logs_tail", path=str(big), lines=5).data["files"][0]
    assert tail["truncated"] is True
    assert tail["lines"][-1].endswith("INFO line 39999 of the big file")
    # until reaches back into the file by bisection, far beyond the last MAX_READ bytes.
    until = (t0 + timedelta(seconds=1000)).isoformat()
    old = call_entry(tools, "logs_tail", path=str(big), lines=3, until=until).data["files"][0]["lines"]
    assert [line.split()[3] for line in old] == ["998", "999", "1000"]


# --- logs_search ------------------------------------------------------------------------------


def test_search_regex_literal_and_case(tools: dict[str, ToolEntry], root: Path) -> None:
    hits = call_entry(tools, "logs_search", path=str(root / "app.jsonl"), pattern=r"payment 10\d3 declined")
    assert hits.status == "success"
    assert hits.data["total_matches"] == 3
    assert all("declined" in m["line"] for m in hits.data["matches"])
    literal = call_entry(tools, "logs_search", path=str(root / "worker.log"), pattern="int(raw)", regex=False)
    assert literal.data["total_matches"] == 2
    strict = call_entry(
        tools, "logs_search", path=str(root / "worker.log"), pattern="VALUEERROR", ignore_case=False
    )
    assert strict.status == "no_data"
    loose = call_entry(tools, "logs_search", path=str(root / "worker.log"), pattern="VALUEERROR")
    assert loose.data["total_matches"] == 2


def test_search_a_directory_with_a_limit(tools: dict[str, ToolEntry], root: Path) -> None:
    result = call_entry(tools, "logs_search", path=str(root), pattern=r'" 502 ', limit=2)
    assert result.data["total_matches"] == 5
    assert result.data["shown"] == 2
    assert {Path(m["file"]).name for m in result.data["matches"]} == {"access.log"}
    gz = call_entry(tools, "logs_search", path=str(root), pattern="is 9[79]% full")
    assert gz.data["total_matches"] == 2


def test_search_bad_regex_is_an_error_with_a_hint(tools: dict[str, ToolEntry], root: Path) -> None:
    result = call_entry(tools, "logs_search", path=str(root / "syslog"), pattern="(unclosed")
    assert result.status == "error"
    assert result.hint is not None
    assert "regex=false" in result.hint


def test_search_since_reaches_the_start_of_a_big_file(tools: dict[str, ToolEntry], root: Path) -> None:
    big = root / "big.log"
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    with big.open("w") as fh:
        for i in range(40_000):
            level = "ERROR" if i == 50 else "INFO"
            fh.write(f"{t0 + timedelta(seconds=i):%Y-%m-%dT%H:%M:%SZ} {level} event {i}\n")
    recent_only = call_entry(tools, "logs_search", path=str(big), pattern="ERROR")
    assert recent_only.status == "no_data"
    assert recent_only.metadata["truncated_files"] == [str(big.resolve())]
    found = call_entry(tools, "logs_search", path=str(big), pattern="ERROR", since=t0.isoformat())
    assert found.data["matches"][0]["line"].endswith("ERROR event 50")


# --- logs_errors ------------------------------------------------------------------------------


def test_errors_over_a_directory(tools: dict[str, ToolEntry], root: Path) -> None:
    result = call_entry(tools, "logs_errors", paths=[str(root)])
    assert result.status == "success"
    data = result.data
    groups = {g["shape"]: g for g in data["groups"]}
    upstream = groups["app: upstream timed out connecting to <IP>"]
    assert upstream["count"] == 51
    assert upstream["spike"] is True
    assert upstream["bucket"] == "5 minutes"  # from the group's own span, not the 3 days of all files
    start = local(BURST)
    first, last = (
        local(DAY.replace(hour=13, minute=12, second=30)),
        local(DAY.replace(hour=14, minute=57, second=30)),
    )
    assert upstream["first_seen"] == first.isoformat().replace("+00:00", "Z")
    assert upstream["last_seen"] == last.isoformat().replace("+00:00", "Z")
    when = start.strftime("%H:%M" if first.date() == last.date() else "%Y-%m-%d %H:%M")
    assert upstream["spike_description"] == f"43 of 51 in the 5 minutes from {when} UTC"
    assert data["groups"][0]["shape"] == upstream["shape"]  # ranked by count

    assert groups["GET /api/orders/<NUM>?<QUERY> HTTP/1.1 502"]["count"] == 5
    crash = groups[
        "[worker] job <NUM> crashed | ValueError: invalid literal for int() with base <NUM>: <STR>"
    ]
    assert crash["count"] == 2
    assert crash["first_seen"] == local(datetime(2026, 11, 20, 10, 0, 1, 2000)).isoformat().replace(
        "+00:00", "Z"
    )
    assert groups["payment <NUM> declined: card expired"]["count"] == 3
    assert groups["cache node <IP> unreachable"]["count"] == 2
    assert groups["disk <PATH> is <NUM>% full"]["count"] == 2  # from the .gz
    assert data["error_lines"] == 51 + 5 + 2 + 3 + 2 + 2
    assert data["files_scanned"] == 6
    assert any("wtmp" in s for s in data["skipped"])
    assert data["spikes"]


def test_errors_since_until(tools: dict[str, ToolEntry], root: Path) -> None:
    since = local(BURST).isoformat()
    until = local(BURST + timedelta(minutes=4, seconds=59)).isoformat()
    result = call_entry(
        tools, "logs_errors", paths=[str(root / "syslog"), str(root / "worker.log")], since=since, until=until
    )
    (only,) = result.data["groups"]
    assert only["count"] == 43
    assert only["first_seen"] == since.replace("+00:00", "Z")


def test_errors_max_groups_and_no_errors(tools: dict[str, ToolEntry], root: Path) -> None:
    result = call_entry(tools, "logs_errors", paths=[str(root)], max_groups=2)
    assert result.data["groups_shown"] >= 2
    assert result.data["groups_total"] == 6
    assert result.data["records_in_hidden_groups"] > 0
    quiet = root / "quiet.log"
    quiet.write_text("2026-11-20T10:00:00Z INFO all good, 0 errors\n2026-11-20T10:01:00Z INFO still good\n")
    empty = call_entry(tools, "logs_errors", paths=[str(quiet)])
    assert empty.status == "no_data"
    assert empty.metadata["total_lines"] == 2
    assert "no errors in 2 lines" in (empty.hint or "")


def test_errors_read_whole_files_beyond_the_read_limit(tools: dict[str, ToolEntry], root: Path) -> None:
    big = root / "big.log"
    t0 = datetime(2026, 11, 1, tzinfo=UTC)
    with big.open("w") as fh:
        for i in range(60_000):
            level = "ERROR" if i % 1000 == 0 else "INFO"
            fh.write(f"{t0 + timedelta(seconds=i):%Y-%m-%dT%H:%M:%SZ} {level} batch {i} processed\n")
    assert big.stat().st_size > 30 * MAX_READ
    result = call_entry(tools, "logs_errors", paths=[str(big)])
    assert result.data["total_lines"] == 60_000
    assert result.data["groups"][0]["count"] == 60
    since = call_entry(
        tools, "logs_errors", paths=[str(big)], since=(t0 + timedelta(seconds=30_500)).isoformat()
    )
    assert since.data["groups"][0]["count"] == 29
    assert since.data["total_lines"] < 40_000  # bisection skipped the start of the file


# --- roots and bad input ----------------------------------------------------------------------


def test_paths_outside_the_roots_are_refused(tools: dict[str, ToolEntry], tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.log"
    outside.write_text("2026-11-20T10:00:00Z ERROR secret\n")
    for name, args in [
        ("logs_tail", {"path": str(outside)}),
        ("logs_search", {"path": str(outside), "pattern": "secret"}),
        ("logs_errors", {"paths": [str(outside)]}),
        ("logs_tail", {"path": str(tmp_path / "logs" / ".." / "elsewhere.log")}),
    ]:
        result = call_entry(tools, name, **args)
        assert result.status == "error", name
        assert "outside the allowed roots" in (result.error or "")
        assert result.hint is not None
        assert "files.roots" in result.hint


def test_symlinks_inside_a_root_do_not_lead_out(
    tools: dict[str, ToolEntry], root: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "secret.log"
    outside.write_text("2026-11-20T10:00:00Z ERROR leaked secret 1\n")
    (root / "link.log").symlink_to(outside)
    result = call_entry(tools, "logs_errors", paths=[str(root)])
    assert all("leaked" not in g["shape"] for g in result.data["groups"])
    direct = call_entry(tools, "logs_tail", path=str(root / "link.log"))
    assert direct.status == "error"


def test_missing_paths_and_bad_times(tools: dict[str, ToolEntry], root: Path) -> None:
    missing = call_entry(tools, "logs_tail", path=str(root / "nope.log"))
    assert missing.status == "error"
    assert "does not exist" in (missing.error or "")
    bad_time = call_entry(tools, "logs_errors", paths=[str(root)], since="last tuesday-ish")
    assert bad_time.status == "error"
    assert "15m" in (bad_time.hint or "")
    swapped = call_entry(tools, "logs_tail", path=str(root / "syslog"), since="1h", until="2h")
    assert swapped.status == "error"
    assert call_entry(tools, "logs_errors", paths=[]).status == "error"


# --- logs_journal -----------------------------------------------------------------------------


def _has_journal() -> bool:
    return any(
        any(d.glob("*.journal")) or any(d.glob("*/*.journal")) for d in logs.JOURNAL_DIRS if d.is_dir()
    )


def test_journal_on_this_host(tools: dict[str, ToolEntry]) -> None:
    result = call_entry(tools, "logs_journal", since="1h")
    if shutil.which("journalctl") and _has_journal():
        assert result.status in ("success", "no_data")
        if result.status == "success":
            assert {"time", "priority", "message"} <= set(result.data["entries"][0])
    else:
        assert result.status == "no_data"
        assert "journald is not available" in (result.hint or "")


def test_journal_without_journalctl(
    tools: dict[str, ToolEntry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    result = call_entry(tools, "logs_journal")
    assert result.status == "no_data"
    assert "journald is not available on this host (journalctl not found)" in (result.hint or "")


# journald's JSON export format (journalctl -o json): every value a string, MESSAGE may be a byte list.
JOURNAL_JSON = r"""{"__REALTIME_TIMESTAMP":"1763790901000000","PRIORITY":"3","_SYSTEMD_UNIT":"nginx.service","SYSLOG_IDENTIFIER":"nginx","_PID":"812","MESSAGE":"upstream 10.0.0.7:8080 timed out"}
{"__REALTIME_TIMESTAMP":"1763790902000000","PRIORITY":"3","_SYSTEMD_UNIT":"nginx.service","SYSLOG_IDENTIFIER":"nginx","_PID":"812","MESSAGE":"upstream 10.0.0.9:8080 timed out"}
{"__REALTIME_TIMESTAMP":"1763790903000000","PRIORITY":"2","_SYSTEMD_UNIT":"nginx.service","SYSLOG_IDENTIFIER":"nginx","_PID":"812","MESSAGE":[98,97,100,255]}
"""


def test_journal_parses_journalctl_json(
    tools: dict[str, ToolEntry], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (tmp_path / "out.json").write_text(JOURNAL_JSON)
    script = bin_dir / "journalctl"
    script.write_text(
        f'#!/bin/sh\nprintf "%s\\n" "$@" > "{tmp_path}/argv"\n{shutil.which("cat")} "{tmp_path}/out.json"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", str(bin_dir))
    result = call_entry(tools, "logs_journal", unit="nginx.service", since="2h", priority="err", lines=50)
    assert result.status == "success"
    entries = result.data["entries"]
    assert [e["priority"] for e in entries] == ["ERR", "ERR", "CRIT"]
    assert entries[0] == {
        "time": "2025-11-22T05:55:01Z",
        "unit": "nginx.service",
        "identifier": "nginx",
        "pid": "812",
        "priority": "ERR",
        "message": "upstream 10.0.0.7:8080 timed out",
    }
    assert entries[2]["message"] == "bad\ufffd"
    assert result.data["top_messages"][0] == {"shape": "upstream <IP> timed out", "count": 2}
    argv = (tmp_path / "argv").read_text().split()
    assert argv[:4] == ["-o", "json", "--no-pager", "-n"]
    assert argv[argv.index("-p") + 1] == "err"
    assert argv[argv.index("-u") + 1] == "nginx.service"
    since = int(argv[argv.index("--since") + 1].lstrip("@"))
    assert abs(since - (datetime.now(UTC) - timedelta(hours=2)).timestamp()) < 60


def test_journal_rejects_bad_arguments(tools: dict[str, ToolEntry]) -> None:
    assert call_entry(tools, "logs_journal", priority="loud").status == "error"
    assert call_entry(tools, "logs_journal", unit="--root=/").status == "error"
    assert call_entry(tools, "logs_journal", since="whenever").status == "error"


def test_summarize_log_condenses_only_long_logs() -> None:
    from devops_agent.analysis.logsummary import SUMMARY_MIN_LINES, SUMMARY_TAIL_LINES, summarize_log

    assert summarize_log("a\nb\n", "x") is None
    lines = [f"INFO fetched chunk {i} in {i % 7} ms" for i in range(SUMMARY_MIN_LINES)]
    lines += ["ERROR payment refused: card 1 declined by issuer", "INFO shutting down"]
    summary = summarize_log("\n".join(lines), "build-7")
    assert summary is not None
    assert summary["lines"] == SUMMARY_MIN_LINES + 2
    assert [s["examples"][0] for s in summary["error_signatures"]] == [lines[-2]]
    assert summary["other_templates"][0]["count"] == SUMMARY_MIN_LINES
    assert all("payment refused" not in t["template"] for t in summary["other_templates"])
    assert summary["tail"] == lines[-SUMMARY_TAIL_LINES:]


def test_mine_templates_dates_undated_lines_from_their_own_file_only() -> None:
    stamped = [("a.log", "2026-01-01T10:00:00Z api started"), ("a.log", "2026-01-01T10:00:05Z api ready")]
    undated = [("b.log", "worker started"), ("b.log", "worker crashed code 3")]
    for lines in (stamped + undated, undated + stamped):
        templates = logsummary.mine_templates(lines, TemplateMiner())["templates"]
        seen = {t["template"]: t["first_seen"] for t in templates}
        assert seen["worker started"] is None, lines
        assert seen["api ready"] == "2026-01-01T10:00:05Z"
    since = datetime(2026, 1, 1, 11, tzinfo=UTC)
    kept = [
        sorted(t["template"] for t in logsummary.mine_templates(order, TemplateMiner(), since)["templates"])
        for order in (stamped + undated, undated + stamped)
    ]
    assert kept[0] == kept[1], "--since keeps the same lines whatever the order of the files"
    # within one file an undated line (a continuation) still takes the previous line's time
    same_file = [("c.log", "2026-01-01T10:00:00Z job failed"), ("c.log", "  at worker.run")]
    views = logsummary.mine_templates(same_file, TemplateMiner())["templates"]
    assert all(v["first_seen"] == "2026-01-01T10:00:00Z" for v in views)


@pytest.mark.parametrize("compress", [True, False])
def test_read_stream_gunzips_a_gzip_stream(compress: bool) -> None:
    text = "".join(f"2026-01-01T10:00:{i:02d}Z worker {i} done\n" for i in range(20)) + "caf\xe9 \xff\n"
    data = text.encode("latin-1")
    lines, scanned, skipped = logs.read_stream(io.BytesIO(gzip.compress(data) if compress else data))
    got = [line for _source, line in lines]
    assert got[0] == "2026-01-01T10:00:00Z worker 0 done"
    assert len(got) == 21
    assert got[-1] == "caf\ufffd \ufffd", "bytes that are not UTF-8 are replaced, not fatal"
    assert (scanned, skipped) == (["stdin"], [])


def test_read_stream_reports_a_truncated_gzip_stream() -> None:
    data = gzip.compress(b"".join(b"line %d of a long log\n" % i for i in range(5000)))
    lines, _scanned, skipped = logs.read_stream(io.BytesIO(data[: len(data) // 2]))
    assert sum(1 for _ in lines) > 0
    assert len(skipped) == 1
    assert skipped[0].startswith("stdin (read failed:")


def test_patterns_tool_names_the_skipped_files_when_nothing_was_read(
    root: Path, tools: dict[str, ToolEntry]
) -> None:
    (root / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    result = call_entry(tools, "logs_patterns", paths=[str(root / "blob.bin")])
    assert result.status == "error"  # nothing read is a failure, not "no lines"
    assert result.metadata["skipped"] == [f"{root / 'blob.bin'} (binary)"]


T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "gamma", "harbor", "indigo", "jasper"]


def _stamp(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _ranked_errors_log(path: Path) -> None:
    """Ten error kinds, the first most frequent, each with a long message, among info lines."""
    lines = []
    for k, word in enumerate(WORDS):
        for j in range(20 - k):
            t = T0 + timedelta(seconds=60 * k + j)
            detail = f"{word} worker lost its lease on the {word} queue while draining the {word} backlog"
            lines.append(f"{_stamp(t)} ERROR {detail}; giving up and restarting the {word} consumer")
            lines.append(f"{_stamp(t)} INFO {word} heartbeat ok")
    lines.sort()
    path.write_text("\n".join(lines) + "\n")


def test_error_groups_over_the_output_cap_lose_their_smallest_groups(
    tmp_path: Path, through_pipeline: Any
) -> None:
    _ranked_errors_log(tmp_path / "app.log")
    tools = log_tools(tmp_path)
    full = call_entry(tools, "logs_errors", paths=[str(tmp_path)]).data
    assert [g["count"] for g in full["groups"]] == list(range(20, 10, -1))

    settings = Settings(tools={"output_cap_chars": 6_000})  # type: ignore[arg-type]
    res = through_pipeline(
        "logs_errors", tools["logs_errors"].function, {"paths": [str(tmp_path)]}, settings=settings
    )
    assert res.status == "success"
    assert isinstance(res.data, dict)  # still data, not JSON text cut in its middle
    shown = res.data["groups"]
    assert 1 <= len(shown) < len(full["groups"])
    assert [g["shape"] for g in shown] == [g["shape"] for g in full["groups"][: len(shown)]]
    assert res.metadata["omitted"] == {"groups": len(full["groups"]) - len(shown)}
    assert "lower-ranked groups left out" in (res.hint or "")
    assert res.data["error_lines"] == full["error_lines"]  # the counts survive the cut


def test_templates_and_error_signatures_over_the_cap_lose_their_lowest_ranks(
    tmp_path: Path, through_pipeline: Any
) -> None:
    _ranked_errors_log(tmp_path / "app.log")
    tools = log_tools(tmp_path)
    full = call_entry(tools, "logs_patterns", paths=[str(tmp_path)]).data

    settings = Settings(tools={"output_cap_chars": 8_000})  # type: ignore[arg-type]
    res = through_pipeline(
        "logs_patterns", tools["logs_patterns"].function, {"paths": [str(tmp_path)]}, settings=settings
    )
    assert res.status == "success"
    assert isinstance(res.data, dict)
    for key in ("templates", "error_signatures"):
        shown = [t["template"] for t in res.data[key]]
        assert shown
        assert shown == [t["template"] for t in full[key][: len(shown)]]
    assert sum(res.metadata["omitted"].values()) > 0
    assert res.data["templates_total"] == full["templates_total"]


def test_a_nested_repeat_is_refused_before_it_can_hang_the_process(tmp_path: Path) -> None:
    # (a+)+$ backtracks exponentially on a line of a's that does not end the way it wants, and
    # Python's re holds the GIL meanwhile, so no timeout stops it. This line is short enough to
    # fail fast without the check; a long one would hang the process.
    (tmp_path / "app.log").write_text(f"{_stamp(T0)} ERROR token {'a' * 18}b rejected from 10.1.2.3\n")
    tools = log_tools(tmp_path)
    for pattern in ("(a+)+$", r"(\w+\s?)*=", r"(?:x|a*)+!"):
        res = call_entry(tools, "logs_search", path=str(tmp_path / "app.log"), pattern=pattern)
        assert res.status == "error", pattern
        assert "repeats a group that itself repeats" in (res.error or "")
        assert "regex=false" in (res.hint or "")
    for pattern in (r"(\d{1,3}\.){3}\d{1,3}", r"(?>a+)+b", "a++b"):  # bounded, atomic, possessive
        assert (
            call_entry(tools, "logs_search", path=str(tmp_path / "app.log"), pattern=pattern).status
            == "success"
        )
    assert (
        call_entry(tools, "logs_search", path=str(tmp_path), pattern="(a+)+$", regex=False).status
        == "no_data"
    )


def _big_gzip(path: Path, minutes: int) -> list[str]:
    """A .gz of one line a second for ``minutes`` minutes, an error every 10 s; its lines."""
    lines = []
    for s in range(minutes * 60):
        t = _stamp(T0 + timedelta(seconds=s))
        if s % 10 == 0:
            lines.append(f"{t} ERROR checkout call {s} failed: connection reset by peer")
        else:
            lines.append(f"{t} INFO checkout call {s} served in {s % 90} ms")
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    return lines


def test_tail_of_a_big_gzip_gives_its_last_lines(tmp_path: Path) -> None:
    lines = _big_gzip(tmp_path / "app.log.1.gz", 60)  # ~220 KB of text, the budget is 20 KB
    tools = log_tools(tmp_path, max_read=1024)
    res = call_entry(tools, "logs_tail", path=str(tmp_path / "app.log.1.gz"), lines=3)
    assert res.status == "success"
    assert res.data["files"][0]["lines"] == lines[-3:]
    assert res.data["files"][0]["truncated"] is True


def test_a_window_late_in_a_big_gzip_is_found(tmp_path: Path) -> None:
    lines = _big_gzip(tmp_path / "app.log.1.gz", 60)
    tools = log_tools(tmp_path, max_read=1024)
    since = _stamp(T0 + timedelta(minutes=55))
    tail = call_entry(tools, "logs_tail", path=str(tmp_path), since=since, lines=2)
    assert tail.status == "success", tail.hint
    assert tail.data["files"][0]["lines"] == lines[-2:]
    found = call_entry(tools, "logs_search", path=str(tmp_path), pattern="connection reset", since=since)
    assert found.status == "success", found.hint
    assert found.data["total_matches"] == 30  # 5 minutes, one error every 10 s
    assert found.data["matches"][0]["line"].startswith(since)


def test_search_without_since_shows_the_latest_matches(tmp_path: Path) -> None:
    lines = _big_gzip(tmp_path / "app.log.1.gz", 2)
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n")
    tools = log_tools(tmp_path)
    for name in ("app.log", "app.log.1.gz"):
        res = call_entry(tools, "logs_search", path=str(tmp_path / name), pattern="ERROR", limit=2)
        assert res.status == "success"
        assert [m["line"] for m in res.data["matches"]] == [x for x in lines if "ERROR" in x][-2:]
        assert res.data["total_matches"] == 12


def test_search_and_tail_of_unreadable_files_fail_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "wtmp.log").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "old.log.gz").write_bytes(b"this was never gzip data\n")
    tools = log_tools(tmp_path)
    for path, reason in ((tmp_path / "wtmp.log", "binary"), (tmp_path / "old.log.gz", "Not a gzipped file")):
        for res in (
            call_entry(tools, "logs_search", path=str(path), pattern="x"),
            call_entry(tools, "logs_tail", path=str(path)),
        ):
            assert res.status == "error"  # reading nothing is not "no match"
            assert reason in (res.error or "")
    res = call_entry(tools, "logs_search", path=str(tmp_path), pattern="x")
    assert res.status == "error"
    assert len(res.metadata["skipped"]) == 2


def test_tail_of_a_directory_skips_binaries_for_the_newest_readable_logs(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_text(f"{_stamp(T0)} INFO started\n{_stamp(T0)} ERROR crashed\n")
    os.utime(tmp_path / "app.log", (1_000_000, 1_000_000))
    for i in range(6):  # newer than the text log
        (tmp_path / f"core{i}.log").write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    res = call_entry(log_tools(tmp_path), "logs_tail", path=str(tmp_path), lines=5)
    assert res.status == "success"
    assert [f["path"] for f in res.data["files"]] == [str(tmp_path / "app.log")]
    assert res.data["files"][0]["lines"][-1].endswith("ERROR crashed")
    assert len(res.metadata["skipped"]) == 6


def test_search_of_a_directory_with_more_logs_than_it_searches_says_so(tmp_path: Path) -> None:
    for i in range(60):
        path = tmp_path / f"svc{i:02d}.log"
        path.write_text(f"{_stamp(T0)} ERROR svc{i:02d} crashed\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    res = call_entry(log_tools(tmp_path), "logs_search", path=str(tmp_path), pattern="crashed")
    assert res.status == "success"
    assert res.data["total_matches"] == 50
    assert res.metadata["files_searched"] == 50
    assert "50 most recently modified of 60" in res.metadata["note"]
    assert {m["file"] for m in res.data["matches"]} == {
        str(tmp_path / f"svc{i:02d}.log") for i in range(10, 60)
    }


def test_whole_file_tools_return_what_they_read_when_their_time_is_spent(tmp_path: Path) -> None:
    """logs_errors / logs_patterns on an input too big for the tool's time budget return what they
    read by then, marked partial, instead of timing out while the worker thread reads on."""
    lines = [
        f"{_stamp(T0 + timedelta(seconds=s))} {'ERROR' if s % 7 == 0 else 'INFO'} job {s} "
        f"{WORDS[s % len(WORDS)]} finished"
        for s in range(60_000)
    ]
    (tmp_path / "big.log").write_text("\n".join(lines) + "\n")

    def tools(timeout_s: float) -> dict[str, ToolEntry]:
        settings = Settings(
            files={"roots": [tmp_path]},  # type: ignore[arg-type]
            tools={"timeout_s": timeout_s},  # type: ignore[arg-type]
        )
        return logs.build(settings).entries

    for name in ("logs_errors", "logs_patterns"):
        short = call_entry(tools(0.001), name, paths=[str(tmp_path)])
        assert short.status == "success", short
        assert short.data["partial"] is True
        assert "partial: stopped reading after" in short.data["note"]
        full = call_entry(tools(60.0), name, paths=[str(tmp_path)])
        assert "partial" not in full.data
    errors_short = call_entry(tools(0.001), "logs_errors", paths=[str(tmp_path)]).data["error_lines"]
    errors_full = call_entry(tools(60.0), "logs_errors", paths=[str(tmp_path)]).data["error_lines"]
    assert 0 < errors_short < errors_full == len(range(0, 60_000, 7))
