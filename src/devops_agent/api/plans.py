"""A plan waiting for a decision: show it, approve it, ask for changes, or reject it (REST and
WebSocket), as ``devops-agent plan SESSION --approve|--edit|--reject`` does.

Who may decide is the approvals' rule applied to what the plan would do: operators and admins
decide any plan of a session they may see; a viewer only a plan of an ask-mode session none of
whose steps changes anything. Approving a plan approves no call: a mutating step still asks for
its own approval when it runs (and the run's mode still decides). The decision continues the run
as a new run of the session, in the decider's name.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends

from devops_agent.agent.reasoning.plan import PENDING_PLAN_KEY, PlanDecision
from devops_agent.api.auth import owned_session, person
from devops_agent.api.problems import ApiError
from devops_agent.api.runs import accepted
from devops_agent.api.schemas import PendingPlan, PlanAnswer, RunAccepted
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import Principal
from devops_agent.errors import UserError
from devops_agent.store import SessionRecord

router = APIRouter(tags=["plans"])
State = Annotated[ServiceState, Depends(service_state)]
Caller = Annotated[Principal, Depends(person)]


def pending_plan(session: SessionRecord) -> PendingPlan | None:
    """The plan ``session`` waits for a decision on, if any."""
    pending: dict[str, Any] | None = session.context_state.get(PENDING_PLAN_KEY)
    if not pending:
        return None
    plan = pending.get("plan") or {}
    steps = [dict(s) for s in plan.get("steps") or [] if isinstance(s, dict)]
    return PendingPlan(
        session_id=session.id,
        revision=int(pending.get("revision", 1)),
        goal=str(plan.get("goal") or ""),
        steps=steps,
        mutating=any(bool(s.get("mutating")) for s in steps),
    )


def _waiting(session: SessionRecord) -> PendingPlan:
    plan = pending_plan(session)
    if plan is None:
        raise ApiError(
            409,
            f"session {session.id} has no plan waiting for a decision",
            hint=f"GET /v1/sessions/{session.id}/events shows what it did",
            error="Conflict",
        )
    return plan


def check_plan_answer(principal: Principal, session: SessionRecord, answer: PlanAnswer) -> PlanDecision:
    """The decision ``answer`` makes, if the caller may make it (409/403/400 otherwise)."""
    plan = _waiting(session)
    if not principal.may_approve("approve") and (session.mode != "ask" or plan.mutating):
        raise ApiError(
            403,
            "a viewer may decide only a read-only plan of an ask-mode session",
            hint="an operator or admin must decide this one",
            error="Forbidden",
        )
    text = answer.text.strip()
    if answer.decision == "edit" and not text:
        raise UserError("an edit says what to change", hint='send {"decision": "edit", "text": "…"}')
    return PlanDecision(answer.decision, text, principal.name)


async def answer_plan(
    state: ServiceState, principal: Principal, session_id: str, answer: PlanAnswer
) -> RunAccepted:
    """Decide on a session's plan; the run continues as a new run (REST and WebSocket)."""
    session = await asyncio.to_thread(owned_session, state.store, principal, session_id)
    decision = check_plan_answer(principal, session, answer)
    handle = await state.tracker.start(principal, None, session_id=session.id, plan=decision)
    return accepted(handle.session_id, handle.run_id)


@router.get(
    "/sessions/{session_id}/plan",
    response_model=PendingPlan,
    summary="The plan a session waits for a decision on",
    responses={409: {"description": "no plan waits"}},
)
def show_plan(session_id: str, state: State, principal: Caller) -> PendingPlan:
    return _waiting(owned_session(state.store, principal, session_id))


@router.post(
    "/sessions/{session_id}/plan",
    status_code=202,
    response_model=RunAccepted,
    summary="Approve, edit or reject a session's plan; the run continues",
)
async def decide(session_id: str, body: PlanAnswer, state: State, principal: Caller) -> RunAccepted:
    return await answer_plan(state, principal, session_id, body)
