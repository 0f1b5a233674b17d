"""The model runner: pydantic-ai's tool loop over the run's pipeline, streamed as our events.

The conversation so far is loaded from the store and each finished message is journaled as the
run goes, so another process can continue the session. Answers to a paused run are recorded by
the approval broker and resume the loop; calls that need a person end the run ``paused``. With the
privacy guard on, what the model reads is masked (history processor) and the final answer is
restored for the user where policy allows. The context policies (:mod:`.context`: token budget,
usage limits, prompt caching) shape each request; large tool results reach the model summarized
by type (the pipeline's digest). A usage limit ends the run with a partial report.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import AbstractCapability, Hooks, ProcessHistory
from pydantic_ai.messages import (
    AgentStreamEvent,
    FunctionToolResultEvent,
    ModelMessage,
    ModelRequest,
    UserPromptPart,
    repair_messages,
)
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.usage import UsageLimits

from devops_agent.agent.messages import dump_message, load_message
from devops_agent.agent.model_errors import is_unknown_tool, model_failure, shorten_retry_prompts
from devops_agent.agent.models import base_url_of, request_settings
from devops_agent.agent.runners.base import RunOutcome, RunScope
from devops_agent.agent.runners.context import context_policies, find_limit, partial_report
from devops_agent.agent.runners.translate import translate
from devops_agent.agent.runtime import build_agent
from devops_agent.events import RunStarted
from devops_agent.policies.context.compaction import Pins
from devops_agent.policies.pipeline import TOOL_THREADS, privacy_guard
from devops_agent.privacy.guard import strip_unknown_args
from devops_agent.runbooks.triage import find_ticket_ref, triage_guidance
from devops_agent.store import MessageWrite

log = structlog.get_logger(__name__)


@dataclass
class ModelRunner:
    """Runs the model loop with ``model``."""

    model: Model
    model_name: str | None
    name: str = "model"
    fast: Model | None = None
    """The fast model, when one is given instead of resolved from ``model.fast`` (tests)."""
    pins: Pins | None = None
    """The plan and findings pinned in every request (a planner keeps them up to date)."""

    async def run(self, scope: RunScope) -> RunOutcome:
        scope.emit(
            RunStarted(
                **scope.ids,
                prompt=scope.prompt or "(approvals answered)",
                mode=scope.mode,
                path="model",
                model=self.model_name,
            )
        )
        history = [load_message(p) for p in scope.store.load_messages(scope.session.id)]
        deferred = None
        if scope.answers is not None:
            deferred = scope.broker.answer(scope.session, scope.answers)
        else:
            # A run that failed between a tool call and its result left the call open; a new question
            # closes it (pydantic-ai refuses a new prompt after an unanswered call).
            history = repair_messages(history)
        persisted = len(history)
        seen: list[ModelMessage] = []  # the run's conversation as far as it got, for a failure

        def persist(messages: list[ModelMessage], *, final: bool) -> None:
            nonlocal persisted
            # The last message may still grow while the run goes on; it is saved when final.
            upto = len(messages) if final else len(messages) - 1
            if upto > persisted:
                payloads = tuple(dump_message(m) for m in messages[persisted:upto])
                scope.journal.messages(MessageWrite(scope.session.id, scope.run_id, payloads))
                persisted = upto

        async def after_node(ctx: Any, *, node: Any, result: Any) -> Any:
            nonlocal seen
            seen = list(ctx.messages)
            persist(seen, final=False)
            return result

        approvers = {cid: a.approver for cid, a in (scope.answers or {}).items() if a.approved}
        guard = privacy_guard(
            scope.settings, scope.store, scope.session.id, model_reads=True, privacy=scope.privacy
        )
        capabilities: list[AbstractCapability[Any]] = [
            Hooks(after_node_run=after_node),
            ProcessHistory(shorten_retry_prompts),
        ]
        if scope.privacy:
            capabilities.append(Hooks(before_tool_validate=strip_unknown_args))
        if guard is not None:
            capabilities.append(ProcessHistory(guard.process_history_async))
        policies = context_policies(scope, self.model, self.model_name, self.fast, self.pins)
        capabilities += policies.capabilities  # after the privacy guard: they see what is sent
        tools = scope.toolbox.pipeline(
            scope.run, approvals="defer", privacy=guard, approvers=approvers, digest=True
        )
        agent = build_agent(self.model, tools, capabilities=capabilities)
        settings = scope.settings
        ref = find_ticket_ref(scope.prompt or scope.session.title, projects=settings.jira.projects)
        about_ticket = ref is not None and "jira_issue" in scope.toolbox.catalog.entries
        limits = UsageLimits(request_limit=settings.model.max_tool_steps + 1)
        output: str | DeferredToolRequests = ""
        unknown: dict[str, list[str]] = {}  # tools the model called that it was not offered
        scrub_errors = scope.toolbox.scrub_errors
        try:
            # Entering the agent enters the model's provider, which closes the HTTP client it made
            # when the run ends: no connection outlives the run (or its event loop).
            with Agent.using_thread_executor(TOOL_THREADS):
                async with (
                    agent,
                    agent.run_stream_events(
                        scope.prompt,
                        deps=scope.deps,
                        message_history=history,
                        usage_limits=limits,
                        deferred_tool_results=deferred,
                        instructions=triage_guidance() if about_ticket else None,
                        model_settings=request_settings(settings.model),
                    ) as stream,
                ):
                    async for ev in stream:
                        if isinstance(ev, AgentRunResultEvent):
                            result = ev.result.output
                            output = result if isinstance(result, DeferredToolRequests) else str(result)
                            if guard is not None and isinstance(output, str):
                                output = guard.final_output(output, restore=settings.privacy.restore_output)
                            seen = ev.result.all_messages()
                            persist(seen, final=True)
                        else:
                            _note_unknown_tool(ev, unknown)
                            for out in translate(ev, scope.ids, scrub_errors=scrub_errors):
                                scope.emit(out)
        except Exception as exc:
            limit = find_limit(exc)
            if limit is not None and len(limit.messages) > len(seen):
                seen = limit.messages  # the results of the last step are in, not yet in a node
            scope.usage = policies.usage(seen[len(history) :], self.model_name)
            _keep_failed_run(scope, seen, persisted > len(history), persist)
            if limit is not None:
                text, report = partial_report(scope, seen[len(history) :], limit, scope.prompt)
                return RunOutcome("completed", output=text, report=report)
            failure = model_failure(
                exc, model=self.model_name, base_url=base_url_of(settings.model), unknown_tools=unknown
            )
            if failure is None:
                raise
            raise failure from exc
        scope.usage = policies.usage(seen[len(history) :], self.model_name)
        if isinstance(output, DeferredToolRequests):
            scope.broker.pause(scope.session.id, output)
            return RunOutcome("paused")
        return RunOutcome("completed", output=output)


def _keep_failed_run(
    scope: RunScope, seen: list[ModelMessage], saved_some: bool, persist: Callable[..., None]
) -> None:
    """Store what a failed run got through, the question first: "try again" in the same session
    must reach the model with the question it failed on."""
    try:
        if seen:
            persist(seen, final=True)
        elif scope.prompt is not None and not saved_some:
            persist([ModelRequest(parts=[UserPromptPart(scope.prompt)])], final=True)
    except Exception as exc:  # the run's own error is the one to tell
        log.error("failed_run_not_saved", session_id=scope.session.id, error=repr(exc))


def _note_unknown_tool(ev: AgentStreamEvent, unknown: dict[str, list[str]]) -> None:
    """Remember a call to a tool the model was not offered, with the names it was offered (from
    pydantic-ai's retry), so that a run that fails on it can say so."""
    if isinstance(ev, FunctionToolResultEvent) and is_unknown_tool(ev.part):
        offered = str(ev.part.content).partition("Available tools:")[2]
        unknown[ev.part.tool_name or ""] = re.findall(r"'([^']+)'", offered)
