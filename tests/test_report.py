"""The structured report: ranking, the generated summary, Markdown sections and JSON round-trip."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import ValidationError

from devops_agent.report import (
    Checked,
    Finding,
    Gap,
    Report,
    derive_verdict,
    rank_findings,
    render_markdown,
    summarize,
)


def _finding(severity: str, title: str, **kw: object) -> Finding:
    return Finding.model_validate({"severity": severity, "title": title, **kw})


def _report(**kw: object) -> Report:
    findings = [
        _finding("low", "3 zombie processes"),
        _finding(
            "high",
            "Disk / is 93% full",
            detail="3.5 GiB left on /.",
            evidence=["/ 93.0% used: 46.5 GiB of 50.0 GiB, 3.5 GiB free (/dev/sda1, ext4)"],
            source="system_disk_usage (host-health/disk)",
            next_steps=["Find what grew: `du -xh --max-depth=2 /`"],
        ),
        _finding("info", "Host web-1: Ubuntu 22.04, up 3d 4h"),
        _finding("critical", "Only 2.0% of memory is available"),
        _finding("high", "1 OOM kill: java"),
    ]
    data: dict[str, object] = {
        "title": "Host health check",
        "question": "why is web-1 slow?",
        "findings": findings,
        "next_steps": ["Compare with a normal period"],
        "gaps": [
            Gap(
                step="host-health/journal",
                tool="logs_journal",
                reason="journalctl not found",
                hint="use log files",
            )
        ],
        "runbooks": ["host-health"],
        "host": "web-1",
        "window": "since 1h",
        "stats": {"tool_calls": 7},
    }
    data.update(kw)
    return Report.model_validate(data)


def test_rank_findings_orders_by_severity_and_keeps_order_within_a_severity() -> None:
    ranked = rank_findings(_report().findings)
    assert [f.severity for f in ranked] == ["critical", "high", "high", "low", "info"]
    assert [f.title for f in ranked[1:3]] == ["Disk / is 93% full", "1 OOM kill: java"]


def test_unknown_severity_is_rejected() -> None:
    with pytest.raises(ValidationError):
        _finding("urgent", "x")


def test_summary_counts_problems_names_the_top_one_host_window_and_gaps() -> None:
    report = _report()
    text = summarize(report.findings, host="web-1", window="since 1h", gaps=report.gaps)
    assert text.startswith("Found 4 problems on web-1 (since 1h): 1 critical, 2 high, 1 low.")
    assert "Most severe: [CRITICAL] Only 2.0% of memory is available." in text
    assert "1 item could not be gathered" in text
    assert "info" not in text.split("Most severe")[0]


def _checked(read: int, unit: str = "log lines", **kw: object) -> Checked:
    return Checked.model_validate({"step": "rb/s", "tool": "t", "read": read, "unit": unit, **kw})


def test_summary_without_problems_is_an_all_clear_only_when_every_check_read_data() -> None:
    ok = summarize(
        [_finding("info", "Memory OK")], host="db-2", checks=[_checked(120), _checked(3, "series")]
    )
    assert (
        ok
        == "No problems found on db-2: every check read its source in the window (120 log lines, 3 series) and nothing is above info."
    )
    # the defect: "no errors in 0 lines" was an all-clear
    none = summarize([_finding("info", "No errors")], checks=[_checked(0)])
    assert none.startswith("Inconclusive: nothing could be read")
    assert summarize([]) == "Inconclusive: nothing could be read."
    gap = Gap(step="rb/s", tool="t", reason="journalctl not found")
    partly = summarize([], checks=[_checked(5)], gaps=[gap, gap])
    assert partly.startswith("Inconclusive: no problem in what was read (5 log lines), but not everything")
    assert "— journalctl not found." in partly
    assert "2 items could not be gathered" in partly


def test_the_verdict_is_derived_from_the_evidence_and_cannot_be_set() -> None:
    assert derive_verdict([], [], []) == "inconclusive"
    assert derive_verdict([_finding("info", "x")], [], [_checked(1)]) == "all_clear"
    assert derive_verdict([_finding("info", "x")], [], [_checked(1), _checked(0)]) == "inconclusive"
    # no commit in the window is an answer; no log line is not
    assert derive_verdict([], [], [_checked(0, "commits", empty_is_answer=True)]) == "all_clear"
    assert (
        derive_verdict([_finding("low", "x")], [Gap(step="a", tool="b", reason="c")], []) == "problems_found"
    )
    report = Report.model_validate(
        {"title": "t", "verdict": "all_clear", "checks": [_checked(0).model_dump()]}
    )
    assert report.verdict == "inconclusive"
    assert report.model_dump(mode="json")["verdict"] == "inconclusive"


def test_markdown_has_every_section_in_order_even_when_empty() -> None:
    text = render_markdown(Report(title="Nothing to see"))
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert headings == [
        "# Nothing to see",
        "## Summary",
        "## Findings",
        "## Next steps",
        "## What was read",
        "## What could not be gathered",
    ]
    assert "**Verdict:** inconclusive" in text
    assert "Nothing was recorded as read: the report cannot be an all-clear." in text
    assert "No findings." in text
    assert "Nothing — every step succeeded." in text


def test_markdown_findings_are_ranked_with_severity_headings_evidence_and_steps() -> None:
    report = _report(summary="custom summary")
    text = render_markdown(report)
    headings = [line for line in text.splitlines() if line.startswith("### ")]
    assert headings == [
        "### [CRITICAL] Only 2.0% of memory is available",
        "### [HIGH] Disk / is 93% full",
        "### [HIGH] 1 OOM kill: java",
        "### [LOW] 3 zombie processes",
        "### [INFO] Host web-1: Ubuntu 22.04, up 3d 4h",
    ]
    disk = text.split("### [HIGH] Disk / is 93% full")[1].split("###")[0]
    assert "3.5 GiB left on /." in disk
    assert "```text\n/ 93.0% used: 46.5 GiB of 50.0 GiB, 3.5 GiB free (/dev/sda1, ext4)\n```" in disk
    assert "*Source: system_disk_usage (host-health/disk)*" in disk
    assert "- Find what grew: `du -xh --max-depth=2 /`" in disk
    assert "custom summary" in text
    assert "**Question:** why is web-1 slow?" in text
    assert "1. Compare with a normal period" in text
    assert "- **host-health/journal** (`logs_journal`): journalctl not found — use log files" in text
    assert "Nothing — every step succeeded." not in text


def test_markdown_generates_a_summary_when_none_was_set() -> None:
    text = render_markdown(_report())
    summary = text.split("## Summary")[1].split("## Findings")[0]
    assert "Found 4 problems" in summary


def test_evidence_containing_backtick_fences_cannot_break_out() -> None:
    evil = "```\n# injected heading"
    text = render_markdown(_report(findings=[_finding("medium", "odd output", evidence=evil.splitlines())]))
    # A longer fence keeps the quoted ``` and "# heading" inside the code block.
    assert "````text\n```\n# injected heading\n````" in text


def test_report_json_round_trips() -> None:
    report = _report()
    again = Report.model_validate_json(report.model_dump_json())
    assert again == report
    assert again.generated_at.tzinfo is not None
    assert again.findings[1].evidence == report.findings[1].evidence


def test_incident_timeline_places_calls_moments_and_findings() -> None:
    from datetime import timedelta

    from devops_agent.evidence import Evidence, entry
    from devops_agent.report import CallMoment, incident_timeline

    t0 = datetime(2026, 11, 27, 14, 0, tzinfo=UTC)
    commit = entry(t0 - timedelta(hours=1), "commit", "abc123 Raise pool size (Dana)")
    calls = [
        CallMoment("c1", "git_log", t0, t0 + timedelta(seconds=2), "success", Evidence(timeline=[commit])),
        CallMoment("c2", "logs_errors", t0, t0 + timedelta(seconds=5), "success", step="log-errors/errors"),
    ]
    findings = [
        Finding(severity="high", title="refused", source="logs_errors (log-errors/errors)"),
        Finding(severity="medium", title="a change", citations=["c1"]),
        Finding(severity="low", title="from nowhere", source="k8s_events"),
    ]
    timeline = incident_timeline(
        calls, findings, alert_start=t0 - timedelta(minutes=5), alert_label="HighErrors"
    )
    assert [(e.kind, e.label, e.tool_call_id) for e in timeline] == [
        ("commit", "abc123 Raise pool size (Dana)", "c1"),
        ("alert_start", "HighErrors", None),
        ("tool_call", "git_log: success", "c1"),
        ("tool_call", "logs_errors (log-errors/errors): success", "c2"),
        ("finding", "[MEDIUM] a change", "c1"),
        ("finding", "[HIGH] refused", "c2"),
    ]  # a finding whose call is not among the calls has no time to be placed at
    report = Report(title="t", findings=findings, timeline=timeline)
    text = render_markdown(report)
    section = text.split("## Timeline\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section == [
        "- 2026-11-27 13:00:00 UTC — commit: abc123 Raise pool size (Dana) · `c1`",
        "- 2026-11-27 13:55:00 UTC — alert start: HighErrors",
        "- 2026-11-27 14:00:02 UTC — finding: [MEDIUM] a change · `c1`",
        "- 2026-11-27 14:00:05 UTC — finding: [HIGH] refused · `c2`",
    ]  # the calls are in the events; the Markdown lists the incident's moments
    assert "## Timeline" not in render_markdown(Report(title="t"))
