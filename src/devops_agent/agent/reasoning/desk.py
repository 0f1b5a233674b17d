"""The plan desk of one run: the ``propose_plan`` tool, the durable pause for a decision, the
decision itself, and the tracker of the approved plan.

A plan that needs a person ends the model's turn as a deferred call (pydantic-ai's
``CallDeferred``): the run pauses with the plan kept in the session (``pending_plan``), exactly
as a call that waits for approval, so any process can answer it
(:meth:`~devops_agent.agent.session.SessionService.answer_plan`). The answer resumes the model
with the decision as the tool's result: approved (execute it), changes asked (revise it), or
rejected — then the model is not called again and nothing runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import DeferredToolResults, FunctionToolset, ModelRetry, RunContext
from pydantic_ai.exceptions import CallDeferred
from pydantic_ai.messages import AgentStreamEvent, FunctionToolCallEvent, FunctionToolResultEvent
from pydantic_ai.toolsets import AbstractToolset

from devops_agent.agent.reasoning.ledger import OWN_TOOLS
from devops_agent.agent.reasoning.plan import (
    ACTIVE_PLAN_KEY,
    PENDING_PLAN_KEY,
    Plan,
    PlanDecision,
    PlanMode,
    PlanStep,
    PlanTracker,
    needs_decision,
    review_plan,
)
from devops_agent.agent.runners.base import RunScope
from devops_agent.deps import ToolDeps
from devops_agent.events import PlanProposed, PlanResolved
from devops_agent.tools.base import spec_from_metadata
from devops_agent.tools.schemas import make_tool

PROPOSE = "propose_plan"
_DECIDED = {"approve": "approved", "edit": "edited", "reject": "rejected"}


def _status(ev: FunctionToolResultEvent) -> str:
    content = getattr(ev.part, "content", None)
    if isinstance(content, dict) and "status" in content:
        return str(content["status"])
    # A retry prompt or a denial comes back as a return part whose outcome is not success.
    return "success" if ev.part.outcome == "success" else "error"


@dataclass
class PlanDesk:
    """Plans of one run; ``state`` is the run's reasoning state (revision, feedback)."""

    scope: RunScope
    mode: PlanMode
    state: dict[str, Any]
    delegates: Mapping[str, str]
    """Delegation tool -> specialist (``ask_logs`` -> ``logs``)."""
    tracker: PlanTracker | None = None
    _pipeline: AbstractToolset[Any] | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls, scope: RunScope, mode: PlanMode, state: dict[str, Any], delegates: Mapping[str, str]
    ) -> PlanDesk:
        desk = cls(scope, mode, state, delegates)
        active = scope.store.get_session(scope.session.id).context_state.get(ACTIVE_PLAN_KEY)
        if active:
            desk.tracker = PlanTracker(active, scope.emit, scope.ids, delegates)
        return desk

    @property
    def approved(self) -> bool:
        return self.tracker is not None

    def offers(self, _ctx: RunContext[Any], _tool_def: Any) -> bool:
        """Whether the run's tools are offered yet: in ``always``, only once a plan is approved."""
        return self.mode != "always" or self.approved

    # -- proposing ------------------------------------------------------------------------------

    def toolset(
        self, pipeline: AbstractToolset[Any], specialists: Mapping[str, Any]
    ) -> FunctionToolset[ToolDeps]:
        """The ``propose_plan`` tool, checking plans against ``pipeline``'s tools (all of them, also
        those not offered before a plan is approved)."""
        self._pipeline = pipeline
        desk = self

        async def propose_plan(ctx: RunContext[ToolDeps], goal: str, steps: list[PlanStep]) -> str:
            """Propose the plan of the investigation before acting: the goal, and the ordered
            steps, each with its intent, the tools it calls or the specialist it asks, and the
            evidence it should produce. Mark each step that changes something as mutating. The
            answer is the decision: approved (carry it out), changes asked (propose a revision),
            or rejected."""
            return await desk._propose(ctx, Plan(goal=goal, steps=steps), specialists)

        return FunctionToolset([make_tool(propose_plan)], id="plan")

    async def _propose(self, ctx: RunContext[ToolDeps], plan: Plan, specialists: Mapping[str, Any]) -> str:
        assert self._pipeline is not None
        offered = await self._pipeline.get_tools(ctx)
        changing = {
            name
            for name, t in offered.items()
            if (spec := spec_from_metadata(t.tool_def.metadata)) is not None
            and not spec.read_only
            and not spec.command_arg
        }
        tools = {*offered, *self.delegates}
        plan, problems = review_plan(plan, tools=tools, changing=changing, specialists=specialists)
        if problems:
            raise ModelRetry("The plan cannot run as proposed: " + "; ".join(problems))
        revision = int(self.state.get("revision", 0)) + 1
        self.state["revision"] = revision
        if needs_decision(plan, self.mode):
            raise CallDeferred(
                metadata={"plan": plan.model_dump(mode="json"), "revision": revision}, kind="question"
            )
        ids = self.scope.ids
        self.scope.emit(
            PlanProposed(**ids, steps=plan.lines(), plan=plan.model_dump(mode="json"), revision=revision)
        )
        self.scope.emit(PlanResolved(**ids, decision="approved", revision=revision, approver="policy"))
        self._start(plan, revision, "policy (a lookup)")
        return "A lookup: it runs without asking. Go ahead."

    def _start(self, plan: Plan, revision: int, approver: str) -> None:
        self.tracker = PlanTracker.start(
            plan, revision, approver, self.scope.emit, self.scope.ids, self.delegates
        )

    # -- pausing and deciding ----------------------------------------------------------------

    def pause(self, call_id: str, metadata: Mapping[str, Any]) -> dict[str, Any]:
        """What the session keeps while the plan waits; the ``plan_proposed`` event says so."""
        plan = Plan.model_validate(metadata["plan"])
        revision = int(metadata.get("revision", 1))
        feedback = self.state.get("feedback")
        self.scope.emit(
            PlanProposed(
                **self.scope.ids,
                steps=plan.lines(),
                plan=plan.model_dump(mode="json"),
                revision=revision,
                awaiting_decision=True,
                feedback=feedback,
            )
        )
        return {"call_id": call_id, "plan": plan.model_dump(mode="json"), "revision": revision}

    def decide(self, pending: Mapping[str, Any], decision: PlanDecision) -> DeferredToolResults | None:
        """Record ``decision`` on the pending plan; the result that resumes the model, or ``None``
        when the plan was rejected (nothing more runs)."""
        revision = int(pending.get("revision", 1))
        self.scope.emit(
            PlanResolved(
                **self.scope.ids,
                decision=_DECIDED[decision.action],
                revision=revision,
                feedback=decision.feedback,
                approver=decision.approver,
            )
        )
        call_id = str(pending["call_id"])
        if decision.action == "reject":
            return None
        if decision.action == "edit":
            self.state["feedback"] = decision.feedback
            answer = (
                f"{decision.approver} asked for changes to the plan: {decision.feedback}\n"
                "Revise the plan accordingly and propose it again with propose_plan."
            )
        else:
            self.state.pop("feedback", None)
            self._start(Plan.model_validate(pending["plan"]), revision, decision.approver)
            answer = (
                f"Approved by {decision.approver}. Carry out the plan step by step; a step that changes "
                "something still asks for approval when it runs. Say in your answer where you had to "
                "depart from the plan."
            )
        return DeferredToolResults(calls={call_id: answer})

    def active_state(self) -> dict[str, Any] | None:
        return self.tracker.state() if self.tracker is not None else None

    # -- following the run ------------------------------------------------------------------------

    def on_event(self, ev: AgentStreamEvent, agent: str | None = None) -> None:
        """The run's calls, as the approved plan's progress."""
        if self.tracker is None:
            return
        if isinstance(ev, FunctionToolCallEvent) and ev.part.tool_name not in OWN_TOOLS:
            self.tracker.on_call(ev.part.tool_name, ev.part.tool_call_id, agent)
        elif isinstance(ev, FunctionToolResultEvent) and ev.part.tool_name not in OWN_TOOLS:
            self.tracker.on_result(ev.part.tool_call_id, _status(ev))


__all__ = ["PENDING_PLAN_KEY", "PROPOSE", "PlanDesk"]
