"""The service's MCP endpoint: DevOps Agent's MCP server at ``/mcp/``, for the service's users.

The server (:mod:`devops_agent.mcp_server`) is mounted beside the REST API and shares its store and
session service, so its calls land in the same sessions, audit log and MCP pool. Its bearer tokens
are the service's: :class:`ServiceUsers` turns one into the MCP server's principal (a viewer may
only read; operators and admins may change things when ``server.mcp_allow_mutating``), naming the
user, whose sessions the MCP server then shows and no one else's (admins see all). An alerting
system's token (role ``alerts``) is refused here as it is on the REST API. Its investigations are
the service's runs (:class:`ServiceMcpServer`): under the user's limit, in /metrics, traced.

The endpoint is built in the app's lifespan, once the store is open: :class:`LateMount` is what
is mounted, and passes requests on to it. This module must not hold per-request state.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from starlette.types import Receive, Scope, Send

from devops_agent.agent.session import SessionService
from devops_agent.api.problems import ApiError
from devops_agent.api.tokens import LOCAL_ADMIN, PERSON_ROLES, Principal, token_hash
from devops_agent.api.tracker import RunTracker
from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.events import RunFinished
from devops_agent.mcp_server.http import McpHttpApp, mcp_http_app
from devops_agent.mcp_server.http import Principal as McpPrincipal
from devops_agent.mcp_server.server import AgentMcpServer
from devops_agent.store import Store

MCP_PATH = "/mcp"


class ServiceUsers:
    """The service's users as the MCP server's :class:`~devops_agent.mcp_server.http.TokenAuth`."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def authenticate(self, token: str) -> McpPrincipal | None:
        """The person a token belongs to; ``None`` for an unknown token or an alerting system's.
        (One indexed lookup, on the event loop: the MCP middleware's protocol is synchronous.)"""
        user = self.store.user_for_token(token_hash(token))
        if user is None or user.role not in PERSON_ROLES:
            return None
        return McpPrincipal(user.name, frozenset({user.role}), user_id=user.id)


@dataclass
class ServiceMcpServer(AgentMcpServer):
    """The MCP server inside the service: an MCP client's investigation is one of the service's
    runs, started by the :class:`RunTracker` (the user's limit of concurrent runs, /metrics, the
    run's trace) and followed to its end."""

    tracker: RunTracker | None = None

    async def investigation(self, prompt: str, inputs: dict[str, Any], who: McpPrincipal) -> RunFinished:
        if self.tracker is None:
            return await super().investigation(prompt, inputs, who)
        role = next(iter(who.roles & set(PERSON_ROLES)), "operator")
        principal = LOCAL_ADMIN if who.user_id is None else Principal(who.user_id, who.name, role)
        try:
            handle = await self.tracker.start(principal, prompt, mode="ask", inputs=inputs)
        except ApiError as exc:  # over the limit, or shutting down: the MCP client reads why
            raise UserError(exc.detail, hint=exc.hint) from None
        async for event in self.sessions.events(handle.run_id):
            if isinstance(event, RunFinished):
                return event
        raise UserError("the run ended without finishing", hint="GET /v1/runs/{id} shows its status")


def mcp_endpoint(
    settings: Settings, store: Store, service: SessionService, tracker: RunTracker | None = None
) -> McpHttpApp:
    """The MCP server over the service's store, session service and run tracker, with its users'
    tokens (none when ``server.auth`` is off: every caller is then one local operator, as on stdio)."""
    server = ServiceMcpServer(
        settings,
        store,
        allow_mutating=settings.server.mcp_allow_mutating,
        service=service,
        tracker=tracker,
    )
    auth = ServiceUsers(store) if settings.server.auth else None
    return mcp_http_app(server, auth=auth, host=settings.server.host, path="/")


class LateMount:
    """The ASGI app mounted at ``/mcp``: forwards to the endpoint the lifespan put in
    ``app.state.mcp``, and answers 503 before it exists (or after shutdown began)."""

    def __init__(self, state: object, *, bare: bool = False) -> None:
        """``bare``: serve ``/mcp`` itself (without the slash), as mounted at ``/mcp`` would see
        ``/mcp/``: clients are often configured without it, and a redirect would lose the POST."""
        self.state = state
        self.bare = bare

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint: McpHttpApp | None = getattr(self.state, "mcp", None)
        if endpoint is not None:
            if self.bare:
                root = scope.get("root_path", "")
                scope = {**scope, "path": scope["path"] + "/", "root_path": root + MCP_PATH}
            await endpoint.app(scope, receive, send)
            return
        if scope["type"] != "http":
            return
        body = json.dumps({"error": "unavailable", "hint": "the service is starting or stopping"}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})
