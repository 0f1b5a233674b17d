"""What a worker adds to each run it carries out, and the worker's runtime behind the workflow.

:class:`RunDurability` is the agent's :class:`~devops_agent.agent.durability.Durability` for one
run: the run's tool checkpoints (loaded once when the run starts here, written as calls complete),
the integration limiter shared by every worker, pydantic-ai's DBOS capability (each model request
a DBOS step of the run's workflow), ``once`` for side effects, and the notifications sent before
``run_finished``.

:class:`WorkerRuntime` is what the DBOS workflow calls: it keeps the process's session service
and the runs executing here (for heartbeats), and carries a run out with its durability.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog
from pydantic_ai.capabilities import AbstractCapability

from devops_agent.agent.durability import Outcome, RunRequest
from devops_agent.agent.session import SessionService
from devops_agent.config import Settings
from devops_agent.events import NotificationSent, RunEvent
from devops_agent.store import Store
from devops_agent.tools.base import ToolResult
from devops_agent.workers.limits import AdvisoryLimiter
from devops_agent.workers.meta import QueueMeta
from devops_agent.workers.notify import RunSummary, deliver

log = structlog.get_logger(__name__)
AGENT_NAME = "devops_agent"
"""The name of the model's DBOS steps (``devops_agent__model.request_stream``): stable across
releases, or runs in flight could not be recovered by a newer worker."""


@dataclass
class StoreCheckpoint:
    """A run's tool checkpoints in the store."""

    store: Store
    run_id: str
    worker: str
    done: dict[str, str]

    def recorded(self, key: str) -> ToolResult | None:
        value = self.done.get(key)
        return ToolResult.model_validate_json(value) if value is not None else None

    async def record(self, key: str, result: ToolResult) -> ToolResult:
        text = result.model_dump_json()
        held = await asyncio.to_thread(self.store.put_checkpoint, self.run_id, key, text, worker=self.worker)
        self.done[key] = held
        return result if held == text else ToolResult.model_validate_json(held)


@dataclass
class RunDurability:
    """The durability of one run on this worker."""

    runtime: WorkerRuntime
    request: RunRequest
    meta: QueueMeta
    checkpoint: StoreCheckpoint
    limiter: AdvisoryLimiter | None
    completed_steps: int = 0

    @property
    def worker(self) -> str:
        return self.runtime.worker_id

    def model_capabilities(self) -> list[AbstractCapability[Any]]:
        from pydantic_ai.durable_exec.dbos import DBOSDurability

        return [DBOSDurability(name=AGENT_NAME)]

    async def once(self, key: str, action: Callable[[], Awaitable[None]]) -> bool:
        if key in self.checkpoint.done:
            return False
        await action()
        await asyncio.to_thread(
            self.checkpoint.store.put_checkpoint, self.request.run_id, key, "done", worker=self.worker
        )
        self.checkpoint.done[key] = "done"
        return True

    async def finishing(self, outcome: Outcome, emit: Callable[[RunEvent], RunEvent]) -> None:
        sinks = {s.name: s for s in self.runtime.settings.notify}
        wanted = [sinks[n] for n in self.meta.notify if n in sinks and outcome.status in sinks[n].on]
        unknown = [n for n in self.meta.notify if n not in sinks]
        ids = {"session_id": self.request.session_id, "run_id": self.request.run_id}
        for name in unknown:
            emit(
                NotificationSent(
                    **ids,
                    sink=name,
                    kind="unknown",
                    ok=False,
                    attempts=0,
                    error="no [[notify]] sink of that name",
                )
            )
        if not wanted:
            return
        base = self.runtime.settings.workers.public_url
        link = f"{base.rstrip('/')}/runs/{self.request.run_id}" if base else None
        ticket = self.request.inputs.get("ticket")
        summary = RunSummary.of(
            outcome,
            run_id=self.request.run_id,
            session_id=self.request.session_id,
            link=link,
            label=self.meta.label,
            ticket=str(ticket) if ticket else None,
        )
        for sink in wanted:
            key = f"notify:{sink.name}"
            if key in self.checkpoint.done:
                continue  # sent before a takeover; its event is in the run already
            result = await deliver(sink, summary, jira=self._jira_comment(sink.name))
            await asyncio.to_thread(
                self.checkpoint.store.put_checkpoint,
                self.request.run_id,
                key,
                "sent" if result.ok else "failed",
                worker=self.worker,
            )
            emit(
                NotificationSent(
                    **ids,
                    sink=sink.name,
                    kind=sink.kind,
                    ok=result.ok,
                    attempts=result.attempts,
                    error=result.error,
                )
            )

    def _jira_comment(self, sink: str) -> Callable[[str, str], Awaitable[tuple[bool, str | None]]]:
        async def comment(issue: str, body: str) -> tuple[bool, str | None]:
            result = await self.runtime.service.call_approved(
                self.request.session_id,
                "jira_add_comment",
                {"key": issue, "body": body},
                approver=f"notify:{sink}",
            )
            return result.status == "success", result.error

        return comment


@dataclass
class WorkerRuntime:
    """A worker process's session service and the runs it executes."""

    settings: Settings
    store: Store
    worker_id: str
    service: SessionService
    limiter: AdvisoryLimiter | None = None
    running: set[str] = field(default_factory=set)
    finished: int = 0

    async def run(self, request_json: str, meta_json: str) -> str:
        """Carry out one queued run (the DBOS workflow's body); returns how it ended."""
        request = RunRequest.from_json(request_json)
        meta = QueueMeta.from_json(meta_json)
        done = await asyncio.to_thread(self.store.checkpoints, request.run_id)
        durability = RunDurability(
            runtime=self,
            request=request,
            meta=meta,
            checkpoint=StoreCheckpoint(self.store, request.run_id, self.worker_id, dict(done)),
            limiter=self.limiter,
            completed_steps=len(done),
        )
        self.running.add(request.run_id)
        try:
            final = await self.service.execute(request, durability)
        finally:
            self.running.discard(request.run_id)
            self.finished += 1
        return final.status if final is not None else "cancelled"
