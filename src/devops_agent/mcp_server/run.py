"""``devops-agent mcp serve``: the MCP server over stdio, or alone over Streamable HTTP."""

from __future__ import annotations

import ipaddress

import anyio
from mcp.server.stdio import stdio_server

from devops_agent.config import Settings
from devops_agent.errors import UserError
from devops_agent.mcp_server.http import StaticToken, mcp_http_app
from devops_agent.mcp_server.server import AgentMcpServer
from devops_agent.store import Store


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def serve_stdio(settings: Settings, store: Store, *, allow_mutating: bool) -> None:
    """Serve on stdin/stdout until the client closes them (stdout carries only the protocol)."""
    server = AgentMcpServer(settings, store, allow_mutating=allow_mutating)

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.server.run(read, write, server.server.create_initialization_options())

    anyio.run(main)


def serve_http(
    settings: Settings, store: Store, *, host: str, port: int, allow_mutating: bool, token: str | None
) -> None:
    """Serve Streamable HTTP at ``http://HOST:PORT/mcp``. A host other than loopback needs a token:
    the tools read hosts, logs and metrics, and must not be open to the network."""
    import uvicorn

    if token is None and not is_loopback(host):
        raise UserError(
            f"serving MCP on {host} needs a bearer token",
            hint="pass --token (or set DEVOPS_AGENT_MCP_TOKEN), or serve on 127.0.0.1",
        )
    server = AgentMcpServer(settings, store, allow_mutating=allow_mutating)
    app = mcp_http_app(server, auth=StaticToken(token) if token else None, host=host, path="/mcp")
    uvicorn.run(app.app, host=host, port=port, log_level="warning", lifespan="on")
