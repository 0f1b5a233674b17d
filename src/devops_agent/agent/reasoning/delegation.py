"""Specialists at work: delegated tasks, run as agents of the same run, and councils.

:class:`Team` runs a specialist on a task (:meth:`Team.consult`) as a pydantic-ai agent of its
own (agent delegation): its tools are the run's pipeline narrowed to its subset — the same mode
filter, gate, privacy guard and records, with approvals refused (a specialist investigates; what
changes things is the orchestrator's step, approved by a person) — and every request it sends is
masked by its own privacy guard. Its events are the run's, labelled with its name; its calls join
the run's evidence ledger; its usage is added to the run's. Its answer is checked by the
deterministic critic before the orchestrator reads it.

:meth:`Team.toolset` gives the orchestrator one ``ask_NAME`` tool per specialist (pydantic-ai
runs the calls of one model response in parallel, so independent tasks overlap);
:meth:`Team.council` puts one question to several specialists at once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import Agent, FunctionToolset, RunContext, Tool
from pydantic_ai.capabilities import AbstractCapability, Hooks, ProcessHistory
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolCallEvent,
    FunctionToolResultEvent,
    ModelMessage,
)
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.toolsets import AbstractToolset
from pydantic_ai.usage import UsageLimits

from devops_agent.agent.model_errors import model_failure, shorten_retry_prompts
from devops_agent.agent.models import base_url_of, request_settings
from devops_agent.agent.reasoning.answer import SpecialistReport, answer_checks
from devops_agent.agent.reasoning.critic import apply_issues, check_answer
from devops_agent.agent.reasoning.ledger import Ledger
from devops_agent.agent.reasoning.specialists import Specialist
from devops_agent.agent.reasoning.structured import structured_agent
from devops_agent.agent.runners.base import RunScope
from devops_agent.agent.runners.translate import translate
from devops_agent.agent.usage import run_usage
from devops_agent.deps import ToolDeps
from devops_agent.errors import DevOpsAgentError
from devops_agent.events import Delegation, Token
from devops_agent.policies.pipeline import TOOL_THREADS, privacy_guard
from devops_agent.privacy.guard import strip_unknown_args
from devops_agent.tools.schemas import make_tool

SPECIALIST_RULES = """\
Investigate only the task you are given, with your tools; never guess what a tool could tell you.
Every tool result is JSON with its `call_id`. Finish by calling final_result: a summary; findings
that each cite in `citations` the call ids whose output shows them and quote in `evidence` the
exact lines of that output; numbers and times exactly as the output gives them; `likely_cause`
if your evidence points to one; `gaps` for what you could not check. Calls that change things
are refused to you: name them as next steps instead."""

CallHook = Callable[[AgentStreamEvent, str], None]
"""Told of each stream event of a specialist, with its name (the plan tracker listens)."""


@dataclass
class Consultation:
    """What one specialist answered (``report`` is ``None`` when it failed: ``error`` says why)."""

    specialist: str
    task: str
    report: SpecialistReport | None
    error: str | None = None
    changes: list[dict[str, Any]] = field(default_factory=list)
    started: float = 0.0
    finished: float = 0.0

    def for_model(self) -> dict[str, Any]:
        """What the orchestrator reads: a tool result it can cite."""
        if self.report is None:
            return {"status": "error", "error": f"specialist {self.specialist} failed: {self.error}"}
        data: dict[str, Any] = {"specialist": self.specialist, **self.report.model_dump(mode="json")}
        if self.changes:
            data["critic"] = self.changes
        return {"status": "success", "data": data}


@dataclass
class Team:
    """The specialists of one run, sharing its pipeline, evidence ledger and usage."""

    scope: RunScope
    model: Model
    model_name: str | None
    specialists: Mapping[str, Specialist]
    ledger: Ledger
    extra_tools: Callable[[], list[AbstractToolset[Any]]]
    extra_names: Sequence[str] = ()
    on_event: CallHook | None = None
    messages: list[ModelMessage] = field(default_factory=list)
    """Every specialist's messages, for the run's usage."""

    def available(self) -> dict[str, Specialist]:
        """The specialists with at least one tool among those this run has."""
        catalog = self.scope.toolbox.catalog
        return {
            n: s
            for n, s in self.specialists.items()
            if s.tool_names(catalog, self.extra_names)
            or self.scope.toolbox.specialist_has_foreign(s.mcp_profiles)
        }

    def _agent(self, spec: Specialist) -> Agent[ToolDeps, Any]:
        scope = self.scope
        # Each agent gets its own guard (same session, same vault): one guard's caches are not
        # shared between agents running at once.
        guard = privacy_guard(
            scope.settings, scope.store, scope.session.id, model_reads=True, privacy=scope.privacy
        )
        pipeline = scope.toolbox.pipeline(
            scope.run,
            approvals="deny",
            privacy=guard,
            only=spec.tool_names(scope.toolbox.catalog, self.extra_names),
            specialist_profiles=spec.mcp_profiles,
            extra=self.extra_tools(),
        )
        caps: list[AbstractCapability[Any]] = [ProcessHistory(shorten_retry_prompts)]
        if scope.privacy:
            caps.append(Hooks(before_tool_validate=strip_unknown_args))
        if guard is not None:
            caps.append(ProcessHistory(guard.process_history_async))
        return structured_agent(
            self.model,
            SpecialistReport,
            role=spec.name,
            instructions=f"{spec.instructions.strip()}\n{SPECIALIST_RULES}",
            pipeline=pipeline,
            capabilities=caps,
            checks=[answer_checks],
        )

    async def consult(self, name: str, task: str, call_id: str | None = None) -> Consultation:
        """Run specialist ``name`` on ``task``; never raises for the specialist's failure."""
        scope, spec = self.scope, self.specialists[name]
        ids = {**scope.ids, "agent": name}
        scope.emit(Delegation(**ids, phase="started", specialist=name, task=task, tool_call_id=call_id))
        started = time.monotonic()
        result = Consultation(name, task, None, started=started)
        seen: list[ModelMessage] = []
        try:
            agent = self._agent(spec)
            limits = UsageLimits(request_limit=scope.settings.model.max_tool_steps + 1)
            with Agent.using_thread_executor(TOOL_THREADS):
                async with (
                    agent,
                    agent.run_stream_events(
                        task,
                        deps=scope.deps,
                        usage_limits=limits,
                        model_settings=request_settings(scope.settings.model),
                    ) as stream,
                ):
                    async for ev in stream:
                        if isinstance(ev, AgentRunResultEvent):
                            seen = ev.result.all_messages()
                            output = ev.result.output
                            if isinstance(output, SpecialistReport):
                                result.report = output
                            else:
                                result.error = "it answered without a report"
                            continue
                        for out in translate(ev, ids, scrub_errors=scope.toolbox.scrub_errors):
                            if not isinstance(out, Token):  # its answer comes back whole, not as text
                                scope.emit(scope.toolbox.with_evidence(out))
                        if isinstance(ev, FunctionToolResultEvent | FunctionToolCallEvent):
                            self.ledger.add_event(ev, name)
                            if self.on_event is not None:
                                self.on_event(ev, name)
        except Exception as exc:  # a specialist's failure is the orchestrator's to handle, as data
            failure = model_failure(exc, model=self.model_name, base_url=base_url_of(scope.settings.model))
            if failure is not None:
                result.error = failure.message
            elif isinstance(exc, DevOpsAgentError):
                result.error = exc.message
            else:
                result.error = f"{type(exc).__name__}: {exc}"
        if result.report is not None:
            issues = check_answer(result.report, self.ledger, task)
            if issues:
                fixed, changes = apply_issues(result.report, issues, self.ledger)
                result.report = SpecialistReport.model_validate(fixed.model_dump())
                result.changes = [c.model_dump() for c in changes]
        result.finished = time.monotonic()
        self.messages += seen
        scope.emit(
            Delegation(
                **ids,
                phase="finished",
                specialist=name,
                task=task,
                tool_call_id=call_id,
                status="success" if result.report is not None else "error",
                duration_ms=round((result.finished - started) * 1000, 1),
                usage=run_usage(seen),
            )
        )
        return result

    def toolset(self) -> FunctionToolset[ToolDeps]:
        """One ``ask_NAME`` tool per available specialist, for the orchestrator."""
        tools: list[Tool[ToolDeps]] = []
        for spec in self.available().values():

            def make(name: str) -> Callable[..., Any]:
                async def ask(ctx: RunContext[ToolDeps], task: str) -> dict[str, Any]:
                    done = await self.consult(name, task, ctx.tool_call_id)
                    return done.for_model()

                return ask

            description = (
                f"Delegate a focused task to the {spec.name} specialist: {spec.description.strip()} "
                "Say exactly what to find out (what, where, the window). Give independent tasks to "
                "several specialists in the same turn: they run at the same time."
            )
            tools.append(make_tool(make(spec.name), name=spec.delegate_tool, description=description))
        return FunctionToolset(tools, id="specialists")

    async def council(self, members: Sequence[str], question: str) -> list[Consultation]:
        """The same question to every member at once."""
        return list(await asyncio.gather(*(self.consult(m, question) for m in members)))
