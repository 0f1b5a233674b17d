"""Queueing runs for workers: the executor the session service uses, and the queue's operations.

With ``execution = "queue"`` the session service is built with :class:`QueueExecutor` (see
:func:`queue_service`): ``start`` creates the session and the run (status ``queued``) as always and
hands the executor a :class:`~devops_agent.agent.durability.RunRequest`, which becomes a DBOS
workflow whose id is the run id. Readers follow the run through the store as it executes on a
worker. :func:`submit` is what the service's endpoints, the CLI, schedules and alerts call: it
adds who asked (per-user limits), the priority, a de-duplication key, and where to send the
result. :func:`submit_alert` turns an Alertmanager notification into one queued run per alert
group. :func:`list_queue`, :func:`cancel` and :func:`retry` are ``devops-agent queue``.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import uuid
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from devops_agent.agent.durability import RunRequest
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.errors import NotFoundError, RuntimeFailure, UserError
from devops_agent.policies.modes import Mode
from devops_agent.store import Store
from devops_agent.workers.app import PROACTIVE_QUEUE, RUNS_QUEUE, WORKFLOW, app_version, system_url
from devops_agent.workers.meta import QueueMeta

_META: ContextVar[QueueMeta | None] = ContextVar("devops_agent_queue_meta", default=None)
_JOINED: ContextVar[list[str] | None] = ContextVar("devops_agent_queue_joined", default=None)


def default_user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no user name (a container without passwd entry)
        return "local"


class QueueExecutor:
    """Runs are enqueued for workers, never executed here."""

    remote = True

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._client: Any = None

    @property
    def client(self) -> Any:
        if self._client is None:
            from dbos import DBOSClient

            url = system_url(self.settings)  # not PostgreSQL: a configuration error of its own
            try:
                self._client = DBOSClient(
                    system_database_url=url,
                    dbos_system_schema=self.settings.workers.dbos_schema,
                )
            except Exception as exc:
                raise RuntimeFailure(
                    f"cannot reach the run queue: {exc}",
                    hint="start a worker once (`devops-agent worker`): it creates the queue's tables",
                ) from exc
        return self._client

    def launch(self, run_id: str, body: Any) -> Any:
        body.close()
        raise NotImplementedError("a queue executor takes requests (submit), not run bodies")

    def submit(self, request: RunRequest) -> None:
        meta = _META.get() or QueueMeta(user=default_user())
        options: dict[str, Any] = {
            "workflow_name": WORKFLOW,
            "workflow_id": request.run_id,
            "app_version": app_version(),
            "priority": meta.priority,
            "authenticated_user": meta.user,
        }
        if meta.source == "user":
            options |= {"queue_name": RUNS_QUEUE, "queue_partition_key": meta.user}
        else:
            options["queue_name"] = PROACTIVE_QUEUE
            if meta.dedupe_key:
                options |= {
                    "deduplication_id": meta.dedupe_key[:200],
                    "duplication_policy": "return-existing",
                }
        handle = self.client.enqueue(options, request.to_json(), meta.to_json())
        joined = _JOINED.get()
        if joined is not None and handle.workflow_id != request.run_id:
            joined.append(handle.workflow_id)  # the same key is queued or running: joined that run

    def close(self) -> None:
        if self._client is not None:
            self._client.destroy()
            self._client = None


def queue_service(settings: Settings, store: Store, **kwargs: Any) -> SessionService:
    """A session service whose runs are queued for workers."""
    return SessionService(settings, store, executor=QueueExecutor(settings), **kwargs)


@dataclass(frozen=True)
class Submitted:
    """A queued run, or the run an equal key already started (``deduplicated``)."""

    run_id: str
    session_id: str
    deduplicated: bool = False


async def submit(
    service: SessionService,
    prompt: str,
    *,
    meta: QueueMeta,
    inputs: Mapping[str, Any] | None = None,
    mode: Mode | None = None,
    session_id: str | None = None,
) -> Submitted:
    """Queue an investigation for the workers; one run per ``meta.dedupe_key`` at a time (and
    within ``workers.dedupe_window_s`` of the last)."""
    if not service.supervisor.executor.remote:
        raise UserError('submitting to the queue needs execution = "queue"', hint="set [workers] execution")
    store = service.store
    window = service.settings.workers.dedupe_window_s
    if meta.dedupe_key and window > 0:
        since = datetime.now(UTC) - timedelta(seconds=window)
        earlier = store.run_for_key(meta.dedupe_key, since)
        if earlier is not None:
            return Submitted(earlier, store.get_run(earlier).session_id, True)
    joined: list[str] = []
    meta_token, joined_token = _META.set(meta), _JOINED.set(joined)
    try:
        handle = await service.start(prompt, session_id=session_id, mode=mode, inputs=dict(inputs or {}))
    finally:
        _META.reset(meta_token)
        _JOINED.reset(joined_token)
    if joined:  # the queue had this key in flight: our run and its new session never start
        store.update_run(handle.run_id, status="cancelled")
        if session_id is None:
            store.delete_session(handle.session_id)
        return Submitted(joined[0], store.get_run(joined[0]).session_id, True)
    if meta.dedupe_key:
        store.remember_key(meta.dedupe_key, handle.run_id)
    return Submitted(handle.run_id, handle.session_id)


_SEVERITY_PRIORITY = {"critical": 1, "page": 1, "error": 3, "warning": 5, "info": 8}


async def submit_alert(
    service: SessionService, payload: Mapping[str, Any], *, user: str = "alertmanager"
) -> Submitted | None:
    """Queue one investigation for an Alertmanager notification (one alert group); ``None`` when
    nothing in it fires. Repeats of the group join its run (key: the group key)."""
    from devops_agent.analysis.alert_intake import investigation_order, parse_webhook, to_question

    alerts = investigation_order(parse_webhook(payload))
    firing = [a for a in alerts if a.status == "firing"]
    if not firing:
        return None
    first = firing[0]
    group = str(payload.get("groupKey") or json.dumps(sorted(first.labels.items())))
    key = "alert:" + hashlib.sha256(group.encode()).hexdigest()[:40]
    severity = (first.severity or "").lower()
    meta = QueueMeta(
        user=user,
        source="alert",
        priority=_SEVERITY_PRIORITY.get(severity, 8),
        dedupe_key=key,
        notify=list(service.settings.workers.alert_notify),
        label=f"alert {first.alertname}" + (f" (+{len(firing) - 1})" if len(firing) > 1 else ""),
    )
    return await submit(service, to_question(first), meta=meta, inputs=first.runbook_inputs())


# -- operating the queue ------------------------------------------------------------------


@dataclass(frozen=True)
class QueueEntry:
    """A run in the queue or executing on a worker."""

    run_id: str
    status: str
    queue: str | None
    user: str | None
    priority: int | None
    worker: str | None
    created_at: datetime | None
    dedupe_key: str | None

    def as_json(self) -> dict[str, Any]:
        data = self.__dict__.copy()
        data["created_at"] = self.created_at.isoformat() if self.created_at else None
        return data


def list_queue(executor: QueueExecutor, *, include_done: bool = False, limit: int = 200) -> list[QueueEntry]:
    """Runs waiting for a worker or executing (with ``include_done``: the latest finished too)."""
    status = None if include_done else ["ENQUEUED", "PENDING", "DELAYED"]
    rows = executor.client.list_workflows(
        name=WORKFLOW, status=status, limit=limit, sort_desc=True, load_input=False, load_output=False
    )
    return [
        QueueEntry(
            run_id=w.workflow_id,
            status=w.status,
            queue=w.queue_name,
            user=w.queue_partition_key or w.authenticated_user,
            priority=w.priority,
            worker=w.executor_id if w.status == "PENDING" else None,
            created_at=datetime.fromtimestamp(w.created_at / 1000, UTC) if w.created_at else None,
            dedupe_key=w.deduplication_id,
        )
        for w in rows
    ]


def cancel(executor: QueueExecutor, store: Store, run_id: str) -> bool:
    """Stop a queued or executing run; ``False`` when it had finished."""
    run = store.get_run(run_id)
    if run.finished:
        return False
    store.request_cancel(run_id)
    if run.status == "queued":
        executor.client.cancel_workflow(run_id)
        store.update_run(run_id, status="cancelled")
    return True  # an executing run stops when its worker sees the flag (within a poll)


def retry(service: SessionService, executor: QueueExecutor, run_id: str) -> str:
    """Queue a failed or cancelled run again, as a new run of its session; returns the new run id."""
    store = service.store
    run = store.get_run(run_id)
    if run.status not in ("failed", "cancelled"):
        raise UserError(f"run {run_id[:12]} is {run.status}; only failed or cancelled runs are retried")
    (status,) = executor.client.list_workflows(workflow_ids=[run_id], load_input=True, load_output=False) or [
        None
    ]
    if status is None or not status.input:
        raise NotFoundError(f"run {run_id[:12]} was not queued", hint="`devops-agent queue list --all`")
    request_json, meta_json = status.input["args"][:2]
    request = replace(RunRequest.from_json(request_json), run_id=uuid.uuid4().hex, parent_run_id=run_id)
    store.create_run(run.session_id, request.run_id, path=request.path, parent_run_id=run_id, status="queued")
    meta = replace(QueueMeta.from_json(meta_json), dedupe_key=None)
    token = _META.set(meta)
    try:
        executor.submit(request)
    finally:
        _META.reset(token)
    return request.run_id
