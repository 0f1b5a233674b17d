"""Plans: what the model proposes before it acts, a person's decision on it, and its progress.

The orchestrator proposes a :class:`Plan` with its ``propose_plan`` tool. :func:`review_plan`
checks it against what exists (tools, specialists) and marks every step that names a tool that
changes things as ``mutating`` — a model cannot under-declare. :func:`needs_decision` says whether
a person must decide (``always``; ``auto`` unless the plan is a lookup: one read-only step). A
plan waiting for a decision is kept in the session (``pending_plan``), so any process can answer
it with a :class:`PlanDecision`, as approvals are answered. While the approved plan runs,
:class:`PlanTracker` turns the run's calls into ``plan_step`` events and records each deviation.

This module holds data and bookkeeping; it runs no model and no tool.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field

from devops_agent.errors import UserError
from devops_agent.events import PlanDeviation, PlanStepEvent, PlanStepStatus, RunEvent
from devops_agent.report import PlanOutcome, PlanStepOutcome

PlanMode = Literal["auto", "always", "never"]
PLAN_MODES: tuple[PlanMode, ...] = ("auto", "always", "never")
PENDING_PLAN_KEY = "pending_plan"
"""``session.context_state`` key of a plan that waits for a decision: its call id, plan, revision."""
ACTIVE_PLAN_KEY = "plan"
"""``session.context_state`` key of the plan being carried out: statuses, deviations, calls."""


class PlanStep(BaseModel):
    """One step: what it does, why, with what, and the evidence it should produce."""

    title: str = Field(description="what the step does, in a few words")
    intent: str = Field("", description="why: the question this step answers")
    tools: list[str] = Field(default_factory=list, description="the tools it calls")
    specialist: str | None = Field(None, description="the specialist it delegates to, if any")
    expected_evidence: str = Field("", description="what its output should show")
    mutating: bool = Field(False, description="whether it changes anything (restart, delete, post, …)")

    def line(self) -> str:
        """One line for a reader: ``Read the error logs [logs_errors] (changes things)``."""
        using = [*self.tools, *([f"specialist {self.specialist}"] if self.specialist else [])]
        text = self.title + (f" [{', '.join(using)}]" if using else "")
        return text + (" (changes things)" if self.mutating else "")


class Plan(BaseModel):
    """The goal and the ordered steps the orchestrator proposes."""

    goal: str = Field(description="what the investigation should establish")
    steps: list[PlanStep] = Field(min_length=1, description="in the order they should run")

    def lines(self) -> list[str]:
        return [s.line() for s in self.steps]

    @property
    def mutating(self) -> bool:
        return any(s.mutating for s in self.steps)


@dataclass(frozen=True)
class PlanDecision:
    """A person's answer to a proposed plan: approve it, ask for changes (``feedback``), reject it."""

    action: Literal["approve", "edit", "reject"]
    feedback: str = ""
    approver: str = "user"

    def __post_init__(self) -> None:
        if self.action not in ("approve", "edit", "reject"):
            raise UserError(f"{self.action!r} is not a plan decision", hint="approve, edit or reject")
        if self.action == "edit" and not self.feedback.strip():
            raise UserError("asking for changes to a plan needs the changes", hint="say what to change")


def review_plan(
    plan: Plan,
    *,
    tools: Collection[str],
    changing: Collection[str],
    specialists: Collection[str],
) -> tuple[Plan, list[str]]:
    """``plan`` with each step that calls a tool in ``changing`` marked mutating, and the problems
    a model must fix: a tool or specialist that does not exist, a step that names neither."""
    problems: list[str] = []
    steps: list[PlanStep] = []
    for i, step in enumerate(plan.steps, 1):
        unknown = [t for t in step.tools if t not in tools]
        if unknown:
            problems.append(f"step {i} names unknown tool(s) {', '.join(unknown)}")
        if step.specialist is not None and step.specialist not in specialists:
            known = ", ".join(sorted(specialists)) or "none"
            problems.append(f"step {i} names unknown specialist {step.specialist!r} (known: {known})")
        if not step.tools and step.specialist is None:
            problems.append(f"step {i} names no tool and no specialist")
        steps.append(
            step.model_copy(update={"mutating": step.mutating or any(t in changing for t in step.tools)})
        )
    return plan.model_copy(update={"steps": steps}), problems


def is_lookup(plan: Plan) -> bool:
    """One read-only step with a tool of our own: no plan worth a person's time."""
    return len(plan.steps) == 1 and not plan.mutating and plan.steps[0].specialist is None


def needs_decision(plan: Plan, mode: PlanMode) -> bool:
    """Whether a person decides before the plan runs."""
    return mode == "always" or (mode == "auto" and not is_lookup(plan))


def plan_mode(value: Any, default: PlanMode) -> PlanMode:
    """A run's plan mode from its inputs (``plan``), else the configured one."""
    if value is None:
        return default
    if value not in PLAN_MODES:
        raise UserError(f"{value!r} is not a plan mode", hint="use auto, always or never")
    mode: PlanMode = value
    return mode


