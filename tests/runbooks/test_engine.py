"""The offline runbook engine: schema validation, templating, selection, execution and analyzers.

Unit tests use a fake ``call_tool`` returning realistic ``ToolResult`` data; the last test runs
the shipped runbooks against the real tools (skipped until the tool modules exist). The tests
after those of the engine's parts are defects found in review and fixed; their tool results come
from the real logs tools where they can run here (files under ``tmp_path``).
"""

from __future__ import annotations

import asyncio
import importlib
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.errors import ConfigError, NotFoundError
from devops_agent.events import PlanProposed, ToolCall, ToolResultEvent
from devops_agent.report import Checked, Finding, Gap, Report, render_markdown
from devops_agent.runbooks import (
    ANALYZERS,
    CannotAnalyze,
    Runbook,
    TemplateError,
    get_runbook,
    load_runbooks,
    parse_runbook,
    render,
    run_runbooks,
    select_runbooks,
)
from devops_agent.tools import logs
from devops_agent.tools.base import ToolEntry, ToolResult
from fixtures_logs import call_entry

GiB = 2**30

# --- helpers -------------------------------------------------------------------------------


def runbook(name: str = "rb", **extra: Any) -> Runbook:
    data: dict[str, Any] = {"name": name, "title": f"Runbook {name}", "steps": [{"id": "a", "tool": "t"}]}
    data.update(extra)
    return Runbook.model_validate(data)


def run(runbooks: list[Runbook], call_tool: Any, inputs: dict[str, Any] | None = None, **kw: Any) -> Report:
    events: list[Any] = kw.pop("events", [])
    return asyncio.run(
        run_runbooks(runbooks, inputs or {}, call_tool, events.append, max_parallel=kw.pop("max_parallel", 4))
    )


def fake_tools(data: dict[str, Any], calls: list[tuple[str, dict[str, Any]]] | None = None) -> Any:
    """A call_tool answering from ``data`` (a value, a ToolResult, or a callable of args)."""

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        if calls is not None:
            calls.append((name, args))
        await asyncio.sleep(0)
        if name not in data:
            return ToolResult.fail(f"unknown tool {name!r}", hint="`devops-agent tools list`")
        value = data[name]
        value = value(args) if callable(value) else value
        return value if isinstance(value, ToolResult) else ToolResult.ok(value)

    return call_tool


def ev(
    tool: str, data: Any, *, args: dict[str, Any] | None = None, step: str | None = None, **kw: Any
) -> dict:
    """Evidence as the engine hands it to analyzers (metadata stamped with tool/args/step)."""
    step = step or tool
    meta = {"tool": tool, "args": args or {}, "step": f"rb/{step}", **kw.pop("metadata", {})}
    return {step: ToolResult(status=kw.pop("status", "success"), data=data, metadata=meta, **kw)}


def analyze(
    name: str, evidence: dict, params: dict | None = None, inputs: dict | None = None
) -> list[Finding]:
    """The analyzer's findings and gaps; what it read (its Checked items) is left out."""
    items = ANALYZERS[name](evidence, params or {}, inputs or {})
    return [item for item in items if not isinstance(item, Checked)]  # type: ignore[misc]


def checks_of(
    name: str, evidence: dict, params: dict | None = None, inputs: dict | None = None
) -> list[Checked]:
    """What the analyzer says it read."""
    return [
        item for item in ANALYZERS[name](evidence, params or {}, inputs or {}) if isinstance(item, Checked)
    ]


def write(tmp_path: Path, text: str, name: str = "rb.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# --- loading and validation ----------------------------------------------------------------


def test_shipped_runbooks_load_and_validate() -> None:
    books = {r.name: r for r in load_runbooks()}
    assert set(books) == {"host-health", "log-errors", "recent-changes", "metric-alert", "pod-crashloop"}
    for book in books.values():
        assert book.keywords
        assert book.next_steps
        assert book.analyzers
        assert book.source.startswith("package:")
    assert {s.tool for s in books["host-health"].steps} >= {"system_overview", "logs_journal"}
    assert books["log-errors"].steps[0].when == "logs"
    assert books["recent-changes"].inputs["since"].default == "24 hours ago"


BASE = "name: x\ntitle: X\nsteps:\n  - id: a\n    tool: system_overview\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (BASE + "colour: blue\n", "colour: unknown key"),
        (
            BASE.replace("tool: system_overview", "tool: system_overview\n    tol: 1"),
            "steps[0].tol: unknown key",
        ),
        (BASE + "analyzers:\n  - use: nope\n    on: [a]\n", "analyzers[0].use: unknown analyzer 'nope'"),
        (BASE + "analyzers:\n  - use: disk_pressure\n    on: [zz]\n", "analyzers[0].on: unknown step(s) zz"),
        (BASE + "    args: {x: '{{ nope }}'}\n", "steps[0].args: unknown template value(s) nope"),
        (BASE + "    when: nope\n", "steps[0].when: unknown input 'nope'"),
        (BASE + "  - id: a\n    tool: t\n", "duplicate step ids: a"),
        (BASE + "    args: {x: '{{ since'}\n", "steps[0].args: malformed template"),
        ("name: x\ntitle: X\n", "steps: Field required"),
        ("- just a list\n", "a runbook must be a YAML mapping"),
        ("name: [unclosed\n", "invalid YAML"),
    ],
)
def test_invalid_runbooks_are_config_errors_naming_file_and_key(
    tmp_path: Path, text: str, expected: str
) -> None:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_runbooks([tmp_path])
    assert str(path) in info.value.message
    assert expected in info.value.message


def test_unknown_tool_is_not_a_load_error_and_on_is_not_a_yaml_boolean() -> None:
    book = parse_runbook(
        BASE.replace("system_overview", "no_such_tool") + "analyzers:\n  - use: cpu_load\n    on: [a]\n", "t"
    )
    assert book.steps[0].tool == "no_such_tool"
    assert book.analyzers[0].on == ["a"]


def test_extra_dirs_override_shipped_runbooks_by_name(tmp_path: Path) -> None:
    write(tmp_path, "name: host-health\ntitle: Mine\nsteps:\n  - id: a\n    tool: system_overview\n", "h.yml")
    write(tmp_path, BASE.replace("name: x", "name: extra"), "e.yaml")
    books = {r.name: r for r in load_runbooks([tmp_path])}
    assert books["host-health"].title == "Mine"
    assert books["host-health"].source == str(tmp_path / "h.yml")
    assert "extra" in books
    assert "log-errors" in books


def test_two_files_with_one_name_and_missing_dirs_are_errors(tmp_path: Path) -> None:
    write(tmp_path, BASE, "a.yaml")
    write(tmp_path, BASE, "b.yaml")
    with pytest.raises(ConfigError, match="defined twice"):
        load_runbooks([tmp_path])
    with pytest.raises(ConfigError, match="does not exist"):
        load_runbooks([tmp_path / "missing"])


def test_get_runbook() -> None:
    assert get_runbook("log-errors").name == "log-errors"
    with pytest.raises(NotFoundError) as info:
        get_runbook("nope")
    assert info.value.hint == "`devops-agent runbooks list`"
    assert "host-health" in info.value.message


# --- templating ------------------------------------------------------------------------------


def test_exact_placeholder_keeps_the_type_and_other_strings_are_substituted() -> None:
    ctx = {"logs": ["/var/log/a.log", "/var/log/b.log"], "n": 50, "since": "2h", "until": None}
    assert render("{{ logs }}", ctx) == ["/var/log/a.log", "/var/log/b.log"]
    assert render(" {{n}} ", ctx) == 50
    assert render("{{ until }}", ctx) is None
    assert render("last {{ since }} ({{ n }} max){{ until }}", ctx) == "last 2h (50 max)"
    assert render({"a": ["{{ n }}", {"b": "{{ since }}"}], "c": 3}, ctx) == {"a": [50, {"b": "2h"}], "c": 3}


