"""Operating the service: ``/healthz`` (the process answers), ``/readyz`` (the store is reachable and
migrated to this version, and the service is not shutting down) and ``/metrics`` (Prometheus).

These answer without a token: they hold no session data, and probes and scrapers rarely carry one.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from devops_agent.api.problems import problem
from devops_agent.api.state import ServiceState, service_state
from devops_agent.errors import DevOpsAgentError

router = APIRouter(tags=["ops"])
State = Annotated[ServiceState, Depends(service_state)]


@router.get("/healthz", summary="The process is up")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@router.get("/readyz", summary="Ready for requests: store reachable, migrations current, not shutting down")
async def readyz(state: State) -> Response:
    if state.draining:
        return problem(503, "shutting down", hint="retry on another instance", error="ShuttingDown")
    try:
        current, head = await asyncio.to_thread(state.store.schema_status)
    except DevOpsAgentError as exc:
        return problem(503, exc.message, hint=exc.hint, error=type(exc).__name__)
    if current != head:
        return problem(
            503,
            f"the store is at migration {current}, this version needs {head}",
            hint="restart the service: opening the store migrates it",
            error="StoreError",
        )
    return JSONResponse({"status": "ready", "migration": current})


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
async def metrics(state: State) -> Response:
    body = await asyncio.to_thread(state.metrics.render)
    return Response(body, media_type=CONTENT_TYPE_LATEST)
