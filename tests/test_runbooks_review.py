"""Review of the runbook engine and the non-Kubernetes analyzers: defects found and fixed.

Each test runs the real engine (``run_runbooks``) or a registered analyzer; tool results come
from the real logs tools where they can run here (files under ``tmp_path``) and otherwise from
the ``fake_tools`` / ``ev`` stand-ins of ``tests/test_runbooks.py``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from devops_agent.config import Settings
from devops_agent.errors import ConfigError
from devops_agent.report import Checked, Finding, Gap
from devops_agent.runbooks import ANALYZERS, get_runbook, load_runbooks
from devops_agent.tools import logs
from devops_agent.tools.base import ToolEntry, ToolResult
from test_log_tools_review import _call
from test_runbooks import ev, fake_tools, run, write

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
        return _call(tools, name, **args)

    return call_tool


# --- report titles -----------------------------------------------------------------------------


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


# --- partial reads -----------------------------------------------------------------------------


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


# --- severity ----------------------------------------------------------------------------------


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


# --- journal -----------------------------------------------------------------------------------


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


# --- metric alert ------------------------------------------------------------------------------


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


# --- report window -----------------------------------------------------------------------------


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


# --- validation messages -----------------------------------------------------------------------

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