def test_default_filter() -> None:
    assert render('{{ since | default("1h") }}', {"since": None}) == "1h"
    assert render('{{ since | default("1h") }}', {"since": "5m"}) == "5m"
    assert render("{{ limit | default(50) }}", {"limit": ""}) == 50
    assert render("x{{ limit|default([]) }}", {}) == "x[]"


def test_template_errors() -> None:
    with pytest.raises(TemplateError, match="unknown template value 'nope'"):
        render("{{ nope }}", {})
    with pytest.raises(TemplateError, match="malformed"):
        render("{{ a b }}", {"a": 1})


# --- selection -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "inputs", "expected"),
    [
        ("The disk is FULL on web-1", {}, ["host-health"]),
        ("what errors are in the logs?", {}, ["log-errors"]),
        ("anything odd?", {"logs": ["/var/log/app.log"]}, ["log-errors"]),
        ("anything odd?", {"repo": "/srv/app"}, ["recent-changes"]),
        ("anything odd?", {}, ["host-health"]),
        ("the catalogue blogs", {}, ["host-health"]),  # "log" must match whole words only
        ("errors and exceptions in logs since the deploy", {"repo": "."}, ["log-errors", "recent-changes"]),
        ("server slow with many errors after a deploy", {}, ["host-health", "log-errors", "recent-changes"]),
    ],
)
def test_select_runbooks(question: str, inputs: dict[str, Any], expected: list[str]) -> None:
    assert [r.name for r in select_runbooks(question, inputs, load_runbooks())] == expected


def test_selection_ranks_by_number_of_keyword_hits() -> None:
    chosen = select_runbooks("log errors, exceptions, a traceback and high cpu", {}, load_runbooks())
    assert [r.name for r in chosen] == ["log-errors", "host-health"]


# --- engine ----------------------------------------------------------------------------------


def test_fan_out_is_bounded_by_max_parallel_and_actually_parallel() -> None:
    in_flight = peak = 0

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await asyncio.sleep(0.1)
        in_flight -= 1
        return ToolResult.ok({"n": args["n"]})

    book = runbook(steps=[{"id": f"s{i}", "tool": "sleepy", "args": {"n": i}} for i in range(9)])
    started = time.perf_counter()
    report = run([book], call_tool, max_parallel=3)
    elapsed = time.perf_counter() - started
    assert peak == 3
    assert elapsed > 0.29  # at least three waves of 0.1 s: the cap held (peak: and they overlapped)
    assert report.stats["tool_calls"] == 9
    assert report.stats["max_parallel"] == 3


def test_identical_steps_across_runbooks_run_once() -> None:
    calls: list[tuple[str, dict[str, Any]]] = []
    overview = {"hostname": "web-1", "load_avg": [0.5, 0.4, 0.3], "cpu_count": 4, "uptime_s": 90000}
    steps = [{"id": "o", "tool": "system_overview"}, {"id": "p", "tool": "procs", "args": {"by": "cpu"}}]
    one = runbook("one", steps=steps, analyzers=[{"use": "host_overview", "on": ["o"]}])
    two = runbook("two", steps=[*steps[:1], {"id": "p", "tool": "procs", "args": {"by": "memory"}}])
    events: list[Any] = []
    report = run([one, two], fake_tools({"system_overview": overview, "procs": []}, calls), events=events)
    assert sorted(c[0] for c in calls) == ["procs", "procs", "system_overview"]
    assert report.stats["deduplicated"] == 1
    assert report.stats["steps"] == 4
    plan = events[0]
    assert isinstance(plan, PlanProposed)
    assert plan.steps[0] == "one/o, two/o: system_overview()"
    assert 'one/p: procs(by="cpu")' in plan.steps
    assert report.host == "web-1"
    assert [f.title for f in report.findings] == ["Host web-1: unknown OS, up 1d 1h"]


def test_failing_steps_become_gaps_with_hints_and_the_report_is_still_made() -> None:
    async def boom(name: str, args: dict[str, Any]) -> ToolResult:
        raise RuntimeError("middleware bug")

    tools = {
        "system_disk_usage": [
            {"mount": "/", "percent": 97.0, "total_bytes": 10 * GiB, "used_bytes": 9.7 * GiB}
        ],
        "system_memory": ToolResult.fail("psutil unavailable", hint="pip install psutil"),
    }
    book = runbook(
        steps=[
            {"id": "disk", "tool": "system_disk_usage"},
            {"id": "mem", "tool": "system_memory"},
            {"id": "gone", "tool": "not_installed"},
        ],
        analyzers=[{"use": "disk_pressure", "on": ["disk"]}, {"use": "memory_pressure", "on": ["mem"]}],
    )
    report = run([book], fake_tools(tools))
    assert [f.title for f in report.findings] == ["Disk / is 97% full"]
    gaps = {g.step: g for g in report.gaps}
    assert gaps["rb/mem"].reason == "psutil unavailable"
    assert gaps["rb/mem"].hint == "pip install psutil"
    assert gaps["rb/gone"].hint == "`devops-agent tools list`"
    assert report.stats["failed"] == 2
    assert report.stats["succeeded"] == 1
    assert "- **rb/mem** (`system_memory`): psutil unavailable — pip install psutil" in render_markdown(
        report
    )

    crashed = run([book], boom)
    assert crashed.findings == []  # nothing gathered, nothing invented
    assert len(crashed.gaps) == 3
    assert all("raised RuntimeError: middleware bug" in g.reason for g in crashed.gaps)
    assert crashed.verdict == "inconclusive"
    assert crashed.summary.startswith("Inconclusive: nothing could be read — ")


def test_events_plan_first_then_each_call_before_its_result() -> None:
    events: list[Any] = []

    async def sink(event: Any) -> None:
        await asyncio.sleep(0)
        events.append(event)

    async def slow(name: str, args: dict[str, Any]) -> ToolResult:
        await asyncio.sleep(0.01 * args["n"])
        return ToolResult(status="success", data="x" * 10, metadata={"truncated": args["n"] == 1})

    book = runbook(steps=[{"id": f"s{i}", "tool": "slow", "args": {"n": n}} for i, n in enumerate([3, 1, 2])])
    asyncio.run(run_runbooks([book], {}, slow, sink, max_parallel=2, session_id="s1", run_id="r1"))
    assert isinstance(events[0], PlanProposed)
    assert len(events[0].steps) == 3
    calls = [e for e in events if isinstance(e, ToolCall)]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    assert len(calls) == len(results) == 3
    for call in calls:
        (result,) = [r for r in results if r.tool_call_id == call.tool_call_id]
        assert events.index(call) < events.index(result)
        assert result.status == "success"
        assert result.summary == "10 characters"
        assert result.truncated == (call.args["n"] == 1)
        assert result.duration_ms is not None
        assert result.duration_ms > 0
    assert len({c.tool_call_id for c in calls}) == 3
    assert all(e.session_id == "s1" and e.run_id == "r1" and e.seq == 0 for e in events)


def test_when_skips_steps_and_none_args_are_left_out() -> None:
    books = {r.name: r for r in load_runbooks()}
    calls: list[tuple[str, dict[str, Any]]] = []
    summary = {"total_lines": 10, "error_lines": 0, "groups": []}
    report = run([books["log-errors"]], fake_tools({"logs_errors": summary}, calls))
    assert calls == []
    (gap,) = report.gaps
    assert gap.reason == "skipped: input `logs` was not given"
    assert "log files" in (gap.hint or "")
    report = run(
        [books["log-errors"]], fake_tools({"logs_errors": summary}, calls), {"logs": [Path("/l/a.log")]}
    )
    assert calls == [("logs_errors", {"paths": ["/l/a.log"], "max_groups": 20})]
    assert report.gaps == []
    assert report.findings[0].title == "No errors found in the logs"


