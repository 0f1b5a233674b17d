"""The seam between the run engine and a durable executor (``execution = "queue"``).

Two things cross it:

* :class:`RunRequest` — a run as it travels to a worker: everything another process needs to
  carry it out (the session and run exist already; the request names them), as JSON;
* :class:`Durability` — what a durable executor adds to one run as it executes: the checkpoints of
  its completed tool calls, the integration limits shared by every worker, the capabilities that
  make model requests checkpointed steps, ``once`` for a side effect that must not happen twice
  when a recovered run replays (answering approvals), and ``finishing`` (notifications) before
  ``run_finished``.

The run engine only calls these; it does not know DBOS, PostgreSQL or workers. This module must
not import the runners, the session service or anything above the agent layer.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from pydantic_ai.capabilities import AbstractCapability

from devops_agent.agent.approvals import ApprovalDecision
from devops_agent.agent.reasoning.plan import PlanDecision
from devops_agent.events import RunEvent
from devops_agent.policies.modes import Mode
from devops_agent.policies.toolsets.checkpoint import ToolCheckpoint
from devops_agent.policies.toolsets.limit import CallLimiter


@dataclass(frozen=True)
class RunRequest:
    """A run to carry out elsewhere: its session and run (already stored) and what it was asked."""

    session_id: str
    run_id: str
    prompt: str | None
    mode: Mode
    inputs: dict[str, Any] = field(default_factory=dict)
    approvals: dict[str, ApprovalDecision] | None = None
    plan: PlanDecision | None = None
    """A person's decision on the plan the session waits for (``answer_plan``)."""
    path: str = ""
    """The runner the enqueuing process chose (``model``, ``runbooks``, ``triage``)."""
    parent_run_id: str | None = None
    profiles: list[str] = field(default_factory=list)
    """The profiles the run names (a specialist's): which MCP servers it gets besides global ones."""

    def to_json(self) -> str:
        data = asdict(self)
        return json.dumps(data, sort_keys=True, default=str)

    @classmethod
    def from_json(cls, text: str) -> RunRequest:
        data = json.loads(text)
        approvals = data.get("approvals")
        if approvals is not None:
            data["approvals"] = {k: ApprovalDecision(**v) for k, v in approvals.items()}
        if data.get("plan") is not None:
            data["plan"] = PlanDecision(**data["plan"])
        return cls(**data)


@dataclass(frozen=True)
class Outcome:
    """How a run ended, as ``finishing`` sees it before ``run_finished`` is emitted."""

    status: str
    output: str | None
    report: Mapping[str, Any] | None


class Durability(Protocol):
    """What a durable executor adds to one run."""

    @property
    def worker(self) -> str:
        """The worker executing the run."""
        ...

    @property
    def checkpoint(self) -> ToolCheckpoint: ...

    @property
    def limiter(self) -> CallLimiter | None: ...

    @property
    def completed_steps(self) -> int:
        """Steps checkpointed before this execution began (more than 0: a takeover)."""
        ...

    def model_capabilities(self) -> list[AbstractCapability[Any]]:
        """Capabilities that make the run's model requests checkpointed steps."""
        ...

    async def once(self, key: str, action: Callable[[], Awaitable[None]]) -> bool:
        """Do ``action`` unless the run did it before a takeover; ``True`` when it ran now."""
        ...

    async def finishing(self, outcome: Outcome, emit: Callable[[RunEvent], RunEvent]) -> None:
        """Called once the run's outcome is known, before ``run_finished`` (notifications)."""
        ...
