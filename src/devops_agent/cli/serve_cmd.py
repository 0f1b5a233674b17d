"""``devops-agent serve``: run the HTTP API (REST, WebSocket, SSE) on this machine.

The service needs the ``server`` extra; without it this command says which to install.
"""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer

from devops_agent.cli.context import err, state
from devops_agent.errors import ConfigError

SERVER_MODULES = ("fastapi", "uvicorn", "websockets", "sse_starlette", "prometheus_client")


def missing_server_modules() -> list[str]:
    """The service's libraries that are not installed."""
    return [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]


def serve(
    ctx: typer.Context,
    host: Annotated[
        str | None, typer.Option("--host", help="address to listen on (default: server.host, 127.0.0.1)")
    ] = None,
    port: Annotated[
        int | None, typer.Option("--port", min=0, max=65535, help="TCP port (default: server.port, 8080)")
    ] = None,
) -> None:
    """Serve the API: REST under /v1 (docs at /docs), the WebSocket /v1/ws, SSE, /metrics.

    Every request needs a token (`devops-agent users add NAME --role viewer|operator|admin`
    prints one) unless server.auth is false; MCP clients connect to /mcp with the same tokens.
    Ctrl-C or SIGTERM stops runs in flight at a step boundary and leaves them resumable
    (POST /v1/runs/{id}/resume).

    Settings: the \\[server] table of devops-agent.toml (host, port, auth, max_runs_per_user, …)
    or DEVOPS_AGENT_SERVER__KEY variables, e.g. DEVOPS_AGENT_SERVER__PORT=9090; --host and --port
    override them. `devops-agent config show` prints the effective values; docs/api.md has them all.
    """
    missing = missing_server_modules()
    if missing:
        raise ConfigError(
            f"the service needs the 'server' extra ({', '.join(missing)} not installed)",
            hint="pip install 'devops-agent[server]'",
        )
    app = state(ctx)
    settings = app.settings
    from devops_agent.api.server import is_loopback
    from devops_agent.api.server import serve as run_server
    from devops_agent.telemetry import configure_logging

    configure_logging(settings.log_level, json_logs=True)
    bind = host or settings.server.host
    where = f"http://{bind}:{settings.server.port if port is None else port}"
    if settings.server.auth and not app.store().list_users():
        err.print(
            "[yellow]no users yet: every request will be refused.[/] Create one with "
            "`devops-agent users add NAME --role admin` (it prints the token once)."
        )
    if not settings.server.auth:
        err.print("[yellow]server.auth is off: every caller acts as an admin.[/]")
    if not is_loopback(bind):
        err.print(f"[yellow]listening on {bind}: reachable from the network; put TLS in front of it.[/]")
    err.print(f"serving on {where} (docs: {where}/docs); Ctrl-C stops", highlight=False)
    run_server(settings, host=host, port=port)