def test_required_inputs_missing_skip_the_runbook() -> None:
    book = runbook(inputs={"target": {"required": True, "description": "a host"}})
    report = run([book], fake_tools({"t": {}}))
    assert [g.reason for g in report.gaps] == ["skipped: input `target` was not given"]
    assert report.gaps[0].hint == "give the `target` input (a host) to gather this"


def test_truncated_output_and_broken_analyzers_become_gaps(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(evidence: Any, params: Any, inputs: Any) -> list[Finding]:
        raise KeyError("percent")

    monkeypatch.setitem(ANALYZERS, "broken_for_test", broken)
    capped = ToolResult(status="success", data='[{"mount": "/", "perc', metadata={"truncated": True})
    book = runbook(
        steps=[{"id": "disk", "tool": "system_disk_usage"}],
        analyzers=[{"use": "disk_pressure", "on": ["disk"]}, {"use": "broken_for_test", "on": ["disk"]}],
    )
    report = run([book], fake_tools({"system_disk_usage": capped}))
    assert report.findings == []
    first, second = report.gaps
    assert first.tool == "analyzer:disk_pressure"
    assert "truncated by the size cap" in first.reason
    assert second.tool == "analyzer:broken_for_test"
    assert "KeyError" in second.reason


def test_report_from_the_engine_round_trips_and_renders(tmp_path: Path) -> None:
    book = get_runbook("host-health")
    tools = {
        "system_overview": {"hostname": "web-1", "load_avg": [1, 1, 1], "cpu_count": 8, "uptime_s": 10**6},
        "system_disk_usage": {"partitions": [{"mount": "/", "percent": 40.0}]},
    }
    report = run([book], fake_tools(tools), {"question": "is web-1 ok?"})
    assert Report.model_validate_json(report.model_dump_json()) == report
    assert report.title == "Host health check (since 1h)"
    assert report.window == "since 1h"
    assert report.question == "is web-1 ok?"
    assert report.runbooks == ["host-health"]
    text = render_markdown(report)
    for section in ("## Summary", "## Findings", "## Next steps", "## What could not be gathered"):
        assert section in text
    assert {g.tool for g in report.gaps} == {
        "system_memory",
        "system_top_processes",
        "system_failing_processes",
        "logs_journal",
        "logs_errors",  # /var/log, read because the journal gave nothing
    }
    assert report.verdict == "inconclusive"


# --- analyzers -------------------------------------------------------------------------------


def _disk(mount: str, percent: float, **kw: Any) -> dict[str, Any]:
    total = 100 * GiB
    used = total * percent / 100
    base = {"mount": mount, "device": "/dev/sda1", "fstype": "ext4", "total_bytes": total, "used_bytes": used}
    return {**base, "free_bytes": total - used, "percent": percent, "inodes_percent": 5.0, **kw}


def test_disk_pressure_thresholds() -> None:
    disks = [_disk("/", 96.2), _disk("/var", 91), _disk("/home", 86), _disk("/data", 50)]
    disks += [_disk("/snap/core/1", 100, fstype="squashfs"), _disk("/tmp", 20, inodes_percent=97)]
    found = analyze("disk_pressure", ev("system_disk_usage", disks))
    assert [(f.severity, f.title) for f in found] == [
        ("critical", "Disk / is 96% full"),
        ("high", "Disk /var is 91% full"),
        ("medium", "Disk /home is 86% full"),
        ("critical", "Inodes on /tmp are 97% used"),
    ]
    assert found[0].evidence == ["/ 96.2% used: 96.2 GiB of 100.0 GiB, 3.8 GiB free (/dev/sda1, ext4)"]
    assert any("du -xh" in s for s in found[0].next_steps)


def test_disk_pressure_quiet_disks_and_params() -> None:
    quiet = analyze(
        "disk_pressure", ev("system_disk_usage", {"partitions": [_disk("/", 60), _disk("/b", 84.9)]})
    )
    assert [(f.severity, f.title) for f in quiet] == [("info", "Disk space below 85% on all 2 filesystems")]
    assert quiet[0].evidence[0].startswith("/b 84.9% used")
    strict = analyze("disk_pressure", ev("system_disk_usage", [_disk("/", 60)]), {"warn_percent": 50})
    assert [f.severity for f in strict] == ["medium"]
    with pytest.raises(CannotAnalyze, match="truncated"):
        analyze("disk_pressure", ev("system_disk_usage", "[{'mount'", metadata={"truncated": True}))


def _memory(available_pct: float, swap_pct: float = 0, swap_total: int = 4 * GiB) -> dict[str, Any]:
    total = 16 * GiB
    virtual = {"total": total, "available": total * available_pct / 100, "percent": 100 - available_pct}
    swap = {"total": swap_total, "used": swap_total * swap_pct / 100, "percent": swap_pct}
    return {"virtual": {**virtual, "used": total - virtual["available"]}, "swap": swap}


def test_memory_pressure() -> None:
    hog = {"pid": 42, "name": "java", "username": "app", "cpu_percent": 3.0, "memory_percent": 71.5}
    evidence = ev("system_memory", _memory(6, swap_pct=62))
    evidence |= ev("system_top_processes", {"processes": [hog]}, args={"by": "memory", "limit": 10})
    found = analyze("memory_pressure", evidence)
    assert [(f.severity, f.title) for f in found] == [
        ("high", "Only 6.0% of memory is available"),
        ("medium", "Swap is 62% used"),
    ]
    assert "pid 42 java (app) cpu 3.0% mem 71.5%" in found[0].evidence
    assert found[0].evidence[0] == "memory: 16.0 GiB total, 983.0 MiB available (6.0%), 15.0 GiB used"
    ok = analyze("memory_pressure", ev("system_memory", _memory(35, swap_pct=90, swap_total=0)))
    assert [(f.severity, f.title) for f in ok] == [("info", "Memory OK: 35% available")]
    flat = analyze("memory_pressure", ev("system_memory", {"percent": 95.5}))
    assert flat[0].severity == "high"


def test_cpu_load() -> None:
    procs = [
        {"pid": 7, "name": "ffmpeg", "cpu_percent": 390.0, "memory_percent": 2.0, "cmdline": ["ffmpeg", "-i"]}
    ]
    top = ev("system_top_processes", procs, args={"by": "cpu"}, step="top_cpu")

    def load(one: float) -> list[Finding]:
        overview = {"load_avg": [one, 2.0, 1.0], "cpu_count": 4, "cpu_percent": 97.0}
        return analyze("cpu_load", ev("system_overview", overview) | top)

    (medium,) = load(7.0)
    assert medium.severity == "medium"
    assert medium.title == "Load average 7.0 is 1.8× the 4 CPUs"
    assert medium.evidence[0] == "load average 7.00 / 2.00 / 1.00 on 4 CPUs (1.75 per CPU)"
    assert "pid 7 ffmpeg cpu 390.0% mem 2.0% ffmpeg -i" in medium.evidence
    assert load(12.5)[0].severity == "high"
    assert load(5.9)[0].severity == "info"
    with pytest.raises(CannotAnalyze):
        analyze("cpu_load", ev("system_overview", {"hostname": "x"}))


def test_failing_processes() -> None:
    data = {
        "zombies": [{"pid": 10 + i, "name": "worker", "ppid": 9} for i in range(3)],
        "uninterruptible": [{"pid": 55, "name": "rsync", "status": "disk-sleep"}],
        "failed_units": [{"unit": "nginx.service", "active": "failed", "sub": "failed"}],
        "oom_kills": [{"pid": 77, "name": "java", "time": "2026-11-22T09:58:00Z"}],
    }
    found = analyze("failing_processes", ev("system_failing_processes", data))
    assert [(f.severity, f.title) for f in found] == [
        ("high", "1 OOM kill: java"),
        ("medium", "1 failed systemd unit: nginx.service"),
        ("medium", "1 process in uninterruptible sleep (D state): rsync"),
        ("low", "3 zombie processes: worker, worker, worker"),
    ]
    assert found[1].evidence == ["nginx.service active=failed sub=failed"]
    many = analyze(
        "failing_processes", ev("system_failing_processes", {"zombies": [{"pid": i} for i in range(12)]})
    )
    assert many[0].severity == "medium"
    clean = {"zombies": [], "uninterruptible": [], "failed_units": []}
    assert [f.severity for f in analyze("failing_processes", ev("system_failing_processes", clean))] == [
        "info"
    ]


def test_host_overview_flags_a_recent_reboot() -> None:
    base = {"hostname": "db-2", "os": "Debian 12", "kernel": "6.1.0", "cpu_count": 8, "users": ["bob"]}
    fresh = analyze("host_overview", ev("system_overview", {**base, "uptime_s": 600}))
    assert [(f.severity, f.title) for f in fresh] == [
        ("info", "Host db-2: Debian 12, up 10m"),
        ("medium", "db-2 rebooted 10m ago"),
    ]
    assert "logged in: bob" in fresh[0].evidence
    old = analyze("host_overview", ev("system_overview", {**base, "uptime_s": 5 * 86400 + 7200}))
    assert [f.title for f in old] == ["Host db-2: Debian 12, up 5d 2h"]


LOG_SUMMARY = {
    "total_lines": 120_000,
    "error_lines": 1_340,
    "time_range": {"start": "2026-11-22T08:00:00Z", "end": "2026-11-22T10:00:00Z"},
    "groups": [
        {
            "shape": "ERROR db: connection refused to <ip>:<num>",
            "count": 1200,
            "level": "ERROR",
            "first_seen": "2026-11-22T09:41:02Z",
            "last_seen": "2026-11-22T09:59:58Z",
            "examples": ["2026-11-22T09:41:02Z ERROR db: connection refused to 10.0.0.5:5432"],
            "sources": ["/var/log/app/api.log"],
            "spike": {"bucket": "2026-11-22T09:40:00Z", "count": 800, "baseline": 2},
            "spike_description": "800/min at 09:40 vs a baseline of 2/min",
        },
        {
            "shape": "FATAL worker <num> exited",
            "count": 2,
            "level": "FATAL",
            "examples": ["FATAL worker 3 exited"],
        },
        {"shape": "ERROR cache miss storm", "count": 100, "level": "ERROR", "spike": False, "examples": []},
        {"shape": "ERROR bad request from <ip>", "count": 3, "level": "ERROR", "sources": {"/a.log": 3}},
        {"shape": "WARN slow query", "count": 35, "level": "WARN"},
    ],
}


def test_log_error_groups() -> None:
    found = analyze("log_error_groups", ev("logs_errors", LOG_SUMMARY))
    assert [(f.severity, f.title) for f in found] == [
        ("info", "1340 error lines in 5 groups"),
        ("high", "1200× ERROR db: connection refused to <ip>:<num>"),
        ("medium", "100× ERROR cache miss storm"),
        ("low", "35× WARN slow query"),
        ("low", "3× ERROR bad request from <ip>"),
        ("high", "2× FATAL worker <num> exited"),
    ]
    db = found[1]
    assert "first seen 2026-11-22T09:41:02Z, last seen 2026-11-22T09:59:58Z" in db.detail
    assert "in /var/log/app/api.log" in db.detail
    assert "Spike: 800/min at 09:40 vs a baseline of 2/min." in db.detail
    assert db.evidence == ["2026-11-22T09:41:02Z ERROR db: connection refused to 10.0.0.5:5432"]
    assert "2026-11-22T08:00:00Z to 2026-11-22T10:00:00Z" in found[0].detail
    capped = analyze("log_error_groups", ev("logs_errors", LOG_SUMMARY), {"max_findings": 2})
    assert capped[-1].title == "3 smaller error groups not shown"
    assert len(capped[-1].evidence) == 3
    quiet = analyze(
        "log_error_groups", ev("logs_errors", {"total_lines": 500, "error_lines": 0, "groups": []})
    )
    assert [(f.severity, f.title) for f in quiet] == [("info", "No errors found in the logs")]


def test_log_error_groups_reads_the_logs_tools_shape() -> None:
    group = {
        "shape": "ERROR upstream timed out after <num>ms",
        "count": 4,
        "level": "ERROR",
        "first_seen": "2026-11-22T14:05:00+00:00",
        "last_seen": "2026-11-22T14:09:00+00:00",
        "examples": ["2026-11-22 14:05:00 ERROR upstream timed out after 3000ms"],
        "sources": {"/var/log/app/api.log": 4},
        "buckets": {"2026-11-22T14:05:00+00:00": 4},
        "spike": False,
        "spike_description": None,
    }
    spiking = {
        **group,
        "shape": "ERROR disk full",
        "count": 2,
        "spike": True,
        "spike_description": "2 of 2 in the minute from 14:05 UTC",
    }
    data = {
        "total_lines": 900,
        "matched_lines": 900,
        "error_lines": 60,
        "groups_total": 9,
        "groups_shown": 3,
        "records_in_hidden_groups": 54,
        "spikes": ["all grouped records: 40 of 60 in the 5 minutes from 14:05 UTC"],
        "timeline": [],
        "groups": [group, {**group, "shape": "ERROR other", "count": 3}, spiking],
    }
    found = analyze("log_error_groups", ev("logs_errors", data), {"max_findings": 1})
    assert [(f.severity, f.title) for f in found] == [
        ("info", "60 error lines in 9 groups"),
        ("low", "4× ERROR upstream timed out after <num>ms"),
        ("high", "2× ERROR disk full"),
        ("info", "7 smaller error groups not shown"),
    ]
    assert "Spikes: all grouped records: 40 of 60 in the 5 minutes from 14:05 UTC." in found[0].detail
    assert "in /var/log/app/api.log" in found[1].detail
    assert found[3].evidence == ["3× ERROR other", "6 more groups not returned by the tool (54 errors)"]
    empty = ToolResult.empty("no errors in 900 lines from 1 file(s)", matched_lines=900, lines_in_window=900)
    (none,) = analyze(
        "log_error_groups",
        ev("logs_errors", None, status="no_data", hint=empty.hint, metadata=empty.metadata),
    )
    assert (none.severity, none.title) == ("info", "No errors found in the logs")
    assert none.detail == "no errors in 900 lines from 1 file(s)"


def test_journal_errors() -> None:
    entries = [
        {
            "time": None,
            "unit": None,
            "identifier": "kubelet",
            "pid": "1",
            "priority": "ERR",
            "message": f"pull {i}",
        }
        for i in range(25)
    ]
    (busy,) = analyze(
        "journal_errors", ev("logs_journal", {"entries": entries, "count": 25}), inputs={"since": "1h"}
    )
    assert busy.severity == "medium"
    assert busy.title == "25 error-priority journal entries since 1h"
    assert busy.evidence == ["25× [kubelet] pull #"]
    crit = [{"_SYSTEMD_UNIT": "kernel", "PRIORITY": "2", "MESSAGE": "EXT4-fs error"}]
    assert analyze("journal_errors", ev("logs_journal", crit))[0].severity == "high"
    crit_named = [{"unit": "kernel", "priority": "CRIT", "message": "EXT4-fs error"}]
    assert analyze("journal_errors", ev("logs_journal", {"entries": crit_named}))[0].severity == "high"
    quiet = ToolResult.empty("no journal entries at priority err or more severe (since 1h)")
    (info,) = analyze("journal_errors", ev("logs_journal", None, status="no_data", hint=quiet.hint))
    assert info.severity == "info"
    assert info.title == "Journal: no error-priority entries returned"
    assert info.detail == quiet.hint


def test_journal_errors_without_journald_is_not_checked_and_a_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real logs_journal on a host without journalctl: its empty result is not "no errors".
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    book = runbook(
        "journal-only",
        steps=[{"id": "journal", "tool": "logs_journal", "args": {"since": "1h"}}],
        analyzers=[{"use": "journal_errors", "on": ["journal"]}],
    )
    report = run([book], _real_call_tool(tmp_path, "logs"), {})
    (finding,) = report.findings
    assert (finding.severity, finding.title) == ("info", "Not checked: journal")
    assert "journalctl not found" in finding.detail
    (gap,) = report.gaps
    assert (gap.step, gap.tool) == ("journal-only/journal", "logs_journal")
    assert gap.reason == "journald is not available on this host (journalctl not found)"
    assert gap.hint == "read log files with logs_tail/logs_errors"
    assert "Nothing — every step succeeded" not in render_markdown(report)


def _commit(sha: str, subject: str, files: list[tuple[str, int, int]], **kw: Any) -> dict[str, Any]:
    return {
        "sha": sha + "0" * 33,
        "short_sha": sha,
        "author": "alice",
        "date": "2026-11-22T11:00:00+01:00",
        "subject": subject,
        "files": [{"path": p, "insertions": i, "deletions": d} for p, i, d in files],
        **kw,
    }


def test_recent_changes() -> None:
    code = _commit(
        "abc1234", "Fix retry loop", [("src/a.py", 10, 2), ("src/b.py", 1, 1), ("t.py", 1, 0), ("c.py", 0, 0)]
    )
    (low,) = analyze(
        "recent_changes", ev("git_log", [code]), inputs={"since": "24 hours ago", "repo": "/srv/app"}
    )
    assert low.severity == "low"
    assert low.title == "1 commit in /srv/app since 24 hours ago"
    assert low.evidence == ["abc1234 2026-11-22T10:00Z alice: Fix retry loop (+12/-3 in 4 files)"]

    conf = _commit("def5678", "Raise pool size", [("deploy/k8s/api.yaml", 3, 3), ("Dockerfile", 1, 0)])
    diff = ev(
        "git_diff", {"stat": " deploy/k8s/api.yaml | 6 +++---\n 1 file changed", "patch": ""}, step="diff"
    )
    (medium,) = analyze("recent_changes", ev("git_log", {"commits": [conf, code]}) | diff)
    assert medium.severity == "medium"
    assert medium.title == "2 commits, 2 config file change(s)"
    assert "deploy/k8s/api.yaml (def5678)" in medium.detail
    assert "Dockerfile (def5678)" in medium.detail
    assert "config: Dockerfile (def5678)" in medium.evidence
    assert "deploy/k8s/api.yaml | 6 +++---" in medium.evidence

    (none,) = analyze("recent_changes", ev("git_log", []), inputs={"since": "2 hours ago"})
    assert (none.severity, none.title) == ("info", "No changes since 2 hours ago")


def _landed(sha: str, subject: str, authored: str, committed: str, path: str = "src/a.py") -> dict[str, Any]:
    return _commit(sha, subject, [(path, 1, 1)], date=None, authored=authored, committed=committed)


CHANGES = [  # as git_log lists them: newest commit time first
    _landed("c000003", "Fix typo", "2026-11-22T10:40:00+00:00", "2026-11-22T10:40:00+00:00"),
    # written two days earlier, rebased and merged 12 minutes before the trouble
    _landed("b000002", "Lower the pool size", "2026-11-20T09:00:00+00:00", "2026-11-22T10:00:00+00:00"),
    _landed("a000001", "Old refactor", "2026-11-22T06:00:00+00:00", "2026-11-22T06:00:00+00:00"),
]


def test_commits_are_placed_around_the_alerts_start() -> None:
    (finding,) = analyze(
        "recent_changes", ev("git_log", {"commits": CHANGES}), inputs={"onset": "2026-11-22T10:12:00Z"}
    )
    assert finding.severity == "medium"  # a commit landed in the 2 hours before
    assert finding.title == "3 commits, 1 in the 2 h before the alert's start"
    assert finding.evidence[:4] == [
        "c000003 2026-11-22T10:40Z alice: Fix typo (+1/-1 in 1 file) — landed 28 min after the alert's start",
        "── 2026-11-22T10:12Z the alert's start ──",
        "b000002 2026-11-20T09:00Z [committed 2026-11-22T10:00Z] alice: Lower the pool size (+1/-1 in 1 file)"
        " — landed 12 min before the alert's start",
        "a000001 2026-11-22T06:00Z alice: Old refactor (+1/-1 in 1 file) — landed 4.2 h before the alert's start",
    ]
    assert "1 landed in the 2 h before the alert's start at 2026-11-22T10:12Z" in finding.detail
    assert finding.next_steps[0] == "Read what landed just before the alert's start first: `git show b000002`"


def test_commits_are_placed_around_the_first_new_error_of_the_logs() -> None:
    groups = {
        "time_range": {"start": "2026-11-22T08:00:00Z", "end": "2026-11-22T11:00:00Z"},
        "groups": [
            # there from the start of the logs read: not where the trouble began
            {
                "shape": "cache miss storm",
                "count": 40,
                "first_seen": "2026-11-22T08:00:30Z",
                "last_seen": "2026-11-22T10:59:00Z",
            },
            {
                "shape": "connection pool exhausted (size=<VAL>)",
                "count": 25,
                "first_seen": "2026-11-22T10:12:00Z",
                "last_seen": "2026-11-22T10:14:00Z",
            },
        ],
    }
    evidence = ev("git_log", {"commits": CHANGES}) | ev("logs_errors", groups, step="errors")
    (finding,) = analyze("recent_changes", evidence)
    assert (
        finding.evidence[1]
        == "── 2026-11-22T10:12Z the first error: connection pool exhausted (size=<VAL>) ──"
    )
    assert finding.evidence[2].endswith("— landed 12 min before the first error")

    # errors already there where the logs begin: when they began is unknown, and said so
    groups["groups"] = groups["groups"][:1]
    (finding,) = analyze(
        "recent_changes", ev("git_log", {"commits": CHANGES}) | ev("logs_errors", groups, step="e")
    )
    assert finding.severity == "low"
    assert not any("──" in line or "landed" in line for line in finding.evidence)
    assert "already there where the lines read begin (2026-11-22T08:00Z)" in finding.detail

    # no commit in the two hours before: said, not left out
    (finding,) = analyze(
        "recent_changes", ev("git_log", {"commits": CHANGES[:1]}), inputs={"onset": "2026-11-22T10:12:00Z"}
    )
    assert "None landed in the 2 h before the alert's start at 2026-11-22T10:12Z." in finding.detail
    assert finding.severity == "low"


def test_analyzers_read_the_shapes_the_system_tool_returns() -> None:
    """The system toolset nests and names things its own way; the analyzers must follow."""
    overview = {
        "hostname": "vm",
        "os": "Linux",
        "platform": "Linux-6.1-x86_64",
        "kernel": "6.1.0",
        "boot_time": datetime.fromtimestamp(time.time() - 1800, UTC).isoformat(),
        "load_avg": {"1m": 9.1, "5m": 4.0, "15m": 2.0},
        "cpu_count": 2,
        "users_logged_in": 1,
    }
    cpu = analyze("cpu_load", ev("system_overview", overview))
    assert [(f.severity, f.title) for f in cpu] == [("high", "Load average 9.1 is 4.5× the 2 CPUs")]
    host = analyze("host_overview", ev("system_overview", overview))
    assert [f.title for f in host] == ["Host vm: Linux, up 30m", "vm rebooted 30m ago"]
    assert "logged in: 1 session(s)" in host[0].evidence

    memory = {
        "virtual": {
            "total_bytes": 8 * GiB,
            "available_bytes": GiB // 2,
            "used_bytes": 7 * GiB,
            "percent": 93.8,
            "total": "8.0 GiB",
            "available": "512.0 MiB",
        },
        "swap": {"total_bytes": 0, "used_bytes": 0, "percent": 0.0, "total": "0 B"},
    }
    (mem,) = analyze("memory_pressure", ev("system_memory", memory))
    assert mem.title == "Only 6.2% of memory is available"
    assert mem.evidence[:2] == [
        "memory: 8.0 GiB total, 512.0 MiB available (6.2%), 7.0 GiB used",
        "swap: none configured",
    ]

    failing = {
        "summary": "...",
        "zombies": [{"pid": 9, "ppid": 1, "name": "sh", "parent_name": "init"}],
        "zombie_count": 140,
        "uninterruptible": [],
        "uninterruptible_count": 0,
        "systemd": {"available": False, "reason": "systemd is not the init system (PID 1 is tini)"},
        "oom_kills": {
            "available": True,
            "count": 4,
            "recent": [
                {"pid": 77, "name": "java", "line": "[123.4] Out of memory: Killed process 77 (java)"}
            ],
        },
    }
    items = analyze("failing_processes", ev("system_failing_processes", failing))
    found = [f for f in items if isinstance(f, Finding)]
    assert [(f.severity, f.title) for f in found] == [
        ("high", "4 OOM kills: java"),
        ("medium", "140 zombie processes: sh"),
        ("info", "Not checked: failed systemd units"),
    ]
    # what could not be checked is a gap too: its silence is no all-clear
    (gap,) = [g for g in items if isinstance(g, Gap)]
    assert gap.reason == "failed systemd units not checked: systemd is not the init system (PID 1 is tini)"
    assert found[0].evidence == ["[123.4] Out of memory: Killed process 77 (java)"]
    assert found[1].evidence == ["pid 9 sh ppid=1 parent_name=init"]
    assert "PID 1 is tini" in found[2].detail


def test_recent_changes_reads_the_git_tools_shapes() -> None:
    commit = {
        "sha": "f" * 40,
        "short_sha": "fffffff",
        "author": "Bob",
        "author_email": "bob@example.com",
        "authored": "2026-11-22T09:00:00+00:00",
        "committed": "2026-11-22T09:30:00+00:00",
        "subject": "Bump replicas",
        "files": [{"path": "helm/values-prod.yaml", "insertions": 1, "deletions": 1, "binary": False}],
        "files_changed": 120,
        "insertions": 900,
        "deletions": 40,
    }
    diff = {
        "rev_range": "HEAD~1..HEAD",
        "files": [
            {"path": "helm/values-prod.yaml", "insertions": 1, "deletions": 1, "binary": False},
            {"path": "logo.png", "insertions": None, "deletions": None, "binary": True},
        ],
        "files_changed": 2,
        "insertions": 1,
        "deletions": 1,
        "patch": "...",
        "truncated": False,
    }
    evidence = ev("git_log", {"commits": [commit], "count": 1, "limit_reached": False})
    evidence |= ev("git_diff", diff, args={"rev_range": "HEAD~1..HEAD"}, step="diff")
    (finding,) = analyze("recent_changes", evidence)
    assert finding.severity == "medium"
    assert finding.evidence[:5] == [
        # the author time, as `git log` shows it, and the commit time where it differs
        "fffffff 2026-11-22T09:00Z [committed 2026-11-22T09:30Z] Bob: Bump replicas (+900/-40 in 120 files)",
        "diff HEAD~1..HEAD:",
        "helm/values-prod.yaml | +1 -1",
        "logo.png | binary",
        "2 files changed, +1 -1",
    ]


# --- integration with the real tools ---------------------------------------------------------


def _missing(*modules: str) -> list[str]:
    """Tool modules that cannot be imported yet or do not expose ``register`` (still being written)."""
    missing = []
    for name in modules:
        try:
            module = importlib.import_module(f"devops_agent.tools.{name}")
        except ImportError:
            missing.append(name)
            continue
        if not hasattr(module, "register"):
            missing.append(name)
    return missing


def _real_call_tool(tmp_path: Path, *modules: str) -> Callable[[str, dict[str, Any]], Any]:
    """A minimal call_tool over the real toolsets: no middleware, each tool run in a thread."""
    import inspect

    from devops_agent.config import Settings
    from devops_agent.tools.registry import ToolRegistry, build_catalog

    registry = ToolRegistry()
    for name in modules:
        importlib.import_module(f"devops_agent.tools.{name}").register(registry)
    settings = Settings(files={"roots": [tmp_path, Path("/var/log")]}, data_dir=tmp_path)
    catalog = build_catalog(settings, registry)

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        try:
            entry = catalog.get(name)
        except NotFoundError as exc:
            return ToolResult.fail(exc.message, hint=exc.hint)
        entry.bind_args(args)  # a runbook passing arguments the tool does not take is a test failure
        if inspect.iscoroutinefunction(entry.function):
            out = await entry.function(**args)
        else:
            out = await asyncio.to_thread(entry.function, **args)
        return out if isinstance(out, ToolResult) else ToolResult.ok(out)

    return call_tool


def _not_checked_here(gap: Gap) -> bool:
    """A part of the process table this host does not let us read (no systemd, no kernel log)."""
    return gap.tool == "system_failing_processes" and " not checked: " in gap.reason


def _git_repo(tmp_path: Path) -> Path:
    git = shutil.which("git")
    assert git is not None
    repo = tmp_path / "repo"
    repo.mkdir()
    ident = ["-c", "user.name=Alice", "-c", "user.email=alice@example.com"]
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    for name, subject in (("app.py", "Add app"), ("config.yaml", "Tune pool size")):
        (repo / name).write_text(subject + "\n")
        subprocess.run([git, "-C", str(repo), "add", name], check=True)
        subprocess.run([git, "-C", str(repo), *ident, "commit", "-q", "-m", subject], check=True)
    return repo


@pytest.mark.skipif(bool(_missing("system", "git")), reason="system/git tool modules not there yet")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_host_health_and_recent_changes_against_the_real_tools(tmp_path: Path) -> None:
    inputs: dict[str, Any] = {"question": "the server is slow", "repo": str(_git_repo(tmp_path))}
    books = select_runbooks(inputs["question"], inputs, load_runbooks())
    assert [b.name for b in books] == ["host-health", "recent-changes"]
    call_tool = _real_call_tool(tmp_path, "system", "git")
    report = asyncio.run(run_runbooks(books, inputs, call_tool, lambda e: None, max_parallel=4))

    # logs_journal and logs_errors (the /var/log fallback) belong to the logs toolset (not loaded
    # here); the parts of the process table this host does not let us read are gaps; everything
    # else, analyzers included, must have understood the real tools' output.
    assert [g.tool for g in report.gaps if not _not_checked_here(g)] == [
        "logs_journal",
        "logs_errors",
    ]
    assert report.host == socket.gethostname()
    sources = {f.source.split(" ")[0] for f in report.findings}
    assert {"system_overview", "system_disk_usage", "system_memory", "system_failing_processes"} <= sources
    assert any(f.title.startswith(f"Host {socket.gethostname()}") for f in report.findings)
    (changes,) = [f for f in report.findings if f.source.startswith("git_log")]
    assert changes.severity == "medium"
    assert "config.yaml" in changes.detail
    assert changes.title.startswith("2 commits")
    assert "config.yaml | +1 -0" in changes.evidence


@pytest.mark.skipif(bool(_missing("system", "git", "logs")), reason="tool modules not there yet")
def test_all_shipped_runbooks_against_the_real_tools(tmp_path: Path) -> None:
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    log = tmp_path / "app.log"
    lines = [f"{now} INFO request ok id={i}" for i in range(50)]
    lines += [f"{now} ERROR db: connection refused to 10.0.0.{i}:5432" for i in range(20)]
    log.write_text("\n".join(lines) + "\n")
    inputs: dict[str, Any] = {"question": "the server is slow", "logs": [str(log)]}
    if shutil.which("git"):
        inputs["repo"] = str(_git_repo(tmp_path))
    books = select_runbooks(inputs["question"], inputs, load_runbooks())
    call_tool = _real_call_tool(tmp_path, "system", "git", "logs")
    report = asyncio.run(run_runbooks(books, inputs, call_tool, lambda e: None, max_parallel=4))

    assert report.runbooks[0] == "host-health"
    assert "log-errors" in report.runbooks
    # Only journald (and /var/log, outside this test's roots, read in its place) and parts of the
    # process table may be missing on a test machine; every other step and every analyzer worked.
    assert [
        g
        for g in report.gaps
        if g.tool != "logs_journal" and g.step != "host-health/var_log" and not _not_checked_here(g)
    ] == []
    assert report.host == socket.gethostname()
    assert any(f.source.startswith("logs_errors") and "×" in f.title for f in report.findings)
    if "repo" in inputs:
        assert any(f.source.startswith("git_log") and f.severity == "medium" for f in report.findings)
    # summary, findings, timeline, next steps, read, gaps
    assert render_markdown(report).count("\n## ") == 6
    # The timeline dates what the real tools read: the first error line, the commits, each call.
    kinds = {e.kind for e in report.timeline}
    assert {"error_onset", "tool_call", "finding"} <= kinds
    assert [e.at for e in report.timeline] == sorted(e.at for e in report.timeline)
    # (host-health reads the machine's own logs too: their first error is another entry)
    (onset,) = [e for e in report.timeline if e.label == "first error: db: connection refused to <IP>"]
    assert onset.at == datetime.strptime(now, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    calls = {e.tool_call_id for e in report.timeline if e.kind == "tool_call"}
    assert onset.tool_call_id in calls
    if "repo" in inputs:
        assert sum(e.kind == "commit" for e in report.timeline) == 2


@pytest.mark.skipif(bool(_missing("git")), reason="git tool module not there yet")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_recent_changes_understands_the_same_since_shorthand_as_the_logs_tools(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git is not None
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    old = datetime.fromtimestamp(time.time() - 5 * 3600, UTC).isoformat()
    for name, when in (("old.txt", old), ("new.txt", None)):
        (repo / name).write_text(name)
        subprocess.run([git, "-C", str(repo), "add", name], check=True)
        env = {"GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when} if when else {}
        subprocess.run(
            [git, "-C", str(repo), "-c", "user.name=A", "-c", "user.email=a@b", "commit", "-q", "-m", name],
            check=True,
            env={**os.environ, **env},
        )
    call_tool = _real_call_tool(tmp_path, "git")
    book = get_runbook("recent-changes")
    report = run([book], call_tool, {"repo": str(repo), "since": "2h"})
    (finding,) = [f for f in report.findings if f.source.startswith("git_log")]
    assert finding.title.startswith("1 commit ")


@pytest.mark.skipif(bool(_missing("git")), reason="git tool module not there yet")
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
@pytest.mark.parametrize("empty", [False, True])
def test_recent_changes_on_a_repository_with_one_commit_has_no_gap(tmp_path: Path, empty: bool) -> None:
    git = shutil.which("git")
    assert git is not None
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run([git, "init", "-q", str(repo)], check=True)
    if not empty:
        (repo / "app.yaml").write_text("replicas: 3\n")
        subprocess.run([git, "-C", str(repo), "add", "app.yaml"], check=True)
    ident = ["-c", "user.name=A", "-c", "user.email=a@b"]
    subprocess.run([git, "-C", str(repo), *ident, "commit", "-q", "--allow-empty", "-m", "init"], check=True)
    report = run([get_runbook("recent-changes")], _real_call_tool(tmp_path, "git"), {"repo": str(repo)})
    assert report.gaps == []
    (finding,) = [f for f in report.findings if f.source.startswith("git_log")]
    assert finding.title.startswith("1 commit ")
    assert ("app.yaml | +1 -0" in finding.evidence) is not empty


T0 = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)


def _stamp(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def _log_tools(root: Path, timeout_s: float = 60.0) -> dict[str, ToolEntry]:
    settings = Settings(
        files={"roots": [root]},  # type: ignore[arg-type]
        tools={"timeout_s": timeout_s},  # type: ignore[arg-type]
    )
    return logs.build(settings).entries


def _real(tools: dict[str, ToolEntry]) -> Any:
    """A ``call_tool`` running the real tool functions (what the middleware would call)."""

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        return call_entry(tools, name, **args)

    return call_tool


@pytest.mark.parametrize(
    ("name", "inputs", "given"),
    [
        ("pod-crashloop", {}, []),
        ("pod-crashloop", {"namespace": "checkout"}, ["checkout"]),
        ("pod-crashloop", {"pod": "api-1"}, ["api-1"]),
        ("recent-changes", {}, ["24 hours ago"]),
        ("metric-alert", {}, []),
    ],
)
def test_a_title_naming_a_missing_input_has_no_hole(
    name: str, inputs: dict[str, Any], given: list[str]
) -> None:
    """'Crashing pod  in checkout' was the title when the pod was not given: the runbook's plain
    title is used instead, with the values that were given."""
    book = get_runbook(name)
    title = run([book], fake_tools({}), inputs).title
    assert not re.search(r"\s\s|\s$|:$", title), title
    assert title.startswith(book.title)
    for value in given:
        assert value in title


@pytest.mark.parametrize(
    ("name", "inputs", "expected"),
    [
        ("pod-crashloop", {"pod": "api-1", "namespace": "checkout"}, "Crashing pod api-1 in checkout"),
        ("metric-alert", {"query": "up"}, "Metric alert: up"),
        (
            "metric-alert",
            {"alert_title": "HighLatency firing on web-1"},
            "Metric alert: HighLatency firing on web-1",
        ),
        ("host-health", {}, "Host health check (since 1h)"),
    ],
)
def test_a_title_whose_inputs_are_given_keeps_its_template(
    name: str, inputs: dict[str, Any], expected: str
) -> None:
    assert run([get_runbook(name)], fake_tools({}), inputs).title == expected


def _big_log(path: Path, errors: bool) -> None:
    lines = [
        f"{_stamp(T0 + timedelta(seconds=s))} {'ERROR' if errors and s % 7 == 0 else 'INFO'} job {s} finished"
        for s in range(9_000)
    ]
    path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("errors", [False, True])
def test_a_log_read_cut_short_by_the_time_budget_is_a_gap_not_an_all_clear(
    tmp_path: Path, errors: bool
) -> None:
    """logs_errors stops reading when its time is spent and marks the result partial; the report
    said "No errors found in the logs" (or counted errors as if all was read) with no gap."""
    _big_log(tmp_path / "big.log", errors)
    report = run([get_runbook("log-errors")], _real(_log_tools(tmp_path, 0.001)), {"logs": [str(tmp_path)]})
    titles = [f.title for f in report.findings]
    assert "No errors found in the logs" not in titles
    (gap,) = report.gaps
    assert gap.step == "log-errors/errors"
    assert "only part of the logs was read" in gap.reason
    assert "stopped reading after" in gap.reason
    if errors:
        (scope,) = [f for f in report.findings if f.title.endswith("groups") or f.title.endswith("group")]
        assert "counts cover only the lines read" in scope.detail
    else:
        assert titles == ["No errors in the part of the logs read (reading stopped early)"]

    whole = run([get_runbook("log-errors")], _real(_log_tools(tmp_path)), {"logs": [str(tmp_path)]})
    assert whole.gaps == []
    if not errors:
        assert [f.title for f in whole.findings] == ["No errors found in the logs"]


def test_many_tracebacks_without_a_level_rank_like_error_lines(tmp_path: Path) -> None:
    """30 tracebacks (no level on their lines) were low while 12 ERROR lines were medium."""
    lines = []
    for i in range(30):
        lines += [
            f"{_stamp(T0 + timedelta(minutes=i))} Traceback (most recent call last):",
            '  File "app.py", line 3, in <module>',
            f"ValueError: bad value {i}",
        ]
    lines += [f"{_stamp(T0 + timedelta(minutes=i, seconds=30))} ERROR request {i} failed" for i in range(12)]
    lines += [f"{_stamp(T0 + timedelta(hours=1, minutes=i))} connection refused once" for i in range(2)]
    (tmp_path / "app.log").write_text("\n".join(lines) + "\n")
    report = run([get_runbook("log-errors")], _real(_log_tools(tmp_path)), {"logs": [str(tmp_path)]})
    groups = [(f.title.split("×")[0], f.severity, f.detail) for f in report.findings if "×" in f.title]
    tracebacks = [g for g in groups if g[0] == "30"]
    assert tracebacks
    assert all(sev == "medium" and detail.startswith("Level unknown") for _, sev, detail in tracebacks)
    assert ("12", "medium") in [g[:2] for g in groups]
    assert ("2", "low") in [g[:2] for g in groups]  # below medium_count, whatever its level


def _journal(n: int) -> dict[str, Any]:
    entries = [{"unit": "app.service", "message": f"request {i} failed", "priority": "err"} for i in range(n)]
    return {"entries": entries, "count": n}


def test_journal_entries_at_the_steps_limit_are_a_floor_not_a_count() -> None:
    """journalctl -n 200 returns at most 200 entries; '200 error-priority journal entries' read as
    the whole count of the hour."""
    at_limit = ANALYZERS["journal_errors"](
        ev("logs_journal", _journal(200), args={"lines": 200}), {}, {"since": "1h"}
    )
    (finding,) = [f for f in at_limit if isinstance(f, Finding)]
    assert finding.title == "200+ error-priority journal entries since 1h"
    assert "newest 200" in finding.detail
    below = ANALYZERS["journal_errors"](ev("logs_journal", _journal(150), args={"lines": 200}), {}, {})
    (shown,) = [f for f in below if isinstance(f, Finding)]
    assert shown.title == "150 error-priority journal entries"
    assert "newest" not in shown.detail


def test_unreadable_log_output_does_not_cost_the_metric_finding() -> None:
    """A logs_errors result cut to text by the size cap made the whole metric_alert analyzer a gap:
    the anomalous series found by prom_anomalies disappeared from the report."""
    onset = datetime(2026, 11, 20, 14, 5, tzinfo=UTC)
    anomalies = {
        "query": "rate(errors_total[5m])",
        "step_s": 60,
        "series_total": 1,
        "series_analyzed": 1,
        "anomalous": [
            {
                "series": 'errors_total{job="api"}',
                "anomalies": [
                    {
                        "start": onset.isoformat(),
                        "end": (onset + timedelta(minutes=10)).isoformat(),
                        "kind": "level_shift",
                        "score": 0.8,
                        "explanation": "rate 4.2x its recent median since 14:05",
                    }
                ],
            }
        ],
    }
    cut = ToolResult(status="success", data='{"groups": [{"shape": "db tim', metadata={"truncated": True})
    tools = {"prom_anomalies": anomalies, "logs_errors": cut}
    inputs = {"query": "rate(errors_total[5m])", "logs": ["/var/log/app.log"], "onset": onset.isoformat()}
    report = run([get_runbook("metric-alert")], fake_tools(tools), inputs)
    (finding,) = report.findings
    assert finding.title.startswith('errors_total{job="api"} shifted level at 2026-11-20 14:05 UTC')
    assert "logs could not be read" in finding.detail
    (gap,) = [g for g in report.gaps if g.tool == "analyzer:metric_alert"]
    assert gap.step == "metric-alert/errors"
    assert "truncated by the size cap" in gap.reason
    # the alert's start heads the timeline; the finding sits where the metric's call came back
    start = report.timeline[0]
    assert (start.kind, start.at, start.label) == ("alert_start", onset, "the alert started")
    (placed,) = [e for e in report.timeline if e.kind == "finding"]
    metric_call = next(
        e for e in report.timeline if e.kind == "tool_call" and e.label.startswith("prom_anomalies")
    )
    assert placed.tool_call_id == metric_call.tool_call_id
    assert placed.at >= metric_call.at


def test_the_window_is_not_claimed_for_a_runbook_that_read_everything() -> None:
    """With --query and --logs and no --since, log-errors reads the whole files but the report
    said "(since 6h)", metric-alert's default, for all of it."""
    tools = {"prom_anomalies": ToolResult.empty("no anomalies"), "logs_errors": ToolResult.empty("no errors")}
    inputs = {"query": "up", "logs": ["/var/log/app.log"]}
    both = run([get_runbook("metric-alert"), get_runbook("log-errors")], fake_tools(tools), inputs)
    assert both.window is None
    assert "6h" not in both.summary
    alone = run([get_runbook("metric-alert")], fake_tools(tools), inputs)
    assert alone.window == "since 6h"
    # pod-crashloop reads no window: it does not take host-health's away
    mixed = run([get_runbook("host-health"), get_runbook("pod-crashloop")], fake_tools({}), {})
    assert mixed.window == "since 1h"
    given = run(
        [get_runbook("metric-alert"), get_runbook("log-errors")], fake_tools(tools), {**inputs, "since": "2h"}
    )
    assert given.window == "since 2h"


HEAD = "name: x\ntitle: X\nsteps:\n  - id: a\n    tool: system_overview\n"


@pytest.mark.parametrize(
    ("tail", "line", "expected"),
    [
        ("  - id: b\n    tool: t\n    descripton: typo\n", 8, "steps[1].descripton: unknown key"),
        (
            "  - id: b\n    tool: t\n    args: {unit: '{{ service }}'}\n",
            8,
            "steps[1].args: unknown template value(s) service",
        ),
        ("  - id: b\n    tool: t\n  - id: a\n    tool: u\n", 8, "steps[2].id: duplicate step ids: a"),
        ("  - id: b\n    tool: t\n    when: nope\n", 8, "steps[1].when: unknown input 'nope'"),
        ("analyzers:\n  - use: cpu_load\n    on: [zz]\n", 8, "analyzers[0].on: unknown step(s) zz"),
    ],
)
def test_validation_errors_name_the_line_and_the_field(
    tmp_path: Path, tail: str, line: int, expected: str
) -> None:
    """The message named the file and the field but no line, and a whole-runbook check (unknown
    template value, duplicate id) said "(top level)" instead of the field."""
    path = write(tmp_path, HEAD + tail)
    with pytest.raises(ConfigError) as info:
        load_runbooks([tmp_path])
    assert info.value.message.startswith(f"{path}:{line}: {expected}"), info.value.message
    assert "(top level)" not in info.value.message


def test_every_analyzer_result_is_a_finding_a_gap_or_what_it_read() -> None:
    """The analyzers changed here return gaps among their findings, and what they read; the
    engine sorts them."""
    for name in ("log_error_groups", "journal_errors", "metric_alert"):
        assert name in ANALYZERS
    found = ANALYZERS["log_error_groups"](
        ev(
            "logs_errors",
            None,
            status="no_data",
            hint="no errors in 10 lines",
            metadata={"partial": True, "matched_lines": 10},
        ),
        {},
        {},
    )
    assert [type(f) for f in found] == [Checked, Finding, Gap]
    assert found[0].read == 10


def test_non_fatal_errors_are_not_ranked_as_fatal() -> None:
    from devops_agent.runbooks.analyzers.logs import group_severity

    def group(text: str) -> dict[str, object]:
        return {"level": "ERROR", "count": 2, "shape": text, "examples": [text]}

    assert group_severity(group("non-fatal error while flushing metrics, retrying"), 10) == "low"
    assert group_severity(group("Non fatal: cache miss storm"), 10) == "low"
    assert group_severity(group("fatal error: out of file descriptors"), 10) == "high"
    assert group_severity(group("kernel panic - not syncing"), 10) == "high"
