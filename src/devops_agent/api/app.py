"""Build the service's FastAPI app: routers under ``/v1``, ops endpoints, middleware, sub-apps.

:func:`create_app` is the one place the app is assembled. The MCP server is mounted at ``/mcp/``
(``server.mcp``; :mod:`devops_agent.api.mcp`) beside the REST API, sharing its store, session
service and users; other ASGI apps can be mounted through ``mounts``. The app's lifespan opens the
store and the session service, starts the configured MCP servers (``mcp.preload``), and on
shutdown stops runs at a step boundary (left resumable) before anything closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence
from typing import IO, Any

import structlog
from fastapi import APIRouter, FastAPI
from pydantic_ai.models import Model
from starlette.routing import Route
from starlette.types import ASGIApp

from devops_agent import __version__
from devops_agent.agent.session import SessionService
from devops_agent.api import alerts, approvals, catalog, ops, plans, problems, runs, sessions, ws
from devops_agent.api.alerts import AlertIndex
from devops_agent.api.mcp import MCP_PATH, LateMount, mcp_endpoint
from devops_agent.api.memory import release_periodically
from devops_agent.api.metrics import Metrics
from devops_agent.api.middleware import AccessLog, BodyLimit
from devops_agent.api.state import ServiceState
from devops_agent.api.tracing import configure_tracing, shutdown_tracing
from devops_agent.api.tracker import RunTracker
from devops_agent.config import Settings
from devops_agent.store import Store
from devops_agent.tools.registry import ToolRegistry
from devops_agent.web import install as install_web_page

log = structlog.get_logger(__name__)

DESCRIPTION = """The DevOps Agent service: sessions, runs and their events over REST, a WebSocket
(`/v1/ws`, see docs/api.md) and Server-Sent Events. Authenticate with `Authorization: Bearer TOKEN`
(`devops-agent users add NAME --role viewer|operator|admin`). Errors are RFC 9457 problem+json."""


def create_app(
    settings: Settings,
    *,
    store: Store | None = None,
    model: Model | None = None,
    registry: ToolRegistry | None = None,
    use_configured_model: bool = True,
    mounts: Sequence[tuple[str, ASGIApp]] = (),
    access_log: IO[str] | None = None,
) -> FastAPI:
    """The service app. ``store`` / ``model`` / ``registry`` replace what settings name (tests,
    benchmarks); ``mounts`` adds sub-apps at their paths; ``access_log`` is where the JSON access
    lines go (default: stderr, when ``server.access_log`` is on)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        provider = configure_tracing()
        own_store = store is None
        opened = store if store is not None else await asyncio.to_thread(Store.from_settings, settings)
        service = SessionService(
            settings, opened, registry=registry, model=model, use_configured_model=use_configured_model
        )
        metrics = Metrics(opened)
        tracker = RunTracker(service, metrics, settings.server.max_runs_per_user)
        app.state.service = ServiceState(
            settings=settings,
            store=opened,
            service=service,
            metrics=metrics,
            tracker=tracker,
            alerts=AlertIndex(settings.server.alert_dedupe_window_s),
        )
        trimmer = None
        if settings.server.memory_trim_s > 0:
            trimmer = asyncio.create_task(release_periodically(settings.server.memory_trim_s))
        try:
            if settings.mcp.preload:
                await preload_mcp(service)
            async with contextlib.AsyncExitStack() as stack:
                if settings.server.mcp:
                    endpoint = mcp_endpoint(settings, opened, service, tracker)
                    await stack.enter_async_context(endpoint.lifespan())
                    app.state.mcp = endpoint
                try:
                    yield
                finally:
                    app.state.mcp = None
                    await drain(app)
                    await tracker.close()
                    await service.supervisor.shutdown()
        finally:
            if trimmer is not None:
                trimmer.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await trimmer
            if service.toolbox.mcp is not None:  # the MCP servers' processes end with the service
                await asyncio.to_thread(service.toolbox.mcp.close)
            if own_store:
                opened.close()
            shutdown_tracing(provider)

    app = FastAPI(
        title="DevOps Agent",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        responses={**problems.PROBLEM_RESPONSES},
    )
    problems.install(app)
    v1 = APIRouter(prefix="/v1")
    for module in (sessions, runs, approvals, plans, alerts, catalog, ws):
        v1.include_router(module.router)
    app.include_router(v1)
    app.include_router(ops.router)
    if settings.server.mcp:
        app.mount(MCP_PATH, LateMount(app.state))
        # an ASGI app as a Route's endpoint is called as one (Starlette), for /mcp without the slash
        bare = Route(MCP_PATH, LateMount(app.state, bare=True), methods=["GET", "POST", "DELETE"])
        app.router.routes.append(bare)
    for path, sub in mounts:
        app.mount(path, sub)
    install_web_page(app)
    app.add_middleware(BodyLimit, max_bytes=settings.server.max_body_bytes)

    def count(method: str, status: int) -> None:
        state: ServiceState | None = getattr(app.state, "service", None)
        if state is not None:
            state.metrics.requests.labels(method, str(status)).inc()

    app.add_middleware(AccessLog, enabled=settings.server.access_log, out=access_log, count=count)
    return app


async def preload_mcp(service: SessionService) -> None:
    """Start the configured MCP servers before the first request (``mcp.preload``), in parallel;
    one that does not start is logged, and runs go on without it."""
    for name, status in (await service.preload_mcp()).items():
        if status.get("enabled", True) and status.get("state") != "ready":
            log.warning(
                "mcp_server_unavailable", server=name, error=status.get("error") or status.get("state")
            )
        else:
            log.info("mcp_server_ready", server=name)


async def drain(app: FastAPI) -> list[str]:
    """Begin shutdown: refuse new runs, stop those in flight at a step boundary (status
    ``interrupted``, resumable). Safe to call twice; returns the runs it stopped."""
    state: ServiceState | None = getattr(app.state, "service", None)
    if state is None:
        return []
    state.draining = True
    state.tracker.draining = True
    return await state.service.supervisor.drain(state.settings.server.shutdown_grace_s)


def app_state(app: Any) -> ServiceState:
    """The running app's state (for the server and tests)."""
    state: ServiceState = app.state.service
    return state
