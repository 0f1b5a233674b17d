"""Runs: start one with a question, read its status, cancel or resume it, read its events and report.

``GET /v1/runs/{id}/events`` answers JSON pages (``after_seq``, ``limit``) or, with
``Accept: text/event-stream``, streams the run as Server-Sent Events (``Last-Event-ID`` resumes).
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import PlainTextResponse, Response

from devops_agent.api.auth import no_run, owned_run, owned_session, person, require_mode
from devops_agent.api.problems import ApiError
from devops_agent.api.schemas import (
    CancelOut,
    EventPage,
    ReportOut,
    RunAccepted,
    RunCreate,
    RunOut,
)
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.streaming import sse_response
from devops_agent.api.tokens import Principal
from devops_agent.errors import UserError
from devops_agent.events import RunFinished, event_from_json
from devops_agent.policies.modes import Mode

router = APIRouter(tags=["runs"])
State = Annotated[ServiceState, Depends(service_state)]
Caller = Annotated[Principal, Depends(person)]


def effective_mode(principal: Principal, requested: Mode | None) -> Mode | None:
    """The mode a run gets: a viewer's is always ask (asking for agent is refused)."""
    require_mode(principal, requested)
    return "ask" if not principal.may_use_agent_mode else requested


def run_inputs(state: ServiceState, body: RunCreate) -> tuple[str, dict[str, Any]]:
    """The prompt and the runner inputs of a run request, checked as the CLI checks its options."""
    from devops_agent.agent.plugins import available_runbooks
    from devops_agent.agent.runners.runbooks import named_runbooks
    from devops_agent.analysis.timeparse import parse_since
    from devops_agent.errors import NotFoundError

    service = state.service
    if body.model is not None and body.model != service.model_name:
        raise UserError(
            f"this server runs model {service.model_name or '(none: offline runbooks)'}, not {body.model!r}",
            hint="leave model out, or ask the operator to configure that model",
        )
    given = body.inputs.model_dump(exclude_none=True, exclude_defaults=True)
    given.pop("alert_index", None)
    question = body.question
    if body.inputs.alert is not None:
        from devops_agent.api.alerts import alert_question

        generated, alert_inputs = alert_question(
            given.pop("alert"), body.inputs.alert_index, body.inputs.query
        )
        question = question or generated
        given = {**alert_inputs, **given}
    elif body.inputs.alert_index is not None:
        raise UserError(
            "inputs.alert_index picks an alert of inputs.alert", hint="send the alert payload too"
        )
    if not question or not question.strip():
        raise UserError("say what to investigate", hint="send question (or inputs.alert)")
    inputs: dict[str, Any] = {**given, "question": question}
    if body.inputs.since is not None:
        parse_since(body.inputs.since)  # fail now, with the parser's message
    if body.runbooks:
        try:
            named_runbooks(body.runbooks, available_runbooks(state.settings))
        except NotFoundError as exc:  # a name in the request body: the request is wrong (400)
            raise UserError(exc.message, hint=exc.hint) from None
        inputs["runbooks"] = list(body.runbooks)
    prompt = question
    context = {k: v for k, v in given.items() if k != "ticket"}
    if service.model is not None and context:
        lines = [f"{k}: {', '.join(v) if isinstance(v, list) else v}" for k, v in context.items()]
        prompt = question + "\n\n" + "\n".join(lines)
    return prompt, inputs


async def start_question(
    state: ServiceState, principal: Principal, body: RunCreate, session_id: str | None
) -> RunAccepted:
    """Start a run of ``body`` in ``session_id`` (checked to be the caller's) or a new session."""
    mode = effective_mode(principal, body.mode)
    if session_id is not None:
        await asyncio.to_thread(owned_session, state.store, principal, session_id)
    prompt, inputs = run_inputs(state, body)
    handle = await state.tracker.start(principal, prompt, session_id=session_id, mode=mode, inputs=inputs)
    return accepted(handle.session_id, handle.run_id)


def accepted(session_id: str, run_id: str) -> RunAccepted:
    return RunAccepted(session_id=session_id, run_id=run_id, events=f"/v1/runs/{run_id}/events")


