"""What the service shows about workers and the queue: ``/v1/workers`` and queue gauges in ``/metrics``.

Plain functions over the store, for the service to mount (it owns the HTTP server and the metric
registry): :func:`workers_status` lists the workers with their last heartbeat and the runs each
executes; :func:`queue_metrics` gives the queue's depth and the age of its oldest run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from devops_agent.config import Settings
from devops_agent.store import Store


def workers_status(store: Store, settings: Settings, *, include_gone: bool = False) -> list[dict[str, Any]]:
    """Each worker: id, host, pid, state (``alive``, ``silent`` past ``dead_after_s``, ``stopped``,
    ``dead``), last heartbeat and its age, and the runs it executes."""
    now = datetime.now(UTC)
    out: list[dict[str, Any]] = []
    for w in store.list_workers(include_gone=include_gone):
        age = (now - w.last_beat).total_seconds()
        state = "silent" if w.state == "alive" and age > settings.workers.dead_after_s else w.state
        state = "dead" if state == "recovered" else state  # its runs handed back: still dead to a reader
        out.append(
            {
                "id": w.id,
                "host": w.host,
                "pid": w.pid,
                "state": state,
                "started_at": w.started_at.isoformat(),
                "last_heartbeat": w.last_beat.isoformat(),
                "heartbeat_age_s": round(age, 1),
                "running": list(w.running),
                "recovered_by": w.recovered_by,
            }
        )
    return out


def queue_metrics(store: Store) -> dict[str, float]:
    """``devops_agent_queue_depth`` (runs waiting for a worker), ``devops_agent_queue_oldest_age_seconds``
    (how long the oldest has waited; 0 when none) and ``devops_agent_workers_alive``."""
    depth, oldest = store.queued_runs()
    age = (datetime.now(UTC) - oldest).total_seconds() if oldest is not None else 0.0
    return {
        "devops_agent_queue_depth": float(depth),
        "devops_agent_queue_oldest_age_seconds": round(max(age, 0.0), 3),
        "devops_agent_workers_alive": float(len(store.list_workers())),
    }
