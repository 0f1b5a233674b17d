"""The MCP server over Streamable HTTP: an ASGI app with bearer-token auth, to run or to mount.

:func:`mcp_http_app` returns the endpoint as an ASGI app and the lifespan it needs (the MCP session
manager). ``devops-agent mcp serve --http`` runs it alone; the service (``serve``) mounts it beside
its REST API with the same users::

    mcp = mcp_http_app(AgentMcpServer(settings, store), auth=service_users, path="/")
    api.mount("/mcp", mcp.app)            # the endpoint is then /mcp/
    async with mcp.lifespan(): ...        # inside the service's own lifespan

Authentication is a small protocol, :class:`TokenAuth`: whatever turns a bearer token into a
:class:`Principal` (a name for the audit log, and roles). A principal may change things only with
the ``operator`` or ``admin`` role, and only when the server allows mutating tools at all.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any, Protocol

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

PRINCIPAL_KEY = "devops_agent.principal"
"""Where the authenticated :class:`Principal` is kept in the ASGI scope."""
CHANGE_ROLES = frozenset({"operator", "admin"})

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True)
class Principal:
    """Who calls: named in the audit log; ``roles`` decide whether they may change things."""

    name: str
    roles: frozenset[str] = field(default_factory=frozenset)
    user_id: str | None = None
    """The service user (``serve`` mounts us for many users): sessions are theirs and they see
    only their own, unless admin. ``None`` (stdio, one shared token): one person, who sees all."""

    @property
    def can_change(self) -> bool:
        return bool(self.roles & CHANGE_ROLES)

    def sees(self, owner_id: str | None) -> bool:
        """Whether a session owned by ``owner_id`` is this caller's to list and read."""
        return self.user_id is None or "admin" in self.roles or owner_id == self.user_id


class TokenAuth(Protocol):
    """Turns a bearer token into a principal, or ``None`` when it is not valid. The service's users
    module implements it for ``serve``; :class:`StaticToken` for ``mcp serve --http --token``."""

    def authenticate(self, token: str) -> Principal | None: ...


@dataclass(frozen=True)
class StaticToken:
    """One shared token (``--token`` / ``DEVOPS_AGENT_MCP_TOKEN``), as an operator by default."""

    token: str
    principal: Principal = Principal("token", frozenset({"operator"}))

    def authenticate(self, token: str) -> Principal | None:
        return self.principal if hmac.compare_digest(token.encode(), self.token.encode()) else None


@dataclass
class BearerAuth:
    """ASGI middleware: HTTP requests need ``Authorization: Bearer TOKEN`` that ``auth`` accepts;
    the principal goes into the scope. Without ``auth`` every request passes, unnamed."""

    app: ASGIApp
    auth: TokenAuth | None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.auth is None:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        scheme, _, token = headers.get("authorization", "").partition(" ")
        principal = self.auth.authenticate(token.strip()) if scheme.lower() == "bearer" and token else None
        if principal is None:
            body = json.dumps({"error": "unauthorized", "hint": "send Authorization: Bearer TOKEN"}).encode()
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": body})
            return
        scope[PRINCIPAL_KEY] = principal
        await self.app(scope, receive, send)


def principal_of(request: Any) -> Principal | None:
    """The principal :class:`BearerAuth` put in a request's scope (``None`` on stdio)."""
    scope = getattr(request, "scope", None)
    value = scope.get(PRINCIPAL_KEY) if isinstance(scope, dict) else None
    return value if isinstance(value, Principal) else None


@dataclass
class McpHttpApp:
    """The MCP endpoint as an ASGI app, and the lifespan it needs when mounted in another app."""

    app: ASGIApp
    session_manager: StreamableHTTPSessionManager

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return self.session_manager.run()


def mcp_http_app(
    server: Any, *, auth: TokenAuth | None, host: str = "127.0.0.1", path: str = "/mcp"
) -> McpHttpApp:
    """The Streamable HTTP endpoint of ``server`` (an :class:`~devops_agent.mcp_server.server.AgentMcpServer`)
    at ``path``. On a loopback ``host`` the SDK's DNS-rebinding protection is on (Host and Origin
    must be local)."""
    starlette = server.server.streamable_http_app(streamable_http_path=path, host=host)
    return McpHttpApp(BearerAuth(starlette, auth), server.server.session_manager)
