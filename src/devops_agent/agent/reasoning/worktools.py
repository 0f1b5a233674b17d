"""The deterministic runbooks and analyzers as tools a model calls: the model orchestrates, the
analyzers compute.

``run_runbook`` runs one runbook (its steps through the run's pipeline, as the runbook runner
does: read-only, approvals refused) and returns its findings, gaps and what it read;
``analyze_logs`` is the log-errors runbook on the files given. They join the run's pipeline as
an ``extra`` toolset, so their results are recorded, capped and masked like any tool's, and a
finding may cite them. Their own calls are events of the agent ``runbook:NAME``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from devops_agent.agent.runners.base import RunScope
from devops_agent.agent.runners.offline import offline_caller
from devops_agent.events import RunEvent, ToolCall, ToolResultEvent
from devops_agent.runbooks import Runbook, run_runbooks
from devops_agent.tools.base import ToolResult, ToolsetBuilder

TOOLSET = "reasoning"
LOG_RUNBOOK = "log-errors"
WORK_TOOLS = ("run_runbook", "analyze_logs")
"""The names of the tools this module makes (a specialist names them to get them)."""


def _brief(report: Any) -> dict[str, Any]:
    """What the model reads of a runbook's report: verdict, findings, gaps, what was read."""
    data = report.model_dump(mode="json")
    keep = ("title", "verdict", "summary", "findings", "gaps", "checks", "next_steps")
    return {k: data[k] for k in keep if k in data}


def work_tools(scope: RunScope, runbooks: Sequence[Runbook]) -> ToolsetBuilder:
    """``run_runbook`` and ``analyze_logs`` for one run (they call its pipeline)."""
    by_name = {rb.name: rb for rb in runbooks}
    ts = ToolsetBuilder(TOOLSET, "Runbooks and analyzers as tools")

    async def run_one(name: str, inputs: dict[str, Any]) -> ToolResult:
        runbook = by_name.get(name)
        if runbook is None:
            return ToolResult.fail(
                f"unknown runbook {name!r}", f"the runbooks are: {', '.join(sorted(by_name))}"
            )
        label = f"runbook:{name}"

        def sink(event: RunEvent) -> None:
            if isinstance(event, ToolCall | ToolResultEvent):  # its plan is its own business
                scope.emit(event.model_copy(update={"agent": label, **scope.ids}))

        report = await run_runbooks(
            [runbook],
            {k: v for k, v in inputs.items() if v not in (None, "", [])},
            offline_caller(scope),
            sink,
            max_parallel=scope.settings.runbooks.max_parallel,
            **scope.ids,
        )
        return ToolResult.ok(_brief(report))

    async def run_runbook(name: str, inputs: dict[str, Any] | None = None) -> ToolResult:
        return await run_one(name, inputs or {})

    run_runbook.__doc__ = (
        "Run a deterministic runbook: its steps gather evidence and its analyzers compute findings "
        "(verdict, findings with evidence, gaps, what was read). Runbooks and their inputs: "
        + "; ".join(f"{rb.name} ({', '.join(rb.inputs) or 'no inputs'}): {rb.title}" for rb in runbooks)
    )
    ts.tool(category="runbooks", read_only=True)(run_runbook)

    if LOG_RUNBOOK in by_name:

        async def analyze_logs(
            paths: list[str], since: str | None = None, until: str | None = None
        ) -> ToolResult:
            """Analyze log files: error lines grouped by shape, with counts, first and last seen,
            spikes and examples, as findings (the log-errors runbook's analysis)."""
            return await run_one(LOG_RUNBOOK, {"logs": paths, "since": since, "until": until})

        ts.tool(category="logs", read_only=True)(analyze_logs)
    return ts
