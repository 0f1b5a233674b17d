"""Who is calling, and what they may see: bearer tokens, roles, and ownership checks.

Every endpoint depends on :func:`person` (or :func:`alert_sender`). Ownership checks answer 404 —
never 403 — for another user's session or run, with the same message as for one that does not
exist, so ids do not leak. Role checks (a viewer asking for agent mode, an operator approving a
destructive call) answer 403: they are about the caller, not about someone else's data.
"""

from __future__ import annotations

import asyncio

from fastapi import Depends
from starlette.requests import HTTPConnection

from devops_agent.api.problems import ApiError
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import LOCAL_ADMIN, PERSON_ROLES, Principal, token_hash
from devops_agent.errors import NotFoundError, UserError
from devops_agent.store import RunRecord, SessionRecord, Store

BEARER = {"WWW-Authenticate": "Bearer"}
NO_TOKEN_HINT = "send `Authorization: Bearer TOKEN`; `devops-agent users add NAME --role viewer` makes one"


async def authenticate(state: ServiceState, authorization: str | None, proxy_user: str | None) -> Principal:
    """The caller of a request (or of a WebSocket's ``init``), from its token or the proxy's header."""
    server = state.settings.server
    if not server.auth:
        return LOCAL_ADMIN
    if server.trusted_user_header and proxy_user:
        try:
            user = await asyncio.to_thread(state.store.get_user, proxy_user)
        except NotFoundError:
            raise ApiError(
                401, f"unknown user {proxy_user!r}", error="Unauthorized", headers=BEARER
            ) from None
        return Principal(user.id, user.name, user.role)
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401, "authentication required", hint=NO_TOKEN_HINT, error="Unauthorized", headers=BEARER
        )
    found = await asyncio.to_thread(state.store.user_for_token, token_hash(token.strip()))
    if found is None:
        raise ApiError(
            401,
            "invalid or revoked token",
            hint="`devops-agent users list` shows the users; add one for a new token",
            error="Unauthorized",
            headers=BEARER,
        )
    return Principal(found.id, found.name, found.role)


async def caller(conn: HTTPConnection, state: ServiceState = Depends(service_state)) -> Principal:
    """The authenticated caller of an HTTP request (any role)."""
    header = state.settings.server.trusted_user_header
    principal = await authenticate(
        state, conn.headers.get("authorization"), conn.headers.get(header) if header else None
    )
    conn.scope.setdefault("state", {})["user"] = principal.name  # for the access log
    return principal


async def person(principal: Principal = Depends(caller)) -> Principal:
    """A person (viewer, operator or admin): an alerting system's token may only post alerts."""
    if principal.role not in PERSON_ROLES:
        raise ApiError(
            403,
            f"role {principal.role!r} may only post alerts",
            hint="use a person's token",
            error="Forbidden",
        )
    return principal


async def alert_sender(principal: Principal = Depends(caller)) -> Principal:
    """An alerting system (role ``alerts``), or an admin."""
    if principal.role not in ("alerts", "admin"):
        raise ApiError(
            403,
            "posting alerts takes a token of role alerts",
            hint="`devops-agent users add alertmanager --role alerts` makes one",
            error="Forbidden",
        )
    return principal


def no_session(session_id: str) -> NotFoundError:
    """The one answer for a session that does not exist or is not the caller's."""
    return NotFoundError(f"no session {session_id!r}", hint="GET /v1/sessions lists your sessions")


def no_run(run_id: str) -> NotFoundError:
    """The one answer for a run that does not exist or is not the caller's."""
    return NotFoundError(f"no run {run_id!r}", hint="GET /v1/sessions/{id}/runs lists a session's runs")


def owned_session(store: Store, principal: Principal, session_id: str) -> SessionRecord:
    """The session with exactly this id, if the caller may see it; else :func:`no_session`.

    (Blocking: call from a thread.) Only whole ids are looked up: the store also resolves
    prefixes, and "matches more than one session" would tell a caller about others' sessions."""
    try:
        record = store.get_session(session_id)
    except UserError:  # not found, too short, or an ambiguous prefix: all the same to the caller
        raise no_session(session_id) from None
    if record.id != session_id or not principal.owns(record.user_id):
        raise no_session(session_id)
    return record


def owned_run(store: Store, principal: Principal, run_id: str) -> tuple[RunRecord, SessionRecord]:
    """The run and its session, if the caller may see them; else :func:`no_run` (blocking)."""
    try:
        run = store.get_run(run_id)
        session = owned_session(store, principal, run.session_id)
    except UserError:
        raise no_run(run_id) from None
    return run, session


def require_mode(principal: Principal, mode: str | None) -> None:
    """Refuse agent mode to a viewer (403: it is about the caller's role)."""
    if mode == "agent" and not principal.may_use_agent_mode:
        raise ApiError(
            403,
            "a viewer may run in ask mode only",
            hint="ask an admin for an operator token to use agent mode",
            error="Forbidden",
        )
