"""The service's MCP endpoint: DevOps Agent's MCP server at ``/mcp/``, for the service's users.

The server (:mod:`devops_agent.mcp_server`) is mounted beside the REST API and shares its store and
session service, so its calls land in the same sessions, audit log and MCP pool. Its bearer tokens
are the service's: :class:`ServiceUsers` turns one into the MCP server's principal (a viewer may
only read; operators and admins may change things when ``server.mcp_allow_mutating``), naming the
user, whose sessions the MCP server then shows and no one else's (admins see all). An alerting
system's token (role ``alerts``) is refused here as it is on the REST API.

The endpoint is built in the app's lifespan, once the store is open: :class:`LateMount` is what
is mounted, and passes requests on to it. This module must not hold per-request state.
"""

from __future__ import annotations

import json

from starlette.types import Receive, Scope, Send

from devops_agent.agent.session import SessionService
from devops_agent.api.tokens import PERSON_ROLES, token_hash
from devops_agent.config import Settings
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


def mcp_endpoint(settings: Settings, store: Store, service: SessionService) -> McpHttpApp:
    """The MCP server over the service's store and session service, with its users' tokens (none
    when ``server.auth`` is off: every caller is then one local operator, as on stdio)."""
    server = AgentMcpServer(
        settings, store, allow_mutating=settings.server.mcp_allow_mutating, service=service
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
