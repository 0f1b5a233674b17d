"""The TUI's client over the session service in this process (the CLI's path to the agent).

Runs start on the service's executor in this process and are followed through its event stream;
sessions, past events, pending calls and kept outputs are read from the store the CLI uses. The
store is synchronous: each read goes to a thread so the screen keeps drawing. The rules are the
CLI's: the local user may approve anything, a destructive call with ``CONFIRM``.

This module must not import Textual: it is tested without a screen.
"""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision
from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY, PlanDecision
from devops_agent.errors import UserError
from devops_agent.events import RunEvent, event_from_json
from devops_agent.policies.modes import MODES
from devops_agent.store import SessionRecord
from devops_agent.tui.client import (
    Identity,
    KeptOutput,
    PendingCall,
    PendingPlan,
    PlanAction,
    RunRef,
    RunSummary,
    SessionSummary,
    check_confirm,
)

if TYPE_CHECKING:
    from devops_agent.agent.session import SessionService


def _summary(rec: SessionRecord) -> SessionSummary:
    return SessionSummary(
        id=rec.id,
        title=rec.title,
        mode=rec.mode,
        status=rec.status,
        updated_at=rec.updated_at,
        pending_approvals=len(rec.context_state.get(PENDING_KEY) or {}),
    )


def check_mode(mode: str) -> None:
    if mode not in MODES:
        raise UserError(f"{mode!r} is not a mode", hint="use ask or agent")


class LocalClient:
    """:class:`~devops_agent.tui.client.AgentClient` over a :class:`SessionService`."""

    def __init__(self, service: SessionService, *, user: str | None = None) -> None:
        self.service = service
        self.store = service.store
        self.user = user or getpass.getuser()

    async def connect(self) -> Identity:
        return Identity(self.user, "local", "local", self.service.model_name)

    async def close(self) -> None:
        """Nothing to close: the caller owns the service and its store. A run still going when the
        TUI quits is a task of the app's event loop, cancelled when the loop ends: it is stored
        ``cancelled`` (tests/test_tui.py checks it)."""

    async def sessions(self, limit: int = 50) -> list[SessionSummary]:
        return [_summary(r) for r in await asyncio.to_thread(self.store.list_sessions, limit)]

    async def session(self, session_id: str) -> SessionSummary:
        return _summary(await asyncio.to_thread(self.store.get_session, session_id))

    async def history(self, session_id: str) -> list[RunEvent]:
        records = await asyncio.to_thread(self.store.list_events, session_id)
        return [event_from_json(r.payload) for r in records]

    async def runs(self, session_id: str) -> list[RunSummary]:
        return [RunSummary(r.id, r.status) for r in await asyncio.to_thread(self.store.list_runs, session_id)]

    async def ask(
        self, question: str, *, session_id: str | None, mode: str, inputs: dict[str, Any] | None = None
    ) -> RunRef:
        check_mode(mode)
        handle = await self.service.start(
            question,
            session_id=session_id,
            mode=mode,  # type: ignore[arg-type]  # checked above
            inputs=inputs,
        )
        return RunRef(handle.session_id, handle.run_id)

    def events(self, run_id: str, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        return self.service.events(run_id, after_seq)

    async def pending(self, session_id: str) -> list[PendingCall]:
        rec = await asyncio.to_thread(self.store.get_session, session_id)
        pending = rec.context_state.get(PENDING_KEY) or {}
        return [PendingCall.from_pending(cid, p) for cid, p in pending.items()]

    async def answer(
        self, session_id: str, *, approve: bool, reason: str = "", confirm: str | None = None
    ) -> RunRef:
        calls = await self.pending(session_id)
        if not calls:
            raise UserError(f"session {session_id[:12]} has no pending approvals", hint="nothing to answer")
        check_confirm(calls, approve, confirm)
        why = reason or ("" if approve else "denied in the TUI")
        decisions = {c.tool_call_id: ApprovalDecision(approve, why, self.user) for c in calls}
        handle = await self.service.answer(session_id, decisions)
        return RunRef(handle.session_id, handle.run_id)

    async def pending_plan(self, session_id: str) -> PendingPlan | None:
        rec = await asyncio.to_thread(self.store.get_session, session_id)
        pending = rec.context_state.get(PENDING_PLAN_KEY)
        return PendingPlan.from_pending(pending) if pending else None

    async def decide_plan(self, session_id: str, action: PlanAction, text: str = "") -> RunRef:
        decision = PlanDecision(action, text.strip(), self.user)  # an edit without text: UserError
        handle = await self.service.answer_plan(session_id, decision)
        return RunRef(handle.session_id, handle.run_id)

    async def cancel(self, run_id: str) -> bool:
        # On the loop, not in a thread: a run of this process is stopped by cancelling its task.
        return self.service.cancel(run_id)

    async def set_mode(self, session_id: str, mode: str) -> None:
        check_mode(mode)
        await asyncio.to_thread(self.store.update_session, session_id, mode=mode)

    async def kept_outputs(self, session_id: str) -> list[KeptOutput]:
        kept = await asyncio.to_thread(self.store.kept_outputs, session_id)
        return [KeptOutput(call_id, tool, n) for call_id, tool, n in kept]

    async def tool_output(self, session_id: str, tool_call_id: str) -> str | None:
        return await asyncio.to_thread(self.store.tool_output, session_id, tool_call_id)
