"""MCP servers as tools: configuration, safety rating, a pool of connections, per-run toolsets.

``config`` reads ``[mcp.servers.NAME]`` and ``mcpServers`` JSON files; ``rating`` maps tool
annotations to :class:`~devops_agent.tools.base.ToolSpec`; ``connection`` and ``pool`` keep one
connection per server for the process, with reconnects and a breaker per server; ``toolset`` offers
a server's tools to one run's pipeline. See docs/mcp.md. This package must not import policies,
agents or interfaces: the run's pipeline wraps these toolsets like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from devops_agent.config import Settings
from devops_agent.tools.mcp.config import configured_servers

if TYPE_CHECKING:
    from devops_agent.tools.mcp.pool import McpPool


def pool_for(settings: Settings, cwd: Path | None = None, **kwargs: Any) -> McpPool | None:
    """The pool of the configured servers, or ``None`` when none is configured. The MCP client
    (about 2 s to import) is imported only when there is a server."""
    entries = configured_servers(settings, cwd)
    if not entries:
        return None
    from devops_agent.tools.mcp.pool import McpPool

    return McpPool(settings, entries, **kwargs)
