"""A real MCP server (stdio) for the MCP client tests: annotated and unannotated tools, a slow one,
one that kills the server, a huge result, an image, a canary secret, and a server-reported error.

Run as ``python ops_server.py``; ``OPS_LABEL`` (environment) shows in ``service_status``.
"""

from __future__ import annotations

import base64
import os
import time

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import BlobResourceContents, EmbeddedResource, ImageContent, TextContent, ToolAnnotations

server = MCPServer("ops")
READ = ToolAnnotations(readOnlyHint=True, openWorldHint=False)
CANARY_HOST = "ledger-db-3.canary-ops.example"
CANARY_TOKEN = "ghp_Op5Zq8Lm2Xc7Vb4Nw1Rt9Ky3Hd6Gs0Fa2eUj"


@server.tool(annotations=READ)
def service_status(service: str) -> str:
    """Whether a service runs."""
    return f"{service}: running (server pid {os.getpid()}, label {os.environ.get('OPS_LABEL', '-')})"


@server.tool()
def restart_service(service: str) -> str:
    """Restart a service (declares no annotations)."""
    return f"restarted {service}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=True))
def wipe_cache(path: str) -> str:
    """Delete a cache directory."""
    return f"wiped {path}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=False, destructiveHint=False, openWorldHint=False))
def add_note(text: str) -> str:
    """Add a note to the service log (only adds)."""
    return f"noted: {text}"


@server.tool(annotations=ToolAnnotations(readOnlyHint=True, openWorldHint=True))
def fetch_url(url: str) -> str:
    """Fetch a URL from the internet."""
    return f"fetched {url}"


@server.tool(annotations=READ)
def slow(seconds: float) -> str:
    """Answer after a while."""
    time.sleep(seconds)
    return f"slept {seconds}"


@server.tool(annotations=READ)
def crash() -> str:
    """Kill the server process (as a crash would)."""
    os._exit(3)


@server.tool(annotations=READ)
def huge(lines: int) -> str:
    """A very long result."""
    return "\n".join(f"line {i}: " + "x" * 60 for i in range(lines))


@server.tool(annotations=READ)
def dashboard() -> list:
    """A dashboard picture and its notes."""
    picture = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4).decode()
    notes = base64.b64encode(b"notes: p99 latency 840 ms").decode()
    return [
        TextContent(type="text", text="dashboard attached"),
        ImageContent(type="image", mimeType="image/png", data=picture),
        EmbeddedResource(
            type="resource",
            resource=BlobResourceContents(uri="file:///notes.txt", mimeType="text/plain", blob=notes),
        ),
    ]


@server.tool(annotations=READ)
def ledger_lookup(account: str) -> str:
    """Look up a ledger account."""
    return f"account {account} on {CANARY_HOST}; deploy token {CANARY_TOKEN}"


@server.tool(annotations=READ)
def backend_check() -> str:
    """Ask the backend (which refuses)."""
    raise ToolError("backend said no: quota exceeded")


if __name__ == "__main__":
    server.run()
