"""The offline runbook engine: gather evidence with bounded fan-out, analyze it, build a Report.

The engine is handed a ``call_tool`` (the session's tool middleware, by tool name) and an
``emit`` event sink; it never imports tools or policies, so every call still passes through
modes, privacy, limits and telemetry. Identical ``(tool, args)`` calls of several runbooks run
once. A failed or skipped step never stops the run: it becomes a :class:`Gap` in the report,
and no finding is invented for evidence that was not gathered.

Events are built with ``seq=0``; the sink is expected to stamp the per-run ``seq`` as it
receives them (events arrive in the order they happen: ``PlanProposed`` first, each
``ToolCall`` before its ``ToolResultEvent``).

This module must not import tools, middleware or interfaces, and must not create tasks it does
not await (everything runs inside one ``asyncio.TaskGroup``).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from devops_agent.errors import DevOpsAgentError
from devops_agent.events import PlanProposed, RunEvent, ToolCall, ToolResultEvent
from devops_agent.evidence import parse_time
from devops_agent.report import CallMoment, Checked, Finding, Gap, Report, incident_timeline
from devops_agent.results import ToolResult
from devops_agent.runbooks.analysis import analyze, build_report
from devops_agent.runbooks.model import Runbook
from devops_agent.runbooks.plan import PlannedCall, jsonable, plan_runbooks

CallTool = Callable[[str, dict[str, Any]], Awaitable[ToolResult]]
"""Runs one tool by name through the middleware; returns an error ``ToolResult`` on failure."""

Emit = Callable[[RunEvent], Awaitable[None] | None]
"""Receives every event; may be sync or async."""


async def emit_event(emit: Emit, event: RunEvent) -> None:
    """Send ``event`` to a sink that may be sync or async."""
    outcome = emit(event)
    if inspect.isawaitable(outcome):
        await outcome


def result_summary(result: ToolResult) -> str:
    """A one-line description of a result for the ``tool_result`` event."""
    if result.status == "error":
        return "error: " + " ".join((result.error or "failed").split())[:120]
    if result.status == "no_data":
        return "no data" + (f": {result.hint[:100]}" if result.hint else "")
    if result.status == "approval_required":
        return "approval required"
    data = result.data
    if isinstance(data, list):
        return f"{len(data)} item{'s' if len(data) != 1 else ''}"
    if isinstance(data, dict):
        lists = [(k, v) for k, v in data.items() if isinstance(v, list)]
        if len(lists) == 1:
            return f"{len(lists[0][1])} {lists[0][0]}"
        return f"{len(data)} fields"
    if isinstance(data, str):
        return f"{len(data)} characters"
    return "ok"


async def call_guarded(call_tool: CallTool, tool: str, args: dict[str, Any]) -> ToolResult:
    """Call a tool; anything it raises becomes an error result, so one bad tool cannot end a run."""
    try:
        return await call_tool(tool, dict(args))
    except DevOpsAgentError as exc:
        return ToolResult.fail(exc.message, hint=exc.hint)
    except Exception as exc:  # the contract says call_tool never raises; one bad tool must not end the run
        return ToolResult.fail(
            f"{tool} raised {type(exc).__name__}: {exc}",
            hint="this is a bug in the tool or its middleware; the other steps still ran",
        )


async def _execute(
    call: PlannedCall, call_tool: CallTool, emit: Emit, sem: asyncio.Semaphore, ids: tuple[str, str]
) -> None:
    session_id, run_id = ids
    async with sem:
        await emit_event(
            emit,
            ToolCall(
                session_id=session_id,
                run_id=run_id,
                tool_call_id=call.call_id,
                tool=call.tool,
                args=call.args,
            ),
        )
        started = time.perf_counter()
        call.started_at = datetime.now(UTC)
        result = await call_guarded(call_tool, call.tool, call.args)
        measured = (time.perf_counter() - started) * 1000
    call.result = result
    call.ended_at = datetime.now(UTC)
    call.duration_ms = float(result.metadata.get("duration_ms") or measured)
    await emit_event(
        emit,
        ToolResultEvent(
            session_id=session_id,
            run_id=run_id,
            tool_call_id=call.call_id,
            tool=call.tool,
            status=result.status,
            duration_ms=round(call.duration_ms, 1),
            truncated=bool(result.metadata.get("truncated", False)),
            error=result.error,
            summary=result_summary(result),
            evidence=result.evidence,
        ),
    )


def _gathered_nothing(result: ToolResult | None) -> bool:
    return result is None or result.status != "success"


def _failure_gap(call: PlannedCall) -> Gap | None:
    result = call.result
    if result is None or result.status in ("success", "no_data"):
        return None
    if result.status == "approval_required":
        reason = "needs approval; offline runbooks only run what the current mode allows"
    else:
        reason = result.error or "the tool failed without a message"
    return Gap(step=call.step_names, tool=call.tool, reason=reason, hint=result.hint)


async def run_runbooks(
    runbooks: Sequence[Runbook],
    inputs: Mapping[str, Any],
    call_tool: CallTool,
    emit: Emit,
    *,
    max_parallel: int,
    session_id: str = "local",
    run_id: str = "local",
) -> Report:
    """Run ``runbooks`` for ``inputs`` and return the merged report.

    At most ``max_parallel`` tool calls are in flight at once. Events carry ``session_id`` and
    ``run_id`` and ``seq=0`` (the sink stamps ``seq``). Tool failures become gaps; the report is
    always produced.
    """
    if max_parallel < 1:
        raise ValueError("max_parallel must be at least 1")
    started = time.perf_counter()
    inputs = jsonable(inputs)
    plan = plan_runbooks(runbooks, inputs)
    await emit_event(
        emit, PlanProposed(session_id=session_id, run_id=run_id, steps=[c.label() for c in plan.calls])
    )

    sem = asyncio.Semaphore(max_parallel)
    async with asyncio.TaskGroup() as group:
        for call in plan.calls:
            if not call.fallback_for:
                group.create_task(_execute(call, call_tool, emit, sem, (session_id, run_id)))
    # Fallbacks run once what they stand in for came back empty (no journal: read /var/log).
    outcome = {name: c.result for c in plan.calls for name in c.step_names.split(", ")}
    async with asyncio.TaskGroup() as group:
        for call in plan.calls:
            if call.fallback_for and any(_gathered_nothing(outcome.get(n)) for n in call.fallback_for):
                group.create_task(_execute(call, call_tool, emit, sem, (session_id, run_id)))

    gaps = list(plan.gaps)
    gaps += [gap for call in plan.calls if (gap := _failure_gap(call)) is not None]
    findings: list[Finding] = []
    checks: list[Checked] = []
    for runbook in runbooks:
        found, analysis_gaps, read = analyze(runbook, plan.calls, plan.contexts[runbook.name])
        findings += found
        gaps += analysis_gaps
        checks += read
    statuses = [c.result.status for c in plan.calls if c.result is not None]
    stats: dict[str, Any] = {
        "steps": plan.steps,
        "tool_calls": len(statuses),
        "fallbacks_not_needed": sum(1 for c in plan.calls if c.result is None),
        "deduplicated": plan.steps - plan.skipped - plan.unrenderable - len(plan.calls),
        "succeeded": statuses.count("success"),
        "no_data": statuses.count("no_data"),
        "failed": len(statuses) - statuses.count("success") - statuses.count("no_data"),
        "skipped": plan.skipped,
        "max_parallel": max_parallel,
        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    report = build_report(runbooks, inputs, plan.contexts, plan.calls, findings, gaps, stats, checks)
    report.timeline = incident_timeline(
        call_moments(plan.calls),
        report.findings,
        alert_start=parse_time(inputs.get("onset")),
        alert_label=str(inputs.get("alert_title") or "") or "the alert started",
    )
    return report


def call_moments(calls: Sequence[PlannedCall]) -> list[CallMoment]:
    """The calls that ran, for the report's timeline."""
    return [
        CallMoment(
            tool_call_id=c.call_id,
            tool=c.tool,
            started_at=c.started_at,
            ended_at=c.ended_at or c.started_at,
            status=c.result.status,
            evidence=c.result.evidence,
            step=c.step_names,
        )
        for c in calls
        if c.result is not None and c.started_at is not None
    ]
