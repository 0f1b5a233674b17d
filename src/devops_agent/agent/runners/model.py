"""The model runner: pydantic-ai's tool loop over the run's pipeline, streamed as our events.

The conversation so far is loaded from the store and each finished message is journaled as the
run goes, so another process can continue the session. Answers to a paused run are recorded by
the approval broker and resume the loop; calls that need a person end the run ``paused``. With the
privacy guard on, what the model reads is masked (history processor) and the final answer is
restored for the user where policy allows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, DeferredToolRequests
from pydantic_ai.capabilities import AbstractCapability, Hooks, ProcessHistory
from pydantic_ai.exceptions import ModelAPIError, UsageLimitExceeded
from pydantic_ai.messages import ModelMessage
from pydantic_ai.models import Model
from pydantic_ai.run import AgentRunResultEvent
from pydantic_ai.usage import UsageLimits

from devops_agent.agent.messages import dump_message, load_message
from devops_agent.agent.runners.base import RunOutcome, RunScope
from devops_agent.agent.runners.translate import translate
from devops_agent.agent.runtime import build_agent
from devops_agent.errors import ModelError
from devops_agent.events import RunStarted
from devops_agent.policies.pipeline import TOOL_THREADS, privacy_guard
from devops_agent.privacy.guard import strip_unknown_args
from devops_agent.runbooks.triage import find_ticket_ref, triage_guidance
from devops_agent.store import MessageWrite


@dataclass
class ModelRunner:
    """Runs the model loop with ``model``."""

    model: Model
    model_name: str | None
    name: str = "model"

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
        deferred = scope.broker.answer(scope.session, scope.answers) if scope.answers is not None else None
        persisted = len(history)

        def persist(messages: list[ModelMessage], *, final: bool) -> None:
            nonlocal persisted
            # The last message may still grow while the run goes on; it is saved when final.
            upto = len(messages) if final else len(messages) - 1
            if upto > persisted:
                payloads = tuple(dump_message(m) for m in messages[persisted:upto])
                scope.journal.messages(MessageWrite(scope.session.id, scope.run_id, payloads))
                persisted = upto

        async def after_node(ctx: Any, *, node: Any, result: Any) -> Any:
            persist(list(ctx.messages), final=False)
            return result

        approvers = {cid: a.approver for cid, a in (scope.answers or {}).items() if a.approved}
        guard = privacy_guard(
            scope.settings, scope.store, scope.session.id, model_reads=True, privacy=scope.privacy
        )
        capabilities: list[AbstractCapability[Any]] = [Hooks(after_node_run=after_node)]
        if scope.privacy:
            capabilities.append(Hooks(before_tool_validate=strip_unknown_args))
        if guard is not None:
            capabilities.append(ProcessHistory(guard.process_history_async))
        tools = scope.toolbox.pipeline(scope.run, approvals="defer", privacy=guard, approvers=approvers)
        agent = build_agent(self.model, tools, capabilities=capabilities)
        about_ticket = find_ticket_ref(scope.prompt or scope.session.title) and (
            "jira_issue" in scope.toolbox.catalog.entries
        )
        limits = UsageLimits(request_limit=scope.settings.model.max_tool_steps + 1)
        output: str | DeferredToolRequests = ""
        scrub_errors = scope.toolbox.scrub_errors
        try:
            with Agent.using_thread_executor(TOOL_THREADS):
                async with agent.run_stream_events(
                    scope.prompt,
                    deps=scope.deps,
                    message_history=history,
                    usage_limits=limits,
                    deferred_tool_results=deferred,
                    instructions=triage_guidance() if about_ticket else None,
                ) as stream:
                    async for ev in stream:
                        if isinstance(ev, AgentRunResultEvent):
                            result = ev.result.output
                            output = result if isinstance(result, DeferredToolRequests) else str(result)
                            if guard is not None and isinstance(output, str):
                                output = guard.final_output(
                                    output, restore=scope.settings.privacy.restore_output
                                )
                            persist(ev.result.all_messages(), final=True)
                        else:
                            for out in translate(ev, scope.ids, scrub_errors=scrub_errors):
                                scope.emit(out)
        except UsageLimitExceeded as exc:
            raise ModelError(
                f"the model used up its step budget: {exc}",
                hint="raise model.max_tool_steps or ask a narrower question",
            ) from exc
        except ModelAPIError as exc:
            raise ModelError(
                f"model request failed: {exc}",
                hint="check model.name, base_url and API key; `devops-agent doctor` tests the endpoint",
            ) from exc
        if isinstance(output, DeferredToolRequests):
            scope.broker.pause(scope.session.id, output)
            return RunOutcome("paused")
        return RunOutcome("completed", output=output)
