"""What the TUI asks of the agent: one small client interface, two implementations.

:class:`AgentClient` is everything the screens may do — list sessions, read a session's past
events, ask a question, follow a run's events from a ``seq``, answer approvals, decide on a plan,
cancel, change the mode, fetch a tool call's full output.
:class:`~devops_agent.tui.local.LocalClient` does it over the session service in this process (as
the CLI does); :class:`~devops_agent.tui.remote.RemoteClient` over a server's WebSocket and REST
API (docs/api.md). The screens hold no rule of their own: who may
approve what, and that a destructive call needs ``CONFIRM``, is decided by the client's side (the
CLI's rules locally, the server's remotely); the dialogs only ask for what those rules require.

This module must not import Textual, the session service or the API: both clients and the screens
import it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, Protocol

from devops_agent.errors import UserError
from devops_agent.events import RunEvent

CONFIRM = "CONFIRM"
"""What an approver types to run a destructive call (``approve_detailed``), as at the CLI's prompt."""

Role = Literal["local", "viewer", "operator", "admin"]


@dataclass(frozen=True)
class Identity:
    """Who the client acts as, and where: ``local`` (this machine's user, the CLI's rights) or a
    server's user and role."""

    user: str
    role: Role
    where: str
    model: str | None = None

    @property
    def may_use_agent_mode(self) -> bool:
        """A viewer may run in ask mode only (the server refuses agent mode to it)."""
        return self.role != "viewer"


@dataclass(frozen=True)
class SessionSummary:
    """One row of the sessions list."""

    id: str
    title: str
    mode: str
    status: str
    updated_at: datetime
    pending_approvals: int = 0


@dataclass(frozen=True)
class RunRef:
    """A run that was started (a question, or answers that resume a paused run)."""

    session_id: str
    run_id: str


@dataclass(frozen=True)
class RunSummary:
    """One run of a session, oldest first in :meth:`AgentClient.runs`."""

    id: str
    status: str


@dataclass(frozen=True)
class KeptOutput:
    """A tool call whose full output the session kept (it was cut for the model)."""

    tool_call_id: str
    tool: str
    chars: int


@dataclass(frozen=True)
class PendingCall:
    """A tool call a paused run waits on, as the approver must see it."""

    tool_call_id: str
    tool: str
    args: dict[str, Any] = field(default_factory=dict)
    decision: str = "approve"
    reason: str = ""
    command: str | None = None
    classification: str | None = None
    impact: dict[str, str] | None = None

    @property
    def destructive(self) -> bool:
        """Approving it takes the word :data:`CONFIRM`."""
        return self.decision == "approve_detailed"

    @classmethod
    def from_pending(cls, call_id: str, p: Mapping[str, Any]) -> PendingCall:
        """From a session's stored pending call, or a server's ``PendingCall`` JSON."""
        return cls(
            tool_call_id=call_id,
            tool=str(p.get("tool")),
            args=dict(p.get("args") or {}),
            decision=str(p.get("decision") or "approve"),
            reason=str(p.get("reason") or ""),
            command=p.get("command"),
            classification=p.get("classification"),
            impact=p.get("impact"),
        )


PlanAction = Literal["approve", "edit", "reject"]


@dataclass(frozen=True)
class PendingPlan:
    """A plan a paused session waits for a decision on, as the person deciding must see it."""

    revision: int
    goal: str
    steps: list[dict[str, Any]] = field(default_factory=list)

    @property
    def mutating(self) -> bool:
        """Whether a step changes things (it still asks for its own approval when it runs)."""
        return any(bool(s.get("mutating")) for s in self.steps)

    @classmethod
    def from_pending(cls, p: Mapping[str, Any]) -> PendingPlan:
        """From a session's stored pending plan (``plan`` inside) or a server's ``PendingPlan``."""
        inner = p.get("plan")
        plan: Mapping[str, Any] = inner if isinstance(inner, Mapping) else p
        steps = [dict(s) for s in plan.get("steps") or [] if isinstance(s, Mapping)]
        return cls(revision=int(p.get("revision", 1)), goal=str(plan.get("goal") or ""), steps=steps)


def check_confirm(calls: list[PendingCall], approve: bool, confirm: str | None) -> None:
    """Approving a destructive call takes :data:`CONFIRM` (the rule of the CLI's prompt and the
    API); raises :class:`UserError` naming the call otherwise."""
    if not approve:
        return
    for call in calls:
        if call.destructive and confirm != CONFIRM:
            wrong = f" ({confirm!r} is not {CONFIRM})" if confirm else ""
            raise UserError(
                f"call {call.tool_call_id} is destructive: approving it takes {CONFIRM}{wrong}",
                hint=f"read its impact, then type {CONFIRM}; or deny it",
            )


class AgentClient(Protocol):
    """The agent as the TUI sees it; see the module docstring."""

    async def connect(self) -> Identity:
        """Open the connection (a no-op locally); who the client acts as."""
        ...

    async def close(self) -> None:
        """Close the connection; runs started go on (they belong to the service)."""
        ...

    async def sessions(self, limit: int = 50) -> list[SessionSummary]:
        """The most recently updated sessions, newest first."""
        ...

    async def session(self, session_id: str) -> SessionSummary:
        """One session (an id prefix works locally)."""
        ...

    async def history(self, session_id: str) -> list[RunEvent]:
        """Every event of the session's runs, oldest first."""
        ...

    async def runs(self, session_id: str) -> list[RunSummary]:
        """The session's runs, oldest first."""
        ...

    async def ask(
        self, question: str, *, session_id: str | None, mode: str, inputs: dict[str, Any] | None = None
    ) -> RunRef:
        """Start a run of ``question`` (a new session when ``session_id`` is None)."""
        ...

    def events(self, run_id: str, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        """The run's events after ``after_seq``, then each new one, until ``run_finished``."""
        ...

    async def pending(self, session_id: str) -> list[PendingCall]:
        """The calls a paused session waits on."""
        ...

    async def answer(
        self, session_id: str, *, approve: bool, reason: str = "", confirm: str | None = None
    ) -> RunRef:
        """Approve or deny every pending call of the session; the run continues as a new run."""
        ...

    async def pending_plan(self, session_id: str) -> PendingPlan | None:
        """The plan the session waits for a decision on; ``None`` when none waits."""
        ...

    async def decide_plan(self, session_id: str, action: PlanAction, text: str = "") -> RunRef:
        """Approve the waiting plan, ask for changes (``text`` says which; a revised plan follows
        and waits again) or reject it (``text``: why); the run continues as a new run."""
        ...

    async def cancel(self, run_id: str) -> bool:
        """Stop a run; ``False`` when it had already finished."""
        ...

    async def set_mode(self, session_id: str, mode: str) -> None:
        """Change the session's mode (``ask`` or ``agent``) for its next questions."""
        ...

    async def kept_outputs(self, session_id: str) -> list[KeptOutput]:
        """The session's tool calls whose full output was kept, in call order."""
        ...

    async def tool_output(self, session_id: str, tool_call_id: str) -> str | None:
        """The full output kept for one tool call (secrets scrubbed); ``None`` when none was kept."""
        ...
