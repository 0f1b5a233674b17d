"""What the running service holds: settings, the store, the session service and its helpers.

One :class:`ServiceState` per app, built in the app's lifespan and reached by endpoints through
:func:`service_state`. It must not hold per-request data.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from starlette.requests import HTTPConnection

from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.store import Store

if TYPE_CHECKING:
    from devops_agent.api.alerts import AlertIndex
    from devops_agent.api.metrics import Metrics
    from devops_agent.api.tracker import RunTracker


@dataclass
class ServiceState:
    """The service's long-lived parts."""

    settings: Settings
    store: Store
    service: SessionService
    metrics: Metrics
    tracker: RunTracker
    alerts: AlertIndex
    draining: bool = False
    """Set when shutdown begins: no new runs; /readyz answers 503."""
    ws_clients: set[object] = field(default_factory=set)


def service_state(conn: HTTPConnection) -> ServiceState:
    """The app's :class:`ServiceState` (FastAPI dependency for HTTP and WebSocket endpoints)."""
    state: ServiceState = conn.app.state.service
    return state