@router.post(
    "/runs", status_code=202, response_model=RunAccepted, summary="Start a run (new session or given)"
)
async def create_run(body: RunCreate, state: State, principal: Caller) -> RunAccepted:
    return await start_question(state, principal, body, body.session_id)


@router.get("/runs/{run_id}", response_model=RunOut, summary="A run's status")
def get_run(run_id: str, state: State, principal: Caller) -> RunOut:
    run, _session = owned_run(state.store, principal, run_id)
    return RunOut.of(run)


@router.post("/runs/{run_id}/cancel", status_code=202, response_model=CancelOut, summary="Stop a run")
def cancel_run(run_id: str, state: State, principal: Caller) -> CancelOut:
    owned_run(state.store, principal, run_id)
    return CancelOut(run_id=run_id, cancelled=state.service.cancel(run_id))


@router.post(
    "/runs/{run_id}/resume",
    status_code=202,
    response_model=RunAccepted,
    summary="Resume a run a shutdown interrupted (same question, same session)",
)
async def resume_run(run_id: str, state: State, principal: Caller) -> RunAccepted:
    run, session = await asyncio.to_thread(owned_run, state.store, principal, run_id)
    if run.status != "interrupted" or run.request is None:
        raise ApiError(
            409,
            f"run {run_id} is {run.status}, not interrupted: only a run a shutdown stopped is resumed",
            hint="ask again with POST /v1/sessions/{id}/runs",
            error="Conflict",
        )
    request = run.request
    mode = effective_mode(principal, request.get("mode"))
    handle = await state.tracker.start(
        principal,
        str(request["prompt"]),
        session_id=session.id,
        mode=mode,
        inputs=dict(request.get("inputs") or {}),
    )
    return accepted(handle.session_id, handle.run_id)


@router.get(
    "/runs/{run_id}/events",
    response_model=EventPage,
    summary="A run's events: JSON pages, or Server-Sent Events with Accept: text/event-stream",
    responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}},
)
async def run_events(
    run_id: str,
    request: Request,
    state: State,
    principal: Caller,
    after_seq: Annotated[int, Query(ge=0, le=2**31 - 1, description="events after this seq")] = 0,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    last_event_id: Annotated[str | None, Header(description="SSE resume point (a seq)")] = None,
) -> Response | EventPage:
    await asyncio.to_thread(owned_run, state.store, principal, run_id)
    if "text/event-stream" in request.headers.get("accept", ""):
        start = after_seq
        if last_event_id is not None:
            if not last_event_id.strip().isdigit():
                raise UserError(
                    f"Last-Event-ID {last_event_id[:40]!r} is not a seq", hint="send the last id you got"
                )
            start = int(last_event_id.strip())
        return sse_response(state, run_id, start)
    records = await asyncio.to_thread(state.store.run_events, run_id, after_seq, limit)
    events = [event_from_json(r.payload) for r in records]
    finished = bool(events) and isinstance(events[-1], RunFinished)
    more = len(records) == limit and not finished
    return EventPage(events=events, next_after_seq=events[-1].seq if more else None, finished=finished)


@router.get(
    "/runs/{run_id}/report",
    response_model=ReportOut,
    summary="The final report: JSON, or Markdown with format=markdown",
    responses={200: {"content": {"text/markdown": {"schema": {"type": "string"}}}}},
)
def run_report(
    run_id: str,
    state: State,
    principal: Caller,
    format: Annotated[str, Query(pattern="^(json|markdown)$")] = "json",  # noqa: A002 - the API's word
) -> Response | ReportOut:
    owned_run(state.store, principal, run_id)
    final = _final_event(state, run_id)
    if format == "markdown":
        return PlainTextResponse(final.output or "", media_type="text/markdown")
    return ReportOut(
        run_id=run_id, status=final.status, output=final.output, report=final.report, usage=final.usage
    )


def _final_event(state: ServiceState, run_id: str) -> RunFinished:
    run = state.store.get_run(run_id)
    if not run.finished:
        raise ApiError(
            409, f"run {run_id} is still {run.status}", hint="wait for run_finished", error="Conflict"
        )
    for rec in reversed(state.store.run_events(run_id)):
        if rec.type == "run_finished":
            event = event_from_json(rec.payload)
            assert isinstance(event, RunFinished)
            return event
    raise no_run(run_id)
