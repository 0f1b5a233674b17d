"""The offline path: runbooks and the triage workflow, calling tools without a model.

:func:`make_call_tool` gives runbooks the same tool pipeline the model loop has — the safety
guard's verdict (only ``allow`` runs: offline runs never wait for a person), then the
middleware — with sync tools on a dedicated thread pool sized for runbook fan-out (the default
pool on a 2-core machine holds 6 threads, fewer than the 8 in-flight calls triage allows).
:func:`run_offline` picks what to run: the triage workflow for a ticket, else the YAML
runbooks named or selected for the question.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from devops_agent.agent.report import Report, render_markdown
from devops_agent.config import Settings
from devops_agent.errors import NotFoundError, UserError
from devops_agent.events import RunEvent
from devops_agent.policies.guard import NEEDS_APPROVAL, Verdict, evaluate, execution_record
from devops_agent.policies.middleware import ToolMiddleware
from devops_agent.policies.modes import Mode
from devops_agent.runbooks import CallTool, Runbook, load_runbooks, run_runbooks, select_runbooks
from devops_agent.runbooks.question_inputs import inputs_from_question
from devops_agent.runbooks.triage import NAME as TRIAGE
from devops_agent.runbooks.triage import TriageCache, find_ticket_ref, render_triage_markdown, run_triage
from devops_agent.tools.base import ToolResult
from devops_agent.tools.registry import ToolCatalog
from devops_agent.tools.sandbox import confinement

_TOOL_THREADS = ThreadPoolExecutor(max_workers=16, thread_name_prefix="devops-agent-tool")

AuditFn = Callable[[str, str | None, Verdict, str, dict[str, Any]], None]


def make_call_tool(
    catalog: ToolCatalog,
    settings: Settings,
    mode: Mode,
    middleware: ToolMiddleware,
    audit: AuditFn,
    *,
    approver: str | None = None,
) -> CallTool:
    """``call_tool(name, args) -> ToolResult`` through the guard and the middleware.

    With ``approver`` (a person who approved these calls outside a model run, e.g. posting a
    report back to its ticket), calls that need approval run too and are audited in their name;
    rejected and halted calls never run. Commands allowed as read-only run in the read-only
    sandbox, and a write it refused is audited (``sandbox_denied``).
    """

    async def call_tool(name: str, args: dict[str, Any]) -> ToolResult:
        try:
            entry = catalog.get(name)
        except NotFoundError as exc:
            return ToolResult.fail(exc.message, exc.hint)
        verdict = evaluate(name, entry.spec, args, mode, settings.safety)
        approved = approver is not None and verdict.decision in NEEDS_APPROVAL
        if verdict.decision != "allow" and not approved:
            audit(name, None, verdict, "rejected", {})
            return ToolResult.fail(verdict.reason, verdict.hint or "runbooks run only what policy allows")

        async def call() -> Any:
            try:
                bound = entry.bind_args(args)
            except TypeError as exc:
                return ToolResult.fail(
                    f"invalid arguments for {name}: {exc}", "check the runbook step's args"
                )
            if inspect.iscoroutinefunction(entry.function):
                return await entry.function(*bound.args, **bound.kwargs)
            loop = asyncio.get_running_loop()
            # The run's context (e.g. the current session) travels with the call to the thread.
            job = functools.partial(
                contextvars.copy_context().run, entry.function, *bound.args, **bound.kwargs
            )
            return await loop.run_in_executor(_TOOL_THREADS, job)

        with confinement(verdict.confine and not approved):
            result = await middleware.invoke(name, args, call, spec=entry.spec)
        outcome, extra = execution_record(result)
        if approved:
            audit(name, None, verdict, outcome, {"approved": True, **extra})
        elif outcome == "sandbox_denied":
            audit(name, None, verdict, outcome, extra)
        return result

    return call_tool


def named_runbooks(names: Sequence[str], available: Sequence[Runbook]) -> list[Runbook]:
    """The runbooks called ``names``, in order. The triage workflow may be named, but only alone
    (it is not a YAML runbook, so it is not returned here).

    Raises :class:`UserError` for triage among others, :class:`NotFoundError` for an unknown name,
    naming every runbook that exists.
    """
    if list(names) == [TRIAGE]:
        return []
    by_name = {rb.name: rb for rb in available}
    for name in names:
        if name == TRIAGE:
            raise UserError(
                f"the {TRIAGE} workflow runs alone, not with other runbooks",
                hint=f"run {TRIAGE} on its own: `devops-agent triage KEY`",
            )
        if name not in by_name:
            known = ", ".join([*by_name, TRIAGE])
            raise NotFoundError(
                f"unknown runbook {name!r} (known: {known})", hint="`devops-agent runbooks list`"
            )
    return [by_name[n] for n in names]


def triage_ref(prompt: str, inputs: dict[str, Any], settings: Settings, catalog: ToolCatalog) -> str | None:
    """The ticket to triage, when this run is a triage: named, or a Jira key in the question."""
    if inputs.get("ticket"):
        return str(inputs["ticket"])
    names = inputs.get("runbooks") or []
    projects = settings.jira.projects
    if names == [TRIAGE]:
        return find_ticket_ref(prompt, projects=projects, any_case=True) or prompt
    if not names and settings.jira.url and "jira_issue" in catalog.entries:
        return find_ticket_ref(prompt, projects=projects)
    return None


async def run_offline(
    prompt: str,
    inputs: dict[str, Any],
    *,
    settings: Settings,
    catalog: ToolCatalog,
    call_tool: CallTool,
    emit: Callable[[RunEvent], None],
    announce: Callable[[list[str]], None],
    triage_cache: TriageCache,
    session_id: str,
    run_id: str,
) -> tuple[Report, str]:
    """Run triage or the chosen runbooks; return the report and its Markdown."""
    ticket = triage_ref(prompt, inputs, settings, catalog)
    if ticket is not None:
        announce([TRIAGE])
        report = await run_triage(
            ticket,
            call_tool,
            emit,
            max_parallel=max(8, settings.runbooks.max_parallel),
            cache=triage_cache,
            session_id=session_id,
            run_id=run_id,
        )
        return report, render_triage_markdown(report)
    available = load_runbooks(settings.runbooks.extra_dirs)
    names = inputs.pop("runbooks", None)
    if names:
        chosen = named_runbooks(names, available)
    else:
        chosen = select_runbooks(prompt, inputs, available)
    inputs.setdefault("question", prompt)
    derived = inputs_from_question(prompt, chosen, inputs)
    inputs.update(derived)
    announce([r.name for r in chosen])
    report = await run_runbooks(chosen, inputs, call_tool, emit, max_parallel=settings.runbooks.max_parallel)
    report.inputs_from_question = derived
    return report, render_markdown(report)
