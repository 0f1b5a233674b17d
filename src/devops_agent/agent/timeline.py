"""The incident timeline of a run's report, from the events the run emitted.

The runbook engine builds its own (it knows its calls); every other path — a model's loop, a
plan, a council, triage — ends with a report whose timeline is filled here (by the runner before
it renders the report, :func:`report_with_timeline`, or else just before ``run_finished``), from
the run's ``tool_call`` / ``tool_result`` events (their times and the evidence the results
carried) and the report's findings (by the calls they cite). A report that already has a
timeline is left as it is.

This module must not import the runtime or any interface.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from devops_agent.events import RunEvent, ToolCall, ToolResultEvent
from devops_agent.evidence import TimelineEntry, parse_time
from devops_agent.report import CallMoment, Finding, Report, incident_timeline


def call_moments(events: Sequence[RunEvent]) -> list[CallMoment]:
    """Each call that finished, in the order it started: when, what came back, its evidence."""
    started: dict[str, ToolCall] = {}
    moments: list[CallMoment] = []
    for event in events:
        if isinstance(event, ToolCall):
            started.setdefault(event.tool_call_id, event)
        elif isinstance(event, ToolResultEvent):
            call = started.get(event.tool_call_id)
            moments.append(
                CallMoment(
                    tool_call_id=event.tool_call_id,
                    tool=event.tool,
                    started_at=call.ts if call is not None else event.ts,
                    ended_at=event.ts,
                    status=event.status,
                    evidence=event.evidence,
                    step=event.agent or "",
                )
            )
    moments.sort(key=lambda m: m.started_at)
    return moments


def _timeline(
    findings: Sequence[Finding], events: Sequence[RunEvent], inputs: Mapping[str, Any]
) -> list[TimelineEntry] | None:
    """The timeline of a run that emitted ``events`` and found ``findings`` (``None`` when it made
    no call and has no ``onset``); the alert's start is the run's ``onset`` input when it has one."""
    moments = call_moments(events)
    onset = parse_time(inputs.get("onset"))
    if not moments and onset is None:
        return None
    label = str(inputs.get("alert_title") or "") or "the alert started"
    return incident_timeline(moments, findings, alert_start=onset, alert_label=label)


def report_with_timeline(report: Report, events: Sequence[RunEvent], inputs: Mapping[str, Any]) -> Report:
    """``report`` with its timeline filled from ``events`` when it has none: for a runner to call
    before it renders the report, so the Markdown and the report show the same timeline."""
    if report.timeline:
        return report
    timeline = _timeline(report.findings, events, inputs)
    return report.model_copy(update={"timeline": timeline}) if timeline else report


def with_timeline(
    report: dict[str, Any] | None, events: Sequence[RunEvent], inputs: Mapping[str, Any]
) -> dict[str, Any] | None:
    """``report`` (as the run ends it: JSON) with its ``timeline`` filled from ``events`` when it
    has none (and the run made calls or has an ``onset``)."""
    if report is None or report.get("timeline"):
        return report
    findings: list[Finding] = []
    for raw in report.get("findings") or []:
        try:
            findings.append(Finding.model_validate(raw))
        except ValidationError:
            continue  # a finding the report could not type has no time to place it at
    timeline = _timeline(findings, events, inputs)
    if timeline is None:
        return report
    return {**report, "timeline": [e.model_dump(mode="json") for e in timeline]}
