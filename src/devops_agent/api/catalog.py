"""What the service offers and how it is: the caller, tools and breakers, runbooks, knowledge search,
memory findings, the audit log, and ``doctor`` as ``/v1/health/details``.

Findings and audit entries are per user like sessions: a user sees their own (and findings no user
owns, the CLI's); an admin sees everyone's.
"""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from pydantic import BaseModel

from devops_agent.api.auth import owned_session, person
from devops_agent.api.schemas import Me
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import Principal
from devops_agent.errors import NotFoundError, UserError
from devops_agent.store import AUDIT_OUTCOMES

router = APIRouter()
State = Annotated[ServiceState, Depends(service_state)]
Caller = Annotated[Principal, Depends(person)]
Outcome = Literal[AUDIT_OUTCOMES]  # type: ignore[valid-type]


class ToolOut(BaseModel):
    tool: str
    toolset: str
    category: str
    read_only: bool
    risk: str
    description: str


class BreakerOut(BaseModel):
    tool: str
    state: str
    failures: int
    retry_after_s: float | None


class CheckOut(BaseModel):
    name: str
    level: str
    detail: str
    hint: str | None = None
    facts: dict[str, Any] | None = None


@router.get("/me", response_model=Me, tags=["users"], summary="Who you are, your role and running runs")
def me(state: State, principal: Caller) -> Me:
    return Me(
        id=principal.id, name=principal.name, role=principal.role, active_runs=state.tracker.active(principal)
    )


@router.get("/tools", response_model=list[ToolOut], tags=["tools"], summary="Tools the agent can call")
def tools(state: State, principal: Caller) -> list[ToolOut]:
    return [
        ToolOut(
            tool=e.name,
            toolset=e.toolset,
            category=e.spec.category,
            read_only=e.spec.read_only,
            risk=e.spec.risk,
            description=e.description,
        )
        for e in state.service.catalog.entries.values()
    ]


@router.get("/tools/status", response_model=list[BreakerOut], tags=["tools"], summary="Circuit breakers")
def tools_status(state: State, principal: Caller) -> list[BreakerOut]:
    now = datetime.now(UTC)
    out = []
    for b in state.store.load_breakers():
        retry = None
        if b.state == "open" and b.retry_after_s is not None:
            retry = round(max(0.0, b.retry_after_s - (now - b.updated_at).total_seconds()), 1)
        out.append(BreakerOut(tool=b.tool, state=b.state, failures=b.failures, retry_after_s=retry))
    return out


@router.get("/runbooks", tags=["runbooks"], summary="Installed runbooks")
def runbooks(state: State, principal: Caller) -> list[dict[str, Any]]:
    from devops_agent.agent.plugins import available_runbooks

    return [
        {"name": b.name, "title": b.title, "keywords": b.keywords, "steps": len(b.steps)}
        for b in available_runbooks(state.settings)
    ]


@router.get("/runbooks/{name}", tags=["runbooks"], summary="A runbook's steps, analyzers and advice")
def runbook(name: str, state: State, principal: Caller) -> dict[str, Any]:
    from devops_agent.agent.plugins import available_runbooks
    from devops_agent.runbooks import get_runbook

    books = available_runbooks(state.settings)
    try:
        return get_runbook(name, books).model_dump(mode="json")
    except NotFoundError:
        known = ", ".join(b.name for b in books)
        raise NotFoundError(f"unknown runbook {name!r} (known: {known})", hint="GET /v1/runbooks") from None


@router.get("/knowledge/search", tags=["knowledge"], summary="Search an index (code, runbooks, postmortems)")
def knowledge_search(
    state: State,
    principal: Caller,
    q: Annotated[str, Query(min_length=1, max_length=2000)],
    collection: Literal["code", "runbooks", "postmortems"] = "runbooks",
    limit: Annotated[int, Query(ge=1, le=50)] = 8,
) -> dict[str, Any]:
    from devops_agent.tools.knowledge import search_collection

    result = search_collection(state.settings, q, collection, limit)
    if result.status == "error":
        raise UserError(result.error or "search failed", hint=result.hint)
    return {
        "status": result.status,
        "hits": result.data if result.status == "success" else [],
        "note": result.hint,
    }


@router.get("/findings", tags=["memory"], summary="Findings remembered from investigations")
def findings(
    state: State,
    principal: Caller,
    project: Annotated[str | None, Query(max_length=200)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
    offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0,
) -> list[dict[str, Any]]:
    owner = None if principal.is_admin else principal.id
    rows = state.store.find_findings(user_id=owner, project=project, limit=limit, offset=offset)
    if owner is not None:
        rows = [f for f in rows if f.user_id == owner or f.user_id is None]
    return [dataclasses.asdict(f) for f in rows]


@router.get("/audit", tags=["audit"], summary="The audit log (yours; an admin's: everyone's)")
def audit(
    state: State,
    principal: Caller,
    session: Annotated[str | None, Query(max_length=64)] = None,
    outcome: Outcome | None = None,
    tool: Annotated[str | None, Query(max_length=200)] = None,
    since: Annotated[str | None, Query(max_length=64, description="2h, 1d, an ISO time")] = None,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
) -> list[dict[str, Any]]:
    from devops_agent.analysis.timeparse import parse_since

    if session is not None:
        owned_session(state.store, principal, session)
    bound = parse_since(since) if since else None
    if bound is not None and bound > datetime.now(UTC):
        raise UserError(
            f"since {since} is in the future: nothing is logged after it yet", hint="give a past time"
        )
    rows = state.store.list_audit(
        session_id=session,
        outcome=outcome,
        tool=tool,
        since=bound,
        limit=limit,
        user_id=None if principal.is_admin else principal.id,
    )
    return [dataclasses.asdict(r) for r in rows]


@router.get(
    "/health/details",
    response_model=list[CheckOut],
    tags=["ops"],
    summary="doctor: config, store, model, tools",
)
def health_details(state: State, principal: Caller) -> list[CheckOut]:
    from devops_agent.agent.doctor import run_checks
    from devops_agent.api.problems import ApiError

    if not principal.is_admin:  # it names the config files, the store and the model endpoint
        raise ApiError(
            403, "only an admin may read the service's health details", hint="GET /readyz", error="Forbidden"
        )
    from devops_agent.config import LoadedSettings

    checks = run_checks(LoadedSettings(settings=state.settings))
    return [CheckOut(**c.to_dict()) for c in checks]