class PlanTracker:
    """Step statuses of the approved plan, from the calls the run makes; deviations recorded.

    A call belongs to the first unfinished step that names its tool, or its specialist (the
    delegating call, and the specialist's own calls). A call no step names is an unplanned call,
    a step started before an earlier one has started is out of order, and a step nothing ran by
    the end is skipped. The state is plain data, kept in the session between runs of a plan.
    """

    def __init__(
        self,
        state: Mapping[str, Any],
        emit: Callable[[RunEvent], RunEvent],
        ids: Mapping[str, str],
        delegates: Mapping[str, str],
    ) -> None:
        self.plan = Plan.model_validate(state["plan"])
        self.revision = int(state.get("revision", 1))
        self.approved_by = str(state.get("approved_by", ""))
        self.status: list[PlanStepStatus] = list(state.get("status") or ["pending"] * len(self.plan.steps))
        self.deviations: list[str] = list(state.get("deviations", []))
        self.calls: dict[str, int] = dict(state.get("calls", {}))
        self._emit, self._ids, self._delegates = emit, dict(ids), dict(delegates)

    @classmethod
    def start(
        cls,
        plan: Plan,
        revision: int,
        approved_by: str,
        emit: Callable[[RunEvent], RunEvent],
        ids: Mapping[str, str],
        delegates: Mapping[str, str],
    ) -> PlanTracker:
        """A fresh tracker for a just-approved plan; every step announced as pending."""
        state = {"plan": plan.model_dump(mode="json"), "revision": revision, "approved_by": approved_by}
        tracker = cls(state, emit, ids, delegates)
        for i, step in enumerate(plan.steps):
            tracker._step(i, "pending", note=step.intent)
        return tracker

    def state(self) -> dict[str, Any]:
        return {
            "plan": self.plan.model_dump(mode="json"),
            "revision": self.revision,
            "approved_by": self.approved_by,
            "status": list(self.status),
            "deviations": list(self.deviations),
            "calls": dict(self.calls),
        }

    def _step(
        self, index: int, status: PlanStepStatus, *, call_id: str | None = None, note: str = ""
    ) -> None:
        self.status[index] = status
        title = self.plan.steps[index].title
        self._emit(
            PlanStepEvent(
                **self._ids, index=index, title=title, status=status, tool_call_id=call_id, note=note
            )
        )

    def _deviate(
        self, kind: Any, detail: str, *, call_id: str | None = None, step: int | None = None
    ) -> None:
        self.deviations.append(detail)
        self._emit(PlanDeviation(**self._ids, kind=kind, detail=detail, tool_call_id=call_id, step=step))

    def _owner(self, tool: str, agent: str | None) -> int | None:
        specialist = self._delegates.get(tool) or agent
        candidates = [
            i
            for i, s in enumerate(self.plan.steps)
            if tool in s.tools or (specialist is not None and s.specialist == specialist)
        ]
        unfinished = [i for i in candidates if self.status[i] in ("pending", "running", "failed")]
        found = unfinished or candidates
        return found[0] if found else None

    def on_call(self, tool: str, call_id: str, agent: str | None = None) -> None:
        """A call started: its step is running (or the call is a deviation)."""
        index = self._owner(tool, agent)
        if index is None:
            if agent is None:  # a specialist's own calls belong to its delegation, planned or not
                self._deviate(
                    "unplanned_call", f"called {tool}, which no step of the plan names", call_id=call_id
                )
            return
        self.calls[call_id] = index
        if self.status[index] == "pending":
            earlier = [i for i in range(index) if self.status[i] == "pending"]
            if earlier:
                self._deviate(
                    "out_of_order",
                    f"step {index + 1} ({self.plan.steps[index].title}) started before step {earlier[0] + 1}",
                    call_id=call_id,
                    step=index,
                )
            self._step(index, "running", call_id=call_id)

    def on_result(self, call_id: str, status: str) -> None:
        """A call finished: its step is done when a call of it succeeded, failed when none has."""
        index = self.calls.get(call_id)
        if index is None:
            return
        if status in ("success", "no_data") and self.status[index] != "done":
            self._step(index, "done", call_id=call_id)
        elif status not in ("success", "no_data") and self.status[index] == "running":
            self._step(index, "failed", call_id=call_id, note="its call failed")

    def replanned(self, reason: str) -> None:
        self._deviate("replan", f"re-plan asked by the critic: {reason}")

    def finish(self) -> None:
        """The run answered: steps nothing ran are skipped."""
        for i, status in enumerate(self.status):
            if status == "pending":
                self._deviate(
                    "skipped_step", f"step {i + 1} ({self.plan.steps[i].title}) was not run", step=i
                )
                self._step(i, "skipped")
            elif status == "running":  # its call never reported back
                self._step(i, "failed", note="no result came back")

    def outcome(self) -> PlanOutcome:
        return PlanOutcome(
            goal=self.plan.goal,
            revision=self.revision,
            approved_by=self.approved_by,
            steps=[
                PlanStepOutcome(title=s.title, status=self.status[i], mutating=s.mutating)
                for i, s in enumerate(self.plan.steps)
            ],
            deviations=list(self.deviations),
        )
