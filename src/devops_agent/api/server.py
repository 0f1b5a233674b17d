"""Run the service under uvicorn, with a shutdown that stops runs at a step boundary first.

uvicorn closes connections before it runs the app's lifespan shutdown; runs must be stopped
before that, so that WebSocket and SSE clients still receive each run's ``run_finished``
(status ``interrupted``). :class:`ApiServer` does that in :meth:`ApiServer.shutdown`.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import structlog
import uvicorn
from fastapi import FastAPI

from devops_agent.api.app import create_app, drain
from devops_agent.config import Settings

log = structlog.get_logger(__name__)


class ApiServer(uvicorn.Server):
    """uvicorn's server, draining the app's runs before it closes connections."""

    def __init__(self, config: uvicorn.Config, app: FastAPI) -> None:
        super().__init__(config)
        self.api = app

    async def shutdown(self, sockets: Any = None) -> None:
        stopped = await drain(self.api)
        if stopped:
            log.warning(
                "runs_interrupted", runs=len(stopped), hint="resume them with POST /v1/runs/{id}/resume"
            )
        await super().shutdown(sockets)


def server_config(app: FastAPI, settings: Settings, *, host: str, port: int) -> uvicorn.Config:
    """uvicorn's config for the app: our access log replaces uvicorn's; WebSocket limits set."""
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        access_log=False,
        log_level="warning",
        ws="websockets-sansio",
        ws_max_size=settings.server.max_ws_message_bytes,
        ws_ping_interval=20.0,
        timeout_graceful_shutdown=int(settings.server.shutdown_grace_s) + 5,
        lifespan="on",
    )


def is_loopback(host: str) -> bool:
    """Whether ``host`` only listens on this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def serve(settings: Settings, *, host: str | None = None, port: int | None = None) -> None:
    """Serve until interrupted (SIGINT/SIGTERM: runs are interrupted, resumable)."""
    host = host or settings.server.host
    port = settings.server.port if port is None else port
    if not settings.server.auth and not is_loopback(host):
        log.warning("auth_off_on_network", host=host, hint="anyone who reaches this port acts as an admin")
    # The address actually served (the MCP endpoint's DNS-rebinding check follows it).
    settings = settings.model_copy(
        update={"server": settings.server.model_copy(update={"host": host, "port": port})}
    )
    app = create_app(settings)
    ApiServer(server_config(app, settings, host=host, port=port), app).run()
