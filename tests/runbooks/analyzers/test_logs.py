"""Issue 21, the log defects: nothing read is not "no errors", links counted once, tracebacks
counted per crash, /var/log when the journal gives nothing, stdin, lines outside the window,
.xz logs, and the verdict derived from what every check read.

Real files and the real tools throughout; the whole investigation where the defect showed there.
"""

from __future__ import annotations

import asyncio
import json
import lzma
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devops_agent.analysis import group_lines
from devops_agent.analysis.logline import Continuations
from devops_agent.config import Settings
from devops_agent.config.settings import FileSettings
from devops_agent.report import Checked, Finding, Gap, Report
from devops_agent.runbooks import ANALYZERS, load_runbooks, run_runbooks
from devops_agent.runbooks.analyzers import register_analyzer
from devops_agent.runbooks.model import Runbook
from devops_agent.tools import logs
from devops_agent.tools.base import ToolEntry, ToolResult
from devops_agent.tools.logfiles import read_stream

NOW = datetime.now(UTC)


@pytest.fixture(autouse=True)
def _fresh_now() -> None:
    """Each test's NOW is taken when it starts: ages are asserted to the minute, and a long run
    reaches the last tests many minutes after this module was imported."""
    global NOW
    NOW = datetime.now(UTC)


TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/srv/worker.py", line 12, in <module>',
    "    main()",
    "ValueError: invalid literal for int() with base 10: 'x'",
]


