"""Alerts in: Alertmanager's webhook (and a generic JSON alert) start investigations.

``POST /v1/alerts/alertmanager`` takes the webhook as Alertmanager sends it (format version 4),
authenticated by a token of role ``alerts``. A notification starts an investigation of its first
firing alert with the ``metric-alert`` runbook (offline) or the model, and answers 202 with the
session id at once. Notifications of the same group (``groupKey``, else the alerts' fingerprints)
within ``server.alert_dedupe_window_s`` join that investigation instead of starting another:
re-sent and resolved notifications are attached to its session (``alerts`` in the session).
``POST /v1/alerts/generic`` takes a simple JSON alert and treats it the same way.

The de-duplication index lives in this process: after a restart a re-sent group starts a new
investigation (it is not lost, only not joined).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Body, Depends
from pydantic import BaseModel, Field

from devops_agent.api.auth import alert_sender
from devops_agent.api.schemas import ALERTS_KEY, _In
from devops_agent.api.state import ServiceState, service_state
from devops_agent.api.tokens import Principal
from devops_agent.errors import UserError

router = APIRouter(tags=["alerts"])
State = Annotated[ServiceState, Depends(service_state)]
Sender = Annotated[Principal, Depends(alert_sender)]
MAX_NOTIFICATIONS = 200
"""Notifications kept per session: a flapping group must not grow the session without bound."""


@dataclass
class AlertIndex:
    """Which session investigates which alert group, for ``window_s`` after its last notification."""

    window_s: float
    _sessions: dict[str, tuple[str, float]] = field(default_factory=dict)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def lookup(self, key: str) -> str | None:
        now = time.monotonic()
        for k in [k for k, (_s, until) in self._sessions.items() if until < now]:
            del self._sessions[k]
        hit = self._sessions.get(key)
        return hit[0] if hit else None

    def remember(self, key: str, session_id: str) -> None:
        self._sessions[key] = (session_id, time.monotonic() + self.window_s)


class AlertAccepted(BaseModel):
    session_id: str
    run_id: str | None = Field(description="the investigation's run (null: joined, nothing new started)")
    joined: bool = Field(description="true when this notification joined an investigation of its group")
    alerts: int = Field(description="alerts in the notification")


class GenericAlert(_In):
    """An alert from a system other than Alertmanager."""

    title: str = Field(min_length=1, max_length=500, description="what fired, e.g. HighLatency")
    status: Literal["firing", "resolved"] = "firing"
    description: str | None = Field(None, max_length=5000)
    severity: str | None = Field(None, max_length=50)
    labels: dict[str, str] = Field(default_factory=dict, max_length=50)
    starts_at: datetime | None = Field(None, description="when it started (default: now)")
    ends_at: datetime | None = None
    query: str | None = Field(None, max_length=5000, description="PromQL of the alert, threshold included")
    fingerprint: str | None = Field(
        None, max_length=200, description="identifies the alert for de-duplication"
    )


@router.post(
    "/alerts/alertmanager", status_code=202, response_model=AlertAccepted, summary="Alertmanager webhook"
)
async def alertmanager(
    state: State, principal: Sender, payload: Annotated[dict[str, Any], Body(description="the webhook body")]
) -> AlertAccepted:
    return await intake(state, principal, payload)


@router.post("/alerts/generic", status_code=202, response_model=AlertAccepted, summary="A generic JSON alert")
async def generic(state: State, principal: Sender, alert: GenericAlert) -> AlertAccepted:
    return await intake(state, principal, as_webhook(alert))


def as_webhook(alert: GenericAlert) -> dict[str, Any]:
    """The generic alert in Alertmanager's webhook form, so both take one path."""
    started = alert.starts_at or datetime.now(UTC)
    labels = {**alert.labels, "alertname": alert.title}
    if alert.severity:
        labels["severity"] = alert.severity
    key = alert.fingerprint or hashlib.sha256(repr(sorted(labels.items())).encode()).hexdigest()[:16]
    entry: dict[str, Any] = {
        "status": alert.status,
        "labels": labels,
        "annotations": {"description": alert.description} if alert.description else {},
        "startsAt": started.isoformat(),
        "fingerprint": key,
        # The expression travels as Prometheus's graph link does, where the intake reads it.
        "generatorURL": "generic:/graph?" + urlencode({"g0.expr": alert.query}) if alert.query else "",
    }
    if alert.ends_at is not None:
        entry["endsAt"] = alert.ends_at.isoformat()
    return {
        "version": "4",
        "status": alert.status,
        "receiver": "generic",
        "groupKey": f"generic:{key}",
        "alerts": [entry],
    }


