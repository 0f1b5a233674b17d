"""DBOS set-up for workers and enqueuers, and the one workflow: carry out a queued run.

Two queues: ``devops-agent-runs`` for people's runs (partitioned by user, so "at most N runs per
user" holds across workers) and ``devops-agent-proactive`` for runs started by alerts and
schedules (de-duplicated by key — DBOS does not de-duplicate partitioned queues — and ordered by
priority: a paging alert before a scheduled check). Both honour the per-worker and the
cluster-wide limits of ``[workers]``.

The workflow body is :meth:`WorkerRuntime.run <devops_agent.workers.durable.WorkerRuntime.run>`;
DBOS calls it again on another worker when the first one dies (recovery), with the same inputs.
"""

from __future__ import annotations

import logging
from typing import Any

from devops_agent import __version__
from devops_agent.config import Settings
from devops_agent.errors import ConfigError

WORKFLOW = "devops_agent.investigate"
RUNS_QUEUE = "devops-agent-runs"
PROACTIVE_QUEUE = "devops-agent-proactive"
APP_NAME = "devops-agent"
_runtime: Any = None


def app_version() -> str:
    """The version every worker and enqueuer agrees on (DBOS runs a workflow only on its version)."""
    return f"devops-agent-{__version__}"


def system_url(settings: Settings) -> str:
    """The PostgreSQL URL the queue lives in: the store's own database."""
    url = settings.resolved_database_url()
    if not url.startswith("postgresql"):
        raise ConfigError(
            'execution = "queue" needs the store on PostgreSQL (database_url = "postgresql+psycopg://...")',
            hint="workers on several machines share one PostgreSQL; SQLite serves one process",
        )
    # DBOS names its schema itself (dbos_system_schema); a search_path given to the store's URL
    # would send some of its migrations elsewhere.
    from sqlalchemy.engine import make_url

    parsed = make_url(url)
    if "options" in parsed.query:
        parsed = parsed.difference_update_query(["options"])
    return parsed.render_as_string(hide_password=False)


def _quiet_dbos() -> None:
    # DBOS logs each registration and poll at INFO and warns when pydantic-ai registers the model
    # steps of a run's agent again (same names, same functions): neither is the operator's concern.
    logging.getLogger("dbos").setLevel(logging.ERROR)


def configure(settings: Settings, worker_id: str, runtime: Any) -> None:
    """Create the DBOS instance of a worker process (before ``launch``)."""
    from dbos import DBOS

    global _runtime
    _quiet_dbos()
    _runtime = runtime
    w = settings.workers
    DBOS(
        config={
            "name": APP_NAME,
            "system_database_url": system_url(settings),
            "dbos_system_schema": w.dbos_schema,
            "executor_id": worker_id,
            "application_version": app_version(),
            "log_level": "ERROR",
        }
    )
    _register_workflow()


async def declare_queues(settings: Settings) -> None:
    """Declare (or update) the two queues and their limits; after ``DBOS.launch()``."""
    from dbos import DBOS

    w = settings.workers
    limits: dict[str, Any] = {
        "worker_concurrency": w.concurrency,
        "global_concurrency": w.max_runs or None,
        "polling_interval_sec": w.poll_s,
        "on_conflict": "always_update",
    }
    await DBOS.register_queue_async(RUNS_QUEUE, partition_concurrency=w.runs_per_user, **limits)
    await DBOS.register_queue_async(PROACTIVE_QUEUE, **limits)


_registered = False


def _register_workflow() -> None:
    global _registered
    if _registered:
        return
    from dbos import DBOS

    @DBOS.workflow(name=WORKFLOW)
    async def investigate(request_json: str, meta_json: str) -> str:
        """Carry out one queued run (again, after a takeover: from its checkpoints)."""
        assert _runtime is not None, "a worker's runtime is set before DBOS launches"
        status: str = await _runtime.run(request_json, meta_json)
        return status

    _registered = True
