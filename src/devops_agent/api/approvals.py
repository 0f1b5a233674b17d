"""Pending approvals: list them with their impact analysis, approve or deny them (REST and WebSocket).

The rules are the CLI's: every pending call of a paused run is answered at once; a destructive
call (``approve_detailed``) is approved only with the word ``CONFIRM``. Who may approve is the
role's: operators approve mutating calls, only admins destructive ones; a viewer approves
nothing. The answers resume the run as a new run of the session, in the approver's name.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends

from devops_agent.agent.approvals import PENDING_KEY, ApprovalDecision
from devops_agent.api.auth import owned_session, person
from devops_agent.api.problems import ApiError
from devops_agent.api.runs import accepted
from devops_agent.api.schemas import ApprovalAnswer, PendingCall, RunAccepted
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import Principal
from devops_agent.errors import UserError
from devops_agent.store import SessionRecord

router = APIRouter(tags=["approvals"])
State = Annotated[ServiceState, Depends(service_state)]
Caller = Annotated[Principal, Depends(person)]
CONFIRM = "CONFIRM"


def pending_calls(session: SessionRecord) -> list[PendingCall]:
    """What a paused session waits for."""
    pending = session.context_state.get(PENDING_KEY) or {}
    return [
        PendingCall(
            session_id=session.id,
            tool_call_id=call_id,
            tool=str(p.get("tool")),
            args=dict(p.get("args") or {}),
            decision=str(p.get("decision", "approve")),
            reason=str(p.get("reason") or ""),
            command=p.get("command"),
            classification=p.get("classification"),
            impact=p.get("impact"),
        )
        for call_id, p in pending.items()
    ]


def check_answer(
    principal: Principal, session: SessionRecord, answer: ApprovalAnswer
) -> dict[str, ApprovalDecision]:
    """The decisions ``answer`` makes, if the caller may make them (403/409/400 otherwise)."""
    calls = pending_calls(session)
    if not calls:
        raise ApiError(
            409, f"session {session.id} has no pending approvals", hint="nothing to answer", error="Conflict"
        )
    if principal.role not in ("operator", "admin"):
        raise ApiError(
            403, "a viewer may not answer approvals", hint="an operator or admin must", error="Forbidden"
        )
    ids = [c.tool_call_id for c in calls]
    if answer.call_ids is not None and sorted(answer.call_ids) != sorted(ids):
        raise ApiError(
            409,
            "answer every pending call of the run at once",
            hint="pending: " + ", ".join(ids),
            error="Conflict",
        )
    if answer.decision == "approve":
        for call in calls:
            if not principal.may_approve(call.decision):
                raise ApiError(
                    403,
                    f"call {call.tool_call_id} is destructive: only an admin may approve it",
                    hint="ask an admin, or deny it",
                    error="Forbidden",
                )
            if call.decision == "approve_detailed" and answer.confirm != CONFIRM:
                wrong = f" ({answer.confirm!r} is not {CONFIRM})" if answer.confirm else ""
                raise UserError(
                    f"call {call.tool_call_id} is destructive: approving it takes confirm={CONFIRM}{wrong}",
                    hint=f"read its impact (GET /v1/sessions/{session.id}/approvals), "
                    f"then send confirm: {CONFIRM}",
                )
    approved = answer.decision == "approve"
    return {cid: ApprovalDecision(approved, answer.reason, principal.name) for cid in ids}


async def answer_pending(
    state: ServiceState, principal: Principal, session_id: str, answer: ApprovalAnswer
) -> RunAccepted:
    """Answer a session's pending calls; the run continues as a new run (REST and WebSocket)."""
    session = await asyncio.to_thread(owned_session, state.store, principal, session_id)
    decisions = check_answer(principal, session, answer)
    handle = await state.tracker.start(principal, None, session_id=session.id, approvals=decisions)
    return accepted(handle.session_id, handle.run_id)


@router.get("/approvals", response_model=list[PendingCall], summary="Every call waiting for your approval")
def all_pending(state: State, principal: Caller) -> list[PendingCall]:
    owner = None if principal.is_admin else principal.id
    paused, _total = state.store.find_sessions(user_id=owner, status="paused", limit=200)
    return [call for s in paused for call in pending_calls(s)]


@router.get(
    "/sessions/{session_id}/approvals", response_model=list[PendingCall], summary="A session's pending calls"
)
def session_pending(session_id: str, state: State, principal: Caller) -> list[PendingCall]:
    return pending_calls(owned_session(state.store, principal, session_id))


@router.post(
    "/sessions/{session_id}/approvals",
    status_code=202,
    response_model=RunAccepted,
    summary="Approve or deny a session's pending calls; the run continues",
)
async def answer(session_id: str, body: ApprovalAnswer, state: State, principal: Caller) -> RunAccepted:
    return await answer_pending(state, principal, session_id, body)
