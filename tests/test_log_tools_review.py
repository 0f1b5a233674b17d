"""The log tools as a model calls them: ranked results through the real output cap, a regular
expression that would hang the process, big .gz files, unreadable inputs, directories with more
logs than a call reads. Real files and real gzip; the cap is the real middleware."""

from __future__ import annotations

import gzip
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from devops_agent.config import Settings
from devops_agent.tools import logs
from devops_agent.tools.base import ToolEntry, ToolResult

T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
WORDS = ["amber", "birch", "cedar", "delta", "ember", "fjord", "gamma", "harbor", "indigo", "jasper"]


def _stamp(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _tools(root: Path, cap: int = 16_000, max_read: int = 2_000_000) -> dict[str, ToolEntry]:
    settings = Settings(
        files={"roots": [root], "max_read_bytes": max_read},  # type: ignore[arg-type]
        tools={"output_cap_chars": cap},  # type: ignore[arg-type]
    )
    return logs.build(settings).entries


def _call(tools: dict[str, ToolEntry], name: str, **args: Any) -> ToolResult:
    result = tools[name].function(**tools[name].bind_args(args).arguments)
    assert isinstance(result, ToolResult)
    return result


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
    tools = _tools(tmp_path)
    full = _call(tools, "logs_errors", paths=[str(tmp_path)]).data
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
    tools = _tools(tmp_path)
    full = _call(tools, "logs_patterns", paths=[str(tmp_path)]).data

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
    tools = _tools(tmp_path)
    for pattern in ("(a+)+$", r"(\w+\s?)*=", r"(?:x|a*)+!"):
        res = _call(tools, "logs_search", path=str(tmp_path / "app.log"), pattern=pattern)
        assert res.status == "error", pattern
        assert "repeats a group that itself repeats" in (res.error or "")
        assert "regex=false" in (res.hint or "")
    for pattern in (r"(\d{1,3}\.){3}\d{1,3}", r"(?>a+)+b", "a++b"):  # bounded, atomic, possessive
        assert (
            _call(tools, "logs_search", path=str(tmp_path / "app.log"), pattern=pattern).status == "success"
        )
    assert _call(tools, "logs_search", path=str(tmp_path), pattern="(a+)+$", regex=False).status == "no_data"


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
    tools = _tools(tmp_path, max_read=1024)
    res = _call(tools, "logs_tail", path=str(tmp_path / "app.log.1.gz"), lines=3)
    assert res.status == "success"
    assert res.data["files"][0]["lines"] == lines[-3:]
    assert res.data["files"][0]["truncated"] is True


def test_a_window_late_in_a_big_gzip_is_found(tmp_path: Path) -> None:
    lines = _big_gzip(tmp_path / "app.log.1.gz", 60)
    tools = _tools(tmp_path, max_read=1024)
    since = _stamp(T0 + timedelta(minutes=55))
    tail = _call(tools, "logs_tail", path=str(tmp_path), since=since, lines=2)
    assert tail.status == "success", tail.hint
    assert tail.data["files"][0]["lines"] == lines[-2:]
    found = _call(tools, "logs_search", path=str(tmp_path), pattern="connection reset", since=since)
    assert found.status == "success", found.hint
    assert found.data["total_matches"] == 30  # 5 minutes, one error every 10 s
    assert found.data["matches"][0]["line"].startswith(since)


def test_search_without_since_shows_the_latest_matches(tmp_path: Path) -> None:
    lines = _big_gzip(tmp_path / "app.log.1.gz", 2)
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n")
    tools = _tools(tmp_path)
    for name in ("app.log", "app.log.1.gz"):
        res = _call(tools, "logs_search", path=str(tmp_path / name), pattern="ERROR", limit=2)
        assert res.status == "success"
        assert [m["line"] for m in res.data["matches"]] == [x for x in lines if "ERROR" in x][-2:]
        assert res.data["total_matches"] == 12


def test_search_and_tail_of_unreadable_files_fail_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "wtmp.log").write_bytes(bytes(range(256)) * 64)
    (tmp_path / "old.log.gz").write_bytes(b"this was never gzip data\n")
    tools = _tools(tmp_path)
    for path, reason in ((tmp_path / "wtmp.log", "binary"), (tmp_path / "old.log.gz", "Not a gzipped file")):
        for res in (
            _call(tools, "logs_search", path=str(path), pattern="x"),
            _call(tools, "logs_tail", path=str(path)),
        ):
            assert res.status == "error"  # reading nothing is not "no match"
            assert reason in (res.error or "")
    res = _call(tools, "logs_search", path=str(tmp_path), pattern="x")
    assert res.status == "error"
    assert len(res.metadata["skipped"]) == 2


def test_tail_of_a_directory_skips_binaries_for_the_newest_readable_logs(tmp_path: Path) -> None:
    (tmp_path / "app.log").write_text(f"{_stamp(T0)} INFO started\n{_stamp(T0)} ERROR crashed\n")
    os.utime(tmp_path / "app.log", (1_000_000, 1_000_000))
    for i in range(6):  # newer than the text log
        (tmp_path / f"core{i}.log").write_bytes(b"\x7fELF" + bytes(range(256)) * 8)
    res = _call(_tools(tmp_path), "logs_tail", path=str(tmp_path), lines=5)
    assert res.status == "success"
    assert [f["path"] for f in res.data["files"]] == [str(tmp_path / "app.log")]
    assert res.data["files"][0]["lines"][-1].endswith("ERROR crashed")
    assert len(res.metadata["skipped"]) == 6


def test_search_of_a_directory_with_more_logs_than_it_searches_says_so(tmp_path: Path) -> None:
    for i in range(60):
        path = tmp_path / f"svc{i:02d}.log"
        path.write_text(f"{_stamp(T0)} ERROR svc{i:02d} crashed\n")
        os.utime(path, (1_000_000 + i, 1_000_000 + i))
    res = _call(_tools(tmp_path), "logs_search", path=str(tmp_path), pattern="crashed")
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
        short = _call(tools(0.001), name, paths=[str(tmp_path)])
        assert short.status == "success", short
        assert short.data["partial"] is True
        assert "partial: stopped reading after" in short.data["note"]
        full = _call(tools(60.0), name, paths=[str(tmp_path)])
        assert "partial" not in full.data
    errors_short = _call(tools(0.001), "logs_errors", paths=[str(tmp_path)]).data["error_lines"]
    errors_full = _call(tools(60.0), "logs_errors", paths=[str(tmp_path)]).data["error_lines"]
    assert 0 < errors_short < errors_full == len(range(0, 60_000, 7))
