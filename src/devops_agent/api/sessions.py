"""Sessions: create, list (paged, filtered), read, rename or change mode, delete; their runs, events
and the full outputs of tool calls."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Query, Response

from devops_agent.api.auth import owned_session, person, require_mode
from devops_agent.api.problems import ApiError
from devops_agent.api.runs import start_question
from devops_agent.api.schemas import (
    EventPage,
    KeptOutput,
    Mode,
    RunAccepted,
    RunCreate,
    RunOut,
    SessionCreate,
    SessionOut,
    SessionPage,
    SessionPatch,
    ToolOutput,
)
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import Principal
from devops_agent.errors import NotFoundError, UserError
from devops_agent.events import event_from_json
from devops_agent.store import SESSION_STATUSES

router = APIRouter(tags=["sessions"])
State = Annotated[ServiceState, Depends(service_state)]
Caller = Annotated[Principal, Depends(person)]
Status = Literal[SESSION_STATUSES]  # type: ignore[valid-type]


@router.post("/sessions", status_code=201, response_model=SessionOut, summary="Create a session")
def create_session(body: SessionCreate, state: State, principal: Caller) -> SessionOut:
    require_mode(principal, body.mode)
    mode = body.mode or ("ask" if not principal.may_use_agent_mode else state.settings.mode)
    rec = state.store.create_session(
        title=body.title, mode=mode, model=state.service.model_name, user_id=principal.id
    )
    return SessionOut.of(rec)


@router.get(
    "/sessions", response_model=SessionPage, summary="Your sessions, newest first (admins: scope=all)"
)
def list_sessions(
    state: State,
    principal: Caller,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    status: Status | None = None,
    mode: Mode | None = None,
    q: Annotated[str | None, Query(max_length=200, description="text in the title")] = None,
    scope: Literal["mine", "all"] = "mine",
) -> SessionPage:
    if scope == "all" and not principal.is_admin:
        raise ApiError(
            403, "only an admin may list everyone's sessions", hint="leave scope out", error="Forbidden"
        )
    # With auth off the caller (the local admin, no id) sees every session either way.
    owner = None if scope == "all" else principal.id
    items, total = state.store.find_sessions(
        user_id=owner,
        status=status,
        mode=mode,
        text=q,
        limit=limit,
        offset=offset,
    )
    more = offset + len(items) < total
    return SessionPage(
        items=[SessionOut.of(r) for r in items],
        total=total,
        next_offset=offset + len(items) if more else None,
    )


@router.get("/sessions/{session_id}", response_model=SessionOut, summary="One session")
def get_session(session_id: str, state: State, principal: Caller) -> SessionOut:
    return SessionOut.of(owned_session(state.store, principal, session_id))


@router.patch(
    "/sessions/{session_id}", response_model=SessionOut, summary="Rename a session or change its mode"
)
def patch_session(session_id: str, body: SessionPatch, state: State, principal: Caller) -> SessionOut:
    owned_session(state.store, principal, session_id)
    require_mode(principal, body.mode)
    return SessionOut.of(state.store.update_session(session_id, title=body.title, mode=body.mode))


@router.delete("/sessions/{session_id}", status_code=204, summary="Delete a session with its runs and events")
def delete_session(session_id: str, state: State, principal: Caller) -> Response:
    rec = owned_session(state.store, principal, session_id)
    if rec.status == "running":
        raise ApiError(
            409,
            f"session {session_id} has a run going",
            hint="cancel it first (POST /v1/runs/{id}/cancel)",
            error="Conflict",
        )
    state.store.delete_session(rec.id)
    return Response(status_code=204)


@router.get(
    "/sessions/{session_id}/runs", response_model=list[RunOut], summary="A session's runs, oldest first"
)
def session_runs(session_id: str, state: State, principal: Caller) -> list[RunOut]:
    owned_session(state.store, principal, session_id)
    return [RunOut.of(r) for r in state.store.list_runs(session_id)]


@router.post(
    "/sessions/{session_id}/runs",
    status_code=202,
    response_model=RunAccepted,
    summary="Ask a question in a session",
)
async def session_run(session_id: str, body: RunCreate, state: State, principal: Caller) -> RunAccepted:
    if body.session_id not in (None, session_id):
        raise UserError("session_id in the body differs from the path", hint="leave it out of the body")
    return await start_question(state, principal, body, session_id)


@router.get("/sessions/{session_id}/events", response_model=EventPage, summary="A session's events, paged")
def session_events(
    session_id: str,
    state: State,
    principal: Caller,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    run_id: str | None = None,
) -> EventPage:
    owned_session(state.store, principal, session_id)
    records = state.store.session_events(session_id, run_id=run_id, offset=offset, limit=limit)
    more = len(records) == limit
    return EventPage(
        events=[event_from_json(r.payload) for r in records],
        next_offset=offset + len(records) if more else None,
    )


@router.get(
    "/sessions/{session_id}/outputs",
    response_model=list[KeptOutput],
    summary="Tool calls whose full output was kept",
)
def kept_outputs(session_id: str, state: State, principal: Caller) -> list[KeptOutput]:
    owned_session(state.store, principal, session_id)
    return [KeptOutput(tool_call_id=c, tool=t, chars=n) for c, t, n in state.store.kept_outputs(session_id)]


@router.get(
    "/sessions/{session_id}/outputs/{tool_call_id}",
    response_model=ToolOutput,
    summary="A tool call's full output",
)
def tool_output(session_id: str, tool_call_id: str, state: State, principal: Caller) -> ToolOutput:
    owned_session(state.store, principal, session_id)
    text = state.store.tool_output(session_id, tool_call_id)
    if text is None:
        raise NotFoundError(
            f"session {session_id} kept no full output for tool call {tool_call_id!r}",
            hint=f"GET /v1/sessions/{session_id}/outputs lists the calls that have one",
        )
    return ToolOutput(session_id=session_id, tool_call_id=tool_call_id, output=text)
