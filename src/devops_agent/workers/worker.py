"""A worker process: takes runs from the queue, keeps a heartbeat, takes over dead workers' runs.

:func:`run_worker` launches DBOS in this process's event loop (queued runs then execute here, as
asyncio tasks, up to ``workers.concurrency`` at once) and loops until asked to stop:

* every ``heartbeat_s`` it writes its heartbeat with the runs it executes (``/v1/workers``);
* a worker silent for ``dead_after_s`` is claimed by exactly one survivor, which hands its runs
  back to the queue (DBOS recovery: each is dequeued by one worker and replayed from its
  checkpoints); a claim whose claimant is no longer alive before it handed the runs back (killed
  in between, stopped by an error) is adopted by another survivor;
* a worker that finds itself declared dead (it stalled past ``dead_after_s``, and its runs moved
  on) exits at once rather than carry on beside their new owner;
* it fires due schedules (each firing is queued once, whichever worker sees it first).

On SIGTERM it stops taking runs, lets those executing finish (up to ``drain_s``), and exits;
runs still executing then are taken over by another worker like a dead worker's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial

import structlog

from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.store import Store, WorkerRecord
from devops_agent.store.durable import GONE_STATES
from devops_agent.workers.app import configure, declare_queues, system_url
from devops_agent.workers.durable import WorkerRuntime
from devops_agent.workers.limits import AdvisoryLimiter
from devops_agent.workers.schedules import Clock, Scheduler, utc_now
from devops_agent.workers.submit import queue_service

log = structlog.get_logger(__name__)
FENCED_EXIT = 75


def new_worker_id() -> str:
    return f"{socket.gethostname()[:60]}-{os.getpid()}-{uuid.uuid4().hex[:6]}"


@dataclass
class WorkerOptions:
    worker_id: str | None = None
    schedules: bool = True
    drain_s: float = 30.0
    clock: Clock = utc_now


async def run_worker(
    settings: Settings, store: Store, stop: asyncio.Event, options: WorkerOptions | None = None
) -> None:
    """Serve the queue until ``stop`` is set."""
    from dbos import DBOS

    opts = options or WorkerOptions()
    w = settings.workers
    worker_id = opts.worker_id or new_worker_id()
    limiter = AdvisoryLimiter(system_url(settings), w.integration_limits) if w.integration_limits else None
    runtime = WorkerRuntime(settings, store, worker_id, SessionService(settings, store), limiter)
    configure(settings, worker_id, runtime)
    started = datetime.now(UTC)
    beat = WorkerRecord(worker_id, socket.gethostname()[:200], os.getpid(), "alive", [], started, started)
    DBOS.launch()
    await declare_queues(settings)
    # after launch: the queue's tables exist now; a new process may reuse a dead worker's id
    await asyncio.to_thread(partial(store.worker_beat, beat, register=True))
    log.info("worker_started", worker=worker_id)
    scheduler = (
        Scheduler(queue_service(settings, store), settings.schedules, clock=opts.clock)
        if opts.schedules
        else None
    )
    try:
        while not stop.is_set():
            await _beat(store, settings, runtime, beat)
            if scheduler is not None and settings.schedules:
                await scheduler.tick()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=w.heartbeat_s)
    finally:
        deadline = asyncio.get_running_loop().time() + opts.drain_s
        while runtime.running and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110 - a set, not an event
            await asyncio.sleep(0.2)
        state = "stopped" if not runtime.running else "alive"  # unfinished runs: let a survivor take them
        now = datetime.now(UTC)
        try:  # before DBOS.destroy, which shuts the loop's thread pool down
            await asyncio.to_thread(
                store.worker_beat, _with(beat, state=state, running=sorted(runtime.running), last_beat=now)
            )
        except Exception as exc:  # the store is gone: survivors find this worker silent instead
            log.warning("worker_last_beat_failed", worker=worker_id, error=repr(exc))
        DBOS.destroy(workflow_completion_timeout_sec=0)
        if limiter is not None:
            limiter.close()
        log.info("worker_stopped", worker=worker_id)


def _with(beat: WorkerRecord, **changes: object) -> WorkerRecord:
    from dataclasses import replace

    return replace(beat, **changes)  # type: ignore[arg-type]


async def _beat(store: Store, settings: Settings, runtime: WorkerRuntime, beat: WorkerRecord) -> None:
    from dbos import DBOS

    w = settings.workers
    mine = [x for x in await asyncio.to_thread(store.list_workers, include_gone=True) if x.id == beat.id]
    if mine and mine[0].state in GONE_STATES:
        # Declared dead while stalled: its runs belong to another worker now.
        log.critical("worker_fenced", worker=beat.id, recovered_by=mine[0].recovered_by)
        os._exit(FENCED_EXIT)
    now = datetime.now(UTC)
    await asyncio.to_thread(store.worker_beat, _with(beat, running=sorted(runtime.running), last_beat=now))
    await asyncio.to_thread(store.claim_dead_workers, now - timedelta(seconds=w.dead_after_s), beat.id)
    # What this worker just claimed, and claims nobody alive is finishing (a claimant killed between
    # its claim and the hand-back): handing back twice is harmless (one dequeue admits one runner).
    adopted = await asyncio.to_thread(store.adopt_unfinished_claims, beat.id)
    if adopted:
        handles = await asyncio.to_thread(DBOS._recover_pending_workflows, adopted)
        await asyncio.to_thread(store.finish_claims, adopted)
        log.warning("workers_recovered", dead=adopted, runs=[h.workflow_id for h in handles], by=beat.id)
