"""The run supervisor: where runs execute, how readers follow them, and how any process stops them.

A run is launched on an :class:`Executor` — :class:`InProcessExecutor` (an asyncio task in this
process) now; a queue executor for durable workers plugs in behind the same protocol. The
supervisor keeps the runs of this process (their :class:`~devops_agent.agent.recorder.EventRecorder`
and task), and:

* :meth:`RunSupervisor.events` follows a run by id from any ``seq``: from the recorder while it runs
  here, from the store when it ran elsewhere or has ended (polling until its ``run_finished``);
* :meth:`RunSupervisor.cancel` works from any process: it sets the run's cancel flag in the store,
  and the process running it notices within ``poll_s`` (or at once, when that is this process).

This module must not import the runtime, the runners or any interface.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from devops_agent.agent.durability import RunRequest
from devops_agent.agent.recorder import EventRecorder
from devops_agent.events import RunEvent, RunFinished, RunStatus, ToolCall, ToolResultEvent, event_from_json
from devops_agent.store import Store

log = structlog.get_logger(__name__)


class Executor(Protocol):
    """Runs a run's body somewhere; returns the task when it runs in this process.

    A *remote* executor (``remote = True``: durable workers) never runs a body here: the session
    service hands it the :class:`~devops_agent.agent.durability.RunRequest` (``submit``) and a
    worker carries the run out; readers follow it through the store."""

    remote: bool

    def launch(self, run_id: str, body: Coroutine[Any, Any, None]) -> asyncio.Task[None]: ...

    def submit(self, request: RunRequest) -> None: ...


class InProcessExecutor:
    """Each run is an asyncio task of this process's event loop."""

    remote = False

    def submit(self, request: RunRequest) -> None:
        raise NotImplementedError("an in-process executor launches run bodies; it takes no requests")

    def launch(self, run_id: str, body: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        return asyncio.create_task(body, name=f"run-{run_id}")


@dataclass
class RunHandle:
    """A run of this process: its recorder and its task."""

    session_id: str
    run_id: str
    recorder: EventRecorder | None
    """``None`` for a run that executes elsewhere (queued for a worker)."""
    task: asyncio.Task[None] | None = None
    stop_status: RunStatus = "cancelled"
    """The status a cancelled task finishes with: ``interrupted`` when a shutdown stopped it."""
    started: bool = False
    """Set by the run's body as it begins: a task cancelled before its first step never ran it."""
    never_started: Callable[[], None] | None = None
    """How to finish the run (``stop_status``, ``run_finished``) when its task was cancelled before
    the body began: nothing of the body's own handling ran."""

    def tools_in_flight(self) -> int:
        """Tool calls the run started and has not had a result for (0: at a step boundary)."""
        if self.recorder is None:  # executes elsewhere: its worker keeps its own boundaries
            return 0
        open_calls: set[str] = set()
        for event in self.recorder.history:
            if isinstance(event, ToolCall):
                open_calls.add(event.tool_call_id)
            elif isinstance(event, ToolResultEvent):
                open_calls.discard(event.tool_call_id)
        return len(open_calls)


@dataclass
class RunSupervisor:
    """Launches runs, lets readers follow them, and stops them on request from any process."""

    store: Store
    executor: Executor = field(default_factory=InProcessExecutor)
    poll_s: float = 0.25
    _runs: dict[str, RunHandle] = field(default_factory=dict)
    _watcher: asyncio.Task[None] | None = None

    def launch(self, handle: RunHandle, body: Coroutine[Any, Any, None]) -> RunHandle:
        """Run ``body`` for ``handle`` on the executor; the handle is kept until the body ends."""
        self._runs[handle.run_id] = handle
        # The body is the task's own coroutine, not awaited inside a wrapper: a task cancelled
        # before its first step (a shutdown or a cancel right after the start) closes its
        # coroutine, while a wrapper's body would be left unstarted ("never awaited").
        handle.task = self.executor.launch(handle.run_id, body)

        def done(task: asyncio.Task[None]) -> None:
            if self._runs.get(handle.run_id) is handle:
                del self._runs[handle.run_id]
            if task.cancelled() and not handle.started and handle.never_started is not None:
                try:
                    handle.never_started()
                except Exception:  # noqa: BLE001 - a callback's error would only reach the loop's log
                    log.exception("run_not_finished", run_id=handle.run_id)

        handle.task.add_done_callback(done)
        if self._watcher is None or self._watcher.done():
            self._watcher = asyncio.create_task(self._watch_cancel_flags(), name="run-cancel-watcher")
        return handle

    def local(self, run_id: str) -> RunHandle | None:
        """The handle of a run executing in this process, if it is one."""
        return self._runs.get(run_id)

    def cancel(self, run_id: str) -> bool:
        """Ask a run to stop; ``False`` when it had already finished (or never ran)."""
        try:
            requested = self.store.request_cancel(run_id)
        except Exception:  # noqa: BLE001 - an unknown run id: nothing to cancel
            requested = False
        handle = self._runs.get(run_id)
        if handle is not None and handle.task is not None and not handle.task.done():
            handle.task.cancel()
            return True
        return requested

    async def _watch_cancel_flags(self) -> None:
        """While runs execute here, stop those another process asked to stop."""
        while self._runs:
            await asyncio.sleep(self.poll_s)
            ids = list(self._runs)
            try:
                flagged = await asyncio.to_thread(self.store.cancel_requested, ids)
            except Exception as exc:  # noqa: BLE001 - a store hiccup must not end the watcher
                log.warning("cancel_poll_failed", error=repr(exc))
                continue
            for run_id in flagged:
                handle = self._runs.get(run_id)
                if handle is not None and handle.task is not None and not handle.task.done():
                    handle.task.cancel()

    async def events(self, run_id: str, after_seq: int = 0) -> AsyncIterator[RunEvent]:
        """Every event of ``run_id`` after ``after_seq``, exactly once and in order, until it ends."""
        handle = self._runs.get(run_id)
        if handle is not None and handle.recorder is not None:
            async for event in handle.recorder.attach(after_seq):
                yield event
            return
        last = after_seq
        while True:
            records = await asyncio.to_thread(self.store.run_events, run_id, last)
            for rec in records:
                event = event_from_json(rec.payload)
                last = event.seq
                yield event
                if isinstance(event, RunFinished):
                    return
            if not records:
                run = await asyncio.to_thread(self.store.get_run, run_id)
                if run.finished and not await asyncio.to_thread(self.store.run_events, run_id, last):
                    return  # ended without a stored run_finished (a crash): nothing more will come
                await asyncio.sleep(self.poll_s)

    async def drain(self, grace_s: float) -> list[str]:
        """Stop every run of this process at its next step boundary, as ``interrupted``.

        A run between steps (waiting for the model, or about to call a tool) stops at once; one in
        a tool call stops as soon as that call's result is recorded, or after ``grace_s`` at the
        latest (the tool is then cancelled: a command's process group is killed). What the run did
        is stored (events, messages up to its last step), and it can be resumed. Returns the ids of
        the runs stopped."""
        stopped: list[str] = []

        def stop(handle: RunHandle) -> None:
            if handle.task is not None and not handle.task.done() and handle.run_id not in stopped:
                handle.stop_status = "interrupted"
                handle.task.cancel()
                stopped.append(handle.run_id)

        def at_boundary(handle: RunHandle) -> Callable[[RunEvent], None]:
            def listener(event: RunEvent) -> None:
                if isinstance(event, ToolResultEvent) and handle.tools_in_flight() == 0:
                    stop(handle)  # called inside the run: it stops at its next await

            return listener

        for handle in list(self._runs.values()):
            if handle.recorder is None or handle.tools_in_flight() == 0:
                stop(handle)
            else:
                handle.recorder.listener = at_boundary(handle)
        pending = [h.task for h in self._runs.values() if h.task is not None and not h.task.done()]
        if pending:
            _done, late = await asyncio.wait(pending, timeout=grace_s)
            for handle in list(self._runs.values()):
                if handle.task in late:
                    stop(handle)
            if late:
                await asyncio.wait(late, timeout=grace_s)
        return stopped

    async def shutdown(self) -> None:
        """Stop the cancel watcher (runs still executing keep running)."""
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