async def intake(state: ServiceState, principal: Principal, payload: dict[str, Any]) -> AlertAccepted:
    """Start (or join) the investigation of one notification."""
    from devops_agent.analysis.alert_intake import parse_webhook

    alerts = parse_webhook(payload)
    if not alerts:
        raise UserError("the notification holds no alerts", hint="Alertmanager sends at least one")
    group = str(payload.get("groupKey") or ",".join(sorted(a.fingerprint or a.alertname for a in alerts)))
    note = {
        "received_at": datetime.now(UTC).isoformat(),
        "status": str(payload.get("status")),
        "group_key": group,
        "alerts": [
            {
                "alertname": a.alertname,
                "status": a.status,
                "fingerprint": a.fingerprint,
                "starts_at": a.starts_at.isoformat(),
                "ends_at": a.ends_at.isoformat() if a.ends_at else None,
            }
            for a in alerts
        ],
    }
    index = state.alerts
    async with index.lock:
        session_id = index.lookup(group)
        if session_id is not None and await asyncio.to_thread(_attach, state, session_id, note):
            index.remember(group, session_id)
            return AlertAccepted(session_id=session_id, run_id=None, joined=True, alerts=len(alerts))
        question, inputs = alert_question(payload, None, None)
        inputs["question"] = question
        handle = await state.tracker.start(principal, question, mode="ask", inputs=inputs)
        await asyncio.to_thread(_attach, state, handle.session_id, note)
        index.remember(group, handle.session_id)
        return AlertAccepted(
            session_id=handle.session_id, run_id=handle.run_id, joined=False, alerts=len(alerts)
        )


def alert_question(
    payload: dict[str, Any], index: int | None, query: str | None
) -> tuple[str, dict[str, Any]]:
    """The question and runbook inputs for one alert of a webhook payload, as ``investigate --alert``
    takes them: alert number ``index`` (from 1), else the first firing one."""
    from devops_agent.analysis.alert_intake import describe_payload, investigation_order, parse_webhook

    alerts = parse_webhook(payload)
    if not alerts:
        raise UserError("the alert payload holds no alerts")
    if index is not None and not 1 <= index <= len(alerts):
        raise UserError(
            f"alert_index {index}: the payload holds {len(alerts)} alert(s)",
            hint=f"number them from 1 to {len(alerts)}, in the payload's order",
        )
    chosen = alerts[index - 1] if index is not None else investigation_order(alerts)[0]
    inputs: dict[str, Any] = dict(chosen.investigation_inputs(query))
    listing = describe_payload(alerts, alerts.index(chosen))
    question = " ".join(p for p in (inputs.pop("question"), listing) if p)
    if inputs.get("query"):
        inputs["runbooks"] = ["metric-alert"]
    return question, inputs


def _attach(state: ServiceState, session_id: str, note: dict[str, Any]) -> bool:
    """Add a notification to a session's ``alerts``; False when the session is gone (deleted)."""
    from devops_agent.errors import NotFoundError

    try:
        session = state.store.get_session(session_id)
    except NotFoundError:
        return False
    notes = [*list(session.context_state.get(ALERTS_KEY) or []), note][-MAX_NOTIFICATIONS:]
    state.store.update_session(session_id, context_state={**session.context_state, ALERTS_KEY: notes})
    return True