def z(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


def write(path: Path, lines: list[str], mtime: datetime | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{line}\n" for line in lines))
    if mtime is not None:
        os.utime(path, (mtime.timestamp(), mtime.timestamp()))
    return path


def tools(root: Path) -> dict[str, ToolEntry]:
    return logs.build(Settings(files=FileSettings(roots=[root]))).entries


def call(root: Path, name: str, **args: Any) -> ToolResult:
    entry = tools(root)[name]
    result = entry.function(**entry.bind_args(args).arguments)
    assert isinstance(result, ToolResult)
    return result


def investigate(root: Path, inputs: dict[str, Any], runbook: str = "log-errors") -> Report:
    """The log-errors runbook over real files, through the real logs tools."""
    entries = tools(root)

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        entry = entries[name]
        return await asyncio.to_thread(lambda: entry.function(**entry.bind_args(args).arguments))

    books = [b for b in load_runbooks() if b.name == runbook]
    return asyncio.run(
        run_runbooks(books, {"question": "errors?", **inputs}, call_tool, lambda e: None, max_parallel=2)
    )


def stale_log(root: Path) -> Path:
    """The issue's log: its newest lines, 20 out-of-memory errors and a dying worker, 2.5 h old."""
    dying = datetime.now(UTC) - timedelta(hours=2, minutes=30, seconds=30)  # fresh: NOW may be old
    lines = [f"{z(dying - timedelta(minutes=30 - i))} INFO request ok" for i in range(30)]
    lines += [f"{z(dying + timedelta(seconds=i))} ERROR out of memory" for i in range(20)]
    lines += [f"{z(dying + timedelta(seconds=30))} CRITICAL api worker died"]
    return write(root / "logs" / "app.log", lines, mtime=dying + timedelta(seconds=30))


# --- critical 1: nothing read is not "no errors" -------------------------------------------------


def test_a_log_that_stopped_before_the_window_is_a_finding_and_a_gap_not_an_all_clear(tmp_path: Path) -> None:
    log = stale_log(tmp_path)
    result = call(tmp_path, "logs_errors", paths=[str(log)], since="2h")
    assert result.status == "no_data"
    meta = result.metadata
    assert (meta["lines_in_window"], meta["lines_outside_window"]) == (0, 51)
    (quiet,) = meta["quiet_files"]
    assert quiet["newest_line"].endswith("CRITICAL api worker died")
    assert 2.5 * 3600 <= quiet["newest_age_s"] < 2.6 * 3600
    assert {e["shape"]: e["count"] for e in quiet["last_errors"]} == {
        "out of memory": 19,
        "api worker died": 1,
    }

    report = investigate(tmp_path, {"logs": [str(log)], "since": "2h"})
    assert report.verdict == "problems_found", report.summary
    assert not report.summary.startswith("No problems found")
    (died,) = [f for f in report.findings if f.severity != "info"]
    assert died.severity == "high"
    assert died.title.startswith("app.log: errors, then nothing for 2h 30m: out of memory")
    assert "CRITICAL api worker died" in died.detail
    (gap,) = report.gaps
    assert "no log line since" in gap.reason
    assert "2h 30m old and says" in gap.reason
    assert report.checks == [
        Checked(
            step="log-errors/errors",
            tool="logs_errors",
            read=0,
            unit="log lines",
            detail="51 lines read outside the window were not counted",
        )
    ]


@pytest.mark.parametrize(
    ("since", "reason"),
    [("2h", "the log file(s) are empty: app.log"), (None, "the log file(s) are empty: app.log")],
)
def test_an_empty_file_is_a_gap(tmp_path: Path, since: str | None, reason: str) -> None:
    log = write(tmp_path / "app.log", [])
    report = investigate(tmp_path, {"logs": [str(log)], **({"since": since} if since else {})})
    assert report.verdict == "inconclusive"
    (gap,) = report.gaps
    assert gap.reason.startswith(reason)
    assert not [f for f in report.findings if f.title == "No errors found in the logs"]


def test_a_window_in_the_future_is_a_gap_not_a_quiet_log(tmp_path: Path) -> None:
    log = write(tmp_path / "app.log", [f"{z(NOW - timedelta(minutes=5))} ERROR payment gateway timeout"])
    report = investigate(tmp_path, {"logs": [str(log)], "since": z(NOW + timedelta(days=1))})
    assert report.verdict == "inconclusive"
    (gap,) = report.gaps
    assert gap.reason.startswith("the window starts in the future")
    assert [f.severity for f in report.findings] == []


def test_stamps_without_a_zone_from_a_host_behind_are_a_gap_that_says_so(tmp_path: Path) -> None:
    # Written just now by a host 5 h behind this one, stamps without a zone: they read as 5 h old.
    behind = [NOW.astimezone() - timedelta(hours=5, minutes=10 - i) for i in range(10)]
    log = write(tmp_path / "app.log", [f"{t:%Y-%m-%d %H:%M:%S},000 INFO request ok" for t in behind])
    report = investigate(tmp_path, {"logs": [str(log)], "since": "2h"})
    assert report.verdict == "inconclusive"
    zone = [g for g in report.gaps if g.reason.startswith("app.log: cannot tell whether it went quiet")]
    assert zone
    assert "stamps carry no time zone" in zone[0].reason
    assert "about 5 h" in zone[0].reason
    assert not [f for f in report.findings if "logged nothing" in f.title]  # not called quiet


def test_a_live_log_with_stamps_in_the_future_is_noted(tmp_path: Path) -> None:
    ahead = [NOW + timedelta(hours=5, minutes=i) for i in range(5)]
    log = write(tmp_path / "app.log", [f"{z(t)} ERROR upstream timed out" for t in ahead])
    report = investigate(tmp_path, {"logs": [str(log)], "since": "1h"})
    assert report.verdict == "problems_found"
    assert any(f.title == "1 log file(s) have lines stamped in the future" for f in report.findings)


def test_an_undated_log_written_before_the_window_holds_nothing_in_it(tmp_path: Path) -> None:
    # A fresh clock: the module's NOW may be minutes old when a long run reaches this test.
    written = datetime.now(UTC) - timedelta(hours=3, seconds=30)
    log = write(tmp_path / "worker.out", ["starting", "idle"], mtime=written)
    report = investigate(tmp_path, {"logs": [str(log)], "since": "1h"})
    assert report.checks[0].read == 0
    assert [f.title for f in report.findings if f.severity != "info"] == [
        "worker.out has logged nothing for 3h 0m"
    ]
    assert "without timestamps" in report.findings[0].detail


# --- critical 3: each real file once -------------------------------------------------------------


def test_kubernetes_container_links_and_current_log_are_read_once(tmp_path: Path) -> None:
    pods = tmp_path / "pods" / "shop_api-1_uid" / "api" / "0.log"
    write(pods, [f"{z(NOW - timedelta(seconds=i))} stderr F ERROR connection reset" for i in range(7)])
    (tmp_path / "containers").mkdir()
    (tmp_path / "containers" / "api-1_shop_api-abc.log").symlink_to(pods)
    write(tmp_path / "app" / "app.log", [f"{z(NOW)} ERROR disk quota exceeded"] * 5)
    (tmp_path / "app" / "current.log").symlink_to("app.log")
    os.link(tmp_path / "app" / "app.log", tmp_path / "app" / "hard.log")
    result = call(tmp_path, "logs_errors", paths=[str(tmp_path), str(tmp_path / "app" / "current.log")])
    counts = {g["shape"]: g["count"] for g in result.data["groups"]}
    assert counts == {"connection reset": 7, "disk quota exceeded": 5}
    assert result.data["files_scanned"] == 2
    tail = call(tmp_path, "logs_tail", path=str(tmp_path / "app"), lines=50)
    assert len(tail.data["files"]) == 1
    found = call(tmp_path, "logs_search", path=str(tmp_path), pattern="quota")
    assert found.data["total_matches"] == 5


def test_a_link_out_of_the_roots_is_still_refused(tmp_path: Path) -> None:
    outside = write(tmp_path / "outside" / "secret.log", ["ERROR x"])
    root = tmp_path / "root"
    root.mkdir()
    (root / "link.log").symlink_to(outside)
    result = call(root, "logs_errors", paths=[str(root)])
    assert result.status == "error"
    assert "a link outside the allowed roots" in (result.error or "")


# --- critical 4: a traceback is an occurrence ----------------------------------------------------


def test_five_tracebacks_without_timestamps_are_five_errors() -> None:
    summary = group_lines(("w.err", line) for line in TRACEBACK * 5)
    assert [(g.count, g.shape.split(" | ")[1]) for g in summary.groups] == [
        (5, "ValueError: invalid literal for int() with base <NUM>: <STR>")
    ]
    follow = Continuations()
    assert sum(not follow.continues("w.err", line) for line in TRACEBACK * 5) == 5


def test_a_chained_traceback_and_a_logged_exception_stay_one_record() -> None:
    chained = TRACEBACK + ["", "During handling of the above exception, another exception occurred:", ""]
    chained += TRACEBACK[:-1] + ["RuntimeError: job failed"]
    assert group_lines(("w.err", line) for line in chained).error_lines == 1
    logged = ["ERROR job 7 failed", *TRACEBACK, "ERROR job 8 failed", *TRACEBACK]
    assert group_lines(("w.err", line) for line in logged).error_lines == 2
    # after a logged exception's traceback, a bare one is the next crash
    bare = ["ERROR job 7 failed", *TRACEBACK, *TRACEBACK]
    assert group_lines(("w.err", line) for line in bare).error_lines == 2


# --- medium and low ------------------------------------------------------------------------------


def test_lines_read_are_the_lines_in_the_window_and_the_rest_are_said(tmp_path: Path) -> None:
    old = [f"{z(NOW - timedelta(hours=5) + timedelta(seconds=10 * i))} INFO step" for i in range(300)]
    new = [f"{z(NOW - timedelta(minutes=9 - i))} ERROR step failed id={i}" for i in range(8)]
    log = write(tmp_path / "batch.log", old + new)
    result = call(tmp_path, "logs_errors", paths=[str(log)], since="10m")
    assert result.data["lines_in_window"] == 8
    assert result.data["lines_outside_window"] > 0
    report = investigate(tmp_path, {"logs": [str(log)], "since": "10m"})
    (scope,) = [f for f in report.findings if f.title == "8 error lines in 1 group"]
    assert scope.detail.startswith("8 lines in the window (")
    assert "lines read outside the window were not counted" in scope.detail


def test_xz_and_bz2_logs_are_read_not_called_binary(tmp_path: Path) -> None:
    text = "".join(f"{z(NOW)} ERROR TLS handshake failed peer={i}\n" for i in range(12)).encode()
    (tmp_path / "app.log.1.xz").write_bytes(lzma.compress(text))
    import bz2

    (tmp_path / "app.log.2.bz2").write_bytes(bz2.compress(text))
    result = call(tmp_path, "logs_errors", paths=[str(tmp_path)])
    assert result.data["skipped"] == []
    assert result.data["error_lines"] == 24
    tail = call(tmp_path, "logs_tail", path=str(tmp_path / "app.log.1.xz"), lines=3)
    assert tail.data["files"][0]["lines"][-1].endswith("peer=11")
    lines, scanned, skipped = read_stream(__import__("io").BytesIO(lzma.compress(text)))
    assert len(list(lines)) == 12
    assert scanned == ["stdin"]
    assert skipped == []


def test_a_compressed_log_rotated_before_the_window_is_not_decompressed(tmp_path: Path) -> None:
    write(tmp_path / "app.log", [f"{z(NOW - timedelta(minutes=i))} INFO ok" for i in range(5, 0, -1)])
    old = tmp_path / "app.log.1.xz"
    old.write_bytes(lzma.compress(f"{z(NOW - timedelta(days=2))} ERROR old\n".encode()))
    os.utime(old, (NOW.timestamp() - 2 * 86400, NOW.timestamp() - 2 * 86400))
    result = call(tmp_path, "logs_errors", paths=[str(tmp_path)], since="1h")
    assert result.status == "no_data"
    assert result.metadata["older_files"] == {"count": 1, "paths": [str(old)]}
    assert result.metadata["lines_in_window"] == 5


def _cli(args: list[str], stdin: bytes, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DEVOPS_AGENT_")}
    env |= {"DEVOPS_AGENT_HOME": str(cwd / "home"), "XDG_CONFIG_HOME": str(cwd / "config"), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "devops_agent", *args],
        input=stdin,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=120,
        check=False,
    )


def test_investigate_reads_logs_from_standard_input(tmp_path: Path) -> None:
    import gzip

    lines = "".join(f"{z(NOW)} ERROR payment gateway timeout order={i}\n" for i in range(6)).encode()
    for stdin in (lines, gzip.compress(lines)):
        proc = _cli(["investigate", "errors in the piped log", "--logs", "-", "--json"], stdin, tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        report = json.loads(proc.stdout)["report"]
        assert report["verdict"] == "problems_found"
        assert any(f["title"].startswith("6× payment gateway timeout") for f in report["findings"])
    both = _cli(["investigate", "--alert", "-", "--logs", "-"], lines, tmp_path)
    assert both.returncode == 2
    assert "standard input can hold the alert or the logs, not both" in both.stderr.decode()


def test_host_health_reads_var_log_when_the_journal_gives_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))  # no journalctl: journald is "not there"
    var_log = write(tmp_path / "var" / "log" / "syslog", [f"{z(NOW)} web-1 app[1]: ERROR out of memory"] * 3)
    book = next(b for b in load_runbooks() if b.name == "host-health")
    (step,) = [s for s in book.steps if s.fallback_for == "journal"]
    assert step.tool == "logs_errors"
    assert step.args["paths"] == ["/var/log"]
    # the same runbook with its /var/log pointed at this test's copy (the real one is the host's)
    data = book.model_dump()
    data["steps"] = [s for s in data["steps"] if s["id"] in ("journal", "var_log")]
    data["steps"][1]["args"]["paths"] = [str(var_log.parent)]
    data["analyzers"] = [a for a in data["analyzers"] if a["use"] == "journal_errors"]
    local = Runbook.model_validate(data)
    entries = tools(tmp_path)
    called: list[str] = []

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        called.append(name)
        entry = entries[name]
        return await asyncio.to_thread(lambda: entry.function(**entry.bind_args(args).arguments))

    report = asyncio.run(run_runbooks([local], {"since": "1h"}, call_tool, lambda e: None, max_parallel=2))
    assert called == ["logs_journal", "logs_errors"]
    assert report.gaps == []  # the journal's absence is covered by the files read instead
    titles = [f.title for f in report.findings]
    assert f"Not checked: journal; read ['{var_log.parent}'] instead" in titles
    assert any(t.startswith("3× ") and "out of memory" in t for t in titles)
    assert report.verdict == "problems_found"


def test_a_fallback_step_does_not_run_when_its_step_gathered_something(tmp_path: Path) -> None:
    book = Runbook.model_validate(
        {
            "name": "fb",
            "title": "fallback",
            "steps": [
                {"id": "first", "tool": "t1"},
                {"id": "second", "tool": "t2", "fallback_for": "first"},
            ],
        }
    )
    called: list[str] = []

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        called.append(name)
        return ToolResult.ok({"x": 1})

    report = asyncio.run(run_runbooks([book], {}, call_tool, lambda e: None, max_parallel=2))
    assert called == ["t1"]
    assert report.stats["fallbacks_not_needed"] == 1
    with pytest.raises(ValueError, match="is not a step before this one"):
        Runbook.model_validate(
            {"name": "bad", "title": "b", "steps": [{"id": "a", "tool": "t", "fallback_for": "zzz"}]}
        )


# --- the class: a verdict from evidence ----------------------------------------------------------


def test_an_analyzer_that_does_not_say_what_it_read_cannot_make_an_all_clear(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def silent(evidence: Any, params: Any, inputs: Any) -> list[Finding]:
        return [Finding(severity="info", title="looks fine")]

    monkeypatch.delitem(ANALYZERS, "silent_for_test", raising=False)
    register_analyzer("silent_for_test")(silent)
    book = Runbook.model_validate(
        {
            "name": "silent",
            "title": "silent",
            "steps": [{"id": "s", "tool": "t"}],
            "analyzers": [{"use": "silent_for_test", "on": ["s"]}],
        }
    )

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        return ToolResult.ok({"anything": 1})

    try:
        report = asyncio.run(run_runbooks([book], {}, call_tool, lambda e: None, max_parallel=1))
    finally:
        del ANALYZERS["silent_for_test"]
    assert report.verdict == "inconclusive"
    (gap,) = report.gaps
    assert gap.tool == "analyzer:silent_for_test"
    assert "did not say what it read" in gap.reason


def test_the_verdict_is_in_the_json_and_the_markdown(tmp_path: Path) -> None:
    log = write(tmp_path / "api.log", [f"{z(NOW - timedelta(minutes=i))} INFO ok" for i in range(20, 0, -1)])
    report = investigate(tmp_path, {"logs": [str(log)], "since": "1h"})
    assert report.verdict == "all_clear"
    assert report.model_dump(mode="json")["verdict"] == "all_clear"
    assert (
        report.summary
        == "No problems found (since 1h): every check read its source in the window (20 log lines) and nothing is above info."
    )
    from devops_agent.report import render_markdown

    text = render_markdown(report)
    assert "**Verdict:** all clear: every check read its source in the window" in text
    assert "- **log-errors/errors** (`logs_errors`): 20 log lines" in text
    assert isinstance(report.gaps, list)
    assert not any(isinstance(g, Gap) for g in report.gaps)
