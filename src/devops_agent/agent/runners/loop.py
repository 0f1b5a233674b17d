"""One run's conversation with the model, shared by the model runner and the planner.

:class:`ModelLoop` loads the session's conversation, journals each finished message as the run
goes (so another process can continue the session), masks what the model reads when the privacy
guard is on, streams pydantic-ai's events as our :class:`~devops_agent.events.RunEvent` stream,
applies the context policies (token budget, usage limits, prompt caching: :mod:`.context`), and
turns a failed model request into our error types (a usage limit into :class:`RunLimited`, which
the runner answers with a partial report). A runner builds its agent over
:meth:`ModelLoop.pipeline` with :meth:`ModelLoop.capabilities` and calls :meth:`ModelLoop.turn`
once per prompt (the planner again for each re-plan). It decides nothing about tools or
approvals: the pipeline and the broker do.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
from pydantic_ai import Agent, DeferredToolResults
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

from devops_agent.agent.approvals import ApprovalDecision, deferred_results
from devops_agent.agent.messages import dump_message, load_message
from devops_agent.agent.model_errors import is_unknown_tool, model_failure, shorten_retry_prompts
from devops_agent.agent.models import base_url_of, request_settings
from devops_agent.agent.runners.base import RunScope
from devops_agent.agent.runners.context import ContextPolicies, context_policies, find_limit
from devops_agent.agent.runners.translate import translate
from devops_agent.policies.context.compaction import Pins
from devops_agent.policies.context.limits import UsageLimitReached
from devops_agent.policies.pipeline import TOOL_THREADS, ModeFilterToolset, privacy_guard
from devops_agent.privacy.guard import PrivacyGuard, strip_unknown_args
from devops_agent.runbooks.triage import find_ticket_ref, triage_guidance
from devops_agent.store import MessageWrite

log = structlog.get_logger(__name__)

EventHook = Callable[[AgentStreamEvent], None]


class RunLimited(Exception):
    """A usage limit stopped the run (what it did so far is saved); the runner answers with a
    partial report."""

    def __init__(self, limit: UsageLimitReached) -> None:
        super().__init__(str(limit))
        self.limit = limit


@dataclass
class ModelLoop:
    """The conversation of one run: what was said before, and what this run adds."""

    scope: RunScope
    model: Model
    model_name: str | None
    policies: ContextPolicies
    history: list[ModelMessage] = field(default_factory=list)
    guard: PrivacyGuard | None = None
    _start: int = 0
    _persisted: int = 0
    _seen: list[ModelMessage] = field(default_factory=list)
    _unknown: dict[str, list[str]] = field(default_factory=dict)
    others: list[ModelMessage] = field(default_factory=list)
    """Messages of the run's other agents (specialists, critic): their usage is the run's too."""

    @classmethod
    def open(
        cls,
        scope: RunScope,
        model: Model,
        model_name: str | None,
        *,
        fast: Model | None = None,
        pins: Pins | None = None,
    ) -> ModelLoop:
        """The session's conversation so far; a fresh question first closes a call a failed run
        left open (pydantic-ai refuses a new prompt after an unanswered call). ``fast``, ``pins``:
        see :func:`~devops_agent.agent.runners.context.context_policies`."""
        # A durable run taken over by another worker starts again from the history it started with.
        before_run = scope.run_id if scope.durability is not None else None
        history = [
            load_message(p) for p in scope.store.load_messages(scope.session.id, before_run=before_run)
        ]
        if scope.answers is None and scope.prompt is not None:
            history = repair_messages(history)
        guard = privacy_guard(
            scope.settings, scope.store, scope.session.id, model_reads=True, privacy=scope.privacy
        )
        policies = context_policies(scope, model, model_name, fast, pins)
        start = len(history)
        return cls(scope, model, model_name, policies, history, guard, start, start, list(history))

    # -- what an agent of this run is built from ---------------------------------------------------

    def capabilities(self) -> list[AbstractCapability[Any]]:
        """Journal each finished message; shorten retry prompts; mask what the model reads; the
        context policies last (they see what is sent)."""

        async def after_node(ctx: Any, *, node: Any, result: Any) -> Any:
            self._seen = list(ctx.messages)
            self._persist(self._seen, final=False)
            return result

        caps: list[AbstractCapability[Any]] = [
            Hooks(after_node_run=after_node),
            ProcessHistory(shorten_retry_prompts),
        ]
        if self.scope.privacy:
            caps.append(Hooks(before_tool_validate=strip_unknown_args))
        if self.guard is not None:
            caps.append(ProcessHistory(self.guard.process_history_async))
        if self.scope.durability is not None:  # each model request a checkpointed step
            caps.extend(self.scope.durability.model_capabilities())
        return caps + list(self.policies.capabilities)

    def pipeline(self, **kwargs: Any) -> ModeFilterToolset:
        """The run's tool pipeline as the model path has it: approvals deferred to a person,
        large results digested for the model."""
        scope = self.scope
        approvers = {cid: a.approver for cid, a in (scope.answers or {}).items() if a.approved}
        kwargs.setdefault("digest", True)
        kwargs.setdefault("durability", scope.durability)
        return scope.toolbox.pipeline(
            scope.run, approvals="defer", privacy=self.guard, approvers=approvers, **kwargs
        )

    def instructions(self) -> str | None:
        """Extra instructions for this question: how to triage a ticket it names."""
        scope = self.scope
        ref = find_ticket_ref(scope.prompt or scope.session.title, projects=scope.settings.jira.projects)
        if ref is not None and "jira_issue" in scope.toolbox.catalog.entries:
            return triage_guidance()
        return None

    # -- running ----------------------------------------------------------------------------------

    async def turn(
        self,
        agent: Agent[Any, Any],
        prompt: str | None,
        *,
        deferred: DeferredToolResults | None = None,
        instructions: str | None = None,
        on_event: EventHook | None = None,
    ) -> Any:
        """Run ``agent`` on ``prompt`` (or on the answers in ``deferred``) after the conversation
        so far; return its output. Text is restored for the user where policy allows."""
        scope, settings = self.scope, self.scope.settings
        limits = UsageLimits(request_limit=settings.model.max_tool_steps + 1)
        output: Any = ""
        scrub_errors = scope.toolbox.scrub_errors
        try:
            # Entering the agent enters the model's provider, which closes the HTTP client it made
            # when the run ends: no connection outlives the run (or its event loop).
            with Agent.using_thread_executor(TOOL_THREADS):
                async with (
                    agent,
                    agent.run_stream_events(
                        prompt,
                        deps=scope.deps,
                        message_history=self.history,
                        usage_limits=limits,
                        deferred_tool_results=deferred,
                        instructions=instructions,
                        model_settings=request_settings(settings.model),
                    ) as stream,
                ):
                    async for ev in stream:
                        if isinstance(ev, AgentRunResultEvent):
                            output = ev.result.output
                            if self.guard is not None and isinstance(output, str):
                                output = self.guard.final_output(
                                    output, restore=settings.privacy.restore_output
                                )
                            self._seen = ev.result.all_messages()
                            self._persist(self._seen, final=True)
                        else:
                            _note_unknown_tool(ev, self._unknown)
                            for out in translate(ev, scope.ids, scrub_errors=scrub_errors):
                                scope.emit(scope.toolbox.with_evidence(out))
                            if on_event is not None:
                                on_event(ev)
        except Exception as exc:
            limit = find_limit(exc)
            if limit is not None and len(limit.messages) > len(self._seen):
                self._seen = list(limit.messages)  # the results of the last step are in, not yet in a node
            scope.usage = self.usage()
            self._keep_failed_run()
            if limit is not None:
                raise RunLimited(limit) from exc
            failure = model_failure(
                exc,
                model=self.model_name,
                base_url=base_url_of(settings.model),
                unknown_tools=self._unknown,
            )
            if failure is None:
                raise
            raise failure from exc
        self.history = list(self._seen)
        return output

    def usage(self) -> dict[str, Any]:
        """Tokens and cost of this run's requests (its messages since the conversation so far)."""
        return self.policies.usage([*self._seen[self._start :], *self.others], self.model_name)

    @property
    def new_messages(self) -> list[ModelMessage]:
        return self._seen[self._start :]

    # -- persistence --------------------------------------------------------------------------------

    def _persist(self, messages: list[ModelMessage], *, final: bool) -> None:
        # The last message may still grow while the run goes on; it is saved when final.
        upto = len(messages) if final else len(messages) - 1
        if upto > self._persisted:
            payloads = tuple(dump_message(m) for m in messages[self._persisted : upto])
            self.scope.journal.messages(MessageWrite(self.scope.session.id, self.scope.run_id, payloads))
            self._persisted = upto

    def _keep_failed_run(self) -> None:
        """Store what a failed run got through, the question first: "try again" in the same session
        must reach the model with the question it failed on."""
        scope = self.scope
        try:
            if len(self._seen) > self._start:
                self._persist(self._seen, final=True)
            elif scope.prompt is not None and self._persisted == self._start:
                self._persist([*self._seen, ModelRequest(parts=[UserPromptPart(scope.prompt)])], final=True)
        except Exception as exc:  # the run's own error is the one to tell
            log.error("failed_run_not_saved", session_id=scope.session.id, error=repr(exc))


def _note_unknown_tool(ev: AgentStreamEvent, unknown: dict[str, list[str]]) -> None:
    """Remember a call to a tool the model was not offered, with the names it was offered (from
    pydantic-ai's retry), so that a run that fails on it can say so."""
    if isinstance(ev, FunctionToolResultEvent) and is_unknown_tool(ev.part):
        offered = str(ev.part.content).partition("Available tools:")[2]
        unknown[ev.part.tool_name or ""] = re.findall(r"'([^']+)'", offered)


async def answer_once(
    scope: RunScope, answers: Mapping[str, ApprovalDecision] | None = None, key: str = "approvals.answer"
) -> DeferredToolResults:
    """Record ``answers`` (the run's own by default) to the session's pending calls (events,
    audit, pending calls cleared) once: a durable run replaying after a takeover must not answer
    again (the pending calls are gone by then); ``key`` names the side effect for ``once``."""
    chosen = scope.answers if answers is None else answers
    assert chosen is not None
    if scope.durability is None:
        return scope.broker.answer(scope.store.get_session(scope.session.id), chosen)

    async def record() -> None:
        scope.broker.answer_again(scope.session.id, chosen)

    await scope.durability.once(key, record)
    return deferred_results(chosen)
