"""The model runner: pydantic-ai's tool loop over the run's pipeline, streamed as our events.

The conversation so far is loaded from the store and each finished message is journaled as the
run goes (:class:`~devops_agent.agent.runners.loop.ModelLoop`), so another process can continue
the session. Answers to a paused run are recorded by the approval broker and resume the loop;
calls that need a person end the run ``paused``. With the privacy guard on, what the model reads
is masked (history processor) and the final answer is restored for the user where policy allows.
The context policies (:mod:`.context`: token budget, usage limits, prompt caching) shape each
request; large tool results reach the model summarized by type (the pipeline's digest). A usage
limit ends the run with a partial report.

This is the plain loop (``--plan never``, free text); the planner
(:mod:`~devops_agent.agent.runners.planner`) adds plans, specialists and verification on the
same loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic_ai import DeferredToolRequests
from pydantic_ai.models import Model

from devops_agent.agent.runners.base import RunOutcome, RunScope
from devops_agent.agent.runners.context import partial_report
from devops_agent.agent.runners.loop import ModelLoop, RunLimited, answer_once
from devops_agent.agent.runtime import build_agent
from devops_agent.events import RunStarted


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
        loop = ModelLoop.open(scope, self.model, self.model_name)
        deferred = await answer_once(scope) if scope.answers is not None else None
        agent = build_agent(self.model, loop.pipeline(), capabilities=loop.capabilities())
        try:
            output = await loop.turn(agent, scope.prompt, deferred=deferred, instructions=loop.instructions())
        except RunLimited as stop:
            text, report = partial_report(scope, loop.new_messages, stop.limit, scope.prompt)
            return RunOutcome("completed", output=text, report=report)
        scope.usage = loop.usage()
        if isinstance(output, DeferredToolRequests):
            scope.broker.pause(scope.session.id, output)
            return RunOutcome("paused")
        return RunOutcome("completed", output=str(output))
