"""What every runner gets (:class:`RunScope`) and gives back (:class:`RunOutcome`).

A runner does the work of one run: it emits events through the scope, asks the scope for its
tool pipeline, and returns how the run ended. It does not number or store events, start or cancel
tasks, or mark the session: the session service does that around it, the same for every runner.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.broker import ApprovalBroker
from devops_agent.agent.durability import Durability
from devops_agent.agent.journal import Journal
from devops_agent.agent.reasoning.plan import PlanDecision
from devops_agent.agent.timeline import report_with_timeline
from devops_agent.agent.toolbox import RunIds, Toolbox
from devops_agent.config import Settings
from devops_agent.deps import ToolDeps
from devops_agent.events import RunEvent
from devops_agent.policies.modes import Mode
from devops_agent.report import Report
from devops_agent.store import SessionRecord, Store


@dataclass
class RunScope:
    """One run as its runner sees it."""

    settings: Settings
    store: Store
    session: SessionRecord
    run_id: str
    mode: Mode
    prompt: str | None
    inputs: dict[str, Any]
    answers: Mapping[str, ApprovalDecision] | None
    journal: Journal
    toolbox: Toolbox
    broker: ApprovalBroker
    emit: Callable[[RunEvent], RunEvent]
    privacy: bool
    """The privacy guard is on for this service (what a model reads is masked)."""
    usage: dict[str, Any] | None = None
    """Token counts and cost of the run's model requests, set by a runner that makes them."""
    durability: Durability | None = None
    """Set when a durable worker executes the run: checkpoints, shared limits, checkpointed model
    requests. Runners pass it to their pipeline and agent; they never branch on it otherwise."""
    plan_decision: PlanDecision | None = None
    """A person's decision on the plan the session waits for (the planner continues with it)."""
    profiles: tuple[str, ...] = ()
    """The profiles the run names (a specialist's): which MCP servers it gets besides global ones."""
    history: Callable[[], Sequence[RunEvent]] = lambda: ()
    """The events the run emitted so far (its recorder's), for the report's timeline."""

    def notify(self, event: RunEvent) -> None:
        """:attr:`emit` for sinks that expect nothing back (the runbook engine's)."""
        self.emit(event)

    def with_timeline(self, report: Report) -> Report:
        """``report`` with the run's timeline (from its events) when it has none yet."""
        return report_with_timeline(report, self.history(), self.inputs)

    @property
    def ids(self) -> dict[str, str]:
        return {"session_id": self.session.id, "run_id": self.run_id}

    @property
    def deps(self) -> ToolDeps:
        """What the run's tools may ask of it (``RunContext[ToolDeps].deps``)."""
        return ToolDeps(self.settings, self.store, self.session.id, self.run_id)

    @property
    def run(self) -> RunIds:
        return RunIds(self.session.id, self.run_id, self.mode, self.journal, self.profiles)


@dataclass
class RunOutcome:
    """How a run ended: its status, the text answer, and the structured report when there is one."""

    status: Literal["completed", "paused"]
    output: str | None = None
    report: dict[str, Any] | None = field(default=None)


class Runner(Protocol):
    """A way to carry out a run."""

    name: str

    async def run(self, scope: RunScope) -> RunOutcome: ...
